"""Typed tool arguments: declared once, compiled to one JSON Schema, and that schema checks calls."""

from __future__ import annotations

import json
from typing import Any

import pytest
from trustgraph.catalog import ArgumentError, ToolArgument, arguments_schema, build_catalog


def catalog(*arguments: dict[str, Any], **extra: Any):
    tool = {"type": "prompt", "name": "t", "template": "x", "arguments": list(arguments), **extra}
    return build_catalog({"tool": {"t": json.dumps(tool)}})


def one_tool(*arguments: dict[str, Any], **extra: Any):
    c = catalog(*arguments, **extra)
    assert c.errors == (), [str(e) for e in c.errors]
    return c.tools["t"]


def problem(*arguments: dict[str, Any], call: dict[str, Any]) -> str:
    with pytest.raises(ArgumentError) as e:
        one_tool(*arguments).check_arguments(call)
    return str(e.value)


def test_upstream_arguments_compile_to_a_closed_object_schema():
    t = one_tool({"name": "city", "type": "string", "description": "The city"},
                 {"name": "days", "type": "number", "description": "How many"})
    assert t.schema == {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city"},
                       "days": {"type": "number", "description": "How many"}},
        "required": ["city", "days"],
        "additionalProperties": False,
    }


def test_the_new_fields_reach_the_schema():
    t = one_tool({"name": "unit", "type": "string", "enum": ["C", "F"], "required": False},
                 {"name": "tags", "type": "array", "items": {"type": "string"}},
                 {"name": "opts", "type": "object"}, {"name": "n", "type": "integer"},
                 {"name": "loud", "type": "boolean"})
    props = t.schema["properties"]
    assert props["unit"] == {"type": "string", "enum": ["C", "F"]}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert t.schema["required"] == ["tags", "opts", "n", "loud"]


def test_python_spellings_are_read_as_json_schema_types():
    t = one_tool(*({"name": f"a{i}", "type": name} for i, name in enumerate(
        ["str", "int", "float", "bool", "dict", "list", "Integer"])))
    assert [a.type for a in t.arguments] == ["string", "integer", "number", "boolean", "object", "array", "integer"]


def test_an_unknown_type_loads_unchecked_with_a_warning():
    c = catalog({"name": "when", "type": "date", "description": "A day"})
    t = c.tools["t"]
    assert t.arguments[0].type == "date"  # still shown to the model as written
    assert t.schema["properties"]["when"] == {"description": "A day"}
    assert t.check_arguments({"when": 20260101}) == {"when": 20260101}
    assert [str(w) for w in c.warnings] == [
        "tool/t: field 'arguments[0].type': type 'date' is not one of string, number, integer, boolean, "
        "object, array; values of 'when' are not type-checked"]


@pytest.mark.parametrize("argument, field, reason", [
    ({"name": "u", "type": "string", "enum": []}, "arguments[0]", "at least one value"),
    ({"name": "u", "type": "integer", "enum": [1, "two"]}, "arguments[0]", "'two' is not of type 'integer'"),
    ({"name": "u", "type": "string", "items": {"type": "string"}}, "arguments[0]", "only for arguments of type"),
    ({"name": "u", "required": "sometimes"}, "arguments[0].required", "must be true or false"),
    ({"name": "u", "type": "integer", "required": False, "default": "two"}, "arguments[0]",
     "'default' value 'two' is not of type 'integer'"),
    ({"name": "u", "enum": ["C", "F"], "required": False, "default": "K"}, "arguments[0]",
     "'default' value 'K' is not one of its 'enum'"),
    ({"name": "u", "type": "integer", "default": 2}, "arguments[0]", "a default is for an optional argument"),
])
def test_inconsistent_declarations_are_refused(argument, field, reason):
    errors = catalog(argument).errors
    assert len(errors) == 1 and errors[0].field == field and reason in errors[0].reason, errors


def test_wrong_type_is_named_with_what_was_expected():
    text = problem({"name": "n", "type": "integer", "description": "How many"}, call={"n": "many"})
    assert text.startswith("wrong arguments for tool 't': argument 'n' must be of type integer, got \"many\". ")
    assert "Its arguments are: n (integer): How many." in text
    assert 'Call it again with Args: {"n": 0}' in text


