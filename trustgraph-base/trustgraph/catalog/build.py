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

from ..topics import (
    ANNOUNCE,
    CONFIG_NOTICE,
    CONFIG_REQUEST,
    CONFIG_RESPONSE,
    FLOW_REQUEST,
    FLOW_RESPONSE,
    PROBE,
    SERVING,
    TopicError,
    config_push_queue,
    to_pulsar,
)
from .arguments import TYPES, ArgumentError, ToolArgument, arguments_schema, check_arguments
from .data_blocks import name_problem
from .errors import DescriptorError, Kind, from_validation, load_object
from .models import TOOL_TYPES, McpServer, ToolDescriptor, ToolServiceDescriptor
from .policy import POLICY_TYPE, AnnouncedPolicy, read_policy

#: The config types that hold descriptors, and the announced-tools policy (what
#: ``tg-put-config-item`` checks).
DESCRIPTOR_TYPES = ("tool", "tool-service", "mcp", POLICY_TYPE)
#: The config types the catalog is built from: the descriptors, the policy, and
#: the flows (whose topics a tool service may not use).
CATALOG_TYPES = (*DESCRIPTOR_TYPES, "active-flow")

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
    def examples(self) -> tuple[str, ...]:
        """Questions a user might ask that this tool answers (may be empty)."""
        return self.descriptor.examples

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
        """Seconds one call may take: the tool's own ``timeout``, else its service's."""
        if self.descriptor.timeout is not None:
            return self.descriptor.timeout
        return self.service.timeout if self.service is not None else None

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
        """The tool as the ``agent-react`` prompt's ``tools`` variable lists it.

        Upstream's shape, plus ``examples`` when the tool has some: templates
        read the keys they name, so upstream's ignore it.
        """
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "arguments": [{"name": a.name, "type": a.type, "description": a.description}
                          for a in self.arguments],
        }
        if self.examples:
            out["examples"] = list(self.examples)
        return out

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
    announced: frozenset[str] = frozenset()          # ids of the announced services the catalog uses
    policy: AnnouncedPolicy = AnnouncedPolicy()      # which announced tools it may use (tool-policy/announced)

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
            "announced-tools": self.policy.to_json(),
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
    warnings: list[DescriptorError]

    def tool(self, key: str, raw: Any, source: str = "config") -> CatalogTool | BrokenTool:
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
        if descriptor is not None and source == "announced" and (problem := name_problem(descriptor.name)):
            errors.append(DescriptorError("tool", key, "name", problem))
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
        return CatalogTool(key, descriptor, service_key, service, MappingProxyType(config), mcp, source)

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


