"""A flow interface nothing serves is refused at once, not at the call's deadline.

Before, a call to an interface of the flow with no processor behind it (the
bootstrap flow's embeddings, graph-rag, structured-query, ...) waited for the
gateway's 120 s deadline: a request on a non-persistent topic nobody consumes
is dropped without a word.  The gateway now reads the broker's consumer
counts (``--pulsar-admin-url``) and refuses such a call with an error naming
the topic, while a served interface of the same flow keeps answering.
"""

from __future__ import annotations

import json
import time
import uuid

import aiohttp
from support import wait_for_async
from trustgraph.base import PubSub
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

            # Each probe ends within its SHORT deadline: no pause is needed between them.
            reply, took = await wait_for_async("the refusal of the unserved interface", refused, LIMIT, every=0)
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

        # Each probe ends within its SHORT deadline: no pause is needed between them.
        error, took = await wait_for_async("the refusal of the unserved tool service", refused, LIMIT, every=0)
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
