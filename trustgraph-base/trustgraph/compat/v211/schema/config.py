"""2.11's config-service records: config per workspace, and pushes that only say what changed.

In 2.11 a ``ConfigRequest`` names its ``workspace`` (required on every
operation but ``getvalues-all-ws``, which spans them all; ``getkeys-all-ws``
spans them too), a ``ConfigValue`` says which workspace it came from in the
two all-workspace replies, and a ``ConfigPush`` no longer carries the config:
it names, per config type, the workspaces whose items of that type changed,
and the processors fetch what they need (notify, then fetch).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trustgraph.schema.core.primitives import Error
from trustgraph.schema.services.config import (
    ConfigKey,  # unchanged in 2.11: the item's type and key in a workspace
)

__all__ = ["ConfigKey", "ConfigPush", "ConfigRequest", "ConfigResponse", "ConfigValue", "WorkspaceChanges"]


@dataclass
class ConfigValue:
    """One item; ``workspace`` is filled only by the all-workspace operations.

    ``value`` is null in a ``get`` reply when the key is absent (2.11's
    config-svc answers with what its store returned), hence ``str | None``.
    """

    type: str = ""
    key: str = ""
    value: str | None = ""
    workspace: str = ""


@dataclass
class ConfigRequest:
    """get, list, getvalues, put, delete, config (one workspace), getvalues-all-ws, getkeys-all-ws."""

    operation: str = ""
    workspace: str = ""
    keys: list[ConfigKey] = field(default_factory=list)
    type: str = ""
    values: list[ConfigValue] = field(default_factory=list)


@dataclass
class ConfigResponse:
    """Reply to a ConfigRequest: the same fields as 2.1's, its values naming their workspace."""

    version: int = 0
    values: list[ConfigValue] = field(default_factory=list)
    directory: list[str] = field(default_factory=list)
    config: dict[str, dict[str, str]] = field(default_factory=dict)
    error: Error | None = None


@dataclass
class WorkspaceChanges:
    """Workspaces registered in (``created``) or removed from (``deleted``) ``__workspaces__``."""

    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


@dataclass
class ConfigPush:
    """A change notice: ``changes`` maps each changed type to the workspaces it changed in.

    Empty ``changes`` (config-svc's notice when it starts) tells nothing
    changed that a processor must fetch.
    """

    version: int = 0
    changes: dict[str, list[str]] = field(default_factory=dict)
    workspace_changes: WorkspaceChanges | None = None
