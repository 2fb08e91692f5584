"""The tool-service descriptor and a service's declared tools: one light model for all who build or read them.

A ``tool-service`` descriptor says how to reach a service and which config
params its tools may set::

    {"id": "joke-service", "request-queue": "non-persistent://tg/request/joke",
     "response-queue": "non-persistent://tg/response/joke",
     "config-params": ["style", {"name": "audience", "required": true}]}

plus our fields ``idempotent``, ``timeout`` and ``announces``.  A service
writes it when it announces itself (:class:`ServiceDescriptor` ``.to_wire``);
the client, the service directory and the catalog feed read it
(:meth:`ServiceDescriptor.from_wire`, :func:`queues_of`).  A service's
declared tools (``DynamicToolService.tools``) are read by
:func:`declare_tools`, which refuses the first one that is wrong, naming the
tool and the field (:class:`InvalidDescriptor`), so that a service with a
broken declaration does not start (rather than announce a tool that every
reader then leaves out).  :class:`DescriptorError` is the one wording of a
descriptor problem, here and in the catalog.

This module is stdlib only: every tool service reads it while starting, and
the catalog's pydantic models (``trustgraph.catalog.models``) add about a
quarter of a second to a process's start.  The catalog still checks
descriptors from config in full, and the arguments' JSON Schema details
(types, ``enum``, ``items``, and whether each example call fits them); it
takes the field names, the check of ``examples`` (:func:`read_example`) and
:class:`DescriptorError` from here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn

from ...topics import TopicError, to_pulsar
from ..safety import limits

#: The descriptor's field names on the wire (upstream's spelling).
REQUEST_QUEUE = "request-queue"
RESPONSE_QUEUE = "response-queue"
CONFIG_PARAMS = "config-params"

#: The ``type`` of a tool that calls a tool service.
TOOL_SERVICE_TYPE = "tool-service"

#: At most this many ``examples`` per tool, each question at most this many characters.
MAX_EXAMPLES = 10
MAX_EXAMPLE_CHARS = 200


#: The config types that hold descriptors.
Kind = Literal["tool", "tool-service", "mcp", "tool-policy"]


@dataclass(frozen=True)
class DescriptorError:
    """A problem with one descriptor, precise enough for a user to fix it.

    ``kind`` is the config type (``tool``, ``tool-service`` or ``mcp``),
    ``key`` the config key, ``field`` the offending field (``"(json)"`` when
    the item as a whole is unreadable) and ``reason`` a plain explanation.
    ``missing_reference`` marks a reference to an item that does not exist
    yet (a tool put before its service): a later put can fix it, so
    ``tg-put-config-item`` writes such a tool with a warning.  ``str()`` is
    the one line every reader prints (the catalog's readers and a service
    refusing to start alike).
    """

    kind: Kind
    key: str
    field: str
    reason: str
    missing_reference: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        return f"{self.kind}/{self.key}: field '{self.field}': {self.reason}"


class InvalidDescriptor(ValueError):
    """Raised by this module's readers; ``error`` is the :class:`DescriptorError`, ``str()`` its line."""

    def __init__(self, error: DescriptorError) -> None:
        super().__init__(str(error))
        self.error = error


#: Which descriptor a problem is in: its config type and key.
Item = tuple[Kind, str]


def _fail(kind: Kind, key: str, field_name: str, reason: str) -> NoReturn:
    raise InvalidDescriptor(DescriptorError(kind, key, field_name, reason))


_JSON_TYPE_NAMES = {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "a list",
                    dict: "an object", type(None): "null"}


def describe(value: Any) -> str:
    """The JSON type of ``value`` as a sentence fragment: "a string", "a list", "null"."""
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)


@dataclass(frozen=True)
class ConfigParam:
    """One config param a service accepts from its tools."""

    name: str
    required: bool = False

    def to_wire(self) -> str | dict[str, Any]:
        return {"name": self.name, "required": True} if self.required else self.name


