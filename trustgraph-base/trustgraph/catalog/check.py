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
the item itself is fine, and the user learns what to fix next.  (A tool
given a name another tool has is refused: the catalog leaves both out.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..base.descriptors.errors import DescriptorError, Kind
from .build import CATALOG_TYPES, DESCRIPTOR_TYPES, build_catalog


@dataclass(frozen=True)
class ItemCheck:
    """What a put would do: ``errors`` refuse it, ``warnings`` are told and it goes ahead."""

    errors: tuple[DescriptorError, ...] = ()
    warnings: tuple[DescriptorError, ...] = ()


def check_item(config: Mapping[str, Mapping[str, str]], kind: str, key: str, value: str) -> ItemCheck:
    """Check ``kind/key = value`` against ``config`` (only its ``CATALOG_TYPES`` are read)."""
    if kind not in DESCRIPTOR_TYPES:
        return ItemCheck()
    before = {t: dict(config.get(t) or {}) for t in CATALOG_TYPES}
    after = {t: dict(s) for t, s in before.items()}
    after[kind][key] = value
    old, new = build_catalog(before), build_catalog(after)
    item: Kind = kind  # type: ignore[assignment]
    errors = [e for e in new.errors if (e.kind, e.key) == (item, key)]
    refused = [e for e in errors if not e.missing_reference]
    pending = [e for e in errors if e.missing_reference]
    known = set(old.errors)
    caused = [e for e in new.errors if (e.kind, e.key) != (item, key) and e not in known]
    warnings = [e for e in new.warnings if (e.kind, e.key) == (item, key)]
    if refused:
        return ItemCheck(errors=tuple(refused), warnings=tuple(warnings))
    return ItemCheck(warnings=tuple(pending + caused + warnings))

