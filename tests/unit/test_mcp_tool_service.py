"""mcp-tool's answers to requests it cannot send anywhere (no MCP server needed), on the in-memory transport."""

from __future__ import annotations

import json

import pytest
from trustgraph.agent.mcp_tool import Processor
from trustgraph.base.testing import worker
from trustgraph.mcp_client.results import McpToolError, read_result
from trustgraph.schema import ToolRequest, ToolResponse


async def ask(w, flow, name: str, parameters: str) -> ToolResponse:
    replies = await w.call(flow["request"], flow["response"], ToolRequest(name=name, parameters=parameters),
                           ToolResponse)
    return replies[-1]


async def test_bad_entries_and_requests_are_tool_errors_that_say_why():
    async with worker(Processor) as w:
        flow = w.flow_definition("f")
        await w.open_flow("f", flow)
        await w.configure({"mcp": {"no-url": {"remote-name": "x"}, "ftp": {"url": "ftp://host/mcp"},
                                   "good": {"url": "http://127.0.0.1:9/mcp"}}})
        unknown = await ask(w, flow, "nope", "{}")
        assert unknown.error.type == "tool-error" and unknown.error.message == "MCP service nope not known"
        assert (unknown.text, unknown.object) == (None, None)
        no_url = await ask(w, flow, "no-url", "{}")
        assert no_url.error.message == "MCP service no-url URL not defined"
        ftp = await ask(w, flow, "ftp", "{}")
        assert "misconfigured" in ftp.error.message and "http://" in ftp.error.message
        bad = await ask(w, flow, "good", "[1, 2]")
        assert bad.error.message == "parameters must be a JSON object, got list"
        garbage = await ask(w, flow, "good", "{not json")
        assert garbage.error.message.startswith("parameters are not valid JSON")
        # Nothing listens on port 9: an error naming the server, and the service goes on.
        down = await ask(w, flow, "good", "")
        assert down.error.type == "tool-error" and "127.0.0.1:9" in down.error.message
        assert (await ask(w, flow, "nope", "{}")).error is not None


class _Result:
    def __init__(self, content=(), structured=None, is_error=False):
        self.content = list(content)
        self.structured_content = structured
        self.is_error = is_error


class _Item:
    def __init__(self, type, **fields):
        self.type = type
        self.__dict__.update(fields)


def test_results_read_as_wire_md_section_8_says():
    assert read_result(_Result([_Item("text", text="a"), _Item("text", text="b")])).text == "ab"
    assert json.loads(read_result(_Result([_Item("text", text="x")], structured={"n": 1})).obj) == {"n": 1}
    assert read_result(_Result([_Item("image", mime_type="image/png")])).text == "[image content (image/png)]"
    with pytest.raises(McpToolError, match="disk full"):
        read_result(_Result([_Item("text", text="disk full")], is_error=True))
    with pytest.raises(ValueError, match="not JSON"):
        read_result(_Result(structured={"x": object()}))