def parse_config_params(value: Any, item: Item) -> tuple[ConfigParam, ...]:
    """``config-params``: a list of names or ``{"name", "required"}`` (null: none)."""
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        _fail(*item, CONFIG_PARAMS, f"must be a list, got {describe(value)}")
    out: list[ConfigParam] = []
    for i, entry in enumerate(value):
        where = f"{CONFIG_PARAMS}[{i}]"
        if isinstance(entry, str):
            entry = {"name": entry}
        if not isinstance(entry, Mapping):
            _fail(*item, where, f"must be a name or an object, got {describe(entry)}")
        name, required = entry.get("name"), entry.get("required", False)
        if not isinstance(name, str) or not name.strip():
            _fail(*item, f"{where}.name", "must be a non-empty string")
        if not isinstance(required, bool):
            _fail(*item, f"{where}.required", f"must be true or false, got {describe(required)}")
        if any(p.name == name for p in out):
            _fail(*item, CONFIG_PARAMS, f"duplicate config param {name!r}")
        out.append(ConfigParam(name, required))
    return tuple(out)


def _queue(data: Mapping[str, Any], name: str, item: Item) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        _fail(*item, name, f"must be a topic, got {describe(value)}")
    try:
        to_pulsar(value)
    except TopicError as e:
        problem = str(e)
    else:
        return value
    _fail(*item, name, problem)


@dataclass(frozen=True)
class ServiceDescriptor:
    """A ``tool-service`` descriptor: how to reach a service, and what its tools may configure."""

    id: str
    request_queue: str
    response_queue: str
    config_params: tuple[ConfigParam, ...] = ()
    #: Ours: calling twice does no harm, so a caller may retry.
    idempotent: bool = False
    #: Ours: seconds one call may take (None: the caller's own limit).
    timeout: float | None = None
    #: Ours, in a configured descriptor: the service also announces itself.
    announces: bool = False

    @property
    def queues(self) -> tuple[str, str]:
        """Both queues as Pulsar URLs: the key of the client that calls this service."""
        return to_pulsar(self.request_queue), to_pulsar(self.response_queue)

    def to_wire(self) -> dict[str, Any]:
        """The descriptor as JSON-able data, as a service announces it."""
        out: dict[str, Any] = {"id": self.id, REQUEST_QUEUE: self.request_queue,
                               RESPONSE_QUEUE: self.response_queue,
                               CONFIG_PARAMS: [p.to_wire() for p in self.config_params],
                               "idempotent": self.idempotent}
        if self.timeout is not None:
            out["timeout"] = self.timeout
        if self.announces:
            out["announces"] = True
        return out

    @classmethod
    def from_wire(cls, data: Any, key: str = "") -> ServiceDescriptor:
        """Read a descriptor (decoded JSON); :class:`InvalidDescriptor` names what is wrong.

        ``key`` is its config key or announced id: the id when the descriptor
        gives none (tools find their service by key, as upstream's do).
        """
        item: Item = ("tool-service", key)
        if not isinstance(data, Mapping):
            _fail(*item, "(json)", f"must be an object, got {describe(data)}")
        item = ("tool-service", key or str(data.get("id") or ""))
        sid = data.get("id") or key
        if not isinstance(sid, str) or not sid.strip():
            _fail(*item, "id", "must be a non-empty string")
        timeout = data.get("timeout")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                    or not math.isfinite(timeout) or timeout <= 0):
            _fail(*item, "timeout", "must be a positive number of seconds")
        for flag in ("idempotent", "announces"):
            if not isinstance(data.get(flag, False), bool):
                _fail(*item, flag, f"must be true or false, got {describe(data.get(flag))}")
        return cls(id=sid, request_queue=_queue(data, REQUEST_QUEUE, item),
                   response_queue=_queue(data, RESPONSE_QUEUE, item),
                   config_params=parse_config_params(data.get(CONFIG_PARAMS), item),
                   idempotent=data.get("idempotent", False),
                   timeout=None if timeout is None else float(timeout),
                   announces=data.get("announces", False))


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
    try:
        return to_pulsar(_queue(data, REQUEST_QUEUE, ("tool-service", ""))), \
            to_pulsar(_queue(data, RESPONSE_QUEUE, ("tool-service", "")))
    except InvalidDescriptor:
        return None


