"""The check of one tool descriptor, and of a tool service's own declaration: one check for both.

:func:`check_tool` is what a ``tool`` descriptor must be: read by its type's
model, an announced one's name a plain identifier, a value for each required
config param of its service, example calls that fit its arguments; keys
nothing reads and argument types nothing checks are warnings.  The catalog
runs it on every configured and announced tool (after resolving which
service or MCP server a tool names, which only the whole config can say); a
tool service runs it on the tools it declares, through
:func:`check_declaration`, before it serves or announces anything.  So a
declaration a service starts with is one every reader takes, and a service
whose declaration readers would leave out refuses to start, naming the tool
and the field, in the words the readers would use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from .annotations import KEYS as ANNOTATION_KEYS
from .arguments import TYPES, argument_problems, arguments_schema, schema_validator
from .errors import JSON_FIELD, DescriptorError, describe, from_validation
from .models import (
    TOOL_SERVICE_TYPE,
    TOOL_TYPES,
    ExampleCall,
    ToolDescriptor,
    ToolServiceDescriptor,
    name_problem,
)
from .parsing import EMPTY, model_keys, nested_unknown_keys, unknown_keys
from .reserved_topics import framework_topic_problems, framework_topics


@dataclass(frozen=True)
class ToolCheck:
    """What one ``tool`` descriptor is: its model (None when it cannot be used), its values for its
    service's config params, why it cannot be used, and what it says that nothing reads."""

    descriptor: ToolDescriptor | None
    config: Mapping[str, Any] = EMPTY
    errors: tuple[DescriptorError, ...] = ()
    warnings: tuple[DescriptorError, ...] = ()