def test_enum_and_nested_items_are_checked():
    assert "argument 'unit' must be one of \"C\", \"F\", got \"K\"" in problem(
        {"name": "unit", "enum": ["C", "F"]}, call={"unit": "K"})
    assert "argument 'tags'[1] must be of type string, got 3" in problem(
        {"name": "tags", "type": "array", "items": {"type": "string"}}, call={"tags": ["a", 3]})


def test_optional_arguments_may_be_left_out_but_not_misspelt():
    args = ({"name": "city"}, {"name": "units", "required": False})
    t = one_tool(*args)
    assert t.check_arguments({"city": "Oslo"}) == {"city": "Oslo"}
    text = problem(*args, call={"city": "Oslo", "unit": "C"})
    assert "unknown argument(s) 'unit'" in text and "missing" not in text
    assert "units (string, optional)" in text


@pytest.mark.parametrize("type_, given, expected", [
    ("integer", "42", 42), ("integer", " 7 ", 7), ("integer", 3.0, 3.0), ("number", "2.5", 2.5),
    ("number", "1e3", 1000.0), ("boolean", "true", True), ("boolean", "False", False),
    ("string", 5, "5"), ("string", True, "true"),
])
def test_unambiguous_coercions(type_, given, expected):
    got = one_tool({"name": "v", "type": type_}).check_arguments({"v": given})["v"]
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("type_, given", [
    ("integer", "4.5"), ("integer", "x"), ("integer", True), ("boolean", "yes"), ("boolean", 1),
    ("number", "nan"), ("object", "{}"), ("array", "[1]"),
])
def test_nothing_else_is_guessed(type_, given):
    assert "must be of type" in problem({"name": "v", "type": type_}, call={"v": given})


def test_validate_arguments_false_passes_the_call_through():
    t = one_tool({"name": "n", "type": "integer"}, **{"validate-arguments": False})
    assert t.check_arguments({"n": "many", "extra": 1}) == {"n": "many", "extra": 1}


def test_a_tool_without_declared_arguments_takes_any_object():
    assert arguments_schema(()) == {"type": "object"}
    assert one_tool().check_arguments({"anything": [1]}) == {"anything": [1]}


def test_argument_model_defaults():
    arg = ToolArgument.model_validate({"name": "x", "type": None, "description": None, "required": None})
    assert (arg.type, arg.description, arg.required, arg.enum) == ("string", "", True, None)


def test_an_optional_arguments_declared_default_is_what_the_tool_gets_when_it_is_left_out():
    # A service author had no way to say where a default lives but in their own code.
    t = one_tool({"name": "city"}, {"name": "days", "type": "integer", "required": False, "default": 2,
                                    "description": "How many days"},
                 {"name": "units", "enum": ["C", "F"], "required": False, "default": "C"})
    assert t.schema["properties"]["days"] == {"type": "integer", "description": "How many days", "default": 2}
    assert t.check_arguments({"city": "Oslo"}) == {"city": "Oslo", "days": 2, "units": "C"}
    assert t.check_arguments({"city": "Oslo", "days": "5"}) == {"city": "Oslo", "days": 5, "units": "C"}
    assert t.to_json()["arguments"][1]["default"] == 2
    # The prompt's listing says it; an argument with none says nothing of one.
    assert "days (integer, optional, default 2): How many days" in problem(
        {"name": "city"}, {"name": "days", "type": "integer", "required": False, "default": 2,
                           "description": "How many days"}, call={})
    assert "default" not in one_tool({"name": "city"}).schema["properties"]["city"]


def test_an_mcp_tools_default_is_kept_when_it_fits_its_argument():
    from trustgraph.mcp_client.schemas import schema_arguments
    args, checkable = schema_arguments({"type": "object", "required": ["city"], "properties": {
        "city": {"type": "string", "default": "Oslo"},                     # required: no default
        "days": {"type": "integer", "default": 3},
        "unit": {"type": "string", "enum": ["C", "F"], "default": "K"},    # not one of its values: left out
        "loud": {"type": "boolean", "default": "yes"}}})                   # not of its type: left out
    assert checkable and [a.get("default") for a in args] == [None, 3, None, None]
    assert one_tool(*args).check_arguments({"city": "Bergen"}) == {"city": "Bergen", "days": 3}
