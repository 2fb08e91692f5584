"""The catalog: every tool of a config, resolved, with its problems, built by one function.

:func:`build_catalog` reads the ``tool``, ``tool-service`` and ``mcp`` config
sections (key -> JSON text) and returns a :class:`Catalog`: the usable tools
by name (each joined with its service or MCP server, its argument schema and
its config values), the broken ones with what is wrong, and every problem as
a :class:`~trustgraph.catalog.errors.DescriptorError`.  The agent, the gateway,
``tg-show-tools`` and ``tg-put-config-item`` all use it, so they agree on what
a tool is and report a problem once, in one wording.

It never raises on bad config: a reader rebuilds the catalog on every config
push, and one broken descriptor must be reported without taking the good
ones down with it (upstream rejects the whole reload and keeps the old tools).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from .arguments import TYPES, ArgumentError, ToolArgument, arguments_schema, check_arguments
from .errors import DescriptorError, Kind, from_validation, load_object
from .models import TOOL_TYPES, McpServer, ToolDescriptor, ToolServiceDescriptor

#: The config types the catalog is built from.
CATALOG_TYPES = ("tool", "tool-service", "mcp")

DEFAULT_GROUPS = ("default",)
ANY_STATE = ("*",)

# Types the fork models (so their descriptors are checked) but cannot run yet.
_UNSUPPORTED: dict[str, str] = {}

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class CatalogTool:
    """One usable tool: its descriptor, joined with what it calls.

    ``config`` holds the tool's values for the config params its service
    declares (other extra fields are not sent).  ``source`` says where the
    tool came from (``config`` for a ``tool`` config item).
    """

    key: str
    descriptor: ToolDescriptor
    service_key: str | None = None
    service: ToolServiceDescriptor | None = None
    config: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    mcp: McpServer | None = None
    source: str = "config"

    @property
    def name(self) -> str:
        return self.descriptor.name

    @property
    def description(self) -> str:
        return self.descriptor.description

    @property
    def type(self) -> str:
        return self.descriptor.kind

    @property
    def arguments(self) -> tuple[ToolArgument, ...]:
        return self.descriptor.tool_arguments()

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(self.descriptor.group or DEFAULT_GROUPS)

    @property
    def applicable_states(self) -> tuple[str, ...]:
        return tuple(self.descriptor.applicable_states or ANY_STATE)

    @property
    def state(self) -> str | None:
        return self.descriptor.state

    @property
    def timeout(self) -> float | None:
        return self.descriptor.timeout

    @property
    def queues(self) -> tuple[str, str] | None:
        """The service's (request, response) Pulsar URLs, for a ``tool-service`` tool."""
        return self.service.queues if self.service is not None else None

    @cached_property
    def schema(self) -> dict[str, Any]:
        """The JSON Schema of this tool's arguments object (see ``arguments.py``)."""
        return arguments_schema(self.arguments)

    @cached_property
    def _validator(self) -> Any:
        # Imported on first use: jsonschema is slow to import and only callers need it.
        from jsonschema import Draft202012Validator
        return Draft202012Validator(self.schema)

    def check_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments to call the tool with (coerced where unambiguous), or :class:`ArgumentError`.

        ``"validate-arguments": false`` on the descriptor passes them through
        unchecked (for pass-through tools whose real schema lives elsewhere).
        """
        if not self.descriptor.validate_arguments:
            return dict(arguments)
        return check_arguments(self.name, arguments, self.arguments, self._validator)

    def argument_problem(self, arguments: Mapping[str, Any]) -> str | None:
        """What is wrong with ``arguments``, or None."""
        try:
            self.check_arguments(arguments)
        except ArgumentError as e:
            return str(e)
        return None

    def describe(self) -> dict[str, Any]:
        """The tool as the ``agent-react`` prompt's ``tools`` variable lists it (upstream's shape)."""
        return {
            "name": self.name,
            "description": self.description,
            "arguments": [{"name": a.name, "type": a.type, "description": a.description}
                          for a in self.arguments],
        }

    def to_json(self, errors: list[str] | None = None) -> dict[str, Any]:
        """The tool as ``GET /api/v1/tool-catalog`` lists it."""
        out = _descriptor_json(self.key, self.descriptor.model_dump(
            mode="json", by_alias=True, exclude_none=True))
        out["arguments"] = [a.model_dump(mode="json", exclude_none=True) for a in self.arguments]
        out["input-schema"] = self.schema
        out["source"] = self.source
        if self.service is not None:
            out["service"] = self.service_key
            out["request-queue"] = self.service.request_queue
            out["response-queue"] = self.service.response_queue
            out["config"] = dict(self.config)
        out["errors"] = errors or []
        return out


@dataclass(frozen=True)
class BrokenTool:
    """A ``tool`` item that is left out, with what is known of it and why."""

    key: str
    errors: tuple[DescriptorError, ...]
    data: Mapping[str, Any] | None = None   # the descriptor, when its JSON could be read

    @property
    def name(self) -> str | None:
        name = (self.data or {}).get("name")
        return name.strip() if isinstance(name, str) else None

    def to_json(self) -> dict[str, Any]:
        out = _descriptor_json(self.key, dict(self.data or {}))
        out["source"] = "config"
        out["errors"] = [str(e) for e in self.errors]
        return out


def _descriptor_json(key: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, **{k: v for k, v in fields.items() if k != "key"}}


@dataclass(frozen=True)
class Catalog:
    """The tools of one config, never changed once built (readers swap in a new one)."""

    tools: Mapping[str, CatalogTool] = field(default_factory=lambda: _EMPTY)        # usable tools by name
    broken: Mapping[str, BrokenTool] = field(default_factory=lambda: _EMPTY)        # tool key -> why it is left out
    services: Mapping[str, ToolServiceDescriptor] = field(default_factory=lambda: _EMPTY)   # usable services by config key
    mcp: Mapping[str, McpServer] = field(default_factory=lambda: _EMPTY)            # usable MCP servers by config key
    errors: tuple[DescriptorError, ...] = ()
    warnings: tuple[DescriptorError, ...] = ()

    @property
    def queue_pairs(self) -> frozenset[tuple[str, str]]:
        """The queue pairs the usable tools call: the clients an agent keeps open."""
        return frozenset(t.queues for t in self.tools.values() if t.queues is not None)

    @property
    def service_queue_pairs(self) -> frozenset[tuple[str, str]]:
        """The queue pairs of every usable service, tools or not (a service can be called by id)."""
        return frozenset(s.queues for s in self.services.values())

    def find_service(self, sid: str) -> ToolServiceDescriptor | None:
        """A usable service by config key, else by its descriptor's ``id``."""
        svc = self.services.get(sid)
        if svc is None:
            svc = next((s for s in self.services.values() if s.id == sid), None)
        return svc

    def problems(self, kind: Kind, key: str) -> list[DescriptorError]:
        """The errors of one config item."""
        return [e for e in self.errors if e.kind == kind and e.key == key]

    def tool_problems(self, name: str) -> list[DescriptorError]:
        """The errors of the left-out tools that give themselves ``name``."""
        return [e for b in self.broken.values() if b.name == name for e in b.errors]

    def to_json(self) -> dict[str, Any]:
        """Everything a client may show: ``GET /api/v1/tool-catalog``'s body."""
        entries = [*({"sort": t.key, **t.to_json()} for t in self.tools.values()),
                   *({"sort": b.key, **b.to_json()} for b in self.broken.values())]
        entries.sort(key=lambda e: e.pop("sort"))
        services = []
        for key, svc in sorted(self.services.items()):
            services.append({"key": key, **svc.model_dump(mode="json", by_alias=True)})
        return {
            "tools": entries,
            "services": services,
            "mcp": sorted(self.mcp),
            "errors": [str(e) for e in self.errors],
            "warnings": [str(e) for e in self.warnings],
        }


