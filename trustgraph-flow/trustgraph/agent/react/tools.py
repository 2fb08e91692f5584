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

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from trustgraph.base.tool_descriptors import ResolvedToolService, ToolArgument
from trustgraph.base.tool_service_client import QueuePair, ToolServiceClients
from trustgraph.schema import (
    GraphRagQuery,
    PromptRequest,
    StructuredQueryRequest,
    ToolRequest,
)

from .types import Argument, CallContext, ToolImpl

logger = logging.getLogger(__name__)



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
