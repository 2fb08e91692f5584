"""The agent's tools, built from config, and the group/state filter.

A :class:`Registry` is immutable.  The service builds a new one on every
config push and swaps it in with one assignment; a request takes the
registry current when it starts and keeps it, so a reload never changes the
tools under a running iteration.

Every descriptor is checked on its own (STYLE.md: checked when declared).  A
bad one becomes a :class:`DescriptorError` naming the tool key, the field
and the reason, and is left out; the other tools load.  (Upstream rejects the
whole reload and silently keeps the previous tools.)
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from trustgraph.base.tool_descriptors import DescriptorError, resolve_tool_services

from .tools import (
    BUILDERS,
    AlreadyReported,
    BuildEnv,
    DescriptorProblem,
    QueuePair,
    ToolServiceClients,
    ToolServiceImpl,
)
from .types import Argument, ToolImpl

DEFAULT_GROUPS = ("default",)
ANY = "*"


@dataclass(frozen=True)
class Tool:
    """One tool as the model sees it, with its implementation and filters."""

    key: str
    name: str
    description: str
    type: str
    arguments: tuple[Argument, ...]
    impl: ToolImpl
    groups: tuple[str, ...] = DEFAULT_GROUPS
    state: str | None = None
    applicable_states: tuple[str, ...] = (ANY,)
    timeout: float | None = None

    def describe(self) -> dict[str, Any]:
        """The tool as listed in the ``agent-react`` prompt's ``tools`` variable."""
        return {
            "name": self.name,
            "description": self.description,
            "arguments": [{"name": a.name, "type": a.type, "description": a.description}
                          for a in self.arguments],
        }

    def check_arguments(self, arguments: Mapping[str, Any]) -> str | None:
        """What is wrong with the model's arguments, or None.

        A tool that declares no arguments accepts any (upstream mcp-tool
        descriptors often declare none and pass the model's through); one that
        declares some gets exactly those names, all required.
        """
        if not self.arguments:
            return None
        declared = [a.name for a in self.arguments]
        unknown = [n for n in arguments if n not in declared]
        missing = [n for n in declared if n not in arguments]
        if not unknown and not missing:
            return None
        problems = []
        if unknown:
            problems.append("unknown argument(s) " + ", ".join(repr(n) for n in unknown))
        if missing:
            problems.append("missing argument(s) " + ", ".join(repr(n) for n in missing))
        listed = "; ".join(f"{a.name} ({a.type}): {a.description}".rstrip(": ") for a in self.arguments)
        example = json.dumps({a.name: "..." for a in self.arguments})
        return (f"wrong arguments for tool '{self.name}': {'; '.join(problems)}. "
                f"Its arguments are: {listed}. Call it again with Args: {example}, "
                "or use another tool.")


@dataclass(frozen=True)
class Registry:
    """The tools of one config version; never mutated after it is built."""

    tools: Mapping[str, Tool] = field(default_factory=lambda: MappingProxyType({}))
    context: str = ""
    errors: tuple[DescriptorError, ...] = ()
    queue_pairs: frozenset[QueuePair] = frozenset()


def filter_tools(tools: Iterable[Tool], group: list[str] | None, state: str | None) -> list[Tool]:
    """The tools available to a request, as WIRE.md section 6 defines them.

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


def _str_list(data: dict[str, Any], name: str) -> tuple[str, ...] | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DescriptorProblem(name, "must be a list of strings")
    return tuple(value)


def _common(data: dict[str, Any]) -> dict[str, Any]:
    """Check the fields every tool type shares; return them ready for :class:`Tool`."""
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise DescriptorProblem("name", "required field is missing or not a non-empty string")
    description = data.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise DescriptorProblem("description", "must be a string")
    state = data.get("state")
    if state is not None and not isinstance(state, str):
        raise DescriptorProblem("state", "must be a string")
    timeout = data.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not math.isfinite(timeout) or timeout <= 0):
        raise DescriptorProblem("timeout", "must be a positive number of seconds")
    return {
        "name": name.strip(),
        "description": description,
        "groups": _str_list(data, "group") or DEFAULT_GROUPS,
        "state": state or None,
        "applicable_states": _str_list(data, "applicable-states") or (ANY,),
        "timeout": float(timeout) if timeout is not None else None,
    }


def _build_one(key: str, raw: str, env: BuildEnv) -> Tool:
    try:
        data = json.loads(raw)
    except (TypeError, ValueError) as e:
        raise DescriptorProblem("(json)", f"not valid JSON: {e}") from None
    if not isinstance(data, dict):
        raise DescriptorProblem("(json)", "must be a JSON object")
    kind = data.get("type")
    builder = BUILDERS.get(kind) if isinstance(kind, str) else None
    if builder is None:
        known = ", ".join(sorted(BUILDERS))
        raise DescriptorProblem("type", f"unknown tool type {kind!r} (known: {known})")
    built = builder(key, data, env)
    return Tool(key=key, type=kind, arguments=built.arguments, impl=built.impl, **_common(data))


def build_registry(config: Mapping[str, Mapping[str, str]], clients: ToolServiceClients,
                   config_type: str = "agent") -> Registry:
    """Build the tools of a whole config (the ``tool``, ``tool-service``, ``mcp`` and agent types).

    ``agent/additional-context`` (``config_type``/``additional-context``) is
    kept as the raw string: upstream does not JSON-decode it.
    """
    tools_cfg = dict(config.get("tool") or {})
    resolved, errors = resolve_tool_services(dict(config.get("tool-service") or {}), tools_cfg)
    env = BuildEnv(mcp=dict(config.get("mcp") or {}), services=resolved, clients=clients)
    problems: list[DescriptorError] = list(errors)
    tools: dict[str, Tool] = {}
    for key in sorted(tools_cfg):
        try:
            tool = _build_one(key, tools_cfg[key], env)
        except AlreadyReported:
            continue
        except DescriptorProblem as e:
            problems.append(DescriptorError("tool", key, e.field, e.reason))
            continue
        other = tools.get(tool.name)
        if other is not None:
            problems.append(DescriptorError(
                "tool", key, "name",
                f"duplicate tool name {tool.name!r} (tool/{other.key} has it); the model could not tell them apart"))
            continue
        tools[tool.name] = tool
    pairs = frozenset(t.impl.queues for t in tools.values() if isinstance(t.impl, ToolServiceImpl))
    context = (config.get(config_type) or {}).get("additional-context") or ""
    return Registry(tools=MappingProxyType(tools), context=context, errors=tuple(problems),
                    queue_pairs=pairs)


def descriptor_errors(config: Mapping[str, Mapping[str, str]], config_type: str = "agent") -> list[str]:
    """Every descriptor problem the agent would report for ``config``, built-in types included.

    Opens nothing (tool-service clients are created on first call), so a
    process without an agent, the gateway, can serve the agent's full list.
    """
    registry = build_registry(config, ToolServiceClients(pubsub=None), config_type)
    return [str(e) for e in registry.errors]
