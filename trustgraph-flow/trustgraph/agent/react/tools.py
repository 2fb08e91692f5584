"""The agent's tool implementations, the table that builds them, and the tool-service client pool.

Every tool follows one contract (SPEC.md): arguments in as a dict, a result
out, which the loop turns into the observation string.  ``BUILDERS`` maps a
descriptor's ``type`` to a small function that checks the type's own fields
and returns the implementation plus the arguments the model may fill in;
fields common to every type (name, group, state...) are checked once, by the
registry.  Upstream has a seven-way if/elif here; a table keeps each type's
rules in one place and makes an unknown type a lookup miss, not a fallthrough.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from trustgraph.base import PubSub, ToolServiceClient
from trustgraph.base.tool_descriptors import ResolvedToolService, ToolArgument
from trustgraph.base.topics import to_pulsar
from trustgraph.schema import (
    GraphRagQuery,
    PromptRequest,
    StructuredQueryRequest,
    ToolRequest,
)

from .types import Argument, CallContext, ToolImpl

logger = logging.getLogger(__name__)

QueuePair = tuple[str, str]


class ToolFailed(Exception):
    """A tool's service answered with an error; the message goes to the model."""


def _check(error: Any) -> None:
    """Raise the wire ``Error`` of a response, if it carries one."""
    if error is not None:
        kind = getattr(error, "type", "") or "error"
        raise ToolFailed(f"{kind}: {getattr(error, 'message', '') or 'no message'}")


def _text_or_object(text: str | None, obj: str | None) -> str:
    """A service's ``text``, else its ``object`` (JSON text) re-encoded compactly."""
    if text:
        return text
    if not obj:
        return ""
    try:
        return json.dumps(json.loads(obj))
    except ValueError:
        return obj


# -- the client pool -------------------------------------------------------------


class ToolServiceClients:
    """One :class:`ToolServiceClient` per (request queue, response queue).

    Each client subscribes to its response topic, so sharing one per service
    (rather than one per tool or per call) keeps subscriptions few.  Clients
    are created on first use.  :meth:`keep` is told, on every reload, which
    queue pairs the current tools use; the others are closed as soon as no
    call is using them, so a request still running on the previous registry
    finishes its call first.
    """

    def __init__(self, pubsub: PubSub | None, *, name: str = "agent") -> None:
        self.pubsub = pubsub
        self.name = name
        self.clients: dict[QueuePair, ToolServiceClient] = {}
        self._active: Counter[QueuePair] = Counter()
        self._wanted: frozenset[QueuePair] = frozenset()
        self._locks: dict[QueuePair, asyncio.Lock] = {}

    @staticmethod
    def key(request_queue: str, response_queue: str) -> QueuePair:
        """The pool key: both queues as Pulsar URLs, so ``q0/...`` and its URL share a client."""
        return to_pulsar(request_queue), to_pulsar(response_queue)

    async def _get(self, key: QueuePair) -> ToolServiceClient:
        client = self.clients.get(key)
        if client is not None:
            return client
        # One lock per pair: a slow subscription to one service holds up no other.
        async with self._locks.setdefault(key, asyncio.Lock()):
            client = self.clients.get(key)
            if client is None:
                client = ToolServiceClient(self.pubsub, request_topic=key[0], response_topic=key[1],
                                           name=f"{self.name}/tool-service/{key[0]}")
                await client.start()
                self.clients[key] = client
                logger.info("Tool-service client opened for %s", key[0])
        return client

    @asynccontextmanager
    async def use(self, key: QueuePair) -> AsyncIterator[ToolServiceClient]:
        """Borrow the pair's client for one call, creating it if needed."""
        client = await self._get(key)
        self._active[key] += 1
        try:
            yield client
        finally:
            self._active[key] -= 1
            if self._active[key] <= 0:
                del self._active[key]
                if key not in self._wanted:
                    await self._close(key)

    async def keep(self, keys: frozenset[QueuePair]) -> None:
        """Record the pairs the current tools use; close idle clients of the others."""
        self._wanted = frozenset(keys)
        for key in [k for k in self.clients if k not in self._wanted and not self._active[k]]:
            await self._close(key)

    async def _close(self, key: QueuePair) -> None:
        client = self.clients.pop(key, None)
        self._locks.pop(key, None)
        if client is not None:
            await client.stop()
            logger.info("Tool-service client closed for %s (no tool uses it)", key[0])

    async def close(self) -> None:
        """Close every client (processor shutdown)."""
        self._wanted = frozenset()
        for key in list(self.clients):
            await self._close(key)


# -- implementations -------------------------------------------------------------


@dataclass(frozen=True)
class KnowledgeQueryImpl:
    """Graph-RAG over a collection; as upstream, the user is always ``trustgraph``."""

    collection: str

    async def invoke(self, ctx: CallContext, arguments: dict[str, Any]) -> str:
        resp = await ctx.flow("graph-rag-request").request(
            GraphRagQuery(query=str(arguments.get("question", "")), user="trustgraph",
                          collection=self.collection), timeout=ctx.timeout)
        _check(resp.error)
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
    _check(resp.error)
    return _text_or_object(resp.text, resp.object)


@dataclass(frozen=True)
class McpToolImpl:
    """Calls an MCP tool through the mcp-tool service (``mcp-tool`` is a key of config ``mcp``)."""

    mcp_tool: str

    async def invoke(self, ctx: CallContext, arguments: dict[str, Any]) -> str:
        resp = await ctx.flow("mcp-tool-request").request(
            ToolRequest(name=self.mcp_tool, parameters=json.dumps(arguments)), timeout=ctx.timeout)
        _check(resp.error)
        return _text_or_object(resp.text, resp.object)


