"""2.11's config operations, as pure logic over a ConfigStore: config per workspace.

Upstream 2.11.1's config-svc (trustgraph-flow ``config/service/config.py``)
answers the same six operations as 2.1 inside one workspace, plus two that
span every workspace, and its behaviour is followed here:

* on the system queue (``request:tg:config``) the workspace comes from the
  request; every operation but ``getvalues-all-ws`` and ``getkeys-all-ws``
  needs one, else ``Error(type="bad-request", message="Workspace is
  required")``;
* on a workspace's own queue (``request:tg:config:<workspace>``) the queue
  names the workspace, whatever the request says, and the all-workspace
  operations are unknown there;
* ``getvalues-all-ws`` answers every item of a type with its ``workspace``,
  ``getkeys-all-ws`` the same without values (so the reply stays small);
* put and delete answer an empty response and bump the version once; an
  unknown operation is ``bad-operation`` / "Bad operation", and a handler
  failure a ``config-error``.

One check is ours: a put into ``__workspaces__`` that registers a workspace
config-svc could not serve (a name that cannot be a topic, or one past
``--max-workspaces``) is a ``config-error`` and nothing is written
(:mod:`.workspaces`).

What changed is not worked out here: every write goes through
:meth:`ConfigStore.apply`, which records it, and config-svc builds its change
notice from that (:func:`notice`).  As in 2.1 (:mod:`trustgraph.config.service.config_ops`), the request's
shape is checked first, so a malformed one is told which field is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from trustgraph.compat.v211.schema import WORKSPACE_TYPE, WORKSPACES, is_reserved
from trustgraph.config.service.config_ops import _parse_keys, _parse_type, _parse_values
from trustgraph.config.service.operations import Refused, run_operation
from trustgraph.config.service.store import Change, ConfigStore

from .workspaces import DEFAULT_MAX_WORKSPACES, check_registrations

__all__ = ["SYSTEM_ONLY", "Config211Operations", "notice"]

Response = dict[str, Any]
Handler = Callable[[Mapping[str, Any], str], tuple[Response, bool]]

#: The operations that span every workspace: served on the system queue only.
SYSTEM_ONLY = ("getvalues-all-ws", "getkeys-all-ws")


def _error(kind: str, message: str) -> Response:
    # Fields left out take the record's defaults (empty lists, version 0), as upstream's
    # ConfigResponse(error=...) has them.
    return {"error": {"type": kind, "message": message}}


class Config211Operations:
    """Answers 2.11 ConfigRequest dicts from a :class:`ConfigStore`.

    ``handle(request)`` is the system queue; ``handle(request, workspace=w)``
    the queue of workspace ``w``.
    """

    def __init__(self, store: ConfigStore, max_workspaces: int = DEFAULT_MAX_WORKSPACES) -> None:
        self.store = store
        self.max_workspaces = max_workspaces
        self._scoped: dict[str, Handler] = {
            "get": self._get,
            "list": self._list,
            "getvalues": self._getvalues,
            "put": self._put,
            "delete": self._delete,
            "config": self._config,
        }

    def handle(self, request: Mapping[str, Any], workspace: str | None = None) -> tuple[Response, bool]:
        """Run one request; return ``(ConfigResponse dict, changed)``.  Never raises."""
        if workspace is None:
            handlers = {name: self._in_named_workspace(handler) for name, handler in self._scoped.items()}
            handlers["getvalues-all-ws"] = self._getvalues_all
            handlers["getkeys-all-ws"] = self._getkeys_all
        else:
            handlers = {name: self._in(handler, workspace) for name, handler in self._scoped.items()}
        return run_operation(request, handlers, error_type="config-error", error=_error)

    @staticmethod
    def _in(handler: Handler, workspace: str) -> Callable[[Mapping[str, Any]], tuple[Response, bool]]:
        return lambda request: handler(request, workspace)

    @staticmethod
    def _in_named_workspace(handler: Handler) -> Callable[[Mapping[str, Any]], tuple[Response, bool]]:
        def run(request: Mapping[str, Any]) -> tuple[Response, bool]:
            workspace = request.get("workspace")
            if workspace is not None and not isinstance(workspace, str):
                raise Refused(f"'workspace' must be a string, got {type(workspace).__name__}")
            if not workspace:
                return _error("bad-request", "Workspace is required"), False
            return handler(request, workspace)
        return run

    # -- one workspace ------------------------------------------------------

    def _get(self, request: Mapping[str, Any], workspace: str) -> tuple[Response, bool]:
        keys = _parse_keys(request)
        with self.store.locked():
            values = [{"type": t, "key": k, "value": self.store.get(t, k, workspace=workspace)}
                      for t, k in keys]
            version = self.store.version()
        return {"version": version, "values": values}, False

    def _list(self, request: Mapping[str, Any], workspace: str) -> tuple[Response, bool]:
        type_ = _parse_type(request)
        with self.store.locked():
            directory = self.store.keys(type_, workspace=workspace)
            version = self.store.version()
        return {"version": version, "directory": directory}, False

    def _getvalues(self, request: Mapping[str, Any], workspace: str) -> tuple[Response, bool]:
        type_ = _parse_type(request)
        with self.store.locked():
            rows = self.store.values(type_, workspace=workspace)
            version = self.store.version()
        return {"version": version,
                "values": [{"type": type_, "key": k, "value": v} for k, v in rows.items()]}, False

    def _config(self, request: Mapping[str, Any], workspace: str) -> tuple[Response, bool]:
        version, config = self.store.snapshot(workspace=workspace)
        return {"version": version, "config": config}, False

    def _put(self, request: Mapping[str, Any], workspace: str) -> tuple[Response, bool]:
        puts = _parse_values(request)
        with self.store.locked():
            check_registrations(self.store, puts, workspace, self.max_workspaces)
            self.store.apply(puts=puts, deletes=[], workspace=workspace)
        return {}, True

    def _delete(self, request: Mapping[str, Any], workspace: str) -> tuple[Response, bool]:
        self.store.apply(puts=[], deletes=_parse_keys(request), workspace=workspace)
        return {}, True

    # -- every workspace ------------------------------------------------------

    def _getvalues_all(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        type_ = _parse_type(request)
        with self.store.locked():
            rows = self.store.across(type_)
            version = self.store.version()
        return {"version": version, "values": [{"workspace": w, "type": type_, "key": k, "value": v}
                                               for w, k, v in rows]}, False

    def _getkeys_all(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        type_ = _parse_type(request)
        with self.store.locked():
            rows = self.store.across(type_)
            version = self.store.version()
        return {"version": version, "values": [{"workspace": w, "type": type_, "key": k, "value": ""}
                                               for w, k, _v in rows]}, False


def notice(version: int, changes: Iterable[Change]) -> dict[str, Any]:
    """The 2.11 ConfigPush dict announcing ``changes`` at ``version``.

    ``changes`` lists, per type, the workspaces it changed in, less the
    reserved ones (``_``-prefixed: 2.11's config-svc keeps their changes
    quiet); workspaces registered in or removed from ``__workspaces__`` are
    ``workspace_changes``, as 2.11's config-svc sends them.
    """
    changes = list(changes)
    by_type: dict[str, list[str]] = {}
    created: list[str] = []
    deleted: list[str] = []
    for change in changes:
        if change.workspace == WORKSPACES and change.type == WORKSPACE_TYPE:
            (deleted if change.deleted else created).append(change.key)
        if is_reserved(change.workspace):
            continue
        workspaces = by_type.setdefault(change.type, [])
        if change.workspace not in workspaces:
            workspaces.append(change.workspace)
    workspace_changes = {"created": created, "deleted": deleted} if created or deleted else None
    return {"version": version, "changes": by_type, "workspace_changes": workspace_changes}
