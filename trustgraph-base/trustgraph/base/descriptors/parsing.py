"""Reading descriptors from config text: one item, or a whole config section.

Each result is the validated model or the item's :class:`~.errors.DescriptorError`
list; nothing here raises on bad config.  :func:`unknown_keys` finds the keys a
descriptor's model does not read: they load (upstream's descriptors carry keys of
their own, and a newer version's must still load) but do nothing, so a misspelled
one (``"argument"``) would leave a tool without arguments unsaid.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from types import MappingProxyType
from typing import Any

from pydantic import AliasChoices, ValidationError

from .errors import DescriptorError, Kind, from_validation, load_object, near_key

EMPTY: Mapping[str, Any] = MappingProxyType({})


def parse_item(kind: Kind, model: type, key: str, raw: Any, defaults: Mapping[str, Any] = EMPTY,
               warnings: list[DescriptorError] | None = None) -> Any | list[DescriptorError]:
    """``raw`` read by ``model``; with ``warnings``, a good item's unknown keys are added to it."""
    data = load_object(kind, key, raw)
    if isinstance(data, DescriptorError):
        return [data]
    data = {**defaults, **{k: v for k, v in data.items() if v is not None or k not in defaults}}
    try:
        item = model.model_validate(data)
    except ValidationError as exc:
        return from_validation(kind, key, exc, data, model_keys(model))
    if warnings is not None:
        warnings.extend(unknown_keys(kind, key, data, model_keys(model), f"a {kind} descriptor"))
        warnings.extend(nested_unknown_keys(kind, key, data, model))
    return item


def parse_section(kind: Kind, model: type, section: Mapping[str, str], errors: list[DescriptorError],
                  id_from_key: bool = False, warnings: list[DescriptorError] | None = None
                  ) -> tuple[dict[str, Any], dict[str, DescriptorError]]:
    good: dict[str, Any] = {}
    broken: dict[str, DescriptorError] = {}
    for key in sorted(section):
        # Upstream looks services up by key; an absent id means "same as key".
        result = parse_item(kind, model, key, section[key], {"id": key} if id_from_key else EMPTY, warnings)
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


def model_keys(model: type) -> frozenset[str]:
    """The keys ``model`` reads from a descriptor (its fields, as spelled in config): each field's
    alias or name, and every spelling its validation alias accepts (an argument's documented
    ``free-text`` is read as well as ``free_text``, and neither is an unknown key)."""
    keys: set[str] = set()
    for name, f in model.model_fields.items():
        keys.add(f.alias or name)
        accepted = f.validation_alias
        if isinstance(accepted, str):
            keys.add(accepted)
        elif isinstance(accepted, AliasChoices):
            keys.update(choice for choice in accepted.choices if isinstance(choice, str))
    return frozenset(keys)


def unknown_keys(kind: Kind, key: str, data: Mapping[str, Any], known: Collection[str], what: str,
                 field_prefix: str = "") -> list[DescriptorError]:
    """A warning per key of ``data`` that is not in ``known``, naming a close known one.

    ``what`` says what the keys were checked against ("a 'prompt' tool"); keys that
    start with ``_`` are comments by convention and pass.
    """
    out = []
    for name in data:
        if not isinstance(name, str) or name in known or name.startswith("_"):
            continue
        close = near_key(name, known)
        hint = f"did you mean {close!r}? " if close else ""
        out.append(DescriptorError(kind, key, f"{field_prefix}{name}",
                                   f"unknown key, not read: {hint}it is not a key of {what}"))
    return out


def nested_unknown_keys(kind: Kind, key: str, data: Mapping[str, Any], model: type) -> list[DescriptorError]:
    """:func:`unknown_keys` of each object in the lists a model reads object by object (its
    ``OBJECT_LISTS``: a tool's ``arguments``, a service's ``config-params``), as ``field[i].key``."""
    out: list[DescriptorError] = []
    for field, (inner, what) in getattr(model, "OBJECT_LISTS", {}).items():
        items = data.get(field)
        for i, item in enumerate(items if isinstance(items, list) else ()):
            if isinstance(item, dict):
                out.extend(unknown_keys(kind, key, item, model_keys(inner), what, f"{field}[{i}]."))
    return out
