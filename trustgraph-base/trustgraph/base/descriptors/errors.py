"""Descriptor problems, in one wording for every reader and writer of a descriptor.

The agent logs them, the gateway serves them, ``tg-show-tools`` lists them,
``tg-put-config-item`` refuses with them and a tool service whose own
declaration is wrong refuses to start with them: a :class:`DescriptorError`
names the config type, the key, the field and the reason, and ``str()`` of it
is the one line all of them print.  Pydantic's own messages (and its links)
never reach a user: :func:`from_validation` rewrites each into a sentence a
config author understands.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from ..safety import limits

__all__ = ["JSON_FIELD", "DescriptorError", "InvalidDescriptor", "Item", "Kind", "describe", "from_validation",
           "load_object", "near_key"]

#: The config types that hold descriptors.
Kind = Literal["tool", "tool-service", "mcp", "tool-policy"]

#: Which descriptor a problem is in: its config type and key.
Item = tuple[Kind, str]

#: Pseudo field name used when the descriptor as a whole cannot be read.
JSON_FIELD = "(json)"


@dataclass(frozen=True)
class DescriptorError:
    """A problem with one descriptor, precise enough for a user to fix it.

    ``kind`` is the config type (``tool``, ``tool-service`` or ``mcp``),
    ``key`` the config key, ``field`` the offending field (``"(json)"`` when
    the item as a whole is unreadable) and ``reason`` a plain explanation.
    ``missing_reference`` marks a reference to an item that does not exist
    yet (a tool put before its service): a later put can fix it, so
    ``tg-put-config-item`` writes such a tool with a warning.  ``str()`` is
    the one line every reader prints (the catalog's readers and a service
    refusing to start alike).
    """

    kind: Kind
    key: str
    field: str
    reason: str
    missing_reference: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        return f"{self.kind}/{self.key}: field '{self.field}': {self.reason}"


class InvalidDescriptor(ValueError):
    """A descriptor read where it must be right (a service's own); ``error`` is its first
    :class:`DescriptorError`, ``str()`` that error's line."""

    def __init__(self, error: DescriptorError) -> None:
        super().__init__(str(error))
        self.error = error


_JSON_TYPE_NAMES = {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "a list",
                    dict: "an object", type(None): "null"}


def describe(value: Any) -> str:
    """The JSON type of ``value`` as a sentence fragment: "a string", "a list", "null"."""
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)


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
