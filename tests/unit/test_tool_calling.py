"""trustgraph.catalog.calling: checking, time, streaming and the outcome of a tool call.

The tool service on the other end is a stand-in on the in-memory transport;
the pool, the client and the executor are the real ones.
"""

from __future__ import annotations

import json
import time

import pytest
from trustgraph.base.messaging.request_response import CallLost, ClientClosed, Unserved
from trustgraph.base.testing import MemoryBroker, memory_pubsub
from trustgraph.base.testing.stand_ins import Responder
from trustgraph.base.tool_services.tool_service_client import (
    ServiceUnavailable,
    ToolServiceClients,
    ToolServiceError,
)
from trustgraph.catalog import build_catalog
from trustgraph.catalog.calling import ERROR_TYPES, CallableTool, Outcome, call_service, call_tool
from trustgraph.catalog.implementations import ToolFailed
from trustgraph.schema import Error, ToolServiceRequest, ToolServiceResponse
from trustgraph.topics import tool_service_topics

REQ, RESP = tool_service_topics("unit-calling")
ARGUMENTS = [{"name": "city", "type": "string", "description": "City"},
             {"name": "days", "type": "integer", "description": "Days ahead", "required": False},
             {"name": "unit", "type": "string", "enum": ["C", "F"], "required": False}]


def catalog(tool: dict | None = None, service: dict | None = None):
    built = build_catalog({
        "tool-service": {"weather-service": json.dumps({"id": "weather-service", "request-queue": REQ,
                                                        "response-queue": RESP, **(service or {})})},
        "tool": {"weather": json.dumps({"type": "tool-service", "name": "weather", "description": "Weather",
                                        "service": "weather-service", "arguments": ARGUMENTS, **(tool or {})}),
                 "ask": json.dumps({"type": "text-completion", "name": "ask", "description": "Ask the LLM"})}})
    assert built.errors == (), built.errors
    return built


@pytest.fixture
async def stand():
    broker = MemoryBroker()
    ps = memory_pubsub(broker, "caller")
    live = {"weather-service": None}
    clients = ToolServiceClients(ps, name="test", liveness=lambda sid, queue: live.get(sid))
    services: list[Responder] = []

    async def serve(answer) -> Responder:
        r = await Responder(memory_pubsub(broker, "svc"), REQ, RESP, ToolServiceRequest, answer).start()
        services.append(r)
        return r

    yield clients, serve, live
    await clients.close()
    await ps.close()


def weather(clients: ToolServiceClients, **tool) -> CallableTool:
    return CallableTool.build(catalog(tool).tools["weather"], clients)


def echo(request: ToolServiceRequest) -> list:
    return [ToolServiceResponse(response=f"{request.user}:{request.arguments}", end_of_stream=True)]


async def test_an_answer_comes_with_the_coerced_arguments(stand):
    clients, serve, _ = stand
    svc = await serve(echo)
    result = await call_tool(weather(clients), {"city": "Oslo", "days": "3", "unit": "C"}, user="ann", flow=None,
                             timeout=30)
    assert (result.outcome, result.error_type) == (Outcome.ANSWERED, "")
    assert result.text == result.message == 'ann:{"city": "Oslo", "days": 3, "unit": "C"}'
    assert json.loads(svc.requests[0].arguments)["days"] == 3


@pytest.mark.parametrize(("arguments", "problem"), [
    ({"city": "Oslo", "days": "two"}, "argument 'days' must be of type integer, got \"two\""),
    ({"city": "Oslo", "unit": "K"}, "argument 'unit' must be one of \"C\", \"F\", got \"K\""),
    ({"days": 2}, "missing argument(s) 'city'"),
])
async def test_arguments_that_do_not_fit_are_refused_and_nothing_is_sent(stand, arguments, problem):
    clients, serve, _ = stand
    svc = await serve(echo)
    result = await call_tool(weather(clients), arguments, user="ann", flow=None, timeout=30)
    assert (result.outcome, result.error_type) == (Outcome.REFUSED, "tool-argument-error")
    assert result.message.startswith(f"wrong arguments for tool 'weather': {problem}. Its arguments are: "
                                     "city (string): City; days (integer, optional): Days ahead; ")
    assert result.text == f"tool-argument-error: {result.message}"
    # The next call is answered, and it is the only request the service saw.
    assert (await call_tool(weather(clients), {"city": "Oslo"}, user="ann", flow=None, timeout=30)).answered
    assert len(svc.requests) == 1


async def test_a_descriptor_that_turns_the_check_off_passes_arguments_through(stand):
    clients, serve, _ = stand
    await serve(echo)
    result = await call_tool(weather(clients, **{"validate-arguments": False}), {"days": "two"}, user="u",
                             flow=None, timeout=30)
    assert result.answered and result.message == 'u:{"days": "two"}'


async def test_the_services_error_keeps_its_type(stand):
    clients, serve, _ = stand
    await serve(lambda r: [ToolServiceResponse(error=Error(type="tool-service-error", message="no such city"),
                                               end_of_stream=True)])
    result = await call_tool(weather(clients), {"city": "Atlantis"}, user="u", flow=None, timeout=30)
    assert (result.outcome, result.error_type, result.message) == (
        Outcome.FAILED, "tool-service-error", "no such city")
    assert result.text == "tool-service-error: no such city"


async def test_a_service_known_to_be_down_is_unavailable_at_once(stand):
    clients, serve, live = stand
    svc = await serve(echo)
    live["weather-service"] = False
    result = await call_tool(weather(clients), {"city": "Oslo"}, user="u", flow=None, timeout=60)
    assert (result.outcome, result.error_type) == (Outcome.UNAVAILABLE, "tool-service-unavailable")
    assert result.message.startswith("tool service 'weather-service' is not running")
    assert result.elapsed < 30 and svc.requests == []


