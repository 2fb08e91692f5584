"""ConfigOperations: the config half of config-svc, as upstream 2.1.4's behaves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from trustgraph.config.service.config_ops import ConfigOperations
from trustgraph.config.service.store import ConfigStore

RESPONSE_FIELDS = {"version", "values", "directory", "config", "error"}

KB_TOOL = '{"type": "knowledge-query", "name": "kb", "description": "Ask the graph"}'
JOKE_SERVICE = (
    '{"id": "joke-service", "request-queue": "non-persistent://tg/request/joke", '
    '"response-queue": "non-persistent://tg/response/joke"}'
)


def request(operation: str, **fields: Any) -> dict[str, Any]:
    """A decoded ConfigRequest with every field present, as the wire delivers it."""
    base: dict[str, Any] = {"operation": operation, "keys": [], "type": "", "values": []}
    base.update(fields)
    return base


@pytest.fixture
def store(tmp_path: Path):
    s = ConfigStore(str(tmp_path / "config.db"))
    yield s
    s.close()


@pytest.fixture
def ops(store: ConfigStore) -> ConfigOperations:
    return ConfigOperations(store)


def put(ops: ConfigOperations, *triples: tuple[str, str, str]) -> tuple[dict, bool]:
    return ops.handle(request("put", values=[{"type": t, "key": k, "value": v} for t, k, v in triples]))


def assert_error(resp: dict, changed: bool, kind: str, *needles: str) -> None:
    assert set(resp) == RESPONSE_FIELDS
    assert changed is False
    assert resp["error"]["type"] == kind
    for needle in needles:
        assert needle in resp["error"]["message"]


# -- put / delete ----------------------------------------------------------


def test_put_returns_empty_response_and_asks_for_push(ops: ConfigOperations, store: ConfigStore) -> None:
    resp, changed = put(ops, ("tool", "kb", KB_TOOL), ("tool-service", "joke-service", JOKE_SERVICE))
    assert changed is True
    assert resp == {"version": 0, "values": None, "directory": None, "config": None, "error": None}
    assert store.version() == 1
    assert store.get("tool", "kb") == KB_TOOL


def test_version_goes_up_once_per_request_not_per_key(ops: ConfigOperations, store: ConfigStore) -> None:
    put(ops, *[("tool", f"t{i}", "{}") for i in range(7)])
    assert store.version() == 1
    put(ops, ("tool", "one", "{}"))
    assert store.version() == 2
    ops.handle(request("delete", keys=[{"type": "tool", "key": f"t{i}"} for i in range(7)]))
    assert store.version() == 3
    # Reads never bump.
    for op in ("get", "list", "getvalues", "config"):
        _, changed = ops.handle(request(op, type="tool"))
        assert changed is False
    assert store.version() == 3


def test_put_with_no_values_still_counts_as_a_request(ops: ConfigOperations, store: ConfigStore) -> None:
    resp, changed = ops.handle(request("put", values=[]))
    assert resp["error"] is None and changed is True
    assert store.version() == 1


def test_delete_removes_present_and_ignores_absent(ops: ConfigOperations, store: ConfigStore) -> None:
    put(ops, ("tool", "kb", KB_TOOL), ("tool", "ask", "{}"))
    resp, changed = ops.handle(
        request("delete", keys=[{"type": "tool", "key": "kb"}, {"type": "tool", "key": "never-there"}])
    )
    assert changed is True
    assert resp == {"version": 0, "values": None, "directory": None, "config": None, "error": None}
    assert store.values("tool") == {"ask": "{}"}
    assert store.version() == 2


# -- reads -----------------------------------------------------------------


def test_get_returns_values_and_null_for_missing(ops: ConfigOperations) -> None:
    put(ops, ("tool", "kb", KB_TOOL))
    resp, changed = ops.handle(
        request("get", keys=[{"type": "tool", "key": "kb"}, {"type": "tool", "key": "missing"}])
    )
    assert changed is False
    assert resp["error"] is None
    assert resp["version"] == 1
    assert resp["values"] == [
        {"type": "tool", "key": "kb", "value": KB_TOOL},
        {"type": "tool", "key": "missing", "value": None},
    ]
    assert resp["directory"] is None and resp["config"] is None


def test_list_gives_keys(ops: ConfigOperations) -> None:
    put(ops, ("tool", "kb", "{}"), ("tool", "ask", "{}"), ("prompt", "system", '"x"'))
    resp, changed = ops.handle(request("list", type="tool"))
    assert changed is False
    assert resp["version"] == 1
    assert resp["directory"] == ["ask", "kb"]
    assert resp["values"] is None


def test_list_unknown_type_is_empty(ops: ConfigOperations) -> None:
    resp, _ = ops.handle(request("list", type="nothing-here"))
    assert resp["error"] is None and resp["directory"] == []


def test_getvalues_fills_type(ops: ConfigOperations) -> None:
    put(ops, ("tool", "kb", KB_TOOL), ("tool", "ask", "{}"), ("prompt", "system", '"x"'))
    resp, changed = ops.handle(request("getvalues", type="tool"))
    assert changed is False
    assert resp["version"] == 1
    assert resp["values"] == [
        {"type": "tool", "key": "ask", "value": "{}"},
        {"type": "tool", "key": "kb", "value": KB_TOOL},
    ]


def test_config_returns_everything(ops: ConfigOperations) -> None:
    put(ops, ("tool", "kb", KB_TOOL), ("prompt", "system", '"x"'))
    put(ops, ("tool-service", "joke-service", JOKE_SERVICE))
    resp, changed = ops.handle(request("config"))
    assert changed is False
    assert resp["version"] == 2
    assert resp["config"] == {
        "tool": {"kb": KB_TOOL},
        "prompt": {"system": '"x"'},
        "tool-service": {"joke-service": JOKE_SERVICE},
    }
    assert resp["error"] is None


def test_config_on_empty_store(ops: ConfigOperations) -> None:
    resp, _ = ops.handle(request("config"))
    assert resp["version"] == 0 and resp["config"] == {}


def test_missing_optional_fields_take_defaults(ops: ConfigOperations) -> None:
    """The decoder may hand us a dict without the unused fields."""
    resp, _ = ops.handle({"operation": "config"})
    assert resp["error"] is None
    resp, _ = ops.handle({"operation": "get", "keys": None})
    assert resp["values"] == []


def test_put_survives_reopening(tmp_path: Path) -> None:
    path = str(tmp_path / "c.db")
    s = ConfigStore(path)
    put(ConfigOperations(s), ("tool", "kb", KB_TOOL))
    s.close()
    s2 = ConfigStore(path)
    try:
        resp, _ = ConfigOperations(s2).handle(request("get", keys=[{"type": "tool", "key": "kb"}]))
        assert resp["values"][0]["value"] == KB_TOOL
        assert resp["version"] == 1
    finally:
        s2.close()


# -- errors ----------------------------------------------------------------


@pytest.mark.parametrize("operation", ["nonsense", "", None, 7, "list-blueprints", "PUT"])
def test_unknown_operation(ops: ConfigOperations, operation: Any) -> None:
    req = request("get")
    req["operation"] = operation
    resp, changed = ops.handle(req)
    assert_error(resp, changed, "bad-operation")
    assert resp["error"]["message"] == "Bad operation"


def test_request_without_operation(ops: ConfigOperations) -> None:
    resp, changed = ops.handle({"keys": []})
    assert_error(resp, changed, "bad-operation")
    assert resp["error"]["message"] == "Bad operation"


@pytest.mark.parametrize(
    ("req", "needles"),
    [
        (request("put", values=[{"type": "tool", "key": "kb", "value": None}]), ["values[0].value", "null"]),
        (request("put", values=[{"type": "tool", "key": "kb", "value": 3}]), ["values[0].value", "int"]),
        (request("put", values=[{"type": "tool", "key": "kb"}]), ["values[0]", "'value'"]),
        (
            request(
                "put", values=[{"type": "tool", "key": "a", "value": "1"}, {"type": "tool", "value": "2"}]
            ),
            ["values[1]", "'key'"],
        ),
        (request("put", values=[{"type": ["tool"], "key": "kb", "value": "{}"}]), ["values[0].type", "list"]),
        (request("put", values="tool/kb={}"), ["'values'", "list"]),
        (request("put", values=["tool"]), ["values[0] must be an object"]),
        (request("delete", keys=[{"type": "tool"}]), ["keys[0]", "'key'"]),
        (request("delete", keys=[{"type": "tool", "key": None}]), ["keys[0].key", "null"]),
        (request("delete", keys={"type": "tool", "key": "kb"}), ["'keys'", "list"]),
        (request("get", keys=[{"type": 1, "key": "kb"}]), ["keys[0].type", "int"]),
        (request("list", type=None), ["'type'", "null"]),
        (request("getvalues", type=5), ["'type'", "int"]),
    ],
)
def test_malformed_requests_are_config_errors(
    ops: ConfigOperations, store: ConfigStore, req: dict, needles: list[str]
) -> None:
    put(ops, ("tool", "kb", KB_TOOL))
    resp, changed = ops.handle(req)
    assert_error(resp, changed, "config-error", *needles)
    # Nothing was applied: a half-valid put is refused as a whole.
    assert store.version() == 1
    assert store.all() == {"tool": {"kb": KB_TOOL}}


@pytest.mark.parametrize("req", [None, "get", ["get"], 42])
def test_request_that_is_not_an_object(ops: ConfigOperations, req: Any) -> None:
    resp, changed = ops.handle(req)
    assert_error(resp, changed, "config-error", "request must be an object")


def test_store_failure_becomes_config_error(store: ConfigStore) -> None:
    ops = ConfigOperations(store)
    store.close()
    for op in ("get", "list", "getvalues", "config", "put", "delete"):
        resp, changed = ops.handle(request(op, type="tool"))
        assert_error(resp, changed, "config-error", "closed")
