"""A flow interface nothing serves is refused at once, not at the call's deadline.

Before, a call to an interface of the flow with no processor behind it (the
bootstrap flow's embeddings, graph-rag, structured-query, ...) waited for the
gateway's 120 s deadline: a request on a non-persistent topic nobody consumes
is dropped without a word.  The gateway now reads the broker's consumer
counts (``--pulsar-admin-url``) and refuses such a call with an error naming
the topic, while a served interface of the same flow keeps answering.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import aiohttp
from support import wait_for_async
from trustgraph.base import DynamicToolService, PubSub
from trustgraph.base.launching.broker import free_port
from trustgraph.base.messaging import deadlines
from trustgraph.schema import TextCompletionRequest, TextCompletionResponse

SHORT = 10.0  # each probing call's own deadline, so a call that is not refused ends soon; a
              # refusal comes in well under half of it, however loaded the machine
LIMIT = 120.0  # the refusal must come within this (the gateway waits 12 s of readings first)


def _stack(own_broker, spawn, tmp_path) -> str:
    """config-svc and a gateway that reads the broker's consumer counts; the gateway's API URL."""
    spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
    port = free_port()
    spawn("api-gateway", "--port", str(port), "--host", "127.0.0.1", "--pulsar-admin-url", own_broker.admin_url,
          broker=own_broker)
    return f"http://127.0.0.1:{port}/api/v1"


async def test_a_call_to_an_interface_nothing_serves_fails_at_once(own_broker, spawn, tmp_path):
    base = _stack(own_broker, spawn, tmp_path)
    tag = uuid.uuid4().hex[:8]
    interfaces = {kind: {"request": f"non-persistent://tg/request/{kind}:{{id}}",
                         "response": f"non-persistent://tg/response/{kind}:{{id}}"}
                  for kind in ("text-completion", "embeddings")}
    ps = PubSub(own_broker.url, processor="unserved-test")
    try:
        # A served interface beside the unserved one.
        out = await ps.producer(f"non-persistent://tg/response/text-completion:f-{tag}")

        async def answer(msg) -> None:
            await out.send(TextCompletionResponse(response="served", end_of_stream=True), {"id": msg.id})

        await ps.consumer(f"non-persistent://tg/request/text-completion:f-{tag}", f"llm-{tag}",
                          TextCompletionRequest, handler=answer)
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as http:
            async def post(path: str, body: dict, deadline: float | None = None) -> dict:
                headers = {deadlines.HEADER: deadlines.stamp(deadline)} if deadline else {}
                async with http.post(f"{base}/{path}", json=body, headers=headers) as r:
                    return await r.json()

            blueprint = {"description": "t", "interfaces": interfaces, "blueprint": {}, "flow": {}}
            assert await post("flow", {"operation": "put-blueprint", "blueprint-name": f"bp-{tag}",
                                       "blueprint-definition": json.dumps(blueprint)}) == {}
            assert await post("flow", {"operation": "start-flow", "blueprint-name": f"bp-{tag}",
                                       "flow-id": f"f-{tag}", "description": "t"}) == {}

            async def refused() -> tuple[dict, float] | None:
                t0 = time.monotonic()
                reply = await post(f"flow/f-{tag}/service/embeddings", {"text": ["hi"]}, deadline=SHORT)
                return (reply, time.monotonic() - t0) if "Nothing serves" in str(reply.get("error")) else None

            # Each probe ends within its SHORT deadline: no pause is needed between them. One made
            # in the topic's grace is refused when the grace ends; a call after it, at once.
            await wait_for_async("the refusal of the unserved interface", refused, LIMIT, every=0)
            reply, took = await refused() or ({}, SHORT)
            assert took < SHORT / 2, f"the refusal took {took:.1f} s"
            assert f"embeddings:f-{tag}" in reply["error"]
            # The served interface of the same flow still answers.
            served = await post(f"flow/f-{tag}/service/text-completion", {"prompt": "hi"})
            assert served.get("response") == "served", served
    finally:
        await ps.close()


async def test_a_tool_service_nothing_serves_fails_at_once_naming_it(own_broker, spawn, tmp_path):
    """Configured (never announced) and nothing consumes its queue: the gateway's tool-service
    route, and so tg-invoke-tool-service, answers tool-service-unavailable at once, naming the
    service and its topic, instead of waiting for the gateway's timeout."""
    spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
    port = free_port()
    spawn("api-gateway", "--port", str(port), "--host", "127.0.0.1", "--pulsar-admin-url", own_broker.admin_url,
          broker=own_broker)
    base = f"http://127.0.0.1:{port}/api/v1"
    tag = uuid.uuid4().hex[:8]
    service = {"id": f"gone-{tag}", "request-queue": f"non-persistent://tg/request/gone-{tag}",
               "response-queue": f"non-persistent://tg/response/gone-{tag}"}
    tool = {"type": "tool-service", "name": f"gone-{tag}", "description": "nobody runs it",
            "service": f"gone-{tag}"}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as http:
        async def post(path: str, body: dict, deadline: float | None = None) -> dict:
            headers = {deadlines.HEADER: deadlines.stamp(deadline)} if deadline else {}
            async with http.post(f"{base}/{path}", json=body, headers=headers) as r:
                return await r.json()

        assert await post("config", {"operation": "put", "values": [
            {"type": "tool-service", "key": f"gone-{tag}", "value": json.dumps(service)},
            {"type": "tool", "key": f"gone-{tag}", "value": json.dumps(tool)}]}) in ({}, {"version": 0})

        async def refused() -> tuple[dict, float] | None:
            t0 = time.monotonic()
            reply = await post("tool-service", {"tool": f"gone-{tag}", "arguments": {}}, deadline=SHORT)
            took = time.monotonic() - t0
            error = reply.get("error") or {}
            if isinstance(error, dict) and error.get("type") == "tool-service-unavailable":
                return error, took
            assert isinstance(error, dict) and error.get("type") in ("tool-timeout", None) or \
                "Unknown tool" in str(error), reply   # the catalog may not have it yet
            return None

        # Each probe ends within its SHORT deadline: no pause is needed between them. One made
        # in the topic's grace is refused when the grace ends; a call after it, at once.
        await wait_for_async("the refusal of the unserved tool service", refused, LIMIT, every=0)
        error, took = await refused() or ({}, SHORT)
        assert took < SHORT / 2, f"the refusal took {took:.1f} s"
        assert f"tool service 'gone-{tag}' is not running" in error["message"]
        assert f"non-persistent://tg/request/gone-{tag}" in error["message"]