@dataclass(frozen=True)
class StructuredQueryImpl:
    """Natural language over structured data, as the request's user (unlike knowledge-query)."""

    collection: str

    async def invoke(self, ctx: CallContext, arguments: dict[str, Any]) -> str:
        resp = await ctx.flow("structured-query-request").request(
            StructuredQueryRequest(question=str(arguments.get("question", "")), user=ctx.user,
                                   collection=self.collection), timeout=ctx.timeout)
        _check(resp.error)
        if resp.errors and not resp.data:
            raise ToolFailed("; ".join(resp.errors))
        return resp.data


@dataclass(frozen=True)
class ToolServiceImpl:
    """Calls a tool service through the pool's shared client for its queues.

    ``config`` is this tool's values for the service's config params; the
    user comes from the call, never from the client, which every tool and
    request on the service shares.
    """

    clients: ToolServiceClients
    service: str
    queues: QueuePair
    config: Mapping[str, Any]

    async def invoke(self, ctx: CallContext, arguments: dict[str, Any]) -> str:
        async with self.clients.use(self.queues) as client:
            # The client joins streamed chunks and always returns text.
            return await client.call(ctx.user, dict(self.config), arguments, timeout=ctx.timeout)


# -- builders ------------------------------------------------------------------------


class DescriptorProblem(Exception):
    """A tool descriptor field the agent cannot use."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"field '{field}': {reason}")
        self.field = field
        self.reason = reason


class AlreadyReported(Exception):
    """The descriptor's problems were reported elsewhere (tool-service resolution)."""


@dataclass(frozen=True)
class BuildEnv:
    """What builders may consult besides the descriptor itself."""

    mcp: Mapping[str, str]
    services: Mapping[str, ResolvedToolService]
    clients: ToolServiceClients


@dataclass(frozen=True)
class Built:
    impl: ToolImpl
    arguments: tuple[Argument, ...]


Builder = Callable[[str, dict[str, Any], BuildEnv], Built]

# The fixed argument of the question-style types, as upstream exposes them.
QUESTION = (Argument("question", "string", "The question to ask"),)


def _optional_str(data: dict[str, Any], field: str, default: str) -> str:
    value = data.get(field)
    if value is None or value == "":
        return default
    if not isinstance(value, str):
        raise DescriptorProblem(field, f"must be a string, got {type(value).__name__}")
    return value


def _required_str(data: dict[str, Any], field: str) -> str:
    value = data.get(field)
    if not isinstance(value, str) or not value.strip():
        raise DescriptorProblem(field, "required field is missing or not a non-empty string")
    return value


def declared_arguments(data: dict[str, Any]) -> tuple[Argument, ...]:
    """The ``arguments`` list of a descriptor, checked: ``[{name, type, description}]``."""
    raw = data.get("arguments")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise DescriptorProblem("arguments", f"must be a list, got {type(raw).__name__}")
    out: list[Argument] = []
    for i, item in enumerate(raw):
        try:
            arg = ToolArgument.model_validate(item)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise DescriptorProblem(f"arguments[{i}]" + (f".{where}" if where else ""),
                                    first["msg"]) from None
        if any(a.name == arg.name for a in out):
            raise DescriptorProblem(f"arguments[{i}].name", f"duplicate argument {arg.name!r}")
        out.append(Argument(arg.name, arg.type, arg.description))
    return tuple(out)


def _knowledge_query(key: str, data: dict[str, Any], env: BuildEnv) -> Built:
    return Built(KnowledgeQueryImpl(_optional_str(data, "collection", "default")), QUESTION)


def _text_completion(key: str, data: dict[str, Any], env: BuildEnv) -> Built:
    return Built(TextCompletionImpl(), QUESTION)


def _mcp_tool(key: str, data: dict[str, Any], env: BuildEnv) -> Built:
    name = _required_str(data, "mcp-tool")
    if name not in env.mcp:
        raise DescriptorProblem("mcp-tool", f"unknown MCP service {name!r} (no config item mcp/{name})")
    return Built(McpToolImpl(name), declared_arguments(data))


def _prompt_tool(key: str, data: dict[str, Any], env: BuildEnv) -> Built:
    return Built(PromptImpl(_required_str(data, "template")), declared_arguments(data))


def _structured_query(key: str, data: dict[str, Any], env: BuildEnv) -> Built:
    return Built(StructuredQueryImpl(_optional_str(data, "collection", "default")), QUESTION)


def _tool_service(key: str, data: dict[str, Any], env: BuildEnv) -> Built:
    resolved = env.services.get(key)
    if resolved is None:
        raise AlreadyReported()
    queues = ToolServiceClients.key(resolved.request_queue, resolved.response_queue)
    impl = ToolServiceImpl(env.clients, resolved.service_id, queues, dict(resolved.config))
    args = tuple(Argument(a.name, a.type, a.description) for a in resolved.arguments)
    return Built(impl, args)


def _row_embeddings_query(key: str, data: dict[str, Any], env: BuildEnv) -> Built:
    # Needs a row-embeddings query service and its schema, which this fork
    # does not ship (the flow keys are still registered for wire compatibility).
    raise DescriptorProblem("type", "type 'row-embeddings-query' is not supported by this agent")


#: Tool type -> builder.  Adding a type is one function and one line here.
BUILDERS: dict[str, Builder] = {
    "knowledge-query": _knowledge_query,
    "text-completion": _text_completion,
    "mcp-tool": _mcp_tool,
    "prompt": _prompt_tool,
    "structured-query": _structured_query,
    "tool-service": _tool_service,
    "row-embeddings-query": _row_embeddings_query,
}
