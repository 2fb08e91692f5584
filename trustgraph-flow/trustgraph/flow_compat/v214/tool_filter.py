"""Upstream 2.1.4's ``trustgraph.agent.tool_filter``: which tools a request may use, on our agent's filter.

A tool is available when one of its groups (``config["group"]``, default
``["default"]``) is requested (``requested_groups``, default
``["default"]``; ``"*"`` requests every group) and the current state
(default ``"undefined"``) is one of its ``applicable-states`` (default
``["*"]``, every state).  The rule is the agent's own
(:func:`trustgraph.agent.react.registry.filter_tools`); these functions take
upstream's shapes: a ``{name: tool}`` map of tools whose ``config`` holds
those keys (or tools of ours, which carry ``groups`` and
``applicable_states`` themselves).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trustgraph.agent.react.registry import filter_tools
from trustgraph.catalog.contents import CatalogTool

logger = logging.getLogger(__name__)

__all__ = ["filter_tools_by_group_and_state", "get_next_state", "validate_tool_config"]


def _config(tool: Any) -> Mapping[str, Any]:
    config = getattr(tool, "config", None)
    return config if isinstance(config, Mapping) else {}


def _as_list(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, list | tuple) else (value,)


@dataclass(frozen=True)
class _Filtered:
    """What the agent's filter reads of one tool."""

    name: str
    groups: tuple[Any, ...]
    applicable_states: tuple[Any, ...]


def _view(name: str, tool: Any) -> _Filtered:
    if isinstance(tool, CatalogTool):   # ours: the catalog has read the groups and states
        return _Filtered(name, tuple(tool.groups), tuple(tool.applicable_states))
    config = _config(tool)
    return _Filtered(name, _as_list(config.get("group", ["default"])),
                     _as_list(config.get("applicable-states", ["*"])))


def filter_tools_by_group_and_state(tools: Mapping[str, Any], requested_groups: list[str] | None = None,
                                    current_state: str | None = None) -> dict[str, Any]:
    """The tools of ``tools`` (name -> tool) available in the groups and state, by name."""
    kept = filter_tools([_view(name, tool) for name, tool in tools.items()], requested_groups, current_state)
    out = {view.name: tools[view.name] for view in kept}
    logger.debug("Tools for groups %s, state %s: %d of %d", requested_groups, current_state or "undefined",
                 len(out), len(tools))
    return out


def _is_tool_available(tool: Any, requested_groups: list[str], current_state: str) -> bool:
    """Whether one tool passes the filter (upstream's helper, which its tests call)."""
    return bool(filter_tools([_view("", tool)], requested_groups, current_state))


def get_next_state(tool: Any, current_state: str) -> str:
    """The state after ``tool`` ran: its ``config["state"]`` when it sets one, else ``current_state``."""
    return _config(tool).get("state") or current_state


def validate_tool_config(config: Mapping[str, Any]) -> None:
    """Refuse (``ValueError``) a tool config whose ``group``, ``state`` or ``applicable-states``
    has the wrong type: lists of strings, and a string."""
    for key, what in (("group", "group names"), ("applicable-states", "state names")):
        if key in config:
            value = config[key]
            if not isinstance(value, list):
                raise ValueError(f"Tool '{key}' field must be a list of strings")
            if not all(isinstance(item, str) for item in value):
                raise ValueError(f"All {what} must be strings")
    if "state" in config and not isinstance(config["state"], str):
        raise ValueError("Tool 'state' field must be a string")
