"""Checking one descriptor against the current config, before it is written.

``tg-put-config-item`` asks :func:`check_item` whether a ``tool``,
``tool-service`` or ``mcp`` value would be usable: the catalog is built with
the item in place, and what it says about the item is what the agent would
log once the push arrives, so the command can refuse it with that message
instead of leaving a broken tool to be found later.

Not every problem is the item's fault.  A tool whose service (or MCP server)
is not configured *yet* is written with a warning, so the two descriptors of
a tool service can be put in either order.  A change that breaks *other*
items (a service losing a config param its tools require) is a warning too:
the item itself is fine, and the user learns what to fix next.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .build import CATALOG_TYPES, build_catalog
from .errors import DescriptorError, Kind, load_object


@dataclass(frozen=True)
class ItemCheck:
    """What a put would do: ``errors`` refuse it, ``warnings`` are told and it goes ahead."""

    errors: tuple[DescriptorError, ...] = ()
    warnings: tuple[DescriptorError, ...] = ()


def check_item(config: Mapping[str, Mapping[str, str]], kind: str, key: str, value: str) -> ItemCheck:
    """Check ``kind/key = value`` against ``config`` (only its catalog types are read)."""
    if kind not in CATALOG_TYPES:
        return ItemCheck()
    before = {t: dict(config.get(t) or {}) for t in CATALOG_TYPES}
    after = {t: dict(s) for t, s in before.items()}
    after[kind][key] = value
    old, new = build_catalog(before), build_catalog(after)
    item: Kind = kind  # type: ignore[assignment]
    errors = [e for e in new.errors if (e.kind, e.key) == (item, key)]
    clash = _name_clash(old.tools, key, value) if kind == "tool" else []
    if clash:  # said once, whichever of the two keys the catalog would have kept
        errors = [e for e in errors if e.field != "name"] + clash
    refused = [e for e in errors if not e.missing_reference]
    pending = [e for e in errors if e.missing_reference]
    known = set(old.errors)
    caused = [e for e in new.errors if (e.kind, e.key) != (item, key) and e not in known
              and not (clash and e.field == "name")]
    warnings = [e for e in new.warnings if (e.kind, e.key) == (item, key)]
    if refused:
        return ItemCheck(errors=tuple(refused), warnings=tuple(warnings))
    return ItemCheck(warnings=tuple(pending + caused + warnings))


def _name_clash(tools: Mapping[str, object], key: str, value: str) -> list[DescriptorError]:
    """A tool whose name another (usable) tool already has is refused, whichever key sorts first."""
    data = load_object("tool", key, value)
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name.strip():
        return []
    other = tools.get(name.strip())
    other_key = getattr(other, "key", key)
    if other is None or other_key == key:
        return []
    return [DescriptorError("tool", key, "name", f"duplicate tool name {name.strip()!r} "
                            f"(tool/{other_key} has it too); callers could not tell them apart")]