def build_catalog(config: Mapping[str, Mapping[str, str]],
                  announced: Mapping[str, Any] | None = None) -> Catalog:
    """The catalog of a whole config (its ``tool``, ``tool-service`` and ``mcp`` sections),
    and of the services that announce themselves.

    ``announced`` maps a running service's id to what it announced: an object
    with ``descriptor`` (its tool-service descriptor, JSON text) and ``tools``
    (``{key: tool descriptor}``, JSON text), and optionally ``since`` (when it
    took the id: earlier ones name their tools first) and ``conflicts`` (other
    replicas announcing the id, not used), as
    :class:`~trustgraph.base.tool_services.service_directory.ServiceDirectory` keeps them.

    Every problem is reported: bad service and MCP descriptors even when no
    tool uses them (so they are fixed before one does), and every bad tool.
    A bad descriptor only removes itself, and the tools that depend on it.
    What a person configured wins over what a service announces with the
    same service id or tool name (reported as a warning).  Two configured
    tools with one name are both left out, each reported, because a caller
    could not tell them apart and neither is the obvious winner; of two
    announced tools with one name, the service that announced first keeps it
    and the other is reported (a newcomer cannot take a running tool away).
    Announced tools are used as the policy ``tool-policy/announced`` says
    (:mod:`.policy`).
    """
    errors: list[DescriptorError] = []
    warnings: list[DescriptorError] = []
    policy, policy_error = read_policy(config)
    if policy_error is not None:
        errors.append(policy_error)
    services, broken_services = _parse_all("tool-service", ToolServiceDescriptor,
                                           config.get("tool-service") or {}, errors, id_from_key=True)
    reserved = _framework_topics(config)
    _refuse_framework_topics(services, broken_services, reserved, errors)
    used, announced_tools = _announced_services(announced or {}, services, broken_services, errors, warnings,
                                                reserved, policy)
    mcp, broken_mcp = _parse_all("mcp", McpServer, config.get("mcp") or {}, errors)
    builder = _Builder(services, broken_services, mcp, broken_mcp, warnings)
    tools: dict[str, CatalogTool] = {}
    broken: dict[str, BrokenTool] = {}
    section = config.get("tool") or {}
    configured = _unique_names([builder.tool(key, section[key]) for key in sorted(section)])
    for entry in configured:
        if isinstance(entry, BrokenTool):
            broken[entry.key] = entry
            errors.extend(entry.errors)
        else:
            tools[entry.name] = entry
    firsts: dict[str, CatalogTool] = {}
    for key, data in announced_tools:
        entry = builder.tool(key, data, source="announced")
        if isinstance(entry, BrokenTool):
            broken[entry.key] = entry
            errors.extend(entry.errors)
        elif entry.name in tools and tools[entry.name].source == "config":
            warnings.append(DescriptorError(
                "tool", entry.key, "name", f"announced tool {entry.name!r} is not used: the configured "
                f"tool/{tools[entry.name].key} has that name"))
        elif entry.name in firsts:
            warnings.append(DescriptorError(
                "tool", entry.key, "name", f"announced tool {entry.name!r} is not used: {firsts[entry.name].key} "
                "announced a tool of that name first, and keeps it"))
        else:
            tools[entry.name] = firsts[entry.name] = entry
    return Catalog(tools=MappingProxyType(tools), broken=MappingProxyType(broken),
                   services=MappingProxyType(services), mcp=MappingProxyType(mcp),
                   errors=tuple(errors), warnings=tuple(warnings),
                   announced=frozenset(used), policy=policy)


def _unique_names(entries: list[CatalogTool | BrokenTool]) -> list[CatalogTool | BrokenTool]:
    """Left out, with an error each: every usable tool whose name another one has too."""
    keys: dict[str, list[str]] = {}
    for e in entries:
        if isinstance(e, CatalogTool):
            keys.setdefault(e.name, []).append(e.key)
    out: list[CatalogTool | BrokenTool] = []
    for e in entries:
        if isinstance(e, CatalogTool) and len(keys[e.name]) > 1:
            others = ", ".join(f"tool/{k}" for k in keys[e.name] if k != e.key)
            e = BrokenTool(e.key, (DescriptorError(
                "tool", e.key, "name", f"duplicate tool name {e.name!r} ({others} has it too); callers "
                "could not tell them apart, so neither is used: rename one"),),
                e.descriptor.model_dump(mode="json", by_alias=True, exclude_none=True))
        out.append(e)
    return out


