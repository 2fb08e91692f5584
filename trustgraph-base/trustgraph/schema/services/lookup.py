"""Lookup services (encyclopedia-style term lookups)."""

from dataclasses import dataclass

from ..core.primitives import Error


@dataclass
class LookupRequest:
    """Look ``term`` up in a source of this ``kind``."""

    kind: str = ""
    term: str = ""


@dataclass
class LookupResponse:
    """The text found."""

    text: str = ""
    error: Error | None = None
