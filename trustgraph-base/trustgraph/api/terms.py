"""Terms between the gateway's compact JSON and this library's values.

The gateway writes a term as ``{"t": "i", "i": iri}`` (IRI), ``{"t": "l",
"v": value}`` (literal) or ``{"t": "t", "tr": {"s", "p", "o"}}`` (quoted
triple); the API hands them out as :class:`Uri`, :class:`Literal` and
:class:`QuotedTriple`.
"""

from __future__ import annotations

from typing import Any

from ..knowledge import Literal, QuotedTriple, Uri
from ..schema import IRI, LITERAL, TRIPLE
from .types import Triple


def to_value(x: dict[str, Any]) -> Any:
    """A gateway term as a Uri, Literal or QuotedTriple (anything else as a Literal)."""
    kind = x.get("t")
    if kind == IRI:
        return Uri(x.get("i", ""))
    if kind == LITERAL:
        return Literal(x.get("v", ""))
    if kind == TRIPLE:
        inner = x.get("tr")
        if not inner:
            return Literal("")
        return QuotedTriple(s=to_value(inner.get("s", {})), p=to_value(inner.get("p", {})),
                            o=to_value(inner.get("o", {})))
    return Literal(x.get("v", x.get("i", "")))


def from_value(v: Any) -> dict[str, Any]:
    """A Uri, QuotedTriple or anything else (a literal, by its ``str``) as a gateway term."""
    if isinstance(v, Uri):
        return {"t": IRI, "i": str(v)}
    if isinstance(v, QuotedTriple):
        return {"t": TRIPLE, "tr": {"s": from_value(v.s), "p": from_value(v.p), "o": from_value(v.o)}}
    return {"t": LITERAL, "v": str(v)}


def string_to_term(value: str) -> dict[str, Any]:
    """A plain string as a term: an IRI when it looks like a URL, else a literal."""
    return {"t": IRI, "i": value} if "://" in value else {"t": LITERAL, "v": value}


def triple_from_json(t: dict[str, Any]) -> Triple:
    """A gateway triple as a :class:`Triple` of values."""
    return Triple(s=to_value(t.get("s") or {}), p=to_value(t.get("p") or {}), o=to_value(t.get("o") or {}))


def triple_to_json(s: Any, p: Any, o: Any) -> dict[str, Any]:
    """Three values as a gateway triple."""
    return {"s": from_value(s), "p": from_value(p), "o": from_value(o)}


def metadata_triples(metadata: Any) -> list[dict[str, Any]]:
    """Document metadata as gateway triples: a list of Triples, or an object with ``emit``."""
    if not metadata:
        return []
    if isinstance(metadata, list):
        return [triple_to_json(t.s, t.p, t.o) for t in metadata]
    if hasattr(metadata, "emit"):
        out: list[dict[str, Any]] = []
        metadata.emit(lambda t: out.append(triple_to_json(t["s"], t["p"], t["o"])))
        return out
    raise RuntimeError("metadata should be a list of Triples or have an emit method")
