"""An MCP tool's input schema as the typed ``arguments`` of a ``tool`` descriptor.

``tg-import-mcp-tools`` writes one ``mcp-tool`` descriptor per server tool;
its ``arguments`` come from the tool's ``inputSchema`` so that the agent
checks the model's arguments before the call, as it does for any tool.  The
catalog's argument model is smaller than JSON Schema: each top-level
property becomes one argument with its type (a nullable type is read as
optional), description, ``enum``, for arrays ``items``, and an optional one's
``default`` when it fits.  What it cannot
say (nested object shapes, ``anyOf`` of several types, string formats) is
kept out of the check rather than guessed: such a property is typed
``object``/untyped, and when the schema cannot be read as properties at all
the descriptor gets ``"validate-arguments": false`` so the server, which
knows its own schema, does the checking.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trustgraph.base.descriptors.arguments import TYPES, fits


def _types(schema: Mapping[str, Any]) -> tuple[list[str], bool]:
    """The JSON types a property schema allows, and whether it allows null."""
    raw = schema.get("type")
    if isinstance(raw, str):
        kinds = [raw]
    elif isinstance(raw, list):
        kinds = [k for k in raw if isinstance(k, str)]
    else:
        kinds = []
        for option in schema.get("anyOf") or schema.get("oneOf") or []:
            if isinstance(option, Mapping):
                more, _ = _types(option)
                kinds.extend(more)
    nullable = "null" in kinds
    return [k for k in kinds if k != "null"], nullable


def property_argument(name: str, schema: Any, required: bool) -> dict[str, Any]:
    """One argument (a descriptor's ``{name, type, description, ...}``) for one property."""
    schema = schema if isinstance(schema, Mapping) else {}
    kinds, nullable = _types(schema)
    arg: dict[str, Any] = {"name": name}
    if len(set(kinds)) == 1 and kinds[0] in TYPES:
        arg["type"] = kinds[0]
    elif not kinds:
        arg["type"] = "string"
    else:
        arg["type"] = "any"   # several types: not checked by us (a catalog warning says so)
    arg["description"] = str(schema.get("description") or schema.get("title") or "")
    arg["required"] = bool(required and not nullable)
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, (str, int, float, bool)) for v in enum):
        arg["enum"] = list(enum)
    items = schema.get("items")
    if arg["type"] == "array" and isinstance(items, Mapping):
        arg["items"] = dict(items)
    default = schema.get("default")
    if default is not None and not arg["required"] and arg["type"] in TYPES and fits(default, arg["type"]) \
            and default in arg.get("enum", [default]):
        # The server's value for an optional argument left out; one that does not fit its own
        # argument is left out rather than refused (the server applies its own default anyway).
        arg["default"] = default
    return arg


def schema_arguments(input_schema: Any) -> tuple[list[dict[str, Any]], bool]:
    """``(arguments, checkable)`` for an input schema.

    ``checkable`` is False when the schema is not an object schema with
    ``properties`` we can list (then arguments are passed through unchecked).
    A schema with no properties at all is a tool without arguments.
    """
    if not isinstance(input_schema, Mapping):
        return [], False
    props = input_schema.get("properties")
    if props is None:
        plain = set(input_schema) <= {"type", "title", "description", "additionalProperties", "$schema"}
        return [], plain
    if not isinstance(props, Mapping):
        return [], False
    required = input_schema.get("required")
    required_names = set(required) if isinstance(required, list) else set()
    args = [property_argument(str(name), schema, name in required_names) for name, schema in props.items()]
    checkable = all(a["type"] != "any" for a in args) and not _has_references(input_schema)
    return args, checkable


def _has_references(schema: Any) -> bool:
    if isinstance(schema, Mapping):
        return "$ref" in schema or any(_has_references(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_has_references(v) for v in schema)
    return False
