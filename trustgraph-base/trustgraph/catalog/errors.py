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

import difflib
import json
from collections.abc import Collection, Iterable
from typing import Any

from pydantic import ValidationError

from ..base.safety import limits
from ..base.tool_services.descriptor import DescriptorError, Kind, describe

__all__ = ["JSON_FIELD", "DescriptorError", "Kind", "describe", "from_validation", "load_object", "near_key"]

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


def near_key(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate close enough to ``name`` to be a misspelling of it (or it of the candidate),
    or None: the one "did you mean" of every descriptor problem."""
    close = difflib.get_close_matches(name, [c for c in candidates if isinstance(c, str)], n=1, cutoff=0.7)
    return close[0] if close else None


def _container(raw: Any, loc: tuple[int | str, ...]) -> Any:
    """What ``loc`` points into in ``raw`` (the object a missing field was looked for in), or None."""
    for part in loc:
        try:
            raw = raw[part]
        except (KeyError, IndexError, TypeError):
            return None
    return raw


def _reason(err: dict[str, Any], raw: Any, known: Collection[str] = ()) -> str:
    """Turn one pydantic error into a sentence a config author understands.  ``known``: the keys
    of the descriptor's model, never offered as a misspelling of another."""
    kind = err["type"]
    value = err.get("input")
    if kind == "missing":
        loc = tuple(err["loc"])
        name = loc[-1] if loc else ""
        where = _container(raw, loc[:-1])
        hint = ""
        if isinstance(name, str) and isinstance(where, dict):
            snake = name.replace("-", "_")
            if "-" in name and snake in where:
                hint = f" (found {snake!r}; the field is spelled {name!r})"
            else:
                # A key the model does not read, close to the one it needs: "reqest-queue".
                spare = known if len(loc) == 1 else ()
                near = near_key(name, [k for k in where if isinstance(k, str) and k not in spare])
                if near is not None:
                    hint = f" (found {near!r}: did you mean {name!r}?)"
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


def from_validation(kind: Kind, key: str, exc: ValidationError, raw: Any,
                    known: Collection[str] = ()) -> list[DescriptorError]:
    """Every problem pydantic found in one descriptor, reworded; ``known``: the model's keys (a
    required one that is missing is matched against the others, so that it says which key was
    meant)."""
    return [DescriptorError(kind, key, _format_loc(e["loc"]), _reason(e, raw, known)) for e in exc.errors()]


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