def tool_descriptor(service: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A declared tool's fields as the ``tool`` descriptor a service announces (``type`` and ``service`` set)."""
    return {**fields, "type": TOOL_SERVICE_TYPE, "service": service}


def service_config(key: str, data: Mapping[str, Any], service_key: str, service: ToolServiceDescriptor
                   ) -> tuple[dict[str, Any], list[DescriptorError]]:
    """A tool's values for its service's config params, and a problem for each required one it lacks.

    Read from the raw object, not the model's extra fields: a param may share
    its name with a declared field (upstream allows that).
    """
    config: dict[str, Any] = {}
    errors = []
    for param in service.config_params:
        value = data.get(param.name)
        if value is not None:
            config[param.name] = value
        elif param.required:
            errors.append(DescriptorError("tool", key, param.name, f"required config param {param.name!r} "
                                          f"of service {service_key!r} is missing"))
        elif param.name in data:
            config[param.name] = None
    return config, errors


def example_problems(descriptor: ToolDescriptor) -> list[tuple[int, str]]:
    """``(index in examples, problem)`` for each example call whose arguments do not fit the tool."""
    calls = [(i, e) for i, e in enumerate(descriptor.examples) if isinstance(e, ExampleCall)]
    if not calls or not descriptor.validate_arguments:
        return []
    arguments = descriptor.tool_arguments()
    validator = schema_validator(arguments_schema(arguments))
    return [(i, problem) for i, call in calls for problem in argument_problems(call.arguments, arguments, validator)[1]]


def check_tool(key: str, data: Mapping[str, Any], *, announced: bool = False,
               service: ToolServiceDescriptor | None = None, service_key: str | None = None,
               reference_errors: Sequence[DescriptorError] = ()) -> ToolCheck:
    """Check one ``tool`` descriptor (decoded JSON) named ``tool/<key>``.

    ``service`` is the ``tool-service`` descriptor a ``tool-service`` tool
    names (``service_key``), when there is a usable one; ``reference_errors``
    are the caller's problems with what the tool names (a service or MCP
    server that is unknown or broken), reported after the tool's own.  Every
    problem is found in one round, so one round of fixing addresses them all;
    only example calls are checked against the arguments once the rest is
    right.
    """
    kind = data.get("type")
    model = TOOL_TYPES.get(kind) if isinstance(kind, str) else None
    if model is None:
        known = ", ".join(sorted(TOOL_TYPES))
        return ToolCheck(None, errors=(DescriptorError("tool", key, "type", f"unknown tool type {kind!r} "
                                                                           f"(known: {known})"),))
    params = {p.name for p in service.config_params} if service is not None else set()
    # A config param named like an annotation (an upstream service's own) holds a config value.
    read = {k: v for k, v in data.items() if not (k in ANNOTATION_KEYS and k in params)}
    errors: list[DescriptorError] = []
    descriptor: ToolDescriptor | None = None
    try:
        descriptor = model.model_validate(read)
    except ValidationError as exc:
        errors.extend(from_validation("tool", key, exc, read, model_keys(model)))
    if descriptor is not None and announced and (problem := name_problem(descriptor.name)):
        errors.append(DescriptorError("tool", key, "name", problem))
    config: dict[str, Any] = {}
    if service is not None:
        config, missing = service_config(key, data, service_key or service.id, service)
        errors.extend(missing)
    errors.extend(reference_errors)
    if errors or descriptor is None:
        return ToolCheck(None, errors=tuple(errors))
    warnings = _unknown_keys(key, data, model, service_key, service)
    for i, arg in enumerate(descriptor.tool_arguments()):
        if not arg.typed:
            warnings.append(DescriptorError(
                "tool", key, f"arguments[{i}].type",
                f"type {arg.type!r} is not one of {', '.join(TYPES)}; values of {arg.name!r} are not type-checked"))
    # An example call is a promise about the tool's arguments: one that breaks it is a mistake
    # in the descriptor, as a wrong argument type is.
    wrong = tuple(DescriptorError("tool", key, f"examples[{i}].arguments", "the example call does not fit the "
                                  f"tool's arguments: {problem}") for i, problem in example_problems(descriptor))
    if wrong:
        return ToolCheck(None, errors=wrong, warnings=tuple(warnings))
    return ToolCheck(descriptor, MappingProxyType(config), warnings=tuple(warnings))


def _unknown_keys(key: str, data: Mapping[str, Any], model: type, service_key: str | None,
                  service: ToolServiceDescriptor | None) -> list[DescriptorError]:
    """Warn of the keys nothing reads: the tool loads (upstream's and newer ones must), but a
    misspelled key (``"argument"``) would leave it without what the key was meant to give."""
    known = set(model_keys(model))
    what = f"a {model.kind!r} tool"
    if service is not None:
        params = [p.name for p in service.config_params]
        known.update(params)
        what += (f", nor a config param of service {service_key!r} "
                 f"({', '.join(params) if params else 'it has none'})")
    return [*unknown_keys("tool", key, data, known, what), *nested_unknown_keys("tool", key, data, model)]


@dataclass(frozen=True)
class Declaration:
    """A tool service's own declaration, checked: its usable tools, and every problem."""

    tools: tuple[ToolDescriptor, ...]
    errors: tuple[DescriptorError, ...] = ()
    warnings: tuple[DescriptorError, ...] = ()

    def problems(self) -> list[str]:
        """Every error, then every warning, each as its one line."""
        return [str(e) for e in (*self.errors, *self.warnings)]


def _likely_slips(key: str, raw: Mapping[str, Any], descriptor: ToolDescriptor) -> list[DescriptorError]:
    """What a service's author most likely did not mean in an argument that loads (warnings: a
    descriptor from elsewhere, upstream's among them, must still load): no type (read as a string),
    no description (what the agent chooses and fills an argument by), a ``required`` that is not
    true or false (read leniently, where ``idempotent`` and the other flags refuse one), free text
    for a value that is not a string, a list whose items say no type."""
    out: list[DescriptorError] = []
    read = {a.name: a for a in descriptor.tool_arguments()}
    args = raw.get("arguments")
    for i, arg in enumerate(args if isinstance(args, list) else ()):
        if not isinstance(arg, Mapping):
            continue
        field = f"arguments[{i}]"
        kind = arg.get("type")
        if kind is None:
            out.append(DescriptorError("tool", key, f"{field}.type", "no type: read as 'string' (say its type)"))
        if not str(arg.get("description") or "").strip():
            out.append(DescriptorError("tool", key, f"{field}.description",
                                       "no description: the agent chooses and fills an argument by its description"))
        required = arg.get("required")
        if required is not None and not isinstance(required, bool) and (took := read.get(arg.get("name"))):
            out.append(DescriptorError("tool", key, f"{field}.required", f"{required!r} is read as "
                                       f"{str(took.required).lower()}: write true or false (unquoted)"))
        free = arg.get("free-text", arg.get("free_text"))
        if free and kind not in (None, "string"):
            out.append(DescriptorError("tool", key, f"{field}.free-text",
                                       f"only a string is written freely; a value of type {kind!r} is taken as said"))
        if kind == "array" and not arg.get("items"):
            out.append(DescriptorError("tool", key, f"{field}.items",
                                       "a list with no 'items': neither the agent nor the check knows what its items are"))
    return out


def check_declaration(service: ToolServiceDescriptor, tools: Sequence[Any], *,
                      queues: bool = True) -> Declaration:
    """Check a service's descriptor and the tools it declares (``tools``: the descriptors a person
    writes, without ``type`` and ``service``), as a reader of its announcement would.

    Beyond :func:`check_tool` of each (as an announced tool): each is an
    object; tool names are unique within the service; with ``queues``, its
    queues are not the framework's own (of the topics every deployment has: a
    flow's are known only to readers of the config; without it, the
    descriptor's queues stand in for ones the service does not have yet).  A
    tool is named by its position when it has no name (``tool/<service>/#2``).
    """
    sid = service.id
    errors = framework_topic_problems(sid, service, framework_topics({})) if queues else []
    warnings: list[DescriptorError] = []
    usable: list[ToolDescriptor] = []
    names: set[str] = set()
    for i, raw in enumerate(tools):
        if not isinstance(raw, Mapping):
            errors.append(DescriptorError("tool", f"{sid}/#{i + 1}", JSON_FIELD,
                                          f"must be an object of fields, got {describe(raw)}"))
            continue
        name = raw.get("name")
        name = name.strip() if isinstance(name, str) else ""
        key = f"{sid}/{name}" if name else f"{sid}/#{i + 1}"
        if name and name in names:
            errors.append(DescriptorError("tool", key, "name", "another declared tool has this name"))
            continue
        names.add(name)
        checked = check_tool(key, tool_descriptor(sid, raw), announced=True, service=service, service_key=sid)
        errors.extend(checked.errors)
        warnings.extend(checked.warnings)
        if checked.descriptor is not None:
            warnings.extend(_likely_slips(key, raw, checked.descriptor))
        if checked.descriptor is not None:
            usable.append(checked.descriptor)
    return Declaration(tuple(usable), tuple(errors), tuple(warnings))
