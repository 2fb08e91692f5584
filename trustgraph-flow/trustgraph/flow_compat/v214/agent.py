"""Upstream 2.1.4's agent module types (``Tool``, ``Argument``, ``Action``, ``Final``) and tool implementations
(``KnowledgeQueryImpl(context, collection)``, ... ``invoke(**arguments)``), on ours.

Upstream's implementations take a ``context``: a callable giving the flow's
client for a key (``context("graph-rag-request")``).  These call through
the catalog's implementations (:mod:`trustgraph.catalog.implementations`),
which send the same records and read the same answers; any client with
``request(record, timeout=)`` serves, upstream's flow clients and our
``RequestResponseClient`` alike.  What differs from upstream: a failing
service raises ``RuntimeError`` with its message, as upstream's clients do
(ours raise ``ToolFailed``); a prompt or MCP answer that is a JSON object
comes back as JSON text (ours' one contract: a tool's result is text), and
a structured query's data as the service's JSON text.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from trustgraph.agent.react import vocabulary
from trustgraph.base.descriptors.models import (
    KnowledgeQueryTool,
    RowEmbeddingsQueryTool,
    StructuredQueryTool,
    TextCompletionTool,
)
from trustgraph.base.tool_services.tool_service_client import ToolServiceClient
from trustgraph.catalog import implementations as ours

logger = logging.getLogger(__name__)

__all__ = ["Action", "Argument", "Final", "KnowledgeQueryImpl", "McpToolImpl", "PromptImpl", "RowEmbeddingsQueryImpl",
           "StructuredQueryImpl", "TextCompletionImpl", "Tool", "ToolServiceImpl"]

#: Seconds a call may take: upstream's clients' default.
TIMEOUT = 600.0
#: The user of a call whose context names none (upstream's default).
DEFAULT_USER = "trustgraph"


@dataclasses.dataclass
class Argument:
    """One argument of a tool, as the model is told it."""

    name: str
    type: str
    description: str


@dataclasses.dataclass
class Tool:
    """A tool as upstream's agent holds it: what the model is told, and what calls it."""

    name: str
    description: str
    arguments: list[Argument]
    implementation: Any
    config: dict[str, str]


@dataclasses.dataclass(frozen=True)
class Action(vocabulary.Action):
    """The model asks for a tool, with upstream's ``observation``, the tool's result.

    Upstream's agent fills it in after the call; ours keeps results in the
    request's history.  Frozen, as ours: given and read, not assigned after.
    """

    observation: str = ""


@dataclasses.dataclass(frozen=True, init=False)
class Final(vocabulary.Final):
    """The model is done, with upstream's name for the answer: ``final`` (``Final(thought, final=...)``),
    ``answer`` as ours."""

    def __init__(self, thought: str, answer: str | None = None, *, final: str | None = None) -> None:
        object.__setattr__(self, "thought", thought)
        object.__setattr__(self, "answer", answer if answer is not None else final or "")

    @property
    def final(self) -> str:
        return self.answer


def _arguments(descriptor: Any) -> list[Argument]:
    """A tool type's fixed arguments (the catalog's), as upstream's Argument list."""
    return [Argument(a.name, a.type, a.description) for a in descriptor.fixed_arguments]


def _user(context: Any, key: str | None = None, fallback: str | None = None) -> str:
    """The user of a call: the one upstream's agent puts on the client it gives for ``key``
    (``_current_user``) or on the context itself (``_user``), else ``fallback``, else upstream's
    default."""
    found = [getattr(context(key), "_current_user", None)] if key is not None else []
    found.append(getattr(context, "_user", None))
    for value in found:
        if isinstance(value, str) and value:
            return value
    return fallback or DEFAULT_USER


async def _run(impl: Any, context: Any, arguments: dict[str, Any], user: str) -> Any:
    """Run one of our implementations with ``context`` as the flow; a service's error as
    upstream's clients raise it."""
    ctx = ours.CallContext(user=user, flow=context, timeout=TIMEOUT)
    try:
        return await impl.invoke(ctx, arguments)
    except ours.ToolFailed as e:
        raise RuntimeError(e.message) from None


class KnowledgeQueryImpl:
    """Graph RAG over ``collection`` (``default`` when None), asked as user ``trustgraph``."""

    def __init__(self, context: Any, collection: str | None = None) -> None:
        self.context = context
        self.collection = collection

    @staticmethod
    def get_arguments() -> list[Argument]:
        return _arguments(KnowledgeQueryTool)

    async def invoke(self, **arguments: Any) -> Any:
        impl = ours.KnowledgeQueryImpl(self.collection or "default")
        return await _run(impl, self.context, arguments, DEFAULT_USER)


