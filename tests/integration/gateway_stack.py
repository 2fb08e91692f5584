"""A real ``config-svc`` and ``api-gateway`` on the session broker, shared by the gateway tests.

Each module that uses the ``stack`` fixture gets its own pair of processes, with config/flow/push
topics of their own so that other tests' config services never answer theirs.  Services behind
the gateway are played by ``responder`` in the test process, so a test controls what comes back.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from support import BIN, Proc, wait_for_async
from trustgraph.base import PubSub
from trustgraph.base.launching.broker import EmbeddedBroker, free_port

GATEWAY = BIN / "api-gateway"


def gateway_command() -> list[str]:
    # Before the console script is installed, run the module: same code, same flags.
    return [str(GATEWAY)] if GATEWAY.exists() else [sys.executable, "-m", "trustgraph.gateway"]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@dataclass
class Stack:
    url: str
    queues: list[str]  # the flags that give config-svc and gateways this module's topics
    tag: str
    gateway_pid: int = 0


def start_proc(tmp: Path, name: str, cmd: list[str], broker: EmbeddedBroker, env: dict | None = None) -> Proc:
    """Like the ``spawn`` fixture, but usable from a module-scoped fixture."""
    ready = tmp / f"ready-{name}"
    proc = Proc([*cmd, "--no-metrics", "--pulsar-host", broker.url], tmp / f"{name}.log",
                env={"TG_READY_FILE": str(ready), **(env or {})}).start()
    try:
        proc.wait_ready(ready)
    except BaseException:
        proc.stop()
        raise
    return proc


def start_gateway(tmp: Path, broker: EmbeddedBroker, queues: list[str], *extra: str,
                  env: dict | None = None) -> tuple[Proc, str]:
    port = free_port()
    cmd = [*gateway_command(), "--port", str(port), "--host", "127.0.0.1", *queues, *extra]
    return start_proc(tmp, f"gateway-{port}", cmd, broker, env), f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def stack(broker: EmbeddedBroker, tmp_path_factory: pytest.TempPathFactory) -> Stack:
    tmp = tmp_path_factory.mktemp("gateway")
    tag = uuid.uuid4().hex[:8]
    queues = []
    for service in ("config", "flow"):
        for side in ("request", "response"):
            queues += [f"--{service}-{side}-queue", f"non-persistent://tg/{side}/{service}-{tag}"]
    queues += ["--config-push-queue", f"persistent://tg/config/config-{tag}"]
    config_svc = start_proc(tmp, "config-svc", [str(BIN / "config-svc"), "--store", str(tmp / "c.db"), *queues],
                            broker)
    gateway, url = start_gateway(tmp, broker, queues)
    yield Stack(url, queues, tag, gateway.p.pid)
    gateway.stop()
    config_svc.stop()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        yield session


@pytest.fixture
async def pubsub(broker: EmbeddedBroker) -> AsyncIterator[PubSub]:
    ps = PubSub(broker.url, processor="gateway-test")
    yield ps
    await ps.close()


async def post(http: aiohttp.ClientSession, url: str, body: Any, **kw: Any) -> Any:
    async with http.post(url, data=body if isinstance(body, str) else json.dumps(body), **kw) as r:
        assert r.status == 200, await r.text()
        return await r.json()


async def eventually(check: Callable[[], Awaitable[Any]], what: str = "condition", timeout: float = 30.0) -> Any:
    """Wait until an async check returns something truthy (config pushes are asynchronous)."""
    return await wait_for_async(what, check, timeout)


def topics(stack: Stack, kind: str, flow: str) -> tuple[str, str]:
    return (f"non-persistent://tg/request/{kind}:{flow}-{stack.tag}",
            f"non-persistent://tg/response/{kind}:{flow}-{stack.tag}")


async def start_flow(http: aiohttp.ClientSession, stack: Stack, flow: str) -> None:
    """Start ``flow`` (text-completion, agent, and an untranslated kind) and wait until routed."""
    interfaces: dict[str, Any] = {
        kind: {"request": f"non-persistent://tg/request/{kind}:{{id}}-{stack.tag}",
               "response": f"non-persistent://tg/response/{kind}:{{id}}-{stack.tag}"}
        for kind in ("text-completion", "agent", "triples")
    }
    interfaces["triples-store"] = "persistent://tg/flow/triples-store:{id}"
    blueprint = {"description": "gateway test", "interfaces": interfaces, "blueprint": {}, "flow": {}}
    api = f"{stack.url}/api/v1/flow"
    assert await post(http, api, {"operation": "put-blueprint", "blueprint-name": f"bp-{stack.tag}",
                                  "blueprint-definition": json.dumps(blueprint)}) == {}
    assert await post(http, api, {"operation": "start-flow", "blueprint-name": f"bp-{stack.tag}",
                                  "flow-id": flow, "description": "test flow"}) == {}

    async def routed() -> bool:
        reply = await post(http, f"{stack.url}/api/v1/flow/{flow}/service/prompt", {})
        return reply == {"error": "This kind not supported by flow"}

    await eventually(routed)


async def responder(ps: PubSub, pair: tuple[str, str], schema: type,
                    answer: Callable[[Any], AsyncIterator[Any]], concurrency: int = 8) -> list[Any]:
    """Serve ``pair`` from the test: each request gets the records ``answer`` yields."""
    out = await ps.producer(pair[1])
    seen: list[Any] = []

    async def on(msg: Any) -> None:
        seen.append(msg.value)
        async for record in answer(msg.value):
            await out.send(record, {"id": msg.id})

    await ps.consumer(pair[0], unique("responder"), schema, handler=on, concurrency=concurrency)
    return seen
