"""check_item: what tg-put-config-item refuses, and what it writes with a warning."""

from __future__ import annotations

import json

from trustgraph.catalog import build_catalog, check_item

SERVICE = {"id": "joke-service", "request-queue": "non-persistent://tg/request/joke",
           "response-queue": "non-persistent://tg/response/joke",
           "config-params": [{"name": "style", "required": True}]}
TOOL = {"type": "tool-service", "name": "tell-joke", "description": "Tell a joke",
        "service": "joke-service", "style": "pun"}


def config(**sections: dict[str, object]) -> dict[str, dict[str, str]]:
    return {t.replace("_", "-"): {k: json.dumps(v) for k, v in items.items()} for t, items in sections.items()}


def lines(problems) -> list[str]:
    return [str(p) for p in problems]


def test_a_good_tool_passes_silently():
    result = check_item(config(tool_service={"joke-service": SERVICE}), "tool", "tell-joke", json.dumps(TOOL))
    assert (result.errors, result.warnings) == ((), ())


def test_a_bad_tool_is_refused_with_the_message_the_agent_logs():
    bad = {**TOOL, "description": "", "style": None}
    cfg = config(tool_service={"joke-service": SERVICE})
    result = check_item(cfg, "tool", "tell-joke", json.dumps(bad))
    agent_sees = build_catalog({**cfg, "tool": {"tell-joke": json.dumps(bad)}}).errors
    assert lines(result.errors) == lines(agent_sees) == [
        "tool/tell-joke: field 'description': must not be empty",
        "tool/tell-joke: field 'style': required config param 'style' of service 'joke-service' is missing"]


def test_unknown_type_and_bad_json_are_refused():
    assert lines(check_item({}, "tool", "x", '{"type": "magic", "name": "x"}').errors)[0].startswith(
        "tool/x: field 'type': unknown tool type 'magic'")
    assert lines(check_item({}, "mcp", "m", "[]").errors) == [
        "mcp/m: field '(json)': must be a JSON object, got a list"]


def test_a_tool_before_its_service_is_written_with_a_warning():
    result = check_item({}, "tool", "tell-joke", json.dumps(TOOL))
    assert result.errors == ()
    assert lines(result.warnings) == ["tool/tell-joke: field 'service': unknown tool service 'joke-service'"]


def test_a_tool_of_a_broken_service_is_refused():
    cfg = config(tool_service={"joke-service": {**SERVICE, "response-queue": "nowhere"}})
    result = check_item(cfg, "tool", "tell-joke", json.dumps(TOOL))
    assert lines(result.errors) == [
        "tool/tell-joke: field 'service': service 'joke-service' is invalid: field 'response-queue': "
        "'nowhere' is not a valid topic: expected persistent://tenant/namespace/topic, "
        "non-persistent://tenant/namespace/topic, q0|q1|q2/tenant/namespace/topic or "
        "class:topicspace:topic (class flow, request, response or notify)"]


def test_a_service_change_that_breaks_its_tools_is_a_warning():
    cfg = config(tool_service={"joke-service": {**SERVICE, "config-params": []}},
                 tool={"tell-joke": {**TOOL, "style": None}})
    result = check_item(cfg, "tool-service", "joke-service", json.dumps(SERVICE))
    assert result.errors == ()
    assert lines(result.warnings) == [
        "tool/tell-joke: field 'style': required config param 'style' of service 'joke-service' is missing"]
    # A problem that was already there is not blamed on this put.
    assert check_item({**cfg, "tool-service": {"joke-service": json.dumps(SERVICE)}}, "tool-service",
                      "joke-service", json.dumps(SERVICE)).warnings == ()


def test_a_name_another_tool_has_is_refused_whichever_key_sorts_first():
    cfg = config(tool_service={"joke-service": SERVICE}, tool={"m": TOOL})
    for key in ("a", "z"):
        result = check_item(cfg, "tool", key, json.dumps(TOOL))
        assert lines(result.errors) == [f"tool/{key}: field 'name': duplicate tool name 'tell-joke' "
                                        "(tool/m has it too); callers could not tell them apart, so neither "
                                        "is used: rename one"], key
        assert result.warnings == ()
    # Putting the same tool again under its own key is no clash.
    assert check_item(cfg, "tool", "m", json.dumps(TOOL)).errors == ()


def test_other_types_are_not_checked():
    assert check_item({}, "prompt", "system", "not json") == check_item({}, "agent", "x", "{}")
    assert check_item({}, "prompt", "system", "not json").errors == ()


def test_unknown_argument_type_is_a_warning():
    tool = {"type": "prompt", "name": "p", "template": "t", "arguments": [{"name": "d", "type": "date"}]}
    result = check_item({}, "tool", "p", json.dumps(tool))
    assert result.errors == () and len(result.warnings) == 1 and "'date'" in str(result.warnings[0])
