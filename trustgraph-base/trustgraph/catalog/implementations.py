"""How each type of catalog tool is called, and the table that picks the implementation.

Every tool follows one contract: arguments in as a dict, a result out (text,
or JSON-able).  ``BUILDERS`` maps a catalog tool's ``type`` to a small
function returning its implementation; what the descriptor holds, and
whether it is valid, the catalog has already settled.  (Upstream has a
seven-way if/elif here; a table keeps each type in one place and makes an
unknown type a lookup miss, not a fallthrough.)

The agent, the MCP server and the gateway all call tools through
:mod:`trustgraph.catalog.calling`, which uses these; nothing here knows who
is calling.  ``FLOW_CLIENTS`` names the flow's request/response clients the
implementations call through, for a processor to register.  These are
upstream 2.1's records; a processor gets its wire's table from the
component it takes from its wire (the agent's dialect, ``dialect.tools``:
:mod:`.wires`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..base.descriptors.models import ToolServiceDescriptor
from ..base.formats.text import text_or_json
from ..base.tool_services.tool_service_client import QueuePair, ToolServiceClients
from ..schema import (
    EmbeddingsRequest,
    EmbeddingsResponse,
    GraphRagQuery,
    GraphRagResponse,
    PromptRequest,
    PromptResponse,
    RowEmbeddingsRequest,
    RowEmbeddingsResponse,
    StructuredQueryRequest,
    StructuredQueryResponse,
    ToolRequest,
    ToolResponse,
)
from .build import CatalogTool

#: The flow's clients the implementations call (flow key prefix -> request and response
#: records); a processor that calls tools of every type registers these.
FLOW_CLIENTS: dict[str, tuple[type, type]] = {
    "prompt": (PromptRequest, PromptResponse),
    "mcp-tool": (ToolRequest, ToolResponse),
    "graph-rag": (GraphRagQuery, GraphRagResponse),
    "structured-query": (StructuredQueryRequest, StructuredQueryResponse),
    "embeddings": (EmbeddingsRequest, EmbeddingsResponse),
    "row-embeddings-query": (RowEmbeddingsRequest, RowEmbeddingsResponse),
}


@dataclass(frozen=True)
class CallContext:
    """Everything a tool call may depend on besides its arguments.

    ``user`` is the caller's user, passed explicitly on every call rather
    than stored on a shared object, so concurrent calls of different users
    cannot see each other's.  ``flow`` gives the flow's clients
    (``flow("graph-rag-request")``), or None where no flow runs; ``timeout``
    is the seconds the whole call may take.
    """

    user: str
    flow: Any
    timeout: float
    #: Called with each chunk of a tool's output as it arrives, when the
    #: caller streams (tools that do not stream ignore it).
    on_chunk: Callable[[str], Any] | None = None
    #: Whether the answer of a service that does not stream is passed to ``on_chunk`` too
    #: (a socket relays every piece); the agent keeps it whole, as one observation.
    last_chunk: bool = False


class ToolImpl(Protocol):
    """What every tool does: arguments in as a dict, a result out (a string, or JSON-able)."""

    async def invoke(self, ctx: CallContext, arguments: dict[str, Any]) -> Any: ...


class ToolFailed(Exception):
    """A tool's flow service answered with an error: ``type`` and ``message`` are the wire Error's."""

    def __init__(self, type: str, message: str) -> None:
        super().__init__(f"{type}: {message}" if type else message)
        self.type = type
        self.message = message


def raise_error(error: Any) -> None:
    """Raise the wire ``Error`` of a response, if it carries one (as :class:`ToolFailed`)."""
    if error is not None:
        raise ToolFailed(getattr(error, "type", "") or "error", getattr(error, "message", "") or "no message")


@dataclass(frozen=True)
class KnowledgeQueryImpl:
    """Graph-RAG over a collection; as upstream, the user is always ``trustgraph``."""

    collection: str

    async def invoke(self, ctx: CallContext, arguments: dict[str, Any]) -> str:
        resp = await ctx.flow("graph-rag-request").request(
            GraphRagQuery(query=str(arguments.get("question", "")), user="trustgraph",
                          collection=self.collection), timeout=ctx.timeout)
        raise_error(resp.error)
        return resp.response


@dataclass(frozen=True)
class TextCompletionImpl:
    """Asks the LLM directly, through the prompt service's ``question`` template."""

    async def invoke(self, ctx: CallContext, arguments: dict[str, Any]) -> str:
        return await _prompt(ctx, "question", {"question": str(arguments.get("question", ""))})


@dataclass(frozen=True)
class PromptImpl:
    """Runs a prompt template with the model's arguments as its variables."""

    template: str

    async def invoke(self, ctx: CallContext, arguments: dict[str, Any]) -> str:
        return await _prompt(ctx, self.template, arguments)


