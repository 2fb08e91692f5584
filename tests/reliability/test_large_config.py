"""A large config: 2,000 tools, 10 MB, readable, pushable and fetchable.

Before the fix, a config over one broker message (about 5 MiB) stopped the
stack: config-svc could neither push it nor answer a fetch (MessageTooLarge on
every one), callers timed out after 120 s and a restarted processor never got
its config.  Now a reply that big goes in parts to a caller that asks for them
(ours all do), a version too big to push is announced on the notice topic and
fetched by our processors, and an upstream-style caller gets an error naming
the size at once instead of silence.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import aiohttp
import pytest
from support import BIN
from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.base.launching.broker import free_port
from trustgraph.base.messaging.pubsub import CONFIG_LANE
from trustgraph.base.processors import config_parts
from trustgraph.base.processors.async_processor import AsyncProcessor
from trustgraph.schema import ConfigRequest, ConfigResponse, ConfigValue
from trustgraph.topics import CONFIG_REQUEST, CONFIG_RESPONSE

TOOLS = 2000
BATCH = 400            # one put of 400 tools is about 2 MB: within one message
WAIT = 120.0           # bound on each wait for an event; the scenario takes ~20 s idle


def descriptor(i: int) -> str:
    return json.dumps({"type": "tool-service", "name": f"tool-{i}", "service": "joke-service",
                       "description": f"Tool {i}: " + "a long description of what it does " * 140,
                       "arguments": [{"name": "topic", "type": "string", "description": "the topic"}]})


class Follower(AsyncProcessor):
    """A processor of ours that follows config: pushes, notices and fetches."""

    def __init__(self, url: str, name: str) -> None:
        super().__init__(id=name, pulsar_host=url, metrics=False)
        self.tools = 0
        self.full = asyncio.Event()
        self.register_config_handler(self._on_tools, types=["tool"])

    async def _on_tools(self, config: dict, version: int) -> None:
        self.tools = len(config.get("tool", {}))
        if self.tools == TOOLS:
            self.full.set()


@pytest.mark.long
async def test_a_10_mb_config_of_2000_tools_is_readable_pushable_and_fetchable(own_broker, spawn, tmp_path,
                                                                                scenario):
    spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
    port = free_port()
    spawn("api-gateway", "--port", str(port), "--host", "127.0.0.1", broker=own_broker)
    before = Follower(own_broker.url, "before")
    ps = PubSub(own_broker.url, processor="large-config")
    client = RequestResponseClient(ps, request_topic=CONFIG_REQUEST, response_topic=CONFIG_RESPONSE,
                                   request_schema=ConfigRequest, response_schema=ConfigResponse,
                                   subscription=f"large-{uuid.uuid4()}", lane=CONFIG_LANE)
    after: Follower | None = None
    try:
        await before.start()
        values = [ConfigValue(type="tool", key=f"t{i:04d}", value=descriptor(i)) for i in range(TOOLS)]
        size = sum(len(v.value) for v in values)
        assert size > 10_000_000
        for start in range(0, TOOLS, BATCH):
            resp = await client.request(ConfigRequest(operation="put", values=values[start:start + BATCH]),
                                        timeout=60)
            assert resp.error is None, resp.error
        # Pushable: a processor already running gets the version too big to push (notice, then fetch).
        t0 = time.monotonic()
        await asyncio.wait_for(before.full.wait(), WAIT)
        pushed_s = time.monotonic() - t0
        # Fetchable: a processor started now gets it at start.
        after = Follower(own_broker.url, "after")
        t0 = time.monotonic()
        await after.start()
        await asyncio.wait_for(after.full.wait(), WAIT)
        fetched_s = time.monotonic() - t0
        # Readable: our client in parts; through the gateway, as one reply (what tg-show-config reads).
        whole = await config_parts.request(client, ConfigRequest(operation="config"), timeout=60)
        assert len(whole.config["tool"]) == TOOLS
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT)) as http:
            async with http.post(f"http://127.0.0.1:{port}/api/v1/config", json={"operation": "config"}) as r:
                body = await r.json()
        assert len(body["config"]["tool"]) == TOOLS, str(body)[:500]
        # An upstream-style caller (no 'parts' property) gets an error naming the size, at once.
        t0 = time.monotonic()
        plain = await client.request(ConfigRequest(operation="config"), timeout=60)
        refused_s = time.monotonic() - t0
        assert plain.error is not None and "bytes" in plain.error.message, plain.error
        # The command users run reads it whole through the gateway.
        proc = await asyncio.create_subprocess_exec(
            str(BIN / "tg-show-config"), "-u", f"http://127.0.0.1:{port}/",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), WAIT)
        assert proc.returncode == 0, err.decode()[-2000:]
        assert out.count(b'"tool-') >= TOOLS
    finally:
        await client.stop()
        await ps.close()
        await before.stop()
        if after is not None:
            await after.stop()
    scenario(scenario="large config", load=f"{TOOLS:,} tools, {size / 1e6:.1f} MB of config, put in "
             f"{TOOLS // BATCH} writes", fault="none: a config over one broker message",
             expected="running and new processors get it, the gateway and tg-show-config read it whole, "
                      "an upstream-style fetch is refused with its size",
             observed=f"running processor had it {pushed_s:.1f} s after the last put, a new one "
                      f"{fetched_s:.1f} s after start; upstream-style fetch refused in {refused_s:.2f} s",
             ok=True)
