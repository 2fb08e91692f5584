"""Ids: content hashes shaped as UUIDs, and TrustGraph's URI scheme."""

from __future__ import annotations

import hashlib
import uuid

PREF_PUBEV = "pubev"
PREF_ORG = "org"
PREF_DOC = "doc"


def hash(data: str | bytes) -> str:  # noqa: A001 - upstream's public name
    """A stable id for some content: every other hex digit of its SHA-256, as a UUID string.

    Upstream derives document ids this way, so the same document loaded
    through either package gets the same id.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    digest = hashlib.sha256(data).hexdigest()
    return str(uuid.UUID(digest[::2]))


def to_uri(pref: str, id: str) -> str:  # noqa: A002 - upstream's parameter name
    """``https://trustgraph.ai/{pref}/{id}``, e.g. ``to_uri(PREF_DOC, hash(data))``."""
    return f"https://trustgraph.ai/{pref}/{id}"
