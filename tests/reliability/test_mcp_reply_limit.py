"""A 100 MB reply of an MCP server is cut while mcp-tool reads it, not after.

Before the fix the MCP SDK read a JSON reply whole (``response.aread()``)
before anything could refuse it: a server answering ``tools/call`` with
100 MB took mcp-tool from 123 to 842 MB, and the memory was not returned.
Now each reply is counted as it arrives and cut at 8 MiB
(``mcp_client.connection.MAX_REPLY_BYTES``), the call is a ``tool-error``
saying so, and the session goes on for the next call.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path

from support import Proc
from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.base.launching.broker import free_port, wait_for_port
from trustgraph.base.messaging import deadlines
from trustgraph.schema import ConfigRequest, ConfigResponse, ConfigValue, ToolRequest, ToolResponse
from trustgraph.topics import CONFIG_REQUEST, CONFIG_RESPONSE

SERVER = Path(__file__).with_name("huge_mcp_server.py")
MEGABYTES = 100
BOUND_MB = 64          # what reading one reply may add to mcp-tool's peak memory
TIMEOUT = 60.0


def _peak_mb(pid: int) -> float:
    """The process's peak resident memory (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


async def test_a_100_mb_reply_is_cut_while_read_with_memory_bounded(own_broker, spawn, tmp_path, scenario):
    port = free_port()
    server = Proc([sys.executable, str(SERVER), str(port)], tmp_path / "huge.log").start()
    flow = f"mcp-{uuid.uuid4().hex[:8]}"
    req, resp = f"non-persistent://tg/request/{flow}", f"non-persistent://tg/response/{flow}"
    ps = PubSub(own_broker.url, processor="mcp-reply-limit")
    config = RequestResponseClient(ps, request_topic=CONFIG_REQUEST, response_topic=CONFIG_RESPONSE,
                                   request_schema=ConfigRequest, response_schema=ConfigResponse,
                                   subscription=f"limit-{uuid.uuid4()}")
    client = RequestResponseClient(ps, request_topic=req, response_topic=resp, request_schema=ToolRequest,
                                   response_schema=ToolResponse, subscription=f"limit-{uuid.uuid4()}")

    async def call(megabytes: float) -> tuple[ToolResponse, float]:
        t0 = time.monotonic()
        reply = await client.request(ToolRequest(name="huge", parameters=json.dumps({"megabytes": megabytes})),
                                     timeout=TIMEOUT, properties={deadlines.DEADLINE: deadlines.stamp(TIMEOUT)})
        return reply, time.monotonic() - t0

    try:
        wait_for_port("127.0.0.1", port, 30, server.p)
        spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
        values = [ConfigValue(type="active-flow", key="mcp-tool", value=json.dumps({flow: {"request": req,
                                                                                            "response": resp}})),
                  ConfigValue(type="mcp", key="huge", value=json.dumps({"url": f"http://127.0.0.1:{port}/mcp"}))]
        put = await config.request(ConfigRequest(operation="put", values=values), timeout=TIMEOUT)
        assert put.error is None, put.error
        tool = spawn("mcp-tool", broker=own_broker, env={"TG_READY_AFTER_CONFIG": "1"}, timeout=60)
        small, _ = await call(0.01)
        assert small.error is None and len(small.text) == int(0.01 * 1024 * 1024), small.error
        before = _peak_mb(tool.p.pid)
        big, took = await call(MEGABYTES)
        after = _peak_mb(tool.p.pid)
        again, _ = await call(0.01)
        assert tool.p.poll() is None, tool.output()
    finally:
        await client.stop()
        await config.stop()
        await ps.close()
        server.stop()
    grew = after - before
    message = big.error.message if big.error is not None else ""
    ok = (big.error is not None and big.error.type == "tool-error" and "too large" in message
          and grew < BOUND_MB and again.error is None)
    scenario(scenario="MCP reply over the limit", load="mcp-tool calling a hostile MCP server (127.0.0.1)",
             fault=f"tools/call answered with {MEGABYTES} MB of JSON",
             expected=f"a tool-error within the call, mcp-tool's peak memory up by less than {BOUND_MB} MB, "
                      f"the next call answered",
             observed=f"{big.error.type if big.error else 'no error'} after {took:.2f} s; peak memory "
                      f"{before:.0f} -> {after:.0f} MB; next call "
                      + ("answered" if again.error is None else f"failed: {again.error.message}"), ok=ok)
    assert big.error is not None and big.error.type == "tool-error", big
    assert "too large" in message and "8,388,608-byte limit" in message, message
    assert grew < BOUND_MB, f"mcp-tool's peak memory grew by {grew:.0f} MB reading the reply"
    assert again.error is None and len(again.text) == int(0.01 * 1024 * 1024)
