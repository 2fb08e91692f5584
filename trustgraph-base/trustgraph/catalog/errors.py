"""Descriptor problems, in one wording for every reader of the catalog.

The agent logs them, the gateway serves them, ``tg-show-tools`` lists them and
``tg-put-config-item`` refuses with them: a :class:`DescriptorError` names the
config type, the key, the field and the reason, and ``str()`` of it is the
one line all of them print.  :class:`DescriptorError` itself lives with the
light descriptor model (``trustgraph.base.tool_services.descriptor``), so a
tool service refusing its own declaration at start says it in the same words.  Pydantic's own messages (and its links) never
reach a user: :func:`from_validation` rewrites each into a sentence a config
author understands.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from ..base.safety import limits
from ..base.tool_services.descriptor import DescriptorError, Kind, describe

__all__ = ["JSON_FIELD", "DescriptorError", "Kind", "describe", "from_validation", "load_object"]

#: Pseudo field name used when the descriptor as a whole cannot be read.
JSON_FIELD = "(json)"


def _format_loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or JSON_FIELD


def _reason(err: dict[str, Any], raw: Any) -> str:
    """Turn one pydantic error into a sentence a config author understands."""
    kind = err["type"]
    value = err.get("input")
    if kind == "missing":
        name = err["loc"][-1] if err["loc"] else ""
        hint = ""
        if isinstance(name, str) and "-" in name and isinstance(raw, dict):
            snake = name.replace("-", "_")
            if snake in raw:
                hint = f" (found {snake!r}; the field is spelled {name!r})"
        return "required field is missing" + hint
    if kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        return f"must be {expected}, got {value!r}"
    if kind in ("value_error", "assertion_error"):
        cause = err.get("ctx", {}).get("error")
        return str(cause) if cause is not None else err["msg"]
    if kind == "string_type":
        return f"must be a string, got {describe(value)}"
    if kind in ("list_type", "tuple_type"):
        return f"must be a list, got {describe(value)}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"must be an object, got {describe(value)}"
    if kind in ("bool_type", "bool_parsing"):
        return f"must be true or false, got {value!r}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"must be a whole number, got {json.dumps(value) if _jsonable(value) else describe(value)}"
    return err["msg"][:1].lower() + err["msg"][1:]


def _jsonable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) or value is None


def from_validation(kind: Kind, key: str, exc: ValidationError, raw: Any) -> list[DescriptorError]:
    """Every problem pydantic found in one descriptor, reworded."""
    return [DescriptorError(kind, key, _format_loc(e["loc"]), _reason(e, raw)) for e in exc.errors()]


def load_object(kind: Kind, key: str, raw: str | bytes | dict[str, Any]) -> dict[str, Any] | DescriptorError:
    """Decode one config value, which must be a JSON object."""
    if isinstance(raw, dict):
        return raw
    try:
        data = limits.loads(raw)
    except (TypeError, ValueError) as exc:
        return DescriptorError(kind, key, JSON_FIELD, f"not valid JSON: {exc}")
    if not isinstance(data, dict):
        return DescriptorError(kind, key, JSON_FIELD, f"must be a JSON object, got {describe(data)}")
    return data
