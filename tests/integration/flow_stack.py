"""A config-svc of one test alone, and services started to follow it with flows of their own.

Each test runs its own config-svc on topics of its own (the session broker is
shared), starts the services under test with unique ids, and gives them flows
by putting ``active-flow/<id>`` through that config-svc, as start-flow would.
Used by the LLM service tests (``test_llm_services``, ``test_compat_llm_broker``) and the MCP SDK
revisions (``test_mcp_sdk_revisions``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support import wait_for_async
from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.schema import ConfigRequest, ConfigResponse, ConfigValue
from trustgraph.topics import to_pulsar


def uid() -> str:
    return uuid.uuid4().hex[:8]


def pair(name: str) -> tuple[str, str]:
    return f"non-persistent://tg/request/{name}", f"non-persistent://tg/response/{name}"


class Stack:
    """A config-svc of this test alone, plus helpers to configure and call flows."""

    def __init__(self, broker: Any, spawn: Any, tmp_path: Path) -> None:
        tag = uid()
        self.broker, self._spawn, self.tmp = broker, spawn, tmp_path
        self.push = f"persistent://tg/config/push-{tag}"
        self.config_topics = pair(f"config-{tag}")
        flow_topics = pair(f"flow-{tag}")
        self.procs = [spawn(
            "config-svc", "--store", str(tmp_path / "config.db"),
            "--config-request-queue", self.config_topics[0], "--config-response-queue", self.config_topics[1],
            "--flow-request-queue", flow_topics[0], "--flow-response-queue", flow_topics[1],
            "--config-push-queue", self.push, broker=broker, wait=False)]
        self.pubsub = PubSub(broker.url, processor="test")
        self.clients: list[RequestResponseClient] = []
        self._served: dict[str, asyncio.Future[None]] = {}

    def start(self, command: str, ident: str, *args: str, env: dict[str, str] | None = None,
              lead: tuple[str, ...] = ()) -> Any:
        """Start a service following this stack's config; call :meth:`ready` after.

        ``lead``: arguments before the flags (``start("python", id, lead=(script,))``).
        """
        proc = self._spawn(command, *lead, *self.follow(ident), *args, broker=self.broker, wait=False, env=env)
        self.procs.append(proc)
        return proc

    def follow(self, ident: str) -> list[str]:
        """The flags that make a processor ``ident`` follow this stack's config-svc."""
        return ["--id", ident, "--config-push-queue", self.push, "--config-request-queue", self.config_topics[0],
                "--config-response-queue", self.config_topics[1]]

    def ready(self) -> None:
        for p in self.procs:
            p.wait_ready(p.ready_file, 30)

    async def put(self, values: dict[tuple[str, str], str]) -> None:
        c = self.client(self.config_topics, ConfigRequest, ConfigResponse)
        r = await c.request(ConfigRequest(operation="put", values=[
            ConfigValue(type=t, key=k, value=v) for (t, k), v in values.items()]), timeout=10)
        assert r.error is None, r.error

    def served(self, topic: str) -> asyncio.Future[None]:
        """Done once a processor of ours says it serves ``topic`` (its ``ServingStarted`` notice, or
        its answer to who serves what): a request sent before it would be dropped by a topic
        nobody consumes and wait its whole deadline.  Ask before the flow is put."""
        if not self._served:
            self.pubsub.calls.on_serving(self._heard)
        return self._served.setdefault(to_pulsar(topic), asyncio.get_running_loop().create_future())

    def _heard(self, topic: str) -> None:
        heard = self._served.get(topic)
        if heard is not None and not heard.done():
            heard.set_result(None)

    def client(self, topics: tuple[str, str], req: type, resp: type) -> RequestResponseClient:
        c = RequestResponseClient(self.pubsub, request_topic=topics[0], response_topic=topics[1],
                                  request_schema=req, response_schema=resp,
                                  subscription=f"test-{uuid.uuid4()}")
        self.clients.append(c)
        return c

    async def close(self) -> None:
        for c in self.clients:
            await c.stop()
        await self.pubsub.close()


async def until_served(call, what: str, total: float = 60.0, ok: Callable[[Any], bool] | None = None) -> Any:
    """Retry ``call`` until the service answers (and ``ok`` holds of the answer): its flow starts
    after a config push."""

    async def answered() -> tuple[Any] | None:
        try:
            answer = await call()
        except TimeoutError:
            return None
        return (answer,) if ok is None or ok(answer) else None

    return (await wait_for_async(f"answer from {what}", answered, total, every=0))[0]
