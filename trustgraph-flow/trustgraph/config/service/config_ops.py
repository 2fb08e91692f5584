"""The config operations of config-svc, as pure logic over a ConfigStore.

The messaging layer decodes a ConfigRequest into a plain dict, calls
:meth:`ConfigOperations.handle`, sends the returned ConfigResponse dict and,
when the returned flag is true, publishes a ConfigPush of the whole store.
Keeping the logic free of Pulsar lets it be tested against a real SQLite file
with no broker.

Upstream 2.1.4's behaviour, followed here: operations get, list,
getvalues, put, delete and config; put and delete answer with an empty response
(``version`` 0) and bump the version once per request; a handler failure is an
``Error(type="config-error")`` and an unknown operation is
``Error(type="bad-operation", message="Bad operation")``.  Unlike upstream we
check the shape of the request first, so a malformed one gets a message saying
which field is wrong instead of an AttributeError text.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from .operations import Refused, run_operation
from .store import ConfigStore

__all__ = ["ConfigOperations"]

logger = logging.getLogger(__name__)

Response = dict[str, Any]



def _response(**fields: Any) -> Response:
    """A ConfigResponse dict with every field present, as the wire requires.

    Fields an operation does not use are null, as upstream sends them.
    """
    out: Response = {
        "version": 0,
        "values": None,
        "directory": None,
        "config": None,
        "error": None,
    }
    out.update(fields)
    return out


def _error(kind: str, message: str) -> Response:
    return _response(error={"type": kind, "message": message})


def _list_field(request: Mapping[str, Any], name: str, shape: str) -> list[Any]:
    """``request[name]`` as a list; null or absent counts as empty."""
    value = request.get(name)
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise Refused(f"'{name}' must be a list of {shape} objects, got {type(value).__name__}")
    return list(value)


def _string_field(item: Mapping[str, Any], where: str, name: str) -> str:
    if name not in item:
        raise Refused(f"{where} has no '{name}'")
    value = item[name]
    if value is None:
        raise Refused(f"{where}.{name} is null; it must be a string")
    if not isinstance(value, str):
        raise Refused(f"{where}.{name} must be a string, got {type(value).__name__}")
    return value


def _item(raw: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise Refused(f"{where} must be an object, got {type(raw).__name__}")
    return raw


def _parse_keys(request: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Validated ``keys`` as ``(type, key)`` pairs."""
    out = []
    for i, raw in enumerate(_list_field(request, "keys", "{type, key}")):
        where = f"keys[{i}]"
        item = _item(raw, where)
        out.append((_string_field(item, where, "type"), _string_field(item, where, "key")))
    return out


def _parse_values(request: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """Validated ``values`` as ``(type, key, value)`` triples."""
    out = []
    for i, raw in enumerate(_list_field(request, "values", "{type, key, value}")):
        where = f"values[{i}]"
        item = _item(raw, where)
        if item.get("value", "") is None:
            raise Refused(
                f"{where}.value is null; put needs a string value (use the delete operation to remove a key)"
            )
        out.append(
            (
                _string_field(item, where, "type"),
                _string_field(item, where, "key"),
                _string_field(item, where, "value"),
            )
        )
    return out


def _parse_type(request: Mapping[str, Any]) -> str:
    value = request.get("type", "")
    if not isinstance(value, str):
        shown = "null" if value is None else type(value).__name__
        raise Refused(f"'type' must be a string, got {shown}")
    return value


class ConfigOperations:
    """Answers ConfigRequest dicts from a :class:`ConfigStore`.

    A plain class with its store passed in, so a test builds one over a temp
    file and calls :meth:`handle` directly.
    """

    def __init__(self, store: ConfigStore) -> None:
        self.store = store
        self._handlers: dict[str, Callable[[Mapping[str, Any]], tuple[Response, bool]]] = {
            "get": self._get,
            "list": self._list,
            "getvalues": self._getvalues,
            "put": self._put,
            "delete": self._delete,
            "config": self._config,
        }

    def handle(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        """Run one request; return ``(ConfigResponse dict, push_needed)``.

        Never raises: every failure becomes an ``error`` in the response, so
        one bad request cannot kill the service's consumer loop.
        """
        return run_operation(request, self._handlers, error_type="config-error", error=_error)

    # -- reads ------------------------------------------------------------

    def _get(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        keys = _parse_keys(request)
        with self.store.locked():
            values = [{"type": t, "key": k, "value": self.store.get(t, k)} for t, k in keys]
            version = self.store.version()
        return _response(version=version, values=values), False

    def _list(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        type_ = _parse_type(request)
        with self.store.locked():
            directory = self.store.keys(type_)
            version = self.store.version()
        return _response(version=version, directory=directory), False

    def _getvalues(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        type_ = _parse_type(request)
        with self.store.locked():
            rows = self.store.values(type_)
            version = self.store.version()
        values = [{"type": type_, "key": k, "value": v} for k, v in rows.items()]
        return _response(version=version, values=values), False

    def _config(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        version, config = self.store.snapshot()
        return _response(version=version, config=config), False

    # -- writes: one apply each, so one version bump per request ------------

    def _put(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        self.store.apply(puts=_parse_values(request), deletes=[])
        return _response(), True

    def _delete(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        self.store.apply(puts=[], deletes=_parse_keys(request))
        return _response(), True
