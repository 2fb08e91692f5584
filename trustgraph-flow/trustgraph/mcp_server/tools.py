"""The catalog's tools as MCP tools: how they are listed and how a call runs.

Each usable tool of the catalog (configured and announced tool services,
and the other types the agent calls: knowledge-query, prompt, mcp-tool...)
is one MCP tool: its name, its description, and its argument schema
(``CatalogTool.schema``, the very schema the agent checks a model's
arguments with) as ``inputSchema``.  A tool's example questions end its
description and are in its ``_meta`` too (``trustgraph.mcp_client.examples``
says why both).  A call runs through the agent's own
implementation of the tool's type (``trustgraph.agent.react.tools.BUILDERS``),
so an MCP client and the agent call a tool in the same way.

Everything that goes wrong with a call is a result flagged ``isError`` with
a text saying what (STYLE.md 5: a caller's mistake or a failing tool is
data for the caller, not a protocol failure): an unknown tool, arguments
that do not fit the schema, the service's own error, a service that is not
running, a deadline.  A streaming tool service's chunks are sent as progress
notifications while the call runs (when the client asked for progress), and
the whole text is the result.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import mcp_types as types
from trustgraph.agent.react.registry import Tool
from trustgraph.agent.react.tools import BUILDERS
from trustgraph.agent.react.types import CallContext
from trustgraph.base.text import as_text
from trustgraph.base.tool_service_client import ToolServiceClients, ToolServiceError
from trustgraph.catalog import ArgumentError, Catalog
from trustgraph.mcp_client.examples import listing_meta, with_examples

logger = logging.getLogger(__name__)

Progress = Callable[[str], Awaitable[None]]


def error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def text_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=False)


@dataclass(frozen=True)
class ToolTable:
    """The tools of one catalog, each with the implementation that calls it; never changed once built."""

    tools: Mapping[str, Tool]

    @classmethod
    def build(cls, catalog: Catalog, clients: ToolServiceClients, groups: list[str] | None) -> ToolTable:
        tools = [Tool.of(entry, BUILDERS[entry.type](entry, clients)) for entry in catalog.tools.values()]
        if groups is not None:   # by group only: an MCP client has no agent state
            tools = [t for t in tools if "*" in groups or set(groups) & set(t.groups)]
        return cls(MappingProxyType({t.name: t for t in sorted(tools, key=lambda t: t.name)}))

    def listing(self) -> list[types.Tool]:
        """``tools/list``: every tool with its argument schema as its input schema."""
        return [types.Tool(name=t.name, description=with_examples(t.description, t.examples) or None,
                           input_schema=dict(t.schema), meta=listing_meta(t.examples))
                for t in self.tools.values()]

    def signature(self) -> tuple[Any, ...]:
        """What a client sees of the list: a change of it is a ``list_changed``."""
        return tuple((t.name, t.description, t.examples, repr(t.schema)) for t in self.tools.values())

    async def call(self, name: str, arguments: dict[str, Any] | None, *, user: str, flow: Any,
                   timeout: float, progress: Progress | None = None) -> types.CallToolResult:
        """Run one ``tools/call``; every failure is an ``isError`` result."""
        tool = self.tools.get(name)
        if tool is None:
            return error_result(f"Unknown tool '{name}'. The tools are: {', '.join(self.tools) or 'none'}.")
        try:
            checked = tool.check_arguments(arguments or {})
        except ArgumentError as e:
            return error_result(str(e))
        if flow is None and tool.service is None:
            return error_result(f"tool '{name}' is of type {tool.type}, which needs the flow's services, "
                                "and the flow this server calls through is not running")
        timeout = tool.timeout or timeout   # the tool's own limit, as the agent applies it
        ctx = CallContext(user=user, flow=flow, timeout=timeout, on_chunk=progress)
        try:
            async with asyncio.timeout(timeout):
                result = await tool.impl.invoke(ctx, checked)
        except TimeoutError:
            return error_result(f"tool '{name}' did not answer within {timeout:.3g} seconds")
        except ToolServiceError as e:   # the service's own error, or not running (fail-fast)
            return error_result(f"{e.type}: {e.message}" if e.type else e.message)
        except Exception as e:   # ToolFailed and any service's error: the caller's to read
            logger.info("Tool %s failed: %s", name, e)
            return error_result(str(e) or type(e).__name__)
        return text_result(as_text(result))
