"""The descriptor models: every tool type, the tool-service descriptor and the ``mcp`` entry.

One family of pydantic models, each field written once: its name (the
config key), its type, its limits and, with :mod:`.errors`, the words of its
problems.  Everyone who reads or writes a descriptor uses them: the catalog
for config and announcements, a tool service for its own descriptor and the
tools it declares (checked before it serves, :mod:`.checks`), the commands
that write descriptors.  A ``tool`` config item is read by the model its
``type`` names (:data:`TOOL_TYPES`, upstream's seven types);
``tool-service/<key>`` by :class:`ToolServiceDescriptor`; ``mcp/<key>`` by
:class:`McpServer`.  References between descriptors (a tool's ``service``,
its ``mcp-tool``) are resolved by the catalog, which sees the whole config.

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
  a question), at most :data:`MAX_EXAMPLES` of them, each question at most
  :data:`MAX_EXAMPLE_CHARS` characters.  Questions help a reader (a model
  choosing a tool, a person reading ``tg-show-tools``) where a description
  shares few words with how people ask; the bound keeps 2,000 tools' worth of
  them inside a prompt's budget.  A call shows how the arguments are filled,
  the catalog checks it against them, and the generic test of every
  registered tool service sends it.  One concept, not two: a call's question
  is one of the tool's questions.  Upstream ignores the field.
* ``read-only``, ``destructive``, ``idempotent``, ``open-world`` (ours, on
  every tool and on a tool-service descriptor): what the tool says of its
  effects, MCP's tool annotations (:mod:`.annotations`).  Each is true, false
  or not given (unknown); anything else is refused.
* The question-style types (``knowledge-query``, ``text-completion``,
  ``structured-query``) and ``row-embeddings-query`` take a fixed argument, as
  upstream exposes them; ``mcp-tool``, ``prompt`` and ``tool-service`` tools
  declare theirs.
* One model, not a light copy for tool services beside a full one for
  readers: measured on the joke service (2 cores), the models and the full
  check before serving cost a service that does not announce itself about
  0.08 s more to be ready and 7 MiB; one that announces (the default) paid
  as much before, for the full check it ran right after starting.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    ValidationInfo,
    field_validator,
)

from ...topics import TopicError, to_pulsar
from ..safety import limits
from .annotations import CONTRADICTION, DESTRUCTIVE, IDEMPOTENT, OPEN_WORLD, READ_ONLY, Annotations
from .arguments import ToolArgument, unique_names
from .errors import JSON_FIELD, DescriptorError, InvalidDescriptor, describe
from .parsing import parse_item

#: The descriptor's field names on the wire (upstream's spelling).
REQUEST_QUEUE = "request-queue"
RESPONSE_QUEUE = "response-queue"
CONFIG_PARAMS = "config-params"

#: The ``type`` of a tool that calls a tool service.
TOOL_SERVICE_TYPE = "tool-service"

#: The config types that hold descriptors, and the announced-tools policy (what
#: ``tg-put-config-item`` checks).
DESCRIPTOR_TYPES = ("tool", "tool-service", "mcp", "tool-policy")
#: The config types the tool catalog is built from: the descriptors, the policy, and
#: the flows (whose topics a tool service may not use).
CATALOG_TYPES = (*DESCRIPTOR_TYPES, "active-flow")

#: At most this many ``examples`` per tool, each question at most this many characters.
MAX_EXAMPLES = 10
MAX_EXAMPLE_CHARS = 200

#: The fields of an example call: the arguments, and the question they answer.
EXAMPLE_CALL_FIELDS = ("arguments", "question")

#: What an announced tool may be called: letters, digits, ``-``, ``_``, ``.``, at most 64 characters
#: (what function-calling APIs and MCP clients take as a tool name).
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be an announced tool's name, or None.

    The model reads a tool's name outside the block of the tools' providers'
    text (``trustgraph.catalog.data_blocks``), so a name a running service
    announces must be a plain identifier; a configured tool's name is what an
    operator wrote.
    """
    if NAME.fullmatch(name):
        return None
    return (f"an announced tool's name must be letters, digits, '-', '_' or '.' (at most 64 characters, "
            f"starting with a letter or digit), since the model reads it outside the block of the tools' "
            f"text; {name[:80]!r} is not")


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


def _example_question(value: Any, what: str = "") -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what}must be a string, got {describe(value)}")
    text = value.strip()
    if not text:
        raise ValueError(f"{what}must not be empty")
    if len(text) > MAX_EXAMPLE_CHARS:
        raise ValueError(f"{what}is {len(text)} characters long, over the limit of {MAX_EXAMPLE_CHARS}; "
                         "give a question as a user would ask it")
    return text


def read_example(value: Any) -> str | dict[str, Any]:
    """One entry of ``examples``: a question (the string, stripped) or an example call.

    An example call is ``{"arguments": {...}}``, optionally with the
    ``"question"`` it answers: the arguments a caller gives the tool for it.
    A question helps whoever chooses a tool (the model, a person reading
    ``tg-show-tools``); a call also shows how its arguments are filled, and
    is what the test every registered tool service gets sends the service
    (``tests/unit/test_registered_tool_services.py``).  :class:`ValueError`
    says what is wrong, in the words every reader uses.
    """
    if isinstance(value, str):
        return _example_question(value)
    if not isinstance(value, Mapping):
        raise ValueError('must be a question (a string) or an example call ({"arguments": {...}}), '
                         f"got {describe(value)}")
    unknown = sorted(str(k) for k in value if k not in EXAMPLE_CALL_FIELDS)
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(repr(k) for k in unknown)} in an example call, which "
                         "takes 'arguments' and, if you like, the 'question' they answer")
    arguments = value.get("arguments")
    if not isinstance(arguments, Mapping):
        raise ValueError("an example call needs 'arguments', an object of argument values"
                         + (f", got {describe(arguments)}" if "arguments" in value else ""))
    call: dict[str, Any] = {"arguments": dict(arguments)}
    if value.get("question") is not None:
        call["question"] = _example_question(value["question"], "its 'question' ")
    return call