async def test_a_global_service_nothing_serves_is_refused_at_once(own_broker, spawn, tmp_path):
    # Upstream's gateway routes librarian, knowledge and collection-management, which this stack
    # does not run: before, a call to one waited for the 120 s deadline.
    base = _stack(own_broker, spawn, tmp_path)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as http:
        async def post(kind: str, deadline: float | None = None) -> tuple[dict, float]:
            headers = {deadlines.HEADER: deadlines.stamp(deadline)} if deadline else {}
            t0 = time.monotonic()
            async with http.post(f"{base}/{kind}", json={"operation": "list"}, headers=headers) as r:
                return await r.json(), time.monotonic() - t0


        async def refused() -> bool:
            return "Nothing serves" in str((await post("librarian", deadline=SHORT))[0].get("error"))

        await wait_for_async("the refusal of librarian", refused, LIMIT, every=0)
        for kind in ("librarian", "knowledge", "collection-management"):
            reply, took = await post(kind)              # no deadline of its own: 120 s before the fix
            assert reply["error"].startswith(f"Nothing serves {kind}: no processor consumes "), reply
            assert took < SHORT, f"{kind} refused after {took:.1f} s"
        served, _ = await post("config")                 # config-svc runs: its route is served
        assert "error" not in served or "Nothing serves" not in str(served["error"]), served


# -- a call made in the grace -----------------------------------------------------------------
# A topic the broker has not shown a consumer on for its grace (12 s: unserved.GRACE) is judged
# only then. Before, a call made meanwhile (a stack just started, a tool configured a moment
# ago) was sent to a topic nobody consumes, dropped, and waited its whole deadline:
# tg-invoke-tool-service past 60 s, the agent 61 s. Now it is held until the topic is judged.

