"""The descriptor models: every tool type, the tool-service descriptor and the ``mcp`` entry.

One family of pydantic models, checked when declared.  The tool-service
descriptor's field names and the examples' limits come from the light model
every service starts with (:mod:`trustgraph.base.tool_services.descriptor`).  A ``tool``
config item is read by the model its ``type`` names (:data:`TOOL_TYPES`,
upstream's seven types); ``tool-service/<key>`` by :class:`ToolServiceDescriptor`;
``mcp/<key>`` by :class:`McpServer`.  References between descriptors (a tool's
``service``, its ``mcp-tool``, required config params) are resolved by the
catalog (``build.py``), which sees the whole config.

Choices worth knowing about:

* Descriptors written for upstream 2.1.4 load unchanged: unknown fields are
  kept (a ``tool-service`` tool's config values are ordinary top-level
  fields) or ignored, ``description`` may be absent except on ``tool-service``
  tools (the model needs it to choose the tool), and argument types are not
  checked against a list (see ``arguments.py``).
* Tools find their service by the **config key** of the ``tool-service``
  item, as upstream does.  The descriptor's ``id`` is informative: when it is
  missing the key is used, and one that differs from the key is accepted.
* ``examples`` (ours, on every type): questions a user might ask that the
  tool answers, and example calls (:class:`ExampleCall`: the arguments for
  a question), at most ``MAX_EXAMPLES`` of them, each question at most
  ``MAX_EXAMPLE_CHARS`` characters (the light model's limits and check).
  Questions help a reader (a model choosing a tool, a person reading
  ``tg-show-tools``) where a description shares few words with how people
  ask; the bound keeps 2,000 tools' worth of them inside a prompt's budget.
  A call shows how the arguments are filled, the catalog checks it against
  them, and the generic test of every registered tool service sends it.
  One concept, not two: a call's question is one of the tool's questions.
  Upstream ignores the field.
* The question-style types (``knowledge-query``, ``text-completion``,
  ``structured-query``) and ``row-embeddings-query`` take a fixed argument, as
  upstream exposes them; ``mcp-tool``, ``prompt`` and ``tool-service`` tools
  declare theirs.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    field_validator,
)

from ..base.tool_services.descriptor import (
    CONFIG_PARAMS,
    REQUEST_QUEUE,
    RESPONSE_QUEUE,
    TOOL_SERVICE_TYPE,
    examples_list_problem,
    read_example,
)
from ..topics import TopicError, to_pulsar
from .arguments import ToolArgument, unique_names
from .errors import describe


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _queue(value: str) -> str:
    try:
        to_pulsar(value)
    except TopicError as e:
        raise ValueError(str(e)) from None
    return value


def _none_to_empty(value: Any) -> Any:
    return "" if value is None else value


def _seconds(value: Any) -> Any:
    # Checked by hand: pydantic would read true as 1 and "5" as 5.
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value <= 0:
        raise ValueError("must be a positive number of seconds")
    return float(value)


def _list_of_strings(value: Any) -> Any:
    if value is not None and not isinstance(value, list):
        raise ValueError(f"must be a list, got {describe(value)}; give a list of strings")
    return value




def _example_list(value: Any) -> Any:
    # The list as a whole: null is "no examples"; one bare question is the
    # likely mistake, and the check says what to write instead.
    if value is None:
        return ()
    if (problem := examples_list_problem(value)) is not None:
        raise ValueError(problem)
    return value


class ExampleCall(BaseModel):
    """An example call of a tool: the arguments a caller gives it, and the question they answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    arguments: dict[str, Any]
    question: str | None = None


NonEmptyStr = Annotated[str, AfterValidator(_not_blank)]
QueueStr = Annotated[str, AfterValidator(_queue)]
OptionalText = Annotated[str, BeforeValidator(_none_to_empty)]
Seconds = Annotated[float | None, BeforeValidator(_seconds)]
StringList = Annotated[list[str] | None, BeforeValidator(_list_of_strings)]
# Each example read by the one check a service's own declaration also uses (read_example).
Examples = Annotated[tuple[Annotated[str | ExampleCall, BeforeValidator(read_example)], ...],
                     BeforeValidator(_example_list)]

