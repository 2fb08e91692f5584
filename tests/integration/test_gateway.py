"""api-gateway as a real process: REST, websocket, auth, deadlines and tool services.

The module shares real ``config-svc`` and ``api-gateway`` processes on the session broker, with
config/flow/push topics of their own so that other tests' config services never answer ours;
flows, tools and services get unique names per test.  Services behind the gateway are played by
responders in the test process, so each test controls exactly what comes back.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import psutil
import pytest
from aiohttp import web
from gateway_stack import (
    Stack,
    eventually,
    post,
    responder,
    start_flow,
    start_gateway,
    topics,
    unique,
)
from support import wait_for_async
from trustgraph.base import DynamicToolService, PubSub
from trustgraph.base.launching.broker import EmbeddedBroker, free_port
from trustgraph.schema import (
    AgentRequest,
    AgentResponse,
    Error,
    TextCompletionRequest,
    TextCompletionResponse,
)


async def ws_frames(ws: aiohttp.ClientWebSocketResponse, ids: set[Any]) -> tuple[dict[Any, list], list]:
    """Read until every id in ``ids`` is complete: the frames per id, and the order ids completed in."""
    frames: dict[Any, list[dict]] = {i: [] for i in ids}
    done: list[Any] = []
    while len(done) < len(ids):
        frame = await asyncio.wait_for(ws.receive_json(), 10)
        frames[frame["id"]].append(frame)
        if frame.get("complete") or "error" in frame:
            done.append(frame["id"])
    return frames, done


# -- global services ---------------------------------------------------------------------


async def test_config_round_trip_and_health(stack: Stack, http: aiohttp.ClientSession) -> None:
    api, kind = f"{stack.url}/api/v1/config", unique("type")
    put = {"operation": "put", "values": [{"type": kind, "key": "a", "value": '"one"'},
                                          {"type": kind, "key": "b", "value": '{"x": 2}'}]}
    assert await post(http, api, put) == {"version": 0}
    got = await post(http, api, {"operation": "get", "keys": [{"type": kind, "key": "a"}]})
    assert got["values"] == [{"type": kind, "key": "a", "value": '"one"'}]
    assert (await post(http, api, {"operation": "list", "type": kind}))["directory"] == ["a", "b"]
    values = await post(http, api, {"operation": "getvalues", "type": kind})
    assert {v["key"]: v["value"] for v in values["values"]} == {"a": '"one"', "b": '{"x": 2}'}
    whole = await post(http, api, {"operation": "config"})
    assert whole["config"][kind] == {"a": '"one"', "b": '{"x": 2}'} and whole["version"] >= 1
    await post(http, api, {"operation": "delete", "keys": [{"type": kind, "key": "a"}]})
    got = await post(http, api, {"operation": "get", "keys": [{"type": kind, "key": "a"}]})
    assert got["values"][0]["value"] is None and got["version"] == whole["version"] + 1
    assert await post(http, api, {"operation": "nonsense"}) == {
        "error": {"type": "bad-operation", "message": "Bad operation"}}
    async with http.get(f"{stack.url}/api/v1/health") as r:
        health = await r.json()
    # Tool services on the shared test broker come and go: their list is checked elsewhere.
    assert isinstance(health.pop("tool-services"), list)
    assert health == {"status": "ok", "config-service": True, "version": got["version"]}


# -- flow routing ------------------------------------------------------------------------


async def test_flow_routing_and_routing_errors(stack: Stack, http: aiohttp.ClientSession,
                                               pubsub: PubSub) -> None:
    await start_flow(http, stack, "default")

    async def complete(req: TextCompletionRequest) -> AsyncIterator[TextCompletionResponse]:
        yield TextCompletionResponse(response=f"echo: {req.prompt}", in_token=3, model="m1", end_of_stream=True)

    seen = await responder(pubsub, topics(stack, "text-completion", "default"), TextCompletionRequest, complete)
    service = f"{stack.url}/api/v1/flow/default/service"
    reply = await post(http, f"{service}/text-completion", {"prompt": "hi"})
    assert reply == {"response": "echo: hi", "in_token": 3, "model": "m1", "end_of_stream": True}
    assert seen[0] == TextCompletionRequest(system="", prompt="hi", streaming=False)

    for url, error in ((f"{stack.url}/api/v1/flow/{unique('nope')}/service/agent", "Invalid flow"),
                       (f"{service}/graph-rag", "This kind not supported by flow"),
                       (f"{service}/triples-store", "Invalid kind"),  # an import interface, not a service
                       (f"{stack.url}/api/v1/bogus", "Invalid kind")):
        assert await post(http, url, {}) == {"error": error}

    flows = await post(http, f"{stack.url}/api/v1/flow", {"operation": "list-flows"})
    assert "default" in flows["flow-ids"]
    await post(http, f"{stack.url}/api/v1/flow", {"operation": "stop-flow", "flow-id": "default"})

    async def gone() -> bool:
        return await post(http, f"{service}/text-completion", {"prompt": "x"}) == {"error": "Invalid flow"}

    await eventually(gone)


async def test_agent_rest_returns_only_the_final_message(stack: Stack, http: aiohttp.ClientSession,
                                                         pubsub: PubSub) -> None:
    flow = unique("f")
    await start_flow(http, stack, flow)

    async def agent(req: AgentRequest) -> AsyncIterator[AgentResponse]:
        # Non-streaming replies: thought and observation carry an explicit null answer.
        yield AgentResponse(thought="thinking", answer=None, observation=None, end_of_message=True)
        yield AgentResponse(observation="seen", answer=None, thought=None, end_of_message=True)
        if req.question == "fail":
            yield AgentResponse(error=Error(type="agent-error", message="no luck"))
        else:
            yield AgentResponse(answer="42", thought=None, observation=None, end_of_message=True,
                                end_of_dialog=True)

    seen = await responder(pubsub, topics(stack, "agent", flow), AgentRequest, agent)
    url = f"{stack.url}/api/v1/flow/{flow}/service/agent"
    assert await post(http, url, {"question": "meaning?"}) == {
        "answer": "42", "end_of_message": True, "end_of_dialog": True}
    assert seen[0].user == "trustgraph" and seen[0].state is None and seen[0].group is None
    assert await post(http, url, {"question": "fail"}) == {"error": {"type": "agent-error", "message": "no luck"}}
    # A body that cannot be translated: upstream's shape, a gateway-error.
    assert await post(http, url, {"user": "bob"}) == {
        "error": {"type": "gateway-error", "message": "Bad request: 'question' is required"}}


async def test_a_blank_agent_question_is_refused_before_it_reaches_the_agent(
        stack: Stack, http: aiohttp.ClientSession, pubsub: PubSub) -> None:
    flow = unique("f")
    await start_flow(http, stack, flow)

    async def agent(req: AgentRequest) -> AsyncIterator[AgentResponse]:
        yield AgentResponse(chunk_type="answer", content=f"re: {req.question}", end_of_message=True,
                            end_of_dialog=True)

    seen = await responder(pubsub, topics(stack, "agent", flow), AgentRequest, agent)
    empty = {"error": {"type": "gateway-error",
                       "message": "Bad request: the agent request's question is empty: ask a question"}}
    url = f"{stack.url}/api/v1/flow/{flow}/service/agent"
    blanks = ["", "   ", " \t\n "]
    for streaming in (False, True):
        for question in blanks:
            assert await post(http, url, {"question": question, "streaming": streaming}) == empty
    async with http.ws_connect(f"{stack.url}/api/v1/socket") as ws:
        for streaming in (False, True):
            for i, question in enumerate(blanks):
                rid = f"{streaming}-{i}"
                await ws.send_json({"id": rid, "service": "agent", "flow": flow,
                                    "request": {"question": question, "streaming": streaming}})
                frame = await asyncio.wait_for(ws.receive_json(), 10)
                assert frame == {"id": rid, "response": empty, "complete": True}
        # A question after them is the first the agent gets: none of the blank ones was sent.
        await ws.send_json({"id": "q", "service": "agent", "flow": flow,
                            "request": {"question": "meaning?", "streaming": True}})
        frame = await asyncio.wait_for(ws.receive_json(), 10)
    assert frame["id"] == "q" and frame["response"]["content"] == "re: meaning?"
    assert [r.question for r in seen] == ["meaning?"]


# -- websocket ---------------------------------------------------------------------------


async def test_websocket_streams_and_multiplexes(stack: Stack, http: aiohttp.ClientSession,
                                                 pubsub: PubSub) -> None:
    flow = unique("f")
    await start_flow(http, stack, flow)

    release = asyncio.Event()   # the slow call answers only once the others have

    async def complete(req: TextCompletionRequest) -> AsyncIterator[TextCompletionResponse]:
        if req.prompt == "slow":
            await release.wait()
            yield TextCompletionResponse(response="late", end_of_stream=True)
            return
        for word in ("one ", "two ", "three"):
            yield TextCompletionResponse(response=word, end_of_stream=False)
        yield TextCompletionResponse(response="", end_of_stream=True)

    await responder(pubsub, topics(stack, "text-completion", flow), TextCompletionRequest, complete)
    async with http.ws_connect(f"{stack.url}/api/v1/socket") as ws:
        for rid, request in (("slow", {"prompt": "slow"}), ("s1", {"prompt": "count", "streaming": True})):
            await ws.send_json({"id": rid, "service": "text-completion", "flow": flow, "request": request})
        await ws.send_json({"id": 7, "service": "config", "request": {"operation": "list", "type": "none"}})
        frames, done = await ws_frames(ws, {"s1", 7})   # the slow call, still running, held up nobody
        release.set()
        slow, _ = await ws_frames(ws, {"slow"})
    frames.update(slow)

    stream = frames["s1"]
    assert [f["response"]["response"] for f in stream] == ["one ", "two ", "three", ""]
    assert [f["complete"] for f in stream] == [False, False, False, True]
    assert frames["slow"] == [
        {"id": "slow", "response": {"response": "late", "end_of_stream": True}, "complete": True}]
    assert frames[7][0]["response"]["directory"] == [] and frames[7][0]["complete"] is True


async def test_websocket_runs_at_most_16_calls_at_once(stack: Stack, http: aiohttp.ClientSession,
                                                       pubsub: PubSub) -> None:
    flow = unique("f")
    await start_flow(http, stack, flow)
    running, peak = 0, 0
    gate = asyncio.Semaphore(0)   # a call answers only when the test lets one through

    async def complete(req: TextCompletionRequest) -> AsyncIterator[TextCompletionResponse]:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await gate.acquire()
        running -= 1
        yield TextCompletionResponse(response=req.prompt, end_of_stream=True)

    await responder(pubsub, topics(stack, "text-completion", flow), TextCompletionRequest, complete, 64)
    async with http.ws_connect(f"{stack.url}/api/v1/socket") as ws:
        for i in range(20):
            await ws.send_json({"id": i, "service": "text-completion", "flow": flow,
                                "request": {"prompt": str(i)}})
        await wait_for_async("16 calls held by the service", lambda: running >= 16, 60)
        assert running == 16, f"{running} calls at once"
        frames: dict[Any, list[dict]] = {}
        for _ in range(4):
            # One answer frees one slot, and only then does the next call come: 16 again.
            gate.release()
            frame = await asyncio.wait_for(ws.receive_json(), 30)
            frames[frame["id"]] = [frame]
            await wait_for_async("the next call in the freed slot", lambda: running >= 16, 60)
            assert running == 16, f"{running} calls at once"
        for _ in range(16):
            gate.release()
        rest, _ = await ws_frames(ws, set(range(20)) - frames.keys())
        frames.update(rest)
    assert all(frames[i][0]["response"]["response"] == str(i) for i in range(20))
    assert peak == 16  # 16 at once, never more: the calls beyond waited for a free slot


async def test_websocket_malformed_frames_get_errors_with_ids(stack: Stack,
                                                              http: aiohttp.ClientSession) -> None:
    async with http.ws_connect(f"{stack.url}/api/v1/socket") as ws:
        async def reply_to(frame: Any) -> dict:
            await ws.send_str(frame if isinstance(frame, str) else json.dumps(frame))
            return await asyncio.wait_for(ws.receive_json(), 10)

        assert (await reply_to("{nope"))["error"].startswith("Bad message: not valid JSON")
        assert "id" not in await reply_to({"service": "config", "request": {}})
        # With an id, every error is that request's error response (upstream's
        # clients read response.error as an {type, message} object).
        def failed(rid: str, message: str) -> dict:
            return {"id": rid, "response": {"error": {"type": "gateway-error", "message": message}},
                    "complete": True}

        assert await reply_to({"id": "a", "service": "config"}) == failed("a", "Bad message: 'request' is missing")
        assert await reply_to({"id": "b", "service": "bogus", "request": {}}) == failed("b", "Invalid kind")
        assert await reply_to({"id": "c", "service": "agent", "flow": unique("x"), "request": {}}) == failed(
            "c", "Invalid flow")
        bad = await reply_to({"id": "d", "service": "config", "request": {"operation": "get", "keys": 5}})
        assert bad["id"] == "d" and bad["complete"] is True
        assert bad["response"]["error"]["message"].startswith("Bad request: ConfigRequest.keys")
        # The socket still serves after all that.
        ok = await reply_to({"id": "e", "service": "config", "request": {"operation": "list", "type": "x"}})
        assert ok["id"] == "e" and ok["complete"] is True and "version" in ok["response"]


async def test_rest_malformed_requests_get_json_errors(stack: Stack, http: aiohttp.ClientSession) -> None:
    api = f"{stack.url}/api/v1/config"
    assert (await post(http, api, "{not json"))["error"].startswith("Bad request: body is not valid JSON")
    assert await post(http, api, "[1, 2]") == {
        "error": {"type": "gateway-error", "message": "Bad request: the request must be a JSON object"}}
    reply = await post(http, api, {"operation": "put", "values": [{"type": "t", "key": "k", "value": {}}]})
    assert reply["error"]["type"] == "gateway-error"
    assert reply["error"]["message"].startswith("Bad request: ConfigValue.value: expected str")
    for method, path, status in (("GET", "/api/v2/x", 404), ("GET", "/api/v1/config", 405)):
        async with http.request(method, stack.url + path) as r:
            assert r.status == status and "error" in await r.json()


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


async def test_json_over_the_limits_is_a_clear_error_and_never_closes_the_socket(
        stack: Stack, http: aiohttp.ClientSession, pubsub: PubSub) -> None:
    from trustgraph.base.safety import limits
    api = f"{stack.url}/api/v1/config"
    too_deep = f"Bad request: JSON nested deeper than {limits.MAX_JSON_DEPTH} levels is over the limit"
    for levels in (limits.MAX_JSON_DEPTH + 1, 960, 5_000, 100_000):
        assert await post(http, api, deep(levels)) == {"error": too_deep}, levels
        body = '{"operation": "list", "type": "x", "extra": ' + deep(levels) + "}"
        assert await post(http, api, body) == {"error": too_deep}, levels
    fine = '{"operation": "list", "type": "x", "extra": ' + deep(limits.MAX_JSON_DEPTH - 1) + "}"
    assert "directory" in await post(http, api, fine)
    many = "[" + ",".join(["{}"] * (limits.MAX_JSON_CONTAINERS + 1)) + "]"
    assert (await post(http, api, many))["error"].startswith("Bad request: JSON with more than 1,000,000")

    # A call in flight on the socket outlives the bad frames sent beside it.
    flow = unique("f")
    await start_flow(http, stack, flow)
    release = asyncio.Event()

    async def held(req: TextCompletionRequest) -> AsyncIterator[TextCompletionResponse]:
        await release.wait()
        yield TextCompletionResponse(response="held " + req.prompt, end_of_stream=True)

    await responder(pubsub, topics(stack, "text-completion", flow), TextCompletionRequest, held)
    async with http.ws_connect(f"{stack.url}/api/v1/socket") as ws:
        await ws.send_json({"id": "slow", "service": "text-completion", "flow": flow, "request": {"prompt": "p"}})
        for i, levels in enumerate((limits.MAX_JSON_DEPTH + 1, 980, 400_000)):
            await ws.send_str(f'{{"id": "bad-{i}", "service": "config", "request": {deep(levels)}}}')
            assert await asyncio.wait_for(ws.receive_json(), 10) == {
                "id": f"bad-{i}", "response": {"error": {"type": "gateway-error", "message":
                                                         f"Bad message: {too_deep[len('Bad request: '):]}"}},
                "complete": True}
        await ws.send_str(deep(2_000))  # no id to answer to
        assert (await asyncio.wait_for(ws.receive_json(), 10))["error"].startswith("Bad message: JSON nested")
        await ws.send_json({"id": "ok", "service": "config", "request": {"operation": "list", "type": "x"}})
        assert (await asyncio.wait_for(ws.receive_json(), 10))["id"] == "ok"
        release.set()
        frame = await asyncio.wait_for(ws.receive_json(), 10)
        assert frame["id"] == "slow" and frame["response"]["response"] == "held p"


async def test_a_body_over_the_limit_is_413_and_the_gateway_stays_small(stack: Stack,
                                                                        http: aiohttp.ClientSession) -> None:
    from trustgraph.base.safety import limits
    def rss_mb() -> float:
        return psutil.Process(stack.gateway_pid).memory_info().rss / 2**20

    before = rss_mb()
    body = b'{"operation": "list", "type": "' + b"x" * (limits.MAX_BODY + 1) + b'"}'
    async with http.post(f"{stack.url}/api/v1/config", data=body) as r:
        assert r.status == 413
        assert await r.json() == {"error": f"Request body over the limit of {limits.MAX_BODY:,} bytes"}
    # Refused while reading: the gateway never holds much more than the limit.
    assert rss_mb() - before < limits.MAX_BODY / 2**20 * 3
    async with http.get(f"{stack.url}/api/v1/health") as r:
        assert r.status == 200


# -- auth, deadlines, metrics -------------------------------------------------------------


async def test_auth_on_and_metrics_proxy(stack: Stack, broker: EmbeddedBroker,
                                         http: aiohttp.ClientSession, tmp_path: Path) -> None:
    async def fake_prometheus(request: web.Request) -> web.Response:
        return web.json_response({"path": request.match_info["path"], "query": dict(request.query)})

    app = web.Application()
    app.router.add_get("/api/v1/{path:.+}", fake_prometheus)
    runner = web.AppRunner(app)
    await runner.setup()
    prom_port = free_port()
    await web.TCPSite(runner, "127.0.0.1", prom_port).start()
    gateway, url = start_gateway(tmp_path, broker, stack.queues, "-m", f"http://127.0.0.1:{prom_port}",
                                 env={"GATEWAY_SECRET": "s3cret"})
    try:
        good = {"Authorization": "Bearer s3cret"}
        body = json.dumps({"operation": "list", "type": "x"})
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}):
            async with http.post(f"{url}/api/v1/config", data=body, headers=headers) as r:
                assert r.status == 401 and await r.json() == {"error": "Unauthorized"}
        assert "directory" in await post(http, f"{url}/api/v1/config", body, headers=good)
        for query in ("", "?token=wrong"):
            with pytest.raises(aiohttp.WSServerHandshakeError) as e:
                await http.ws_connect(f"{url}/api/v1/socket{query}")
            assert e.value.status == 401
        async with http.ws_connect(f"{url}/api/v1/socket?token=s3cret") as ws:
            await ws.send_json({"id": 1, "service": "config", "request": {"operation": "list", "type": "x"}})
            assert (await asyncio.wait_for(ws.receive_json(), 10))["complete"] is True
        async with http.get(f"{url}/api/v1/health") as r:  # open by design
            assert r.status == 200 and (await r.json())["status"] == "ok"
        async with http.get(f"{url}/api/metrics/query?query=up") as r:
            assert r.status == 401
        async with http.get(f"{url}/api/metrics/query?query=up", headers=good) as r:
            assert await r.json() == {"path": "query", "query": {"query": "up"}}
        assert "s3cret" not in (tmp_path / f"gateway-{url.rsplit(':', 1)[1]}.log").read_text()
    finally:
        gateway.stop()
        await runner.cleanup()
    # With auth off (the module's gateway) any or no header is accepted.
    assert "directory" in await post(http, f"{stack.url}/api/v1/config", body,
                                     headers={"Authorization": "Bearer whatever"})


async def test_service_down_gives_timeout_error(broker: EmbeddedBroker, http: aiohttp.ClientSession,
                                                tmp_path: Path) -> None:
    # Nobody serves these config topics: the config service is "down".
    tag = unique("down")
    queues = ["--config-request-queue", f"non-persistent://tg/request/{tag}",
              "--config-response-queue", f"non-persistent://tg/response/{tag}",
              "--config-push-queue", f"persistent://tg/config/{tag}"]
    gateway, url = start_gateway(tmp_path, broker, queues, "--timeout", "2")
    try:
        start = time.monotonic()
        reply = await post(http, f"{url}/api/v1/config", {"operation": "config"})
        elapsed = time.monotonic() - start
        assert reply == {"error": {"type": "gateway-error", "message": "Timeout"}}
        assert 1.5 < elapsed < 25   # at its 2 s timeout, not before; never the client's 30 s
        async with http.ws_connect(f"{url}/api/v1/socket") as ws:
            await ws.send_json({"id": "t", "service": "config", "request": {"operation": "config"}})
            frame = await asyncio.wait_for(ws.receive_json(), 10)
        assert frame == {"id": "t", "response": reply, "complete": True}
        async with http.get(f"{url}/api/v1/health") as r:
            health = await r.json()
        assert isinstance(health.pop("tool-services"), list)
        assert health == {"status": "ok", "config-service": False, "version": None}
    finally:
        gateway.stop()


# -- tool services -------------------------------------------------------------------------


class EchoService(DynamicToolService):
    """Answers with what it was given; streams, or fails, when asked to."""

    def invoke(self, user: str, config: dict, arguments: dict) -> Any:
        if arguments.get("fail"):
            raise ValueError("asked to fail")
        if arguments.get("stream"):
            return self._stream()
        return self._answer(user, config, arguments)

    async def _answer(self, user: str, config: dict, arguments: dict) -> str:
        return f"{user}|{config.get('style')}|{arguments.get('topic')}"

    async def _stream(self) -> AsyncIterator[str]:
        for part in ("a", "b", "c"):
            yield part


async def test_tool_service_endpoint(stack: Stack, broker: EmbeddedBroker,
                                     http: aiohttp.ClientSession) -> None:
    t = unique("echo")
    svc = EchoService(id=t, pulsar_host=broker.url, metrics=False, topic=t)
    await svc.start()
    try:
        descriptor = {"id": t, "request-queue": f"non-persistent://tg/request/{t}",
                      "response-queue": f"non-persistent://tg/response/{t}", "config-params": [{"name": "style"}]}
        tool = {"type": "tool-service", "name": f"tool-{t}", "description": "Echo", "service": t, "style": "pun",
                "arguments": [{"name": "topic", "type": "string", "description": "x", "required": False},
                              {"name": "stream", "type": "boolean", "required": False},
                              {"name": "fail", "type": "boolean", "required": False}],
                "examples": ["Echo cats back to me"]}
        broken = {"type": "tool-service", "name": f"broken-{t}", "description": "x", "service": f"missing-{t}"}
        values = [{"type": "tool-service", "key": t, "value": json.dumps(descriptor)},
                  {"type": "tool", "key": t, "value": json.dumps(tool)},
                  {"type": "tool", "key": f"broken-{t}", "value": json.dumps(broken)},
                  {"type": "tool", "key": f"kb-{t}", "value": json.dumps(
                      {"type": "knowledge-query", "name": f"kb-{t}", "description": "graph"})}]
        await post(http, f"{stack.url}/api/v1/config", {"operation": "put", "values": values})
        api = f"{stack.url}/api/v1/tool-service"

        async def learned() -> bool:
            async with http.get(f"{api}/errors") as r:
                errors = await r.json()
            return any(e.startswith(f"tool/broken-{t}: field 'service'") for e in errors)

        await eventually(learned)
        async with http.get(f"{stack.url}/api/v1/tool-catalog") as r:
            catalog = await r.json()
        entries = {e["key"]: e for e in catalog["tools"]}
        good, bad = entries[t], entries[f"broken-{t}"]
        assert (good["name"], good["errors"], good["config"], good["request-queue"]) == (
            f"tool-{t}", [], {"style": "pun"}, descriptor["request-queue"])
        assert good["input-schema"]["properties"]["topic"] == {"type": "string", "description": "x"}
        assert (good["examples"], entries[f"kb-{t}"]["examples"]) == (["Echo cats back to me"], [])
        assert bad["errors"] == [f"tool/broken-{t}: field 'service': unknown tool service 'missing-{t}'"]
        assert bad["errors"][0] in catalog["errors"]
        assert await post(http, api, {"tool": f"tool-{t}", "arguments": {"topic": "cats"}, "user": "ann"}) == {
            "response": "ann|pun|cats"}
        assert await post(http, api, {"service": t, "config": {"style": "dad"}, "arguments": {"topic": "x"}}) == {
            "response": "trustgraph|dad|x"}
        assert await post(http, api, {"tool": f"tool-{t}", "arguments": {"stream": True}}) == {"response": "abc"}
        assert await post(http, api, {"tool": f"tool-{t}", "arguments": {"fail": True}}) == {
            "error": {"type": "tool-service-error", "message": "asked to fail"}}
        # The tool's schema is checked here as everywhere (nothing is sent), by name only.
        refused = await post(http, api, {"tool": f"tool-{t}", "arguments": {"stream": "maybe", "colour": 1}})
        assert refused["error"]["type"] == "tool-argument-error"
        assert refused["error"]["message"].startswith(
            f"wrong arguments for tool 'tool-{t}': unknown argument(s) 'colour'; argument 'stream' must be of "
            "type boolean, got \"maybe\"")
        assert await post(http, api, {"tool": f"tool-{t}", "arguments": {"stream": "true"}}) == {"response": "abc"}
        assert await post(http, api, {"service": t, "arguments": {"colour": 1}}) == {"response": "trustgraph|None|None"}
        assert await post(http, api, {"tool": "no-such-tool"}) == {
            "error": {"type": "gateway-error", "message": "Unknown tool 'no-such-tool'"}}
        unknown = await post(http, api, {"tool": f"broken-{t}"})
        assert f"unknown tool service 'missing-{t}'" in unknown["error"]["message"]
        assert (await post(http, api, {"service": "nope"}))["error"]["message"] == "Unknown tool service 'nope'"
        assert (await post(http, api, {"tool": f"kb-{t}"}))["error"]["message"] == (
            f"Tool 'kb-{t}' is of type knowledge-query; only tool-service tools can be called here")
        assert (await post(http, api, {"tool": f"tool-{t}", "arguments": [1]}))["error"]["type"] == "gateway-error"

        async with http.ws_connect(f"{stack.url}/api/v1/socket") as ws:
            for rid, arguments in (("x", {"stream": True}), ("y", {"fail": True})):
                await ws.send_json({"id": rid, "service": "tool-service",
                                    "request": {"tool": f"tool-{t}", "arguments": arguments}})
            frames, _ = await ws_frames(ws, {"x", "y"})
        assert [(f["response"], f["complete"]) for f in frames["x"]] == [
            *(({"response": c, "end_of_stream": False}, False) for c in "abc"),
            ({"response": "", "end_of_stream": True}, True)]
        assert frames["y"] == [{"id": "y", "complete": True, "response": {
            "error": {"type": "tool-service-error", "message": "asked to fail"}}}]
    finally:
        await svc.stop()


# -- connections: idle time and long calls -------------------------------------------------


async def test_the_idle_timeout_cuts_neither_a_long_call_nor_a_quiet_websocket(
        stack: Stack, broker: EmbeddedBroker, http: aiohttp.ClientSession, pubsub: PubSub,
        tmp_path: Path) -> None:
    """A connection with a request in progress is never idle, however long the request takes."""
    gateway, url = start_gateway(tmp_path, broker, stack.queues, "--idle-timeout", "1", "--header-timeout", "1")
    flow = unique("idle")
    try:
        await start_flow(http, stack, flow)
        release = asyncio.Event()

        async def slow(req: TextCompletionRequest) -> AsyncIterator[TextCompletionResponse]:
            await release.wait()
            yield TextCompletionResponse(response="late but whole", end_of_stream=True)

        seen = await responder(pubsub, topics(stack, "text-completion", flow), TextCompletionRequest, slow)
        call = asyncio.ensure_future(post(http, f"{url}/api/v1/flow/{flow}/service/text-completion",
                                          {"prompt": "take your time"}))
        async with http.ws_connect(f"{url}/api/v1/socket") as ws:
            await wait_for_async("the slow call at its service", lambda: seen, 30)
            # The marker: a connection opened after both, closed for its idleness, so both have
            # been quiet for longer than the idle timeout.
            reader, writer = await asyncio.open_connection("127.0.0.1", int(url.rsplit(":", 1)[1]))
            assert await asyncio.wait_for(reader.read(), 30) == b""
            writer.close()
            await ws.send_json({"id": "q", "service": "config", "request": {"operation": "list", "type": "x"}})
            frame = await asyncio.wait_for(ws.receive_json(), 10)
            assert frame["id"] == "q" and frame["complete"] is True and "directory" in frame["response"]
            release.set()
            assert await asyncio.wait_for(call, 30) == {"response": "late but whole", "end_of_stream": True}
    finally:
        gateway.stop()