class TextCompletionImpl:
    """The question put to the LLM through the prompt service's ``question`` template."""

    def __init__(self, context: Any) -> None:
        self.context = context

    @staticmethod
    def get_arguments() -> list[Argument]:
        return _arguments(TextCompletionTool)

    async def invoke(self, **arguments: Any) -> Any:
        return await _run(ours.TextCompletionImpl(), self.context, arguments, DEFAULT_USER)


class McpToolImpl:
    """Calls the MCP tool ``mcp_tool_id`` through the mcp-tool service with the arguments."""

    def __init__(self, context: Any, mcp_tool_id: str, arguments: list[Argument] | None = None) -> None:
        self.context = context
        self.mcp_tool_id = mcp_tool_id
        self.arguments = arguments or []

    def get_arguments(self) -> list[Argument]:
        return self.arguments

    async def invoke(self, **arguments: Any) -> Any:
        return await _run(ours.McpToolImpl(self.mcp_tool_id), self.context, arguments, DEFAULT_USER)


class StructuredQueryImpl:
    """A question over structured data in ``collection``, as the context's user (else ``user``)."""

    def __init__(self, context: Any, collection: str | None = None, user: str | None = None) -> None:
        self.context = context
        self.collection = collection
        self.user = user

    @staticmethod
    def get_arguments() -> list[Argument]:
        return _arguments(StructuredQueryTool)

    async def invoke(self, **arguments: Any) -> Any:
        impl = ours.StructuredQueryImpl(self.collection or "default")
        return await _run(impl, self.context, arguments,
                          _user(self.context, "structured-query-request", self.user))


class RowEmbeddingsQueryImpl:
    """Embeds the query, then finds the nearest rows of ``schema_name``'s indexes."""

    def __init__(self, context: Any, schema_name: str, collection: str | None = None, user: str | None = None,
                 index_name: str | None = None, limit: int = 10) -> None:
        self.context = context
        self.schema_name = schema_name
        self.collection = collection
        self.user = user
        self.index_name = index_name
        self.limit = limit

    @staticmethod
    def get_arguments() -> list[Argument]:
        return _arguments(RowEmbeddingsQueryTool)

    async def invoke(self, **arguments: Any) -> Any:
        impl = ours.RowEmbeddingsQueryImpl(self.schema_name, self.collection or "default", self.index_name,
                                           self.limit)
        return await _run(impl, self.context, arguments,
                          _user(self.context, "row-embeddings-query-request", self.user))


class PromptImpl:
    """Runs prompt template ``template_id`` with the arguments as its variables."""

    def __init__(self, context: Any, template_id: str, arguments: list[Argument] | None = None) -> None:
        self.context = context
        self.template_id = template_id
        self.arguments = arguments or []

    def get_arguments(self) -> list[Argument]:
        return self.arguments

    async def invoke(self, **arguments: Any) -> Any:
        return await _run(ours.PromptImpl(self.template_id), self.context, arguments, DEFAULT_USER)


class ToolServiceImpl:
    """Calls a tool service on its queues with this tool's config values and the arguments.

    As upstream, one client per queue pair is kept in the processor's
    ``tool_service_clients`` (created if the processor has none), so every
    tool on a service shares one response subscription; the client is ours
    (:class:`~trustgraph.base.tool_services.tool_service_client.ToolServiceClient`,
    on the processor's ``pubsub``).
    """

    def __init__(self, context: Any, request_queue: str, response_queue: str,
                 config_values: dict[str, Any] | None = None, arguments: list[Argument] | None = None,
                 processor: Any = None) -> None:
        self.context = context
        self.request_queue = request_queue
        self.response_queue = response_queue
        self.config_values = config_values or {}
        self.arguments = arguments or []
        self.processor = processor
        self._client: ToolServiceClient | None = None

    def get_arguments(self) -> list[Argument]:
        return self.arguments

    def _client_for_processor(self) -> ToolServiceClient:
        if self._client is not None:
            return self._client
        if self.processor is None or getattr(self.processor, "pubsub", None) is None:
            raise RuntimeError(f"tool service on {self.request_queue}: no processor (with a pubsub) to call it from")
        clients = getattr(self.processor, "tool_service_clients", None)
        if clients is None:
            clients = self.processor.tool_service_clients = {}
        key = f"{self.request_queue}|{self.response_queue}"
        client = clients.get(key)
        if client is None:
            client = clients[key] = ToolServiceClient(self.processor.pubsub, request_topic=self.request_queue,
                                                      response_topic=self.response_queue)
            logger.info("Tool-service client created for %s", self.request_queue)
        self._client = client
        return client

    async def invoke(self, **arguments: Any) -> str:
        client = self._client_for_processor()
        logger.debug("Tool service call on %s", self.request_queue)
        return await client.call(_user(self.context), self.config_values, arguments)