# -- building ------------------------------------------------------------------------------


def _parse(kind: Kind, model: type, key: str, raw: Any, defaults: Mapping[str, Any] = _EMPTY
           ) -> Any | list[DescriptorError]:
    data = load_object(kind, key, raw)
    if isinstance(data, DescriptorError):
        return [data]
    data = {**defaults, **{k: v for k, v in data.items() if v is not None or k not in defaults}}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        return from_validation(kind, key, exc, data)


def _parse_all(kind: Kind, model: type, section: Mapping[str, str], errors: list[DescriptorError],
               id_from_key: bool = False) -> tuple[dict[str, Any], dict[str, DescriptorError]]:
    good: dict[str, Any] = {}
    broken: dict[str, DescriptorError] = {}
    for key in sorted(section):
        # Upstream looks services up by key; an absent id means "same as key".
        result = _parse(kind, model, key, section[key], {"id": key} if id_from_key else _EMPTY)
        if isinstance(result, list):
            errors.extend(result)
            broken[key] = result[0]
        else:
            good[key] = result
    return good, broken


def _reference(what: str, ref: str, good: Mapping[str, Any], broken: Mapping[str, DescriptorError],
               unknown: str) -> str | None:
    """Why a reference to ``ref`` cannot be followed, or None when it can."""
    if ref in good:
        return None
    bad = broken.get(ref)
    if bad is not None:
        return f"{what} {ref!r} is invalid: field '{bad.field}': {bad.reason}"
    return unknown


