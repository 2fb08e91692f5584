"""Upstream 2.1.4's own mcp-tool on our trustgraph-base, serving a flow on pulsar-lite.

``.interop/flow-on-ours`` holds our trustgraph-base with upstream's trustgraph-flow 2.1.4
(``interop/venvs.py``): upstream's mcp-tool is a ``trustgraph.base.ToolService``, which there is
our compatibility layer over our FlowProcessor.  It runs as a process beside our config-svc,
takes its MCP servers from config (type ``mcp``), and answers tool requests by calling the test
MCP server (the official SDK, ``tests/integration/mcp_stand_in.py``): text, a structured result
as an object, a tool's error result as its text (upstream's reading), and an unknown tool as
upstream's ``tool-error``.
"""

from __future__ import annotations

import json

import pytest
from flow_stack import pair, uid, until_served
from support import Proc
from trustgraph.schema import ToolRequest, ToolResponse

pytestmark = [pytest.mark.interop, pytest.mark.long, pytest.mark.timeout(900)]

PEER = "upstream mcp-tool 2.1.4 on our base"


async def test_upstreams_mcp_tool_answers_on_our_base(flow_on_ours, stack, procs, mcp_stand_in, tmp_path, row):
    server = mcp_stand_in()
    ident, topics = f"mcp-tool-{uid()}", pair(f"mcp-tool-{uid()}")
    ready = tmp_path / "upstream-mcp-tool-ready"
    proc = Proc([str(flow_on_ours.bin("mcp-tool")), *stack.follow(ident), "--no-metrics", "--no-loki-enabled",
                 "--pulsar-host", stack.broker.url], tmp_path / "upstream-mcp-tool.log",
                env={"TG_READY_FILE": str(ready)}).start()
    procs.append(proc)
    stack.ready()
    proc.wait_ready(ready, 60)
    await stack.put({
        ("active-flow", ident): json.dumps({"f": {"request": topics[0], "response": topics[1]}}),
        ("mcp", "shout"): json.dumps({"url": server.url}),
        ("mcp", "weather"): json.dumps({"url": server.url, "remote-name": "lookup"}),
        ("mcp", "fail"): json.dumps({"url": server.url})})
    tool = stack.client(topics, ToolRequest, ToolResponse)

    r = await until_served(lambda: tool.request(ToolRequest(name="shout", parameters='{"text": "hello"}'),
                                                timeout=15), "upstream's mcp-tool", total=90,
                           ok=lambda r: r.error is None)
    text = (r.error, r.text, r.object) == (None, "HELLO", None)
    row(PEER, "tool request → text (test MCP server)", text, repr(r.text))
    assert text, r

    r = await tool.request(ToolRequest(name="weather", parameters='{"city": "Oslo"}'), timeout=30)
    structured = r.error is None and r.text is None and json.loads(r.object) == {"city": "Oslo", "temp": 4}
    row(PEER, "tool request → structured result as object", structured, repr(r.object))
    assert structured, r

    # Upstream reads a tool's error result as its text (it does not look at isError), here as there.
    r = await tool.request(ToolRequest(name="fail", parameters='{"reason": "on purpose"}'), timeout=30)
    as_text = r.error is None and "on purpose" in (r.text or "")
    row(PEER, "failing MCP tool → its error text, as upstream reads it", as_text, repr(r.text))
    assert as_text, r

    r = await tool.request(ToolRequest(name="nowhere", parameters="{}"), timeout=30)
    failed = r.error is not None and r.error.type == "tool-error" and "nowhere" in r.error.message
    row(PEER, "tool not in config → tool-error", failed, r.error.message if r.error else repr(r))
    assert failed, r