@dataclass(frozen=True)
class DeclaredTool:
    """One tool a service declares: the descriptor a person writes, without ``type`` and ``service``."""

    name: str
    description: str
    arguments: tuple[Mapping[str, Any], ...] = ()
    #: Questions (strings) and example calls (``{"arguments", "question"}``), as read by :func:`read_example`.
    examples: tuple[str | dict[str, Any], ...] = ()
    #: Every field as declared (config values for the service's params are top-level fields).
    fields: Mapping[str, Any] = field(default_factory=dict)

    def descriptor(self, service: str) -> dict[str, Any]:
        """The ``tool`` descriptor it is announced as."""
        return tool_descriptor(service, self.fields)


def tool_descriptor(service: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A declared tool's fields as the ``tool`` descriptor a service announces (``type`` and ``service`` set)."""
    return {**fields, "type": TOOL_SERVICE_TYPE, "service": service}


def _text(data: Mapping[str, Any], name: str, item: Item) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value.strip():
        _fail(*item, name, "required field is missing" if value is None
                              else f"must be a non-empty string, got {describe(value) if value else 'an empty one'}")
    return value


def _arguments(value: Any, item: Item) -> tuple[Mapping[str, Any], ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        _fail(*item, "arguments", f"must be a list of {{name, type, description}}, got {describe(value)}")
    seen: set[str] = set()
    for i, arg in enumerate(value):
        where = f"arguments[{i}]"
        if not isinstance(arg, Mapping):
            _fail(*item, where, f"must be an object, got {describe(arg)}")
        name = arg.get("name")
        if not isinstance(name, str) or not name.strip():
            _fail(*item, f"{where}.name", "must be a non-empty string")
        if name in seen:
            _fail(*item, "arguments", f"duplicate argument {name!r}")
        seen.add(name)
        for text in ("type", "description"):
            if arg.get(text) is not None and not isinstance(arg.get(text), str):
                _fail(*item, f"{where}.{text}", f"must be a string, got {describe(arg.get(text))}")
    return tuple(value)


#: The fields of an example call: the arguments, and the question they answer.
EXAMPLE_CALL_FIELDS = ("arguments", "question")


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


def examples_list_problem(value: Any) -> str | None:
    """What is wrong with ``examples`` as a whole (not a list, too many), or None."""
    if not isinstance(value, (list, tuple)):
        return f"must be a list of example questions or calls, got {describe(value)}"
    if len(value) > MAX_EXAMPLES:
        return (f"has {len(value)} examples, over the limit of {MAX_EXAMPLES}; keep the {MAX_EXAMPLES} "
                "that best show what the tool is for")
    return None


def check_examples(value: Any, item: Item) -> tuple[str | dict[str, Any], ...]:
    """``examples``: at most :data:`MAX_EXAMPLES` questions or example calls (:func:`read_example`)."""
    if value is None:
        return ()
    if (problem := examples_list_problem(value)) is not None:
        _fail(*item, "examples", problem)
    out = []
    for i, example in enumerate(value):
        try:
            out.append(read_example(example))
        except ValueError as e:
            _fail(*item, f"examples[{i}]", str(e))
    return tuple(out)


def declare_tools(service: str, tools: Sequence[Any],
                  params: Sequence[ConfigParam] = ()) -> tuple[DeclaredTool, ...]:
    """A service's declared tools, checked; the first wrong one raises :class:`InvalidDescriptor`.

    Checked: each is an object with a ``name`` and a ``description``;
    ``arguments`` a list of objects with unique names; ``examples``
    questions or example calls within their limits; every required config param given a value; tool names
    unique within the service.
    """
    out: list[DeclaredTool] = []
    for i, raw in enumerate(tools):
        if not isinstance(raw, Mapping):
            _fail("tool", f"{service}/#{i + 1}", "(json)", f"must be an object of fields, got {describe(raw)}")
        name = raw.get("name")
        item: Item = ("tool", f"{service}/{name.strip()}" if isinstance(name, str) and name.strip()
                      else f"{service}/#{i + 1}")
        name = _text(raw, "name", item).strip()
        if any(t.name == name for t in out):
            _fail(*item, "name", "another declared tool has this name")
        description = _text(raw, "description", item)
        for param in params:
            if param.required and raw.get(param.name) is None:
                _fail(*item, param.name, f"the service's config param {param.name!r} is "
                                      "required: give the tool a value for it")
        out.append(DeclaredTool(name=name, description=description, arguments=_arguments(raw.get("arguments"), item),
                                examples=check_examples(raw.get("examples"), item), fields=dict(raw)))
    return tuple(out)
