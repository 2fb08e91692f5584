"""The agent's tools: the catalog's tools, each with the implementation that calls it.

A :class:`Registry` is immutable.  The service builds a new one on every
config push and swaps it in with one assignment; a request takes the
registry current when it starts and keeps it, so a reload never changes the
tools under a running iteration.

What a tool *is* (its fields, arguments, service, problems) is the catalog's
business (:mod:`trustgraph.catalog`), shared with the gateway, the MCP
server and the commands, and so is how a tool is called
(:mod:`trustgraph.catalog.calling`); this module only adds the group/state
filter that picks a request's tools.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from trustgraph.base.tool_services.tool_service_client import QueuePair, ToolServiceClients
from trustgraph.catalog import Catalog, DescriptorError, build_catalog
from trustgraph.catalog.calling import CallableTool
from trustgraph.catalog.implementations import BUILDERS, Builder

DEFAULT_GROUPS = ("default",)
ANY = "*"


#: A catalog tool with its implementation (the name the agent's code has always used).
Tool = CallableTool


@dataclass(frozen=True)
class Registry:
    """The tools of one config version; never mutated after it is built."""

    tools: Mapping[str, Tool] = field(default_factory=lambda: MappingProxyType({}))
    context: str = ""
    catalog: Catalog = field(default_factory=Catalog)

    @property
    def errors(self) -> tuple[DescriptorError, ...]:
        return self.catalog.errors

    @property
    def queue_pairs(self) -> frozenset[QueuePair]:
        return self.catalog.queue_pairs


def filter_tools(tools: Iterable[Any], group: list[str] | None, state: str | None) -> list[Any]:
    """The tools available to a request, as upstream's agent picks them.

    Requested groups are ``group``, or ``["default"]`` when it is null; an
    empty list gives no tools.  The state is ``state``, or ``"undefined"``
    when empty.  A tool is available when ``"*"`` is requested or its groups
    meet the requested ones, and its applicable states hold ``"*"`` or the
    state.
    """
    wanted = DEFAULT_GROUPS if group is None else tuple(group)
    current = state or "undefined"
    out = []
    for tool in tools:
        in_group = ANY in wanted or any(g in tool.groups for g in wanted)
        in_state = ANY in tool.applicable_states or current in tool.applicable_states
        if in_group and in_state:
            out.append(tool)
    return out


def build_registry(config: Mapping[str, Mapping[str, str]], clients: ToolServiceClients,
                   config_type: str = "agent", announced: Mapping[str, Any] | None = None,
                   builders: Mapping[str, Builder] = BUILDERS) -> Registry:
    """The tools of a whole config and of the services that announce themselves, and
    ``<config_type>/additional-context``; each tool implemented by ``builders`` (its wire's).

    The context is kept as the raw string: upstream does not JSON-decode it.
    """
    catalog = build_catalog(config, announced)
    tools = {name: CallableTool.build(entry, clients, builders) for name, entry in catalog.tools.items()}
    context = (config.get(config_type) or {}).get("additional-context") or ""
    return Registry(tools=MappingProxyType(tools), context=context, catalog=catalog)