async def _prompt(ctx: CallContext, template: str, variables: dict[str, Any]) -> str:
    resp = await ctx.flow("prompt-request").request(
        PromptRequest(id=template, terms={k: json.dumps(v) for k, v in variables.items()}),
        timeout=ctx.timeout)
    raise_error(resp.error)
    return text_or_json(resp.text, resp.object)


@dataclass(frozen=True)
class McpToolImpl:
    """Calls an MCP tool through the mcp-tool service (``mcp-tool`` is a key of config ``mcp``)."""

    mcp_tool: str

    async def invoke(self, ctx: CallContext, arguments: dict[str, Any]) -> str:
        resp = await ctx.flow("mcp-tool-request").request(
            ToolRequest(name=self.mcp_tool, parameters=json.dumps(arguments)), timeout=ctx.timeout)
        raise_error(resp.error)
        return text_or_json(resp.text, resp.object)


@dataclass(frozen=True)
class StructuredQueryImpl:
    """Natural language over structured data, as the request's user (unlike knowledge-query)."""

    collection: str

    async def invoke(self, ctx: CallContext, arguments: dict[str, Any]) -> str:
        resp = await ctx.flow("structured-query-request").request(
            StructuredQueryRequest(question=str(arguments.get("question", "")), user=ctx.user,
                                   collection=self.collection), timeout=ctx.timeout)
        raise_error(resp.error)
        if resp.errors and not resp.data:
            raise ToolFailed("", "; ".join(resp.errors))
        return resp.data


@dataclass(frozen=True)
class RowEmbeddingsQueryImpl:
    """Semantic search over a schema's row indexes: embed, then query.

    The answer is upstream's text: ``Matching records:`` and one ``- index:
    values (score: s)`` line per match, or ``No matching records found``.
    """

    schema_name: str
    collection: str
    index_name: str | None
    limit: int

    async def invoke(self, ctx: CallContext, arguments: dict[str, Any]) -> str:
        emb = await ctx.flow("embeddings-request").request(
            EmbeddingsRequest(text=str(arguments.get("query", ""))), timeout=ctx.timeout)
        raise_error(emb.error)
        resp = await ctx.flow("row-embeddings-query-request").request(RowEmbeddingsRequest(
            vectors=emb.vectors or [], schema_name=self.schema_name, user=ctx.user,
            collection=self.collection, index_name=self.index_name or None, limit=self.limit),
            timeout=ctx.timeout)
        raise_error(resp.error)
        return matches_text(resp.matches or [])


def matches_text(matches: list[Any]) -> str:
    """Row-index matches as upstream words them for the model (2.1's and 2.11's alike)."""
    if not matches:
        return "No matching records found"
    lines = [f"- {m.index_name}: {', '.join(m.index_value)} (score: {m.score:.3f})" for m in matches]
    return "Matching records:\n" + "\n".join(lines)


@dataclass(frozen=True)
class ToolServiceImpl:
    """Calls a tool service through the pool (its shared client, fail-fast, retries when safe).

    ``config`` is this tool's values for the service's config params; the
    user comes from the call, never from the client, which every tool and
    request on the service shares.  ``retries``: whether a call that may not
    have run is repeated (the tool's annotations over its service's,
    ``CatalogTool.retries``).  Streamed chunks go to ``ctx.on_chunk``
    as they arrive (a one-message answer too only with ``ctx.last_chunk``);
    the joined text is the result.
    """

    clients: ToolServiceClients
    service: ToolServiceDescriptor
    config: Mapping[str, Any]
    retries: bool = False

    @property
    def queues(self) -> QueuePair:
        return self.service.queues

    async def invoke(self, ctx: CallContext, arguments: dict[str, Any]) -> str:
        return await self.clients.invoke(self.service, ctx.user, dict(self.config), arguments,
                                         timeout=ctx.timeout, on_chunk=ctx.on_chunk, last_chunk=ctx.last_chunk,
                                         retries=self.retries)


Builder = Callable[[CatalogTool, ToolServiceClients], ToolImpl]


def _tool_service(tool: CatalogTool, clients: ToolServiceClients) -> ToolImpl:
    assert tool.service is not None  # the catalog joined it
    return ToolServiceImpl(clients, tool.service, dict(tool.config), tool.retries)


#: Tool type -> implementation.  Every type the catalog can hand out has one.
BUILDERS: dict[str, Builder] = {
    "knowledge-query": lambda tool, _: KnowledgeQueryImpl(tool.descriptor.collection),
    "text-completion": lambda tool, _: TextCompletionImpl(),
    "mcp-tool": lambda tool, _: McpToolImpl(tool.descriptor.mcp_tool),
    "prompt": lambda tool, _: PromptImpl(tool.descriptor.template),
    "structured-query": lambda tool, _: StructuredQueryImpl(tool.descriptor.collection),
    "row-embeddings-query": lambda tool, _: RowEmbeddingsQueryImpl(
        tool.descriptor.schema_name or "", tool.descriptor.collection, tool.descriptor.index_name,
        tool.descriptor.limit),
    "tool-service": _tool_service,
}
