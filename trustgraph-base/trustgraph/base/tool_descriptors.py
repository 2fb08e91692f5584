"""Tool-service and tool descriptors: parsing, validation and resolution.

A tool service is described in two tiers of config (see SPEC.md):

* ``tool-service/<key>`` says how to reach a service (its request and response
  topics) and which config parameters it accepts;
* ``tool/<key>`` with ``"type": "tool-service"`` exposes one tool to the LLM,
  names the service it calls, and carries that tool's values for the service's
  config parameters as ordinary top-level fields.

This module turns the raw config sections (key -> JSON text) into ready-to-call
:class:`ResolvedToolService` records, and every problem into a
:class:`DescriptorError` that names the descriptor, the field and the reason.
It never raises on bad config: the agent reloads its tools on every config
push, and one broken descriptor must be reported without taking the good ones
down with it.  (Whether a reload with errors is applied is the registry's
decision, not this module's.)

Choices worth knowing about:

* Tools find their service by the **config key** of the ``tool-service`` item,
  as upstream does.  The descriptor's ``id`` field is informative: when it is
  missing the key is used, and an ``id`` that differs from the key is accepted
  (it is reported as :attr:`ResolvedToolService.service_id`).
* Only tools whose JSON has ``"type": "tool-service"`` are looked at by
  :func:`resolve_tool_services`; tools of the built-in types, and tool items
  whose JSON cannot be read at all (so their type is unknown), are left to the
  registry that handles every type.
* Queue strings must be topics in one of the two forms the messaging layer
  understands: ``persistent://tenant/namespace/topic`` /
  ``non-persistent://tenant/namespace/topic``, or the generic
  ``q0|q1|q2/tenant/namespace/topic``.  A slash inside the topic part is
  rejected, because Pulsar would read it as a different (legacy, cluster
  scoped) name than the author meant.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

__all__ = [
    "ConfigParam",
    "DescriptorError",
    "ResolvedToolService",
    "ToolArgument",
    "ToolServiceDescriptor",
    "ToolServiceToolDescriptor",
    "TOOL_SERVICE_TYPE",
    "is_valid_queue",
    "parse_tool",
    "parse_tool_service",
    "resolve_tool_services",
]

#: The ``type`` of a tool descriptor that calls a tool service.
TOOL_SERVICE_TYPE = "tool-service"

#: Pseudo field name used when the descriptor as a whole cannot be read.
JSON_FIELD = "(json)"

_SEGMENT = r"[^/\s]+"
_QUEUE_RE = re.compile(
    rf"^(?:(?:persistent|non-persistent)://|q[012]/){_SEGMENT}/{_SEGMENT}/{_SEGMENT}$"
)


def is_valid_queue(value: str) -> bool:
    """True when ``value`` is a topic string a descriptor may use as a queue."""
    return isinstance(value, str) and bool(_QUEUE_RE.match(value))


# --------------------------------------------------------------------------
# Field types
# --------------------------------------------------------------------------


def _not_blank(value: str) -> str:
    # An empty or all-blank name/description cannot be shown to the LLM nor
    # used to look anything up, so it is as bad as a missing field.
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _queue(value: str) -> str:
    if not is_valid_queue(value):
        raise ValueError(
            f"{value!r} is not a valid topic: expected "
            "persistent://tenant/namespace/topic, "
            "non-persistent://tenant/namespace/topic or "
            "q0|q1|q2/tenant/namespace/topic"
        )
    return value


def _none_to_empty(value: Any) -> Any:
    return "" if value is None else value


NonEmptyStr = Annotated[str, AfterValidator(_not_blank)]
QueueStr = Annotated[str, AfterValidator(_queue)]


# --------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------


class ConfigParam(BaseModel):
    """One config parameter a tool service accepts from its tools."""

    model_config = ConfigDict(extra="ignore")

    name: NonEmptyStr
    required: bool = False


class ToolServiceDescriptor(BaseModel):
    """A ``tool-service`` config item: how to reach a service.

    ``id`` may be omitted; :func:`parse_tool_service` then fills in the config
    key.  Unknown fields are ignored so that descriptors written for a newer
    version still load.
    """

    model_config = ConfigDict(extra="ignore")

    id: NonEmptyStr
    request_queue: QueueStr = Field(alias="request-queue")
    response_queue: QueueStr = Field(alias="response-queue")
    config_params: list[ConfigParam] = Field(default_factory=list, alias="config-params")

    @field_validator("config_params", mode="before")
    @classmethod
    def _bare_names(cls, value: Any) -> Any:
        # A bare string is shorthand for an optional parameter of that name;
        # null is read as "no parameters" rather than as an error.
        if value is None:
            return []
        if isinstance(value, list):
            return [{"name": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("config_params")
    @classmethod
    def _unique_params(cls, value: list[ConfigParam]) -> list[ConfigParam]:
        seen: set[str] = set()
        for param in value:
            if param.name in seen:
                raise ValueError(f"duplicate config param {param.name!r}")
            seen.add(param.name)
        return value


class ToolArgument(BaseModel):
    """One argument the LLM fills in when it calls a tool."""

    model_config = ConfigDict(extra="ignore")

    name: NonEmptyStr
    type: Annotated[str, BeforeValidator(lambda v: "string" if v is None else v)] = "string"
    description: Annotated[str, BeforeValidator(_none_to_empty)] = ""


class ToolServiceToolDescriptor(BaseModel):
    """A ``tool`` config item of type ``tool-service``.

    Extra fields are kept (``model_extra``): any of them may be a value for one
    of the service's config params; which ones are is only known once the
    service descriptor is at hand.
    """

    model_config = ConfigDict(extra="allow")

    type: Literal["tool-service"]
    name: NonEmptyStr
    description: NonEmptyStr
    service: NonEmptyStr
    arguments: list[ToolArgument] = Field(default_factory=list)
    group: list[str] | None = None
    state: str | None = None
    applicable_states: list[str] | None = Field(default=None, alias="applicable-states")

    @field_validator("arguments", mode="before")
    @classmethod
    def _null_arguments(cls, value: Any) -> Any:
        return [] if value is None else value

    @field_validator("arguments")
    @classmethod
    def _unique_arguments(cls, value: list[ToolArgument]) -> list[ToolArgument]:
        seen: set[str] = set()
        for arg in value:
            if arg.name in seen:
                raise ValueError(f"duplicate argument {arg.name!r}")
            seen.add(arg.name)
        return value


# --------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class DescriptorError:
    """A problem with one descriptor, precise enough for a user to fix it.

    ``kind`` is the config type (``"tool"`` or ``"tool-service"``), ``key`` the
    config key, ``field`` the offending field (``"(json)"`` when the item as a
    whole is unreadable) and ``reason`` a plain-language explanation.
    """

    kind: Literal["tool", "tool-service"]
    key: str
    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.kind}/{self.key}: field '{self.field}': {self.reason}"


@dataclass
class ResolvedToolService:
    """A tool-service tool joined with its service: everything needed to call it.

    ``config`` holds only the tool's values for parameters the service
    declares; other extra fields on the tool are not sent to the service.
    """

    key: str
    name: str
    description: str
    arguments: list[ToolArgument]
    service_id: str
    request_queue: str
    response_queue: str
    config: dict[str, Any] = field(default_factory=dict)
    group: list[str] | None = None
    state: str | None = None
    applicable_states: list[str] | None = None


# --------------------------------------------------------------------------
# Error translation
# --------------------------------------------------------------------------

_JSON_TYPE_NAMES = {
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


def _describe(value: Any) -> str:
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)


def _format_loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or JSON_FIELD


def _reason(err: dict[str, Any], raw: Any) -> str:
    """Turn one pydantic error into a sentence a config author understands."""
    kind = err["type"]
    value = err.get("input")
    if kind == "missing":
        name = err["loc"][-1] if err["loc"] else ""
        hint = ""
        if isinstance(name, str) and "-" in name and isinstance(raw, dict):
            snake = name.replace("-", "_")
            if snake in raw:
                hint = f" (found {snake!r}; the field is spelled {name!r})"
        return "required field is missing" + hint
    if kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        return f"must be {expected}, got {value!r}"
    if kind in ("value_error", "assertion_error"):
        cause = err.get("ctx", {}).get("error")
        return str(cause) if cause is not None else err["msg"]
    if kind == "string_type":
        return f"must be a string, got {_describe(value)}"
    if kind == "list_type":
        return f"must be a list, got {_describe(value)}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"must be an object, got {_describe(value)}"
    if kind in ("bool_type", "bool_parsing"):
        return f"must be true or false, got {value!r}"
    return err["msg"][:1].lower() + err["msg"][1:]


def _from_validation(
    kind: Literal["tool", "tool-service"], key: str, exc: ValidationError, raw: Any
) -> list[DescriptorError]:
    return [
        DescriptorError(kind, key, _format_loc(e["loc"]), _reason(e, raw))
        for e in exc.errors()
    ]


def _load_object(
    kind: Literal["tool", "tool-service"], key: str, raw: str | bytes | dict[str, Any]
) -> dict[str, Any] | DescriptorError:
    """Decode one config value, which must be a JSON object."""
    if isinstance(raw, dict):
        return raw
    try:
        data = json.loads(raw)
    except (TypeError, ValueError) as exc:
        return DescriptorError(kind, key, JSON_FIELD, f"not valid JSON: {exc}")
    if not isinstance(data, dict):
        return DescriptorError(kind, key, JSON_FIELD, f"must be a JSON object, got {_describe(data)}")
    return data


# --------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------


def _check_tool_service(
    key: str, raw: str | bytes | dict[str, Any]
) -> ToolServiceDescriptor | list[DescriptorError]:
    data = _load_object("tool-service", key, raw)
    if isinstance(data, DescriptorError):
        return [data]
    if data.get("id") is None:
        # Upstream looks services up by key; an absent id means "same as key".
        data = {**data, "id": key}
    try:
        return ToolServiceDescriptor.model_validate(data)
    except ValidationError as exc:
        return _from_validation("tool-service", key, exc, data)


def parse_tool_service(key: str, raw: str | bytes | dict[str, Any]) -> ToolServiceDescriptor | DescriptorError:
    """Parse and validate one ``tool-service`` config value.

    Meant for callers that check a single descriptor (a CLI before it writes
    to config): returns the descriptor, or the first problem found.  Use
    :func:`resolve_tool_services` to get every problem of a whole config.
    """
    result = _check_tool_service(key, raw)
    return result[0] if isinstance(result, list) else result


def _check_tool(
    key: str,
    raw: str | bytes | dict[str, Any],
    services: dict[str, ToolServiceDescriptor],
    broken_services: dict[str, DescriptorError] | None = None,
) -> ResolvedToolService | list[DescriptorError]:
    data = _load_object("tool", key, raw)
    if isinstance(data, DescriptorError):
        return [data]

    errors: list[DescriptorError] = []
    tool: ToolServiceToolDescriptor | None = None
    try:
        tool = ToolServiceToolDescriptor.model_validate(data)
    except ValidationError as exc:
        errors.extend(_from_validation("tool", key, exc, data))

    # Look the service up even when other fields are bad, so that one round
    # of fixing addresses every problem of the descriptor.
    ref = data.get("service")
    service: ToolServiceDescriptor | None = None
    if isinstance(ref, str) and ref.strip():
        service = services.get(ref)
        if service is None:
            broken = (broken_services or {}).get(ref)
            if broken is not None:
                reason = f"service {ref!r} is invalid: field '{broken.field}': {broken.reason}"
            else:
                reason = f"unknown tool service {ref!r}"
            errors.append(DescriptorError("tool", key, "service", reason))

    config: dict[str, Any] = {}
    if service is not None:
        for param in service.config_params:
            # Read from the raw object, not model_extra: a param may share its
            # name with a declared field (upstream allows that).
            value = data.get(param.name)
            if value is not None:
                config[param.name] = value
            elif param.required:
                errors.append(
                    DescriptorError(
                        "tool",
                        key,
                        param.name,
                        f"required config param {param.name!r} of service {ref!r} is missing",
                    )
                )
            elif param.name in data:
                config[param.name] = None

    if errors or tool is None or service is None:
        return errors

    return ResolvedToolService(
        key=key,
        name=tool.name,
        description=tool.description,
        arguments=list(tool.arguments),
        service_id=service.id,
        request_queue=service.request_queue,
        response_queue=service.response_queue,
        config=config,
        group=tool.group,
        state=tool.state,
        applicable_states=tool.applicable_states,
    )


def parse_tool(
    key: str,
    raw: str | bytes | dict[str, Any],
    services: dict[str, ToolServiceDescriptor],
) -> ResolvedToolService | DescriptorError:
    """Parse one ``tool`` config value of type ``tool-service`` and join it to its service.

    ``services`` maps config keys to valid service descriptors.  Returns the
    resolved tool or the first problem found (see :func:`parse_tool_service`
    for why only one).
    """
    result = _check_tool(key, raw, services)
    return result[0] if isinstance(result, list) else result


def _tool_type(raw: str | bytes | dict[str, Any]) -> Any:
    if isinstance(raw, dict):
        return raw.get("type")
    try:
        data = json.loads(raw)
    except (TypeError, ValueError):
        return None
    return data.get("type") if isinstance(data, dict) else None


def resolve_tool_services(
    services: dict[str, str], tools: dict[str, str]
) -> tuple[dict[str, ResolvedToolService], list[DescriptorError]]:
    """Resolve every tool-service tool of a config against its services.

    ``services`` and ``tools`` are the raw ``tool-service`` and ``tool``
    config sections (key -> JSON text).  Returns the good tools by tool key,
    and a list of every problem found: bad service descriptors (even unused
    ones, so that they are fixed before a tool needs them) and bad tool-service
    tools.  A bad descriptor only removes itself, and the tools that depend on
    it, from the result.
    """
    errors: list[DescriptorError] = []
    good: dict[str, ToolServiceDescriptor] = {}
    broken: dict[str, DescriptorError] = {}

    for key in sorted(services):
        result = _check_tool_service(key, services[key])
        if isinstance(result, list):
            errors.extend(result)
            broken[key] = result[0]
        else:
            good[key] = result

    resolved: dict[str, ResolvedToolService] = {}
    for key in sorted(tools):
        raw = tools[key]
        if _tool_type(raw) != TOOL_SERVICE_TYPE:
            continue
        result = _check_tool(key, raw, good, broken)
        if isinstance(result, list):
            errors.extend(result)
        else:
            resolved[key] = result

    return resolved, errors