def _framework_topics(config: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """The topics of the framework itself (Pulsar URL -> what it is), which no tool service may use.

    A descriptor naming one would make the agent publish tool calls on the
    config push topic or into a flow's queues.
    """
    reserved = {CONFIG_REQUEST: "config-svc's requests", CONFIG_RESPONSE: "config-svc's replies",
                to_pulsar(config_push_queue): "the config pushes", CONFIG_NOTICE: "the config notices",
                FLOW_REQUEST: "config-svc's flow requests",
                FLOW_RESPONSE: "config-svc's flow replies", ANNOUNCE: "the tool-service announcements",
                PROBE: "the tool-service probes", SERVING: "the serving notices"}
    for processor, raw in (config.get("active-flow") or {}).items():
        data = load_object("tool", processor, raw)
        for flow, definition in (data.items() if isinstance(data, dict) else ()):
            for spec, topic in (definition.items() if isinstance(definition, dict) else ()):
                try:
                    reserved.setdefault(to_pulsar(topic), f"{processor}'s '{spec}' in flow {flow}")
                except TopicError:
                    continue
    return reserved


def _in_config_namespace(topic: str) -> str | None:
    """What a topic of the ``tg/config`` namespace is, whichever of its topics it is.

    Only the framework publishes there (pushes, announcements, probes, and
    whatever a later version adds), so the whole namespace is its own.
    """
    return "the framework's config namespace, tg/config" if topic.partition("://")[2].startswith(
        "tg/config/") else None


def _refuse_framework_topics(services: dict[str, ToolServiceDescriptor], broken: dict[str, DescriptorError],
                             reserved: Mapping[str, str], errors: list[DescriptorError],
                             note: str = "") -> None:
    for sid in sorted(services):
        svc = services[sid]
        for field_name, topic in (("request-queue", svc.queues[0]), ("response-queue", svc.queues[1])):
            what = reserved.get(topic) or _in_config_namespace(topic)
            if what is not None:
                err = DescriptorError("tool-service", sid, field_name,
                                      f"{topic!r} is a topic of the framework itself ({what}); a tool service "
                                      f"needs topics of its own{note}")
                errors.append(err)
                broken.setdefault(sid, err)
        if sid in broken:
            del services[sid]


def _announced_services(announced: Mapping[str, Any], services: dict[str, ToolServiceDescriptor],
                        broken_services: dict[str, DescriptorError], errors: list[DescriptorError],
                        warnings: list[DescriptorError], reserved: Mapping[str, str],
                        policy: AnnouncedPolicy) -> tuple[list[str], list[tuple[str, dict[str, Any]]]]:
    """Add the announced services a person has not configured (in the order they took their
    ids); return the ids used and their tools to build."""
    used: list[str] = []
    tools: list[tuple[str, dict[str, Any]]] = []
    for sid in sorted(announced, key=lambda k: (getattr(announced[k], "since", 0.0), k)):
        a = announced[sid]
        configured = sid in services or sid in broken_services
        if not policy.admits(sid, configured):
            warnings.append(DescriptorError(
                "tool-service", sid, "tools", "the tools this running service announces are not used: the "
                f"announced-tools policy (tool-policy/announced) is {policy.describe()}"))
            continue
        mine = services.get(sid)
        for other in getattr(a, "conflicts", None) or ():
            queue = getattr(other, "request_queue", None)
            if mine is not None and getattr(other, "queues", None) != mine.queues:
                reason = (f"a running service announces itself under this id with other queues ({queue}); "
                          "the configured descriptor is used")
            else:
                reason = (f"other replicas announce this id with another descriptor or other tools ({queue}); "
                          "they are not used")
            warnings.append(DescriptorError("tool-service", sid, "request-queue", reason))
        if not a.descriptor:
            continue  # nothing usable announced (only conflicts, reported above)
        parsed = _parse("tool-service", ToolServiceDescriptor, sid, a.descriptor or "{}", {"id": sid})
        if not isinstance(parsed, list):
            theirs: dict[str, ToolServiceDescriptor] = {sid: parsed}
            refused: dict[str, DescriptorError] = {}
            _refuse_framework_topics(theirs, refused, reserved, errors, " (announced by the service)")
            if refused:
                continue
        if configured:
            if mine is not None and not isinstance(parsed, list) and parsed.queues != mine.queues:
                warnings.append(DescriptorError(
                    "tool-service", sid, "request-queue", "a running service announces itself under this "
                    f"id with other queues ({parsed.request_queue}); the configured descriptor is used"))
                continue
        elif isinstance(parsed, list):
            errors.extend(DescriptorError(e.kind, e.key, e.field, e.reason + " (announced by the service)")
                          for e in parsed)
            continue
        else:
            services[sid] = parsed
        used.append(sid)
        data = load_object("tool-service", sid, a.tools or "{}")
        if isinstance(data, DescriptorError):
            errors.append(DescriptorError("tool-service", sid, "tools", data.reason + " (announced)"))
            continue
        for key in sorted(data):
            tool = data[key]
            tool = {**tool, "type": "tool-service", "service": sid} if isinstance(tool, dict) else tool
            tools.append((f"{sid}/{key}", tool))
    return used, tools