DEADLINE = 90.0  # the held calls' own deadline: a call that keeps it fails the bound below
HELD_BOUND = 60.0  # the grace, the broker's refresh and a loaded machine's delays, well under DEADLINE


class Echo(DynamicToolService):
    async def invoke(self, user, config, arguments):
        return f"echo {arguments.get('text', '')}"


async def _configured_tool(spawn, own_broker, tmp_path, tag: str):
    """config-svc and a gateway started just now, and a tool whose service nothing runs yet, in
    the gateway's catalog: the gateway's readings are younger than the grace."""
    spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
    port = free_port()
    gateway = spawn("api-gateway", "--port", str(port), "--host", "127.0.0.1", "--pulsar-admin-url",
                    own_broker.admin_url, broker=own_broker)
    base = f"http://127.0.0.1:{port}/api/v1"
    service = {"id": f"late-{tag}", "request-queue": f"non-persistent://tg/request/late-{tag}",
               "response-queue": f"non-persistent://tg/response/late-{tag}"}
    tool = {"type": "tool-service", "name": f"late-{tag}", "description": "started late",
            "service": f"late-{tag}", "arguments": [{"name": "text", "type": "string"}]}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as http:
        async with http.post(f"{base}/config", json={"operation": "put", "values": [
                {"type": "tool-service", "key": f"late-{tag}", "value": json.dumps(service)},
                {"type": "tool", "key": f"late-{tag}", "value": json.dumps(tool)}]}) as r:
            assert r.status == 200, await r.text()

        async def in_catalog() -> bool:
            async with http.get(f"{base}/tool-catalog") as r:
                return any(t.get("name") == f"late-{tag}" for t in (await r.json()).get("tools", []))

        await wait_for_async("the tool in the gateway's catalog", in_catalog, 60, every=0.1)
    return base, gateway


async def _call(base: str, tag: str) -> tuple[dict, float]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=DEADLINE + 30)) as http:
        t0 = time.monotonic()
        async with http.post(f"{base}/tool-service", json={"tool": f"late-{tag}", "arguments": {"text": "hi"}},
                             headers={deadlines.HEADER: deadlines.stamp(DEADLINE)}) as r:
            return await r.json(), time.monotonic() - t0


def _holding(gateway, tag: str) -> bool:
    return f"Holding calls to tg/request/late-{tag}" in gateway.output()


async def test_a_call_made_in_the_grace_is_refused_when_the_grace_ends_not_at_its_deadline(own_broker, spawn,
                                                                                         tmp_path):
    tag = uuid.uuid4().hex[:8]
    base, gateway = await _configured_tool(spawn, own_broker, tmp_path, tag)
    reply, took = await _call(base, tag)
    error = reply.get("error") or {}
    assert error.get("type") == "tool-service-unavailable", reply
    assert took < HELD_BOUND, f"the refusal took {took:.1f} s (its deadline: {DEADLINE:.0f} s)"
    assert f"tool service 'late-{tag}' is not running" in error["message"]
    assert f"non-persistent://tg/request/late-{tag}" in error["message"]
    assert _holding(gateway, tag), gateway.output()   # it was made in the grace, and held


async def test_a_call_held_in_the_grace_goes_to_a_service_started_meanwhile(own_broker, spawn, tmp_path):
    tag = uuid.uuid4().hex[:8]
    base, gateway = await _configured_tool(spawn, own_broker, tmp_path, tag)
    call = asyncio.ensure_future(_call(base, tag))
    svc = None
    try:
        await wait_for_async("the gateway holding the call", lambda: _holding(gateway, tag), 30,
                             detail=gateway.output)
        svc = Echo(id=f"late-{tag}", pulsar_host=own_broker.url, metrics=False, topic=f"late-{tag}",
                   announce=False)
        await svc.start()
        reply, took = await asyncio.wait_for(call, DEADLINE + 30)
        assert reply.get("response") == "echo hi", reply
        assert took < HELD_BOUND, f"the answer took {took:.1f} s"
    finally:
        call.cancel()
        if svc is not None:
            await svc.stop()