def _example_list(value: Any) -> Any:
    # The list as a whole: null is "no examples"; one bare question is the
    # likely mistake, and the check says what to write instead.
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"must be a list of example questions or calls, got {describe(value)}")
    if len(value) > MAX_EXAMPLES:
        raise ValueError(f"has {len(value)} examples, over the limit of {MAX_EXAMPLES}; keep the {MAX_EXAMPLES} "
                         "that best show what the tool is for")
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
Examples = Annotated[tuple[Annotated[str | ExampleCall, BeforeValidator(read_example)], ...],
                     BeforeValidator(_example_list)]
#: An annotation: true, false, or not given.
Flag = StrictBool | None

# The fixed arguments of the question-style types, as upstream exposes them.
QUESTION = ToolArgument(name="question", type="string", description="The question to ask")
QUERY = ToolArgument(name="query", type="string", description="The query")


class _Annotated(BaseModel):
    """The four annotations (:mod:`.annotations`), on a tool and on a tool-service descriptor."""

    read_only: Flag = Field(default=None, alias=READ_ONLY)
    destructive: Flag = Field(default=None, alias=DESTRUCTIVE)
    idempotent: Flag = Field(default=None, alias=IDEMPOTENT)
    open_world: Flag = Field(default=None, alias=OPEN_WORLD)

    @field_validator("destructive")
    @classmethod
    def _not_both(cls, value: bool | None, info: ValidationInfo) -> bool | None:
        if value is True and info.data.get("read_only") is True:
            raise ValueError(CONTRADICTION)
        return value

    @property
    def annotations(self) -> Annotations:
        """What this descriptor itself says of the tool's effects."""
        return Annotations(self.read_only, self.destructive, self.idempotent, self.open_world)


# -- services --------------------------------------------------------------------------


class ConfigParam(BaseModel):
    """One config parameter a tool service accepts from its tools."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: NonEmptyStr
    required: bool = False

    def to_wire(self) -> str | dict[str, Any]:
        """A bare name for an optional param (upstream's form), else ``{"name", "required"}``."""
        return {"name": self.name, "required": True} if self.required else self.name


class ToolServiceDescriptor(_Annotated):
    """A ``tool-service`` descriptor: how to reach a service and what it may be configured with.

    Read from config (``tool-service/<key>``), from a running service's
    announcement, and written by a service itself (:meth:`to_wire`).
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: NonEmptyStr
    request_queue: QueueStr = Field(alias=REQUEST_QUEUE)
    response_queue: QueueStr = Field(alias=RESPONSE_QUEUE)
    config_params: tuple[ConfigParam, ...] = Field(default=(), alias=CONFIG_PARAMS)
    #: Ours: calling twice does no harm, so a caller may retry (never on upstream descriptors,
    #: which do not say it: absent here is false, as it always was).
    idempotent: StrictBool = Field(default=False, alias=IDEMPOTENT)
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
        if isinstance(value, (list, tuple)):
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

    def to_wire(self) -> dict[str, Any]:
        """The descriptor as JSON-able data, as a service announces it (upstream's shape, plus ours
        where set)."""
        out: dict[str, Any] = {"id": self.id, REQUEST_QUEUE: self.request_queue, RESPONSE_QUEUE: self.response_queue,
                               CONFIG_PARAMS: [p.to_wire() for p in self.config_params]}
        out.update(self.annotations.said())
        if self.timeout is not None:
            out["timeout"] = self.timeout
        if self.announces:
            out["announces"] = True
        return out

    @classmethod
    def from_wire(cls, data: Any, key: str = "") -> ToolServiceDescriptor:
        """Read a descriptor (decoded JSON) where it must be right; :class:`InvalidDescriptor` names
        its first problem.

        ``key`` is its config key or announced id: the id when the descriptor
        gives none (tools find their service by key, as upstream's do).
        """
        if not isinstance(data, Mapping):
            raise InvalidDescriptor(DescriptorError("tool-service", key, JSON_FIELD,
                                                    f"must be an object, got {describe(data)}"))
        name = key or (data.get("id") if isinstance(data.get("id"), str) else "")
        read = parse_item("tool-service", cls, name, dict(data), {"id": key} if key else {})
        if isinstance(read, list):
            raise InvalidDescriptor(read[0])
        return read


def queues_of(data: Any) -> tuple[str, str] | None:
    """A descriptor's (request, response) queues as Pulsar URLs (``data``: its JSON text or object).

    None when it has no usable pair.  Lenient on purpose: the service
    directory keys replicas by their queues even when another field is wrong
    (the catalog reports that one).
    """
    if isinstance(data, str):
        try:
            data = limits.loads(data or "")
        except ValueError:
            return None
    if not isinstance(data, Mapping):
        return None
    request, response = data.get(REQUEST_QUEUE), data.get(RESPONSE_QUEUE)
    if not isinstance(request, str) or not isinstance(response, str):
        return None
    try:
        return to_pulsar(request), to_pulsar(response)
    except TopicError:
        return None


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


class ToolDescriptor(_Annotated):
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