@dataclass
class _Builder:
    services: dict[str, ToolServiceDescriptor]
    broken_services: dict[str, DescriptorError]
    mcp: dict[str, McpServer]
    broken_mcp: dict[str, DescriptorError]
    warnings: list[DescriptorError] = field(default_factory=list)

    def tool(self, key: str, raw: Any) -> CatalogTool | BrokenTool:
        data = load_object("tool", key, raw)
        if isinstance(data, DescriptorError):
            return BrokenTool(key, (data,))
        errors: list[DescriptorError] = []
        kind = data.get("type")
        model = TOOL_TYPES.get(kind) if isinstance(kind, str) else None
        if model is None:
            known = ", ".join(sorted(TOOL_TYPES))
            errors.append(DescriptorError("tool", key, "type", f"unknown tool type {kind!r} (known: {known})"))
            return BrokenTool(key, tuple(errors), data)
        descriptor: ToolDescriptor | None = None
        try:
            descriptor = model.model_validate(data)
        except ValidationError as exc:
            errors.extend(from_validation("tool", key, exc, data))
        if kind in _UNSUPPORTED:
            errors.append(DescriptorError("tool", key, "type", _UNSUPPORTED[kind]))
        # References are followed even when other fields are bad, so that one
        # round of fixing addresses every problem of the descriptor.
        service_key, service, config = self._service(key, data, errors) if kind == "tool-service" \
            else (None, None, {})
        mcp = self._mcp(key, data, errors) if kind == "mcp-tool" else None
        if errors or descriptor is None:
            return BrokenTool(key, tuple(errors), data)
        for i, arg in enumerate(descriptor.tool_arguments()):
            if not arg.typed:
                self.warnings.append(DescriptorError(
                    "tool", key, f"arguments[{i}].type",
                    f"type {arg.type!r} is not one of {', '.join(TYPES)}; values of {arg.name!r} "
                    "are not type-checked"))
        return CatalogTool(key, descriptor, service_key, service, MappingProxyType(config), mcp)

    def _service(self, key: str, data: dict[str, Any], errors: list[DescriptorError]
                 ) -> tuple[str | None, ToolServiceDescriptor | None, dict[str, Any]]:
        ref = data.get("service")
        if not isinstance(ref, str) or not ref.strip():
            return None, None, {}  # the model reports it
        why = _reference("service", ref, self.services, self.broken_services, f"unknown tool service {ref!r}")
        if why is not None:
            errors.append(DescriptorError("tool", key, "service", why, missing_reference=ref not in
                                          self.broken_services))
            return ref, None, {}
        service = self.services[ref]
        config: dict[str, Any] = {}
        for param in service.config_params:
            # Read from the raw object, not model_extra: a param may share its
            # name with a declared field (upstream allows that).
            value = data.get(param.name)
            if value is not None:
                config[param.name] = value
            elif param.required:
                errors.append(DescriptorError(
                    "tool", key, param.name,
                    f"required config param {param.name!r} of service {ref!r} is missing"))
            elif param.name in data:
                config[param.name] = None
        return ref, service, config

    def _mcp(self, key: str, data: dict[str, Any], errors: list[DescriptorError]) -> McpServer | None:
        ref = data.get("mcp-tool")
        if not isinstance(ref, str) or not ref.strip():
            return None
        why = _reference("MCP service", ref, self.mcp, self.broken_mcp,
                         f"unknown MCP service {ref!r} (no config item mcp/{ref})")
        if why is not None:
            errors.append(DescriptorError("tool", key, "mcp-tool", why,
                                          missing_reference=ref not in self.broken_mcp))
            return None
        return self.mcp[ref]


def build_catalog(config: Mapping[str, Mapping[str, str]]) -> Catalog:
    """The catalog of a whole config (its ``tool``, ``tool-service`` and ``mcp`` sections).

    Every problem is reported: bad service and MCP descriptors even when no
    tool uses them (so they are fixed before one does), and every bad tool.
    A bad descriptor only removes itself, and the tools that depend on it.
    Two tools with one name: the first key (in sorted order) keeps it, the
    other is left out, because a caller could not tell them apart.
    """
    errors: list[DescriptorError] = []
    services, broken_services = _parse_all("tool-service", ToolServiceDescriptor,
                                           config.get("tool-service") or {}, errors, id_from_key=True)
    mcp, broken_mcp = _parse_all("mcp", McpServer, config.get("mcp") or {}, errors)
    builder = _Builder(services, broken_services, mcp, broken_mcp)
    tools: dict[str, CatalogTool] = {}
    broken: dict[str, BrokenTool] = {}
    section = config.get("tool") or {}
    for key in sorted(section):
        entry = builder.tool(key, section[key])
        if isinstance(entry, CatalogTool) and entry.name in tools:
            other = tools[entry.name]
            entry = BrokenTool(key, (DescriptorError(
                "tool", key, "name", f"duplicate tool name {entry.name!r} (tool/{other.key} has it too); "
                f"callers could not tell them apart, so only tool/{other.key} is used"),),
                entry.descriptor.model_dump(mode="json", by_alias=True, exclude_none=True))
        if isinstance(entry, BrokenTool):
            broken[key] = entry
            errors.extend(entry.errors)
        else:
            tools[entry.name] = entry
    return Catalog(tools=MappingProxyType(tools), broken=MappingProxyType(broken),
                   services=MappingProxyType(services), mcp=MappingProxyType(mcp),
                   errors=tuple(errors), warnings=tuple(builder.warnings))
