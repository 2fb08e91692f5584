"""FlowOperations: blueprints and flows in config-svc, as upstream 2.1.4's behaves."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from trustgraph.config.service.flow_ops import FlowOperations
from trustgraph.config.service.store import ConfigStore

RESPONSE_FIELDS = {
    "blueprint_names",
    "flow_ids",
    "blueprint_definition",
    "flow",
    "description",
    "parameters",
    "error",
}

REQ = "non-persistent://tg/request/"
RESP = "non-persistent://tg/response/"

# A small but realistic blueprint: an agent that calls prompt, which calls an
# LLM; a blueprint-level mcp-tool shared by every flow of the blueprint.
AGENT_BLUEPRINT: dict[str, Any] = {
    "description": "Agent with prompt templates and an LLM",
    "tags": ["agent", "llm"],
    "parameters": {
        "llm-model": {"type": "llm-model", "description": "LLM model", "order": 1},
        "llm-rag-model": {
            "type": "llm-model",
            "description": "LLM model for RAG",
            "order": 2,
            "advanced": True,
            "controlled-by": "llm-model",
        },
        "llm-temperature": {"type": "llm-temperature", "description": "Temperature", "order": 3},
    },
    "blueprint": {
        "mcp-tool:{blueprint}": {
            "request": REQ + "mcp-tool:{blueprint}",
            "response": RESP + "mcp-tool:{blueprint}",
        },
    },
    "flow": {
        "agent-manager:{id}": {
            "request": REQ + "agent:{id}",
            "next": REQ + "agent:{id}",
            "response": RESP + "agent:{id}",
            "prompt-request": REQ + "prompt:{id}",
            "prompt-response": RESP + "prompt:{id}",
        },
        "prompt:{id}": {
            "request": REQ + "prompt:{id}",
            "response": RESP + "prompt:{id}",
            "text-completion-request": REQ + "text-completion:{id}",
            "text-completion-response": RESP + "text-completion:{id}",
        },
        "text-completion:{id}": {
            "request": REQ + "text-completion:{id}",
            "response": RESP + "text-completion:{id}",
            "model": "{llm-model}",
            "temperature": "{llm-temperature}",
        },
    },
    "interfaces": {
        "agent": {"request": REQ + "agent:{id}", "response": RESP + "agent:{id}"},
        "prompt": {"request": REQ + "prompt:{id}", "response": RESP + "prompt:{id}"},
        "text-completion": {
            "request": REQ + "text-completion:{id}",
            "response": RESP + "text-completion:{id}",
        },
        "mcp-tool": {"request": REQ + "mcp-tool:{blueprint}", "response": RESP + "mcp-tool:{blueprint}"},
        "triples-store": "persistent://tg/flow/triples-store:{id}",
    },
}

PARAMETER_TYPES = {
    "llm-model": {"type": "string", "description": "LLM model", "default": "gemma3:12b"},
    "llm-temperature": {"type": "number", "description": "Temperature", "default": 0.3},
    "flag": {"type": "boolean", "default": False},
    "api-key": {"type": "string", "required": True},
}


def request(operation: str, **fields: Any) -> dict[str, Any]:
    """A decoded FlowRequest with every field present at its schema default."""
    base: dict[str, Any] = {
        "operation": operation,
        "blueprint_name": "",
        "blueprint_definition": "",
        "description": "",
        "flow_id": "",
        "parameters": {},
    }
    base.update(fields)
    return base


@pytest.fixture
def store(tmp_path: Path):
    s = ConfigStore(str(tmp_path / "config.db"))
    s.apply([("parameter-type", k, json.dumps(v)) for k, v in PARAMETER_TYPES.items()], [])
    yield s
    s.close()


@pytest.fixture
def ops(store: ConfigStore) -> FlowOperations:
    return FlowOperations(store)


def put_blueprint(ops: FlowOperations, name: str = "agent", blueprint: dict | None = None) -> None:
    resp, changed = ops.handle(
        request(
            "put-blueprint",
            blueprint_name=name,
            blueprint_definition=json.dumps(AGENT_BLUEPRINT if blueprint is None else blueprint),
        )
    )
    assert resp["error"] is None and changed is True


def start(ops: FlowOperations, flow_id: str = "default", blueprint: str = "agent", **kw: Any):
    fields = {"blueprint_name": blueprint, "flow_id": flow_id, "description": f"Flow {flow_id}"}
    fields.update(kw)
    return ops.handle(request("start-flow", **fields))


def active(store: ConfigStore, processor: str) -> dict | None:
    text = store.get("active-flow", processor)
    return None if text is None else json.loads(text)


def assert_ok(resp: dict, changed: bool, expect_changed: bool) -> None:
    assert set(resp) == RESPONSE_FIELDS
    assert resp["error"] is None
    assert changed is expect_changed


def assert_error(
    resp: dict, changed: bool, kind: str, message: str | None = None, contains: str = ""
) -> None:
    assert set(resp) == RESPONSE_FIELDS
    assert changed is False
    assert resp["error"]["type"] == kind
    if message is not None:
        assert resp["error"]["message"] == message
    assert contains in resp["error"]["message"]


# -- blueprints --------------------------------------------------------------


def test_blueprint_lifecycle(ops: FlowOperations, store: ConfigStore) -> None:
    v0 = store.version()
    resp, changed = ops.handle(request("list-blueprints"))
    assert_ok(resp, changed, False)
    assert resp["blueprint_names"] == []

    text = json.dumps(AGENT_BLUEPRINT, indent=2)
    resp, changed = ops.handle(request("put-blueprint", blueprint_name="agent", blueprint_definition=text))
    assert_ok(resp, changed, True)
    assert store.version() == v0 + 1
    put_blueprint(ops, "other")

    resp, _ = ops.handle(request("list-blueprints"))
    assert resp["blueprint_names"] == ["agent", "other"]

    resp, changed = ops.handle(request("get-blueprint", blueprint_name="agent"))
    assert_ok(resp, changed, False)
    assert resp["blueprint_definition"] == text  # verbatim, formatting included

    resp, changed = ops.handle(request("delete-blueprint", blueprint_name="agent"))
    assert_ok(resp, changed, True)
    assert store.version() == v0 + 3
    resp, _ = ops.handle(request("get-blueprint", blueprint_name="agent"))
    assert resp["blueprint_definition"] is None
    assert resp["error"] is None


def test_put_blueprint_is_not_validated(ops: FlowOperations, store: ConfigStore) -> None:
    resp, changed = ops.handle(
        request("put-blueprint", blueprint_name="junk", blueprint_definition="not json {")
    )
    assert_ok(resp, changed, True)
    assert store.get("flow-blueprint", "junk") == "not json {"
    # ...its problems surface at start-flow instead.
    resp, changed = start(ops, blueprint="junk")
    assert_error(resp, changed, "flow-error", contains="not valid JSON")


def test_delete_absent_blueprint_still_bumps(ops: FlowOperations, store: ConfigStore) -> None:
    v = store.version()
    resp, changed = ops.handle(request("delete-blueprint", blueprint_name="never"))
    assert_ok(resp, changed, True)
    assert store.version() == v + 1


@pytest.mark.parametrize(
    ("req", "contains"),
    [
        (request("put-blueprint", blueprint_name="x", blueprint_definition=None), "'blueprint_definition'"),
        (request("put-blueprint", blueprint_name="x", blueprint_definition={"flow": {}}), "dict"),
        (request("put-blueprint", blueprint_name=None, blueprint_definition="{}"), "No blueprint name"),
        (request("get-blueprint", blueprint_name=3), "'blueprint_name' must be a string"),
        (request("delete-blueprint", blueprint_name=None), "No blueprint name"),
    ],
)
def test_blueprint_request_errors(ops: FlowOperations, store: ConfigStore, req: dict, contains: str) -> None:
    v = store.version()
    resp, changed = ops.handle(req)
    assert_error(resp, changed, "flow-error", contains=contains)
    assert store.version() == v


# -- start-flow ----------------------------------------------------------------


EXPECTED_AGENT_MANAGER = {
    "default": {
        "request": REQ + "agent:default",
        "next": REQ + "agent:default",
        "response": RESP + "agent:default",
        "prompt-request": REQ + "prompt:default",
        "prompt-response": RESP + "prompt:default",
    }
}


def test_start_flow_writes_active_flow_and_flow_record(ops: FlowOperations, store: ConfigStore) -> None:
    put_blueprint(ops)
    v = store.version()
    resp, changed = start(ops, description="The default flow")
    assert_ok(resp, changed, True)
    assert store.version() == v + 1  # one bump for the whole start

    assert active(store, "agent-manager") == EXPECTED_AGENT_MANAGER
    assert active(store, "prompt") == {
        "default": {
            "request": REQ + "prompt:default",
            "response": RESP + "prompt:default",
            "text-completion-request": REQ + "text-completion:default",
            "text-completion-response": RESP + "text-completion:default",
        }
    }
    assert active(store, "text-completion") == {
        "default": {
            "request": REQ + "text-completion:default",
            "response": RESP + "text-completion:default",
            "model": "gemma3:12b",
            "temperature": "0.3",
        }
    }
    assert active(store, "mcp-tool") == {
        "agent": {"request": REQ + "mcp-tool:agent", "response": RESP + "mcp-tool:agent"}
    }

    record = json.loads(store.get("flow", "default"))
    assert record == {
        "description": "The default flow",
        "blueprint-name": "agent",
        "interfaces": {
            "agent": {"request": REQ + "agent:default", "response": RESP + "agent:default"},
            "prompt": {"request": REQ + "prompt:default", "response": RESP + "prompt:default"},
            "text-completion": {
                "request": REQ + "text-completion:default",
                "response": RESP + "text-completion:default",
            },
            "mcp-tool": {"request": REQ + "mcp-tool:agent", "response": RESP + "mcp-tool:agent"},
            "triples-store": "persistent://tg/flow/triples-store:default",
        },
        "parameters": {"llm-model": "gemma3:12b", "llm-rag-model": "gemma3:12b", "llm-temperature": "0.3"},
    }
    assert list(record) == ["description", "blueprint-name", "interfaces", "parameters"]


def test_list_and_get_flow(ops: FlowOperations, store: ConfigStore) -> None:
    put_blueprint(ops)
    start(ops, "default", parameters={"llm-model": "gpt-4o"})
    start(ops, "research")
    resp, changed = ops.handle(request("list-flows"))
    assert_ok(resp, changed, False)
    assert resp["flow_ids"] == ["default", "research"]

    resp, changed = ops.handle(request("get-flow", flow_id="default"))
    assert_ok(resp, changed, False)
    assert resp["flow"] == store.get("flow", "default")  # the stored JSON-str itself
    assert resp["description"] == "Flow default"
    assert resp["parameters"] == {
        "llm-model": "gpt-4o",
        "llm-rag-model": "gpt-4o",
        "llm-temperature": "0.3",
    }
    assert json.loads(resp["flow"])["blueprint-name"] == "agent"


def test_get_unknown_flow(ops: FlowOperations) -> None:
    resp, changed = ops.handle(request("get-flow", flow_id="nope"))
    assert_error(resp, changed, "flow-error", "Flow ID invalid")


def test_second_flow_shares_blueprint_variant(ops: FlowOperations, store: ConfigStore) -> None:
    put_blueprint(ops)
    start(ops, "default")
    shared = active(store, "mcp-tool")
    start(ops, "research", parameters={"llm-model": "mistral"})
    assert active(store, "mcp-tool") == shared
    am = active(store, "agent-manager")
    assert set(am) == {"default", "research"}
    assert am["research"]["request"] == REQ + "agent:research"
    assert active(store, "text-completion")["research"]["model"] == "mistral"
    assert active(store, "text-completion")["default"]["model"] == "gemma3:12b"


def test_existing_variant_is_not_overwritten(ops: FlowOperations, store: ConfigStore) -> None:
    put_blueprint(ops)
    hand_made = {"request": "persistent://elsewhere", "response": "persistent://elsewhere-r"}
    store.apply([("active-flow", "text-completion", json.dumps({"default": hand_made, "x": {}}))], [])
    resp, changed = start(ops)
    assert_ok(resp, changed, True)
    assert active(store, "text-completion") == {"default": hand_made, "x": {}}
    assert "default" in active(store, "agent-manager")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"flow_id": "default"}, "Flow already exists"),
        ({"flow_id": "new", "blueprint_name": "missing"}, "Blueprint does not exist"),
        ({"flow_id": "new", "description": None}, "No description"),
        # Checked in the order of the wire table: existence first.
        ({"flow_id": "default", "blueprint_name": "missing", "description": None}, "Flow already exists"),
        ({"flow_id": "new", "blueprint_name": "missing", "description": None}, "Blueprint does not exist"),
        ({"flow_id": None}, "No flow ID"),
        ({"flow_id": ""}, "No flow ID"),
        ({"blueprint_name": None, "flow_id": "new"}, "No blueprint name"),
    ],
)
def test_start_flow_errors(ops: FlowOperations, store: ConfigStore, fields: dict, message: str) -> None:
    put_blueprint(ops)
    start(ops, "default")
    before = store.snapshot()
    resp, changed = start(ops, **fields)
    assert_error(resp, changed, "flow-error", message)
    assert store.snapshot() == before


def test_empty_description_is_allowed(ops: FlowOperations) -> None:
    put_blueprint(ops)
    resp, changed = start(ops, description="")
    assert_ok(resp, changed, True)


def _broken(mutate) -> dict:
    bp = copy.deepcopy(AGENT_BLUEPRINT)
    mutate(bp)
    return bp


@pytest.mark.parametrize(
    ("blueprint", "contains"),
    [
        # Old docs' nested settings: entry values must be strings.
        (
            _broken(lambda bp: bp["flow"]["text-completion:{id}"].update(settings={"model": "{llm-model}"})),
            "'settings' must be a string, got dict",
        ),
        (
            _broken(lambda bp: bp["flow"]["prompt:{id}"].update(retries=3)),
            "'retries' must be a string, got int",
        ),
        (_broken(lambda bp: bp.pop("flow")), "no 'flow' section"),
        (_broken(lambda bp: bp.pop("blueprint")), "no 'blueprint' section"),
        (_broken(lambda bp: bp["flow"].update({"noprocessor": {}})), "'<processor>:<variant>'"),
        (_broken(lambda bp: bp["flow"].update({"p:{id}": "topic"})), "must be an object"),
        (_broken(lambda bp: bp.update(interfaces=["agent"])), "'interfaces' must be an object"),
        (_broken(lambda bp: bp.update(parameters=["llm-model"])), "'parameters' must be an object"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_bad_blueprint_fails_start_and_writes_nothing(
    ops: FlowOperations, store: ConfigStore, blueprint: Any, contains: str
) -> None:
    put_blueprint(ops, "bad", blueprint)
    before = store.snapshot()
    resp, changed = start(ops, blueprint="bad")
    assert_error(resp, changed, "flow-error", contains=contains)
    # Atomic: not even the blueprint-level variants were written.
    assert store.snapshot() == before


def test_bad_active_flow_value_is_reported(ops: FlowOperations, store: ConfigStore) -> None:
    put_blueprint(ops)
    store.apply([("active-flow", "prompt", "[]")], [])
    resp, changed = start(ops)
    assert_error(resp, changed, "flow-error", contains="active-flow/prompt")
    assert store.get("flow", "default") is None


# -- parameter resolution ------------------------------------------------------


def param_blueprint(parameters: dict | None, spec: dict[str, str]) -> dict:
    bp: dict[str, Any] = {
        "description": "params",
        "blueprint": {},
        "flow": {"probe:{id}": spec},
        "interfaces": {},
    }
    if parameters is not None:
        bp["parameters"] = parameters
    return bp


def start_probe(
    ops: FlowOperations, store: ConfigStore, parameters: dict | None, spec: dict, user: Any = None
):
    put_blueprint(ops, "p", param_blueprint(parameters, spec))
    resp, changed = ops.handle(
        request("start-flow", blueprint_name="p", flow_id="f1", description="d", parameters=user)
    )
    probe = active(store, "probe")
    record = json.loads(store.get("flow", "f1")) if store.get("flow", "f1") else None
    return resp, changed, (probe or {}).get("f1"), record


def test_user_value_beats_default(ops: FlowOperations, store: ConfigStore) -> None:
    resp, _, spec, record = start_probe(
        ops, store, {"m": {"type": "llm-model"}}, {"model": "{m}"}, {"m": "claude-3"}
    )
    assert resp["error"] is None
    assert spec == {"model": "claude-3"}
    assert record["parameters"] == {"m": "claude-3"}


def test_defaults_are_stringified_booleans_lowercase(ops: FlowOperations, store: ConfigStore) -> None:
    resp, _, spec, record = start_probe(
        ops,
        store,
        {"t": {"type": "llm-temperature"}, "f": {"type": "flag"}},
        {"temperature": "{t}", "flag": "{f}"},
    )
    assert resp["error"] is None
    assert spec == {"temperature": "0.3", "flag": "false"}
    assert record["parameters"] == {"t": "0.3", "f": "false"}


def test_user_values_are_stringified(ops: FlowOperations, store: ConfigStore) -> None:
    resp, _, spec, _ = start_probe(
        ops,
        store,
        {"t": {"type": "llm-temperature"}, "f": {"type": "flag"}, "n": {"type": "count"}},
        {"temperature": "{t}", "flag": "{f}", "n": "{n}"},
        {"t": 0.9, "f": True, "n": 5},
    )
    assert resp["error"] is None
    # As upstream stores them: Python's str() of the JSON value.
    assert spec == {"temperature": "0.9", "flag": "True", "n": "5"}


def test_a_null_value_is_stored_as_upstream_stores_it(ops: FlowOperations, store: ConfigStore) -> None:
    """Upstream writes str(None): a null is a value given, so it beats the default, declared or not."""
    resp, _, spec, record = start_probe(
        ops, store, {"m": {"type": "llm-model"}}, {"model": "{m}", "x": "{extra}"}, {"m": None, "extra": None})
    assert resp["error"] is None
    assert spec == {"model": "None", "x": "None"}
    assert record["parameters"] == {"m": "None", "extra": "None"}


def test_a_null_value_without_a_parameters_section(ops: FlowOperations, store: ConfigStore) -> None:
    resp, _, spec, _ = start_probe(ops, store, None, {"n": "{n}"}, {"n": None})
    assert resp["error"] is None and spec == {"n": "None"}


def test_required_without_default_fails(ops: FlowOperations, store: ConfigStore) -> None:
    resp, changed, spec, record = start_probe(ops, store, {"key": {"type": "api-key"}}, {"k": "{key}"})
    assert_error(resp, changed, "flow-error", contains="key")
    assert "Required" in resp["error"]["message"]
    assert spec is None and record is None


def test_required_satisfied_by_user(ops: FlowOperations, store: ConfigStore) -> None:
    resp, _, spec, _ = start_probe(
        ops, store, {"key": {"type": "api-key"}}, {"k": "{key}"}, {"key": "s3cret"}
    )
    assert resp["error"] is None and spec == {"k": "s3cret"}


def test_controlled_by_follows_controller(ops: FlowOperations, store: ConfigStore) -> None:
    params = {
        "llm-model": {"type": "llm-model"},
        "llm-rag-model": {"type": "llm-model", "controlled-by": "llm-model"},
    }
    spec = {"model": "{llm-model}", "rag": "{llm-rag-model}"}
    resp, _, got, _ = start_probe(ops, store, params, spec, {"llm-model": "gpt-4o"})
    assert resp["error"] is None
    assert got == {"model": "gpt-4o", "rag": "gpt-4o"}


def test_controlled_by_user_override_wins(ops: FlowOperations, store: ConfigStore) -> None:
    params = {
        "llm-model": {"type": "llm-model"},
        "llm-rag-model": {"type": "llm-model", "controlled-by": "llm-model"},
    }
    spec = {"model": "{llm-model}", "rag": "{llm-rag-model}"}
    resp, _, got, _ = start_probe(ops, store, params, spec, {"llm-model": "gpt-4o", "llm-rag-model": "small"})
    assert resp["error"] is None
    assert got == {"model": "gpt-4o", "rag": "small"}


def test_controlled_parameter_of_required_type_follows_controller(
    ops: FlowOperations, store: ConfigStore
) -> None:
    params = {"key": {"type": "api-key"}, "rag-key": {"type": "api-key", "controlled-by": "key"}}
    resp, _, got, _ = start_probe(ops, store, params, {"a": "{key}", "b": "{rag-key}"}, {"key": "k1"})
    assert resp["error"] is None and got == {"a": "k1", "b": "k1"}


def test_extra_user_parameters_are_kept(ops: FlowOperations, store: ConfigStore) -> None:
    resp, _, spec, record = start_probe(
        ops, store, {"m": {"type": "llm-model"}}, {"model": "{m}", "x": "{extra}"}, {"extra": "yes"}
    )
    assert resp["error"] is None
    assert spec == {"model": "gemma3:12b", "x": "yes"}
    assert record["parameters"] == {"m": "gemma3:12b", "extra": "yes"}


def test_no_parameters_section_uses_user_parameters(ops: FlowOperations, store: ConfigStore) -> None:
    resp, _, spec, record = start_probe(ops, store, None, {"model": "{m}", "n": "{n}"}, {"m": "phi", "n": 2})
    assert resp["error"] is None
    assert spec == {"model": "phi", "n": "2"}
    assert record["parameters"] == {"m": "phi", "n": "2"}


def test_unknown_parameter_type_leaves_placeholder(ops: FlowOperations, store: ConfigStore) -> None:
    resp, _, spec, record = start_probe(ops, store, {"m": {"type": "no-such-type"}}, {"model": "{m}"})
    assert resp["error"] is None
    assert spec == {"model": "{m}"}
    assert record["parameters"] == {}


def test_null_parameters_field(ops: FlowOperations, store: ConfigStore) -> None:
    resp, _, spec, _ = start_probe(ops, store, {"m": {"type": "llm-model"}}, {"model": "{m}"}, None)
    assert resp["error"] is None and spec == {"model": "gemma3:12b"}


def test_parameters_must_be_an_object(ops: FlowOperations, store: ConfigStore) -> None:
    resp, changed, spec, _ = start_probe(ops, store, None, {"a": "b"}, ["m=phi"])
    assert_error(resp, changed, "flow-error", contains="'parameters' must be an object")
    assert spec is None


def test_substitution_in_variant_keys_and_values(ops: FlowOperations, store: ConfigStore) -> None:
    bp = {
        "description": "subst",
        "blueprint": {"shared:{blueprint}-{m}": {"{m}-queue": "q:{blueprint}:{id}"}},
        "flow": {"probe:{id}-{m}": {"{m}-request": "non-persistent://tg/request/{m}:{id}"}},
        "interfaces": {"x": {"request": "{blueprint}/{id}/{m}"}},
    }
    put_blueprint(ops, "sb", bp)
    resp, _ = ops.handle(
        request("start-flow", blueprint_name="sb", flow_id="f9", description="d", parameters={"m": "phi"})
    )
    assert resp["error"] is None
    assert active(store, "shared") == {"sb-phi": {"phi-queue": "q:sb:f9"}}
    assert active(store, "probe") == {"f9-phi": {"phi-request": "non-persistent://tg/request/phi:f9"}}
    assert json.loads(store.get("flow", "f9"))["interfaces"] == {"x": {"request": "sb/f9/phi"}}

    # stop-flow finds the substituted variant again from the stored parameters.
    resp, _ = ops.handle(request("stop-flow", flow_id="f9"))
    assert resp["error"] is None
    assert active(store, "probe") == {}
    assert active(store, "shared") == {"sb-phi": {"phi-queue": "q:sb:f9"}}


# -- stop-flow -----------------------------------------------------------------


def test_stop_flow_keeps_blueprint_variants(ops: FlowOperations, store: ConfigStore) -> None:
    put_blueprint(ops)
    start(ops, "default")
    start(ops, "research")
    v = store.version()
    resp, changed = ops.handle(request("stop-flow", flow_id="default"))
    assert_ok(resp, changed, True)
    assert store.version() == v + 1

    assert store.get("flow", "default") is None
    assert store.keys("flow") == ["research"]
    assert set(active(store, "agent-manager")) == {"research"}
    assert set(active(store, "prompt")) == {"research"}
    assert set(active(store, "text-completion")) == {"research"}
    # Blueprint-level variant stays for the remaining (and future) flows.
    assert active(store, "mcp-tool") == {
        "agent": {"request": REQ + "mcp-tool:agent", "response": RESP + "mcp-tool:agent"}
    }

    ops.handle(request("stop-flow", flow_id="research"))
    assert active(store, "agent-manager") == {}
    assert "agent" in active(store, "mcp-tool")
    assert store.keys("flow") == []


def test_stop_then_start_again(ops: FlowOperations, store: ConfigStore) -> None:
    put_blueprint(ops)
    start(ops)
    ops.handle(request("stop-flow", flow_id="default"))
    resp, changed = start(ops)
    assert_ok(resp, changed, True)
    assert active(store, "agent-manager") == EXPECTED_AGENT_MANAGER


def test_stop_unknown_flow(ops: FlowOperations, store: ConfigStore) -> None:
    v = store.version()
    resp, changed = ops.handle(request("stop-flow", flow_id="ghost"))
    assert_error(resp, changed, "flow-error", "Flow ID invalid")
    resp, changed = ops.handle(request("stop-flow", flow_id=None))
    assert_error(resp, changed, "flow-error", "No flow ID")
    assert store.version() == v


def test_stop_flow_whose_blueprint_was_deleted(ops: FlowOperations, store: ConfigStore) -> None:
    put_blueprint(ops)
    start(ops)
    ops.handle(request("delete-blueprint", blueprint_name="agent"))
    before = store.snapshot()
    resp, changed = ops.handle(request("stop-flow", flow_id="default"))
    assert_error(resp, changed, "flow-error", contains="no longer exists")
    assert store.snapshot() == before
    # Recoverable: put the blueprint back and stop again.
    put_blueprint(ops)
    resp, changed = ops.handle(request("stop-flow", flow_id="default"))
    assert_ok(resp, changed, True)
    assert active(store, "agent-manager") == {}


def test_flow_state_survives_reopen(tmp_path: Path) -> None:
    path = str(tmp_path / "c.db")
    s = ConfigStore(path)
    s.apply([("parameter-type", "llm-model", json.dumps(PARAMETER_TYPES["llm-model"]))], [])
    put_blueprint(FlowOperations(s))
    start(FlowOperations(s), parameters={"llm-temperature": "0.1"})
    s.close()
    s2 = ConfigStore(path)
    try:
        ops2 = FlowOperations(s2)
        resp, _ = ops2.handle(request("get-flow", flow_id="default"))
        assert resp["parameters"]["llm-temperature"] == "0.1"
        resp, _ = ops2.handle(request("stop-flow", flow_id="default"))
        assert resp["error"] is None
    finally:
        s2.close()


# -- malformed requests --------------------------------------------------------


@pytest.mark.parametrize("operation", ["list-classes", "get-class", "", None, 5, "START-FLOW"])
def test_unknown_operation(ops: FlowOperations, operation: Any) -> None:
    req = request("list-flows")
    req["operation"] = operation
    resp, changed = ops.handle(req)
    assert_error(resp, changed, "bad-operation", "Bad operation")


@pytest.mark.parametrize("req", [None, "start-flow", ["list-flows"], 1.5])
def test_request_that_is_not_an_object(ops: FlowOperations, req: Any) -> None:
    resp, changed = ops.handle(req)
    assert_error(resp, changed, "flow-error", contains="request must be an object")


@pytest.mark.parametrize(
    "req",
    [
        request("start-flow", blueprint_name="agent", flow_id=7, description="d"),
        request("start-flow", blueprint_name="agent", flow_id="f", description=["d"]),
        request(
            "start-flow", blueprint_name="agent", flow_id="f", description="d", parameters={"m": object()}
        ),
        request("get-flow", flow_id=["default"]),
        request("stop-flow", flow_id={"id": "x"}),
    ],
)
def test_malformed_flow_requests_are_errors(ops: FlowOperations, req: dict) -> None:
    put_blueprint(ops)
    resp, changed = ops.handle(req)
    assert changed is False
    assert resp["error"]["type"] == "flow-error"
    assert resp["error"]["message"]
    assert store_is_clean(ops)


def store_is_clean(ops: FlowOperations) -> bool:
    return ops.store.keys("flow") == [] and ops.store.keys("active-flow") == []


def test_bad_parameter_value_is_named(ops: FlowOperations) -> None:
    put_blueprint(ops)
    resp, changed = start(ops, parameters={"llm-model": object()})
    assert_error(resp, changed, "flow-error", contains="parameter 'llm-model' must be a string or another JSON value")


def test_store_failure_becomes_flow_error(store: ConfigStore) -> None:
    ops = FlowOperations(store)
    store.close()
    resp, changed = ops.handle(request("list-flows"))
    assert_error(resp, changed, "flow-error", contains="closed")