# The fixed arguments of the question-style types, as upstream exposes them.
QUESTION = ToolArgument(name="question", type="string", description="The question to ask")
QUERY = ToolArgument(name="query", type="string", description="The query")


# -- services --------------------------------------------------------------------------


class ConfigParam(BaseModel):
    """One config parameter a tool service accepts from its tools."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: NonEmptyStr
    required: bool = False


class ToolServiceDescriptor(BaseModel):
    """A ``tool-service`` config item: how to reach a service and what it may be configured with."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: NonEmptyStr
    request_queue: QueueStr = Field(alias=REQUEST_QUEUE)
    response_queue: QueueStr = Field(alias=RESPONSE_QUEUE)
    config_params: tuple[ConfigParam, ...] = Field(default=(), alias=CONFIG_PARAMS)
    #: Ours: calling twice does no harm, so a caller may retry (never on upstream descriptors).
    idempotent: bool = False
    #: Ours: seconds one call may take; a tool's own ``timeout`` overrides it.
    timeout: Seconds = None
    #: Ours, in a configured descriptor: the service announces itself, so when it has and no
    #: replica is live its calls fail at once (without it, announcements never refuse a call).
    announces: StrictBool = False

    #: The lists read object by object, whose objects' keys are checked too (``parsing``).
    OBJECT_LISTS: ClassVar[dict[str, tuple[type, str]]] = {CONFIG_PARAMS: (ConfigParam, "a config param")}

    @field_validator("config_params", mode="before")
    @classmethod
    def _bare_names(cls, value: Any) -> Any:
        # A bare string is shorthand for an optional parameter of that name;
        # null is read as "no parameters" rather than as an error.
        if value is None:
            return ()
        if isinstance(value, list):
            return [{"name": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("config_params")
    @classmethod
    def _unique_params(cls, value: tuple[ConfigParam, ...]) -> tuple[ConfigParam, ...]:
        return tuple(unique_names(value, "config param"))

    @property
    def queues(self) -> tuple[str, str]:
        """Both queues as Pulsar URLs: the key of the client that calls this service."""
        return to_pulsar(self.request_queue), to_pulsar(self.response_queue)


class McpServer(BaseModel):
    """An ``mcp`` config item: an MCP server tool that ``mcp-tool`` tools call by this key.

    ``auth-token`` is sent as ``Authorization: Bearer ...`` and never shown
    (it is left out of ``repr``).  ``transport`` is our extension:
    ``streamable-http`` (the default, as upstream) or ``sse``.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    url: NonEmptyStr
    remote_name: str | None = Field(default=None, alias="remote-name")
    auth_token: str | None = Field(default=None, alias="auth-token", repr=False)
    transport: Literal["streamable-http", "sse"] = "streamable-http"

    @field_validator("url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        return value

    @field_validator("transport", mode="before")
    @classmethod
    def _transport(cls, value: Any) -> Any:
        return "streamable-http" if value in (None, "", "http") else value


# -- tools -----------------------------------------------------------------------------


class ToolDescriptor(BaseModel):
    """The fields every tool type shares.

    Unknown fields are kept (``model_extra``): a ``tool-service`` tool's
    config values are top-level fields, and descriptors written for a newer
    version must still load.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    #: The tool's ``type`` value; set by each subclass.
    kind: ClassVar[str] = ""
    #: Types that take a fixed argument list rather than declaring one.
    fixed_arguments: ClassVar[tuple[ToolArgument, ...] | None] = None

    name: Annotated[str, AfterValidator(lambda v: _not_blank(v).strip())]
    description: OptionalText = ""
    group: StringList = None
    state: Annotated[str | None, BeforeValidator(lambda v: v or None)] = None
    applicable_states: StringList = Field(default=None, alias="applicable-states")
    timeout: Seconds = None
    validate_arguments: bool = Field(default=True, alias="validate-arguments")
    #: Ours: questions a user might ask that this tool answers (strings), and example calls.
    examples: Examples = ()

    def tool_arguments(self) -> tuple[ToolArgument, ...]:
        """The arguments a caller fills in."""
        if self.fixed_arguments is not None:
            return self.fixed_arguments
        return tuple(getattr(self, "arguments", ()))


class _DeclaresArguments(ToolDescriptor):
    arguments: tuple[ToolArgument, ...] = ()

    #: The lists read object by object, whose objects' keys are checked too (``parsing``).
    OBJECT_LISTS: ClassVar[dict[str, tuple[type, str]]] = {"arguments": (ToolArgument, "a tool argument")}

    @field_validator("arguments", mode="before")
    @classmethod
    def _null_arguments(cls, value: Any) -> Any:
        return () if value is None else value

    @field_validator("arguments")
    @classmethod
    def _unique(cls, value: tuple[ToolArgument, ...]) -> tuple[ToolArgument, ...]:
        return tuple(unique_names(value))


def _collection(value: Any) -> Any:
    return "default" if value in (None, "") else value


Collection = Annotated[str, BeforeValidator(_collection)]


class KnowledgeQueryTool(ToolDescriptor):
    """Graph-RAG over a collection (the request's user is not passed on, as upstream)."""

    kind: ClassVar[str] = "knowledge-query"
    fixed_arguments: ClassVar[tuple[ToolArgument, ...]] = (QUESTION,)
    type: Literal["knowledge-query"]
    collection: Collection = "default"


class TextCompletionTool(ToolDescriptor):
    """Asks the LLM through the prompt service's ``question`` template."""

    kind: ClassVar[str] = "text-completion"
    fixed_arguments: ClassVar[tuple[ToolArgument, ...]] = (QUESTION,)
    type: Literal["text-completion"]


class McpToolTool(_DeclaresArguments):
    """Calls a tool of an MCP server; ``mcp-tool`` is a key of config type ``mcp``."""

    kind: ClassVar[str] = "mcp-tool"
    type: Literal["mcp-tool"]
    mcp_tool: NonEmptyStr = Field(alias="mcp-tool")


class PromptTool(_DeclaresArguments):
    """Runs a prompt template with the arguments as its variables."""

    kind: ClassVar[str] = "prompt"
    type: Literal["prompt"]
    template: NonEmptyStr


class StructuredQueryTool(ToolDescriptor):
    """Natural language over structured data, as the request's user."""

    kind: ClassVar[str] = "structured-query"
    fixed_arguments: ClassVar[tuple[ToolArgument, ...]] = (QUESTION,)
    type: Literal["structured-query"]
    collection: Collection = "default"


class RowEmbeddingsQueryTool(ToolDescriptor):
    """Semantic search over the rows of a structured-data schema."""

    kind: ClassVar[str] = "row-embeddings-query"
    fixed_arguments: ClassVar[tuple[ToolArgument, ...]] = (QUERY,)
    type: Literal["row-embeddings-query"]
    schema_name: str | None = Field(default=None, alias="schema-name")
    collection: Collection = "default"
    index_name: str | None = Field(default=None, alias="index-name")
    limit: Annotated[int, BeforeValidator(lambda v: 10 if v is None else v)] = 10


class ToolServiceTool(_DeclaresArguments):
    """Calls a tool service; config values for the service's params are top-level fields."""

    kind: ClassVar[str] = TOOL_SERVICE_TYPE
    type: Literal["tool-service"]
    description: NonEmptyStr
    service: NonEmptyStr


#: Tool ``type`` -> its model.  Adding a type is a model and a line here.
TOOL_TYPES: dict[str, type[ToolDescriptor]] = {
    m.kind: m for m in (KnowledgeQueryTool, TextCompletionTool, McpToolTool, PromptTool,
                        StructuredQueryTool, RowEmbeddingsQueryTool, ToolServiceTool)
}

