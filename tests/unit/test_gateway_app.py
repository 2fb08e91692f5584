"""The gateway's REST handlers and websocket multiplexer in process, on the in-memory transport.

The real ``build_app`` (REST routes, mux) and ``Dispatcher`` run on a ``memory_pubsub``; the
agent behind them is a :class:`~trustgraph.base.testing.Responder` stand-in that records every
request that reaches it, so a test sees what the gateway sent and what it refused before sending.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from trustgraph.base.testing import MemoryBroker, Responder, memory_pubsub
from trustgraph.gateway.auth import TokenAuth
from trustgraph.gateway.dispatch import Dispatcher
from trustgraph.gateway.endpoints import Parts, build_app
from trustgraph.gateway.tool_services import ToolServices
from trustgraph.schema import AgentRequest, AgentResponse

AGENT = {"request": "non-persistent://tg/request/agent:f", "response": "non-persistent://tg/response/agent:f"}
EMPTY = {"error": {"type": "gateway-error",
                   "message": "Bad request: the agent request's question is empty: ask a question"}}
BLANKS = ["", "   ", "\n", " \t\n \r\n"]


def _answer(req: AgentRequest) -> list[AgentResponse]:
    if req.streaming:
        return [AgentResponse(chunk_type="answer", content=f"re: {req.question}", end_of_message=True,
                              end_of_dialog=True)]
    return [AgentResponse(answer=f"re: {req.question}", end_of_message=True, end_of_dialog=True)]


class Gateway:
    """A test client on the gateway's app, and the agent stand-in behind it."""

    def __init__(self, client: TestClient, agent: Responder) -> None:
        self.client = client
        self.agent = agent

    async def post(self, body: Any) -> Any:
        async with self.client.post("/api/v1/flow/f/service/agent", data=json.dumps(body)) as r:
            assert r.status == 200, await r.text()
            return await r.json()


@pytest.fixture
async def gateway() -> AsyncIterator[Gateway]:
    broker = MemoryBroker()
    ps = memory_pubsub(broker, "gateway")
    dispatcher = Dispatcher(ps, timeout=10.0, config_topics=("non-persistent://tg/request/c",
                                                             "non-persistent://tg/response/c"),
                            flow_topics=("non-persistent://tg/request/fl", "non-persistent://tg/response/fl"))
    dispatcher.update_flows({"f": json.dumps({"interfaces": {"agent": AGENT}})})
    tools = ToolServices(ps, timeout=10.0)

    async def health(_authorized: bool) -> dict[str, Any]:
        return {"status": "ok"}

    app = build_app(Parts(dispatcher=dispatcher, tools=tools, auth=TokenAuth(""), timeout=10.0,
                          prometheus_url="http://unused", health=health))
    agent = await Responder(memory_pubsub(broker, "agent"), AGENT["request"], AGENT["response"], AgentRequest,
                            _answer).start()
    async with TestClient(TestServer(app)) as client:
        yield Gateway(client, agent)
    await dispatcher.stop()
    await tools.stop()


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_blank_question_over_rest_is_refused_and_nothing_reaches_the_agent(gateway, streaming):
    for question in BLANKS:
        assert await gateway.post({"question": question, "streaming": streaming}) == EMPTY
    # A question after them is the first request the agent gets: the blank ones were never sent.
    reply = await gateway.post({"question": "meaning?", "streaming": streaming})
    assert reply["end_of_dialog"] is True and "error" not in reply
    assert [r.question for r in gateway.agent.requests] == ["meaning?"]


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_blank_question_over_the_socket_is_that_requests_error_and_nothing_reaches_the_agent(
        gateway, streaming):
    async with gateway.client.ws_connect("/api/v1/socket") as ws:
        for i, question in enumerate(BLANKS):
            await ws.send_json({"id": f"b{i}", "service": "agent", "flow": "f",
                                "request": {"question": question, "streaming": streaming}})
            assert await ws.receive_json(timeout=10) == {"id": f"b{i}", "response": EMPTY, "complete": True}
        await ws.send_json({"id": "q", "service": "agent", "flow": "f",
                            "request": {"question": "meaning?", "streaming": streaming}})
        frame = await ws.receive_json(timeout=10)
    assert frame["id"] == "q" and frame["complete"] is True and "error" not in frame["response"]
    assert [r.question for r in gateway.agent.requests] == ["meaning?"]
