"""The catalog: every tool of a config, resolved, with its problems, built by one function.

:func:`build_catalog` reads the ``tool``, ``tool-service`` and ``mcp`` config
sections (key -> JSON text) and returns a :class:`Catalog`: the usable tools
by name (each joined with its service or MCP server, its argument schema and
its config values), the broken ones with what is wrong, and every problem as
a :class:`~trustgraph.base.descriptors.errors.DescriptorError`.  The agent, the gateway,
``tg-show-tools`` and ``tg-put-config-item`` all use it, so they agree on what
a tool is and report a problem once, in one wording.

It never raises on bad config: a reader rebuilds the catalog on every config
push, and one broken descriptor must be reported without taking the good
ones down with it (upstream rejects the whole reload and keeps the old tools).

What the catalog holds is in :mod:`.contents`, and the services that
announce themselves in :mod:`.announced`; what one descriptor may be
(reading it, checking one tool, the framework's topics a service may not
use) is :mod:`trustgraph.base.descriptors`'s, the check a tool service runs
on its own declaration too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..base.descriptors.checks import check_tool
from ..base.descriptors.errors import DescriptorError, load_object
from ..base.descriptors.models import CATALOG_TYPES, DESCRIPTOR_TYPES, McpServer, ToolServiceDescriptor
from ..base.descriptors.parsing import parse_section, reference_problem
from ..base.descriptors.reserved_topics import framework_topics, refuse_framework_topics
from .announced import announced_services
from .contents import ANY_STATE, DEFAULT_GROUPS, BrokenTool, Catalog, CatalogTool
from .policy import read_approval, read_policy, unknown_named

__all__ = ["ANY_STATE", "CATALOG_TYPES", "DEFAULT_GROUPS", "DESCRIPTOR_TYPES", "BrokenTool", "Catalog",
           "CatalogTool", "build_catalog"]


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
        # References are followed even when other fields are bad, so that one
        # round of fixing addresses every problem of the descriptor.
        references: list[DescriptorError] = []
        kind = data.get("type")
        service_key, service = self._service(key, data, references) if kind == "tool-service" else (None, None)
        mcp = self._mcp(key, data, references) if kind == "mcp-tool" else None
        checked = check_tool(key, data, announced=source == "announced", service=service, service_key=service_key,
                             reference_errors=references)
        self.warnings.extend(checked.warnings)
        if checked.descriptor is None:
            return BrokenTool(key, checked.errors, data)
        return CatalogTool(key, checked.descriptor, service_key, service, checked.config, mcp, source)

    def _service(self, key: str, data: dict[str, Any], errors: list[DescriptorError]
                 ) -> tuple[str | None, ToolServiceDescriptor | None]:
        ref = data.get("service")
        if not isinstance(ref, str) or not ref.strip():
            return None, None  # the model reports it
        why = reference_problem("service", ref, self.services, self.broken_services, f"unknown tool service {ref!r}")
        if why is not None:
            errors.append(DescriptorError("tool", key, "service", why, missing_reference=ref not in
                                          self.broken_services))
            return ref, None
        return ref, self.services[ref]

    def _mcp(self, key: str, data: dict[str, Any], errors: list[DescriptorError]) -> McpServer | None:
        ref = data.get("mcp-tool")
        if not isinstance(ref, str) or not ref.strip():
            return None
        why = reference_problem("MCP service", ref, self.mcp, self.broken_mcp,
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
    Announced tools are used as the policy ``tool-policy/announced`` says,
    and the catalog carries ``tool-policy/approval`` (:mod:`.policy`).
    """
    errors: list[DescriptorError] = []
    warnings: list[DescriptorError] = []
    policy, policy_error = read_policy(config)
    if policy_error is not None:
        errors.append(policy_error)
    approval, approval_error = read_approval(config)
    if approval_error is not None:
        errors.append(approval_error)
    services, broken_services = parse_section("tool-service", ToolServiceDescriptor,
                                           config.get("tool-service") or {}, errors, id_from_key=True,
                                           warnings=warnings)
    reserved = framework_topics(config)
    refuse_framework_topics(services, broken_services, reserved, errors)
    used, announced_tools = announced_services(announced or {}, services, broken_services, errors, warnings,
                                                reserved, policy)
    mcp, broken_mcp = parse_section("mcp", McpServer, config.get("mcp") or {}, errors)
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
            if entry.service_key == tools[entry.name].service_key and entry.descriptor == tools[entry.name].descriptor:
                continue   # its own service announces the configured tool as it is: no conflict
            warnings.append(DescriptorError(
                "tool", entry.key, "name", f"announced tool {entry.name!r} is not used: the configured "
                f"tool/{tools[entry.name].key} has that name"))
        elif entry.name in firsts:
            warnings.append(DescriptorError(
                "tool", entry.key, "name", f"announced tool {entry.name!r} is not used: {firsts[entry.name].key} "
                "announced a tool of that name first, and keeps it"))
        else:
            tools[entry.name] = firsts[entry.name] = entry
    warnings.extend(unknown_named(approval, tools))
    return Catalog(tools=MappingProxyType(tools), broken=MappingProxyType(broken),
                   services=MappingProxyType(services), mcp=MappingProxyType(mcp),
                   errors=tuple(errors), warnings=tuple(warnings),
                   announced=frozenset(used), policy=policy, approval=approval)


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
