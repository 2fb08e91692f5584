"""The catalog's tools as MCP tools: how they are listed and how a call runs.

Each usable tool of the catalog (configured and announced tool services,
and the other types the agent calls: knowledge-query, prompt, mcp-tool...)
is one MCP tool: its name, its description, and its argument schema
(``CatalogTool.schema``, the very schema a call's arguments are checked
with) as ``inputSchema``.  A tool's example questions end its description
and are in its ``_meta`` too (``trustgraph.mcp_client.examples`` says why
both).  What the tool says of its effects (``read-only``, ``destructive``,
``idempotent``, ``open-world``, its service's where it says nothing itself)
are its ``annotations``, MCP's hints; one nobody gave is left out, so the
client reads it as MCP's default, the worst case
(``trustgraph.base.descriptors.annotations``).  A call runs through :func:`trustgraph.catalog.calling.call_tool`,
as the agent's and the gateway's do, so an MCP client gets the answer, or
the refusal, that they get.

Everything that goes wrong with a call is a result flagged ``isError`` with
the call's one line (``type: message``; a caller's mistake or a failing tool
is data for the caller, not a protocol failure): an unknown tool, arguments
that do not fit the schema, the service's own error, a service that is not
running, a deadline.  A call the approval policy (``tool-policy/approval``, the
catalog's) holds for a person is asked about first (``approval.py``).  A
streaming tool service's chunks are sent as progress notifications while the
call runs (when the client asked for progress), and the whole text is the
result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import mcp_types as types
from trustgraph.base.tool_services.tool_service_client import ToolServiceClients
from trustgraph.catalog import Catalog
from trustgraph.catalog.calling import CallableTool, call_tool
from trustgraph.catalog.policy import APPROVAL_DEFAULT, ApprovalPolicy
from trustgraph.mcp_client.examples import listing_meta, with_examples

Progress = Callable[[str], Awaitable[None]]


def error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def text_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=False)


@dataclass(frozen=True)
class ToolTable:
    """The tools of one catalog, each with the implementation that calls it; never changed once built."""

    tools: Mapping[str, CallableTool]
    approval: ApprovalPolicy = APPROVAL_DEFAULT   # which calls wait for a person (``approval.py``)

    @classmethod
    def build(cls, catalog: Catalog, clients: ToolServiceClients, groups: list[str] | None) -> ToolTable:
        tools = [CallableTool.build(entry, clients) for entry in catalog.tools.values()]
        if groups is not None:   # by group only: an MCP client has no agent state
            tools = [t for t in tools if "*" in groups or set(groups) & set(t.groups)]
        return cls(MappingProxyType({t.name: t for t in sorted(tools, key=lambda t: t.name)}), catalog.approval)

    def listing(self) -> list[types.Tool]:
        """``tools/list``: every tool with its argument schema as its input schema, and its annotations."""
        return [types.Tool(name=t.name, description=with_examples(t.description, t.examples) or None,
                           input_schema=dict(t.schema), meta=listing_meta(t.examples),
                           annotations=types.ToolAnnotations.model_validate(hints) if (hints := t.annotations.to_mcp())
                           else None)
                for t in self.tools.values()]

    def signature(self) -> tuple[Any, ...]:
        """What a client sees of the list: a change of it is a ``list_changed``."""
        return tuple((t.name, t.description, t.examples, repr(t.schema), t.annotations) for t in self.tools.values())

    async def call(self, name: str, arguments: dict[str, Any] | None, *, user: str, flow: Any,
                   timeout: float, progress: Progress | None = None) -> types.CallToolResult:
        """Run one ``tools/call``; every failure is an ``isError`` result."""
        tool = self.tools.get(name)
        if tool is None:
            return error_result(f"Unknown tool '{name}'. The tools are: {', '.join(self.tools) or 'none'}.")
        result = await call_tool(tool, arguments, user=user, flow=flow, timeout=timeout, on_chunk=progress)
        return text_result(result.text) if result.answered else error_result(result.text)