async def test_the_tools_own_timeout_wins_over_the_callers_default(stand):
    clients, serve, _ = stand
    await serve(lambda r: [])   # never answers
    result = await call_tool(weather(clients, timeout=0.5), {"city": "Oslo"}, user="u", flow=None, timeout=600)
    assert (result.outcome, result.error_type) == (Outcome.TIMED_OUT, "tool-timeout")
    assert result.message == "tool 'weather' did not answer within 0.5 seconds"
    assert result.timeout == 0.5


async def test_the_deadline_cuts_the_time(stand):
    clients, serve, _ = stand
    await serve(lambda r: [])
    result = await call_tool(weather(clients), {"city": "Oslo"}, user="u", flow=None, timeout=600,
                             deadline=time.time() + 0.5)
    assert result.outcome is Outcome.TIMED_OUT and result.timeout <= 0.5


async def streamed(request: ToolServiceRequest):
    for part in ("sun", "ny", "!"):
        yield ToolServiceResponse(response=part, end_of_stream=part == "!")


async def test_chunks_reach_the_caller_as_they_arrive(stand):
    clients, serve, _ = stand
    await serve(streamed)
    seen: list[str] = []

    async def chunk(text: str) -> None:
        seen.append(text)

    result = await call_tool(weather(clients), {"city": "Oslo"}, user="u", flow=None, timeout=30, on_chunk=chunk)
    assert result.message == "sunny!" and seen == ["sun", "ny"]   # the last one is the whole answer's end
    seen.clear()
    await call_tool(weather(clients), {"city": "Oslo"}, user="u", flow=None, timeout=30, on_chunk=chunk,
                    last_chunk=True)
    assert seen == ["sun", "ny", "!"]


async def test_the_callers_own_failure_is_raised_not_mapped(stand):
    clients, serve, _ = stand
    await serve(streamed)

    class Gone(Exception):
        pass

    def chunk(text: str) -> None:
        raise Gone()

    with pytest.raises(Gone):
        await call_tool(weather(clients), {"city": "Oslo"}, user="u", flow=None, timeout=30, on_chunk=chunk)


async def test_a_tool_that_needs_a_flow_is_unavailable_without_one(stand):
    clients, _, _ = stand
    ask = CallableTool.build(catalog().tools["ask"], clients)
    result = await call_tool(ask, {"question": "hi"}, user="u", flow=None, timeout=30)
    assert result.outcome is Outcome.UNAVAILABLE
    assert result.text == ("tool-service-unavailable: tool 'ask' is of type text-completion, which needs a "
                           "flow's services, and no flow is running here")


async def test_a_service_is_called_directly_with_the_callers_config(stand):
    clients, serve, _ = stand
    svc = await serve(echo)
    service = catalog().services["weather-service"]
    result = await call_service(clients, service, {"style": "x"}, {"anything": "two"}, user="u", timeout=30)
    assert result.answered and json.loads(svc.requests[0].config) == {"style": "x"}
    svc.answer = lambda r: []   # now it never answers
    late = await call_service(clients, service, {}, {}, user="u", timeout=0.5)
    assert late.outcome is Outcome.TIMED_OUT
    assert late.message == "tool service 'weather-service' did not answer within 0.5 seconds"


class Raises:
    """An implementation that raises ``error``: how each ending of a call is mapped."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def invoke(self, ctx, arguments):
        raise self.error


@pytest.mark.parametrize(("error", "outcome", "error_type", "message"), [
    (Unserved("nothing consumes q"), Outcome.UNAVAILABLE, "tool-service-unavailable", "nothing consumes q"),
    (ServiceUnavailable("s", "q"), Outcome.UNAVAILABLE, "tool-service-unavailable",
     "tool service 's' is not running: no replica is live, so nothing serves q"),
    (CallLost("its replica restarted"), Outcome.LOST, "tool-call-lost", "the call of tool 'weather' was lost"),
    (ClientClosed("client closed"), Outcome.LOST, "tool-call-lost", "the call of tool 'weather' was lost"),
    (ToolServiceError("own-type", "bad"), Outcome.FAILED, "own-type", "bad"),
    (ToolFailed("graph-rag-error", "no graph"), Outcome.FAILED, "graph-rag-error", "no graph"),
    (ToolFailed("", "no rows; no schema"), Outcome.FAILED, "", "no rows; no schema"),
    (ValueError("a bug of the tool"), Outcome.FAILED, "", "a bug of the tool"),
])
async def test_every_ending_maps_to_one_outcome(error, outcome, error_type, message):
    tool = CallableTool.of(catalog().tools["weather"], Raises(error))
    result = await call_tool(tool, {"city": "Oslo"}, user="u", flow=None, timeout=30)
    assert (result.outcome, result.error_type) == (outcome, error_type)
    assert result.message.startswith(message)
    if outcome is Outcome.LOST:
        assert result.message.endswith(f"seconds ({error}): its service stopped or restarted")


def test_each_failing_outcome_has_one_error_type():
    assert set(ERROR_TYPES) == set(Outcome) - {Outcome.ANSWERED}
    assert len(set(ERROR_TYPES.values())) == len(ERROR_TYPES)


def test_the_mcp_server_and_the_gateway_call_tools_without_the_agents_package():
    from support import modules_after_import
    loaded = modules_after_import("trustgraph.mcp_server.service", "trustgraph.gateway.service")
    assert sorted(m for m in loaded if m.startswith("trustgraph.agent")) == []
