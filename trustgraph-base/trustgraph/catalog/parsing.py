"""Reading descriptors from config text: one item, or a whole config section.

Each result is the validated model or the item's :class:`~.errors.DescriptorError`
list; nothing here raises on bad config.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from .contents import EMPTY
from .errors import DescriptorError, Kind, from_validation, load_object


def parse_item(kind: Kind, model: type, key: str, raw: Any, defaults: Mapping[str, Any] = EMPTY
           ) -> Any | list[DescriptorError]:
    data = load_object(kind, key, raw)
    if isinstance(data, DescriptorError):
        return [data]
    data = {**defaults, **{k: v for k, v in data.items() if v is not None or k not in defaults}}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        return from_validation(kind, key, exc, data)


def parse_section(kind: Kind, model: type, section: Mapping[str, str], errors: list[DescriptorError],
               id_from_key: bool = False) -> tuple[dict[str, Any], dict[str, DescriptorError]]:
    good: dict[str, Any] = {}
    broken: dict[str, DescriptorError] = {}
    for key in sorted(section):
        # Upstream looks services up by key; an absent id means "same as key".
        result = parse_item(kind, model, key, section[key], {"id": key} if id_from_key else EMPTY)
        if isinstance(result, list):
            errors.extend(result)
            broken[key] = result[0]
        else:
            good[key] = result
    return good, broken


def reference_problem(what: str, ref: str, good: Mapping[str, Any], broken: Mapping[str, DescriptorError],
               unknown: str) -> str | None:
    """Why a reference to ``ref`` cannot be followed, or None when it can."""
    if ref in good:
        return None
    bad = broken.get(ref)
    if bad is not None:
        return f"{what} {ref!r} is invalid: field '{bad.field}': {bad.reason}"
    return unknown
