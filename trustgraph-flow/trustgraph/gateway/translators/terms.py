"""RDF terms, triples and knowledge metadata between the gateway's compact JSON and records.

Gateway JSON writes a term with short keys: ``{"t": "i", "i": iri}``,
``{"t": "b", "d": id}``, ``{"t": "l", "v": value, "dt"?: datatype, "ln"?:
language}``, ``{"t": "t", "tr": triple}``; a triple is ``{"s", "p", "o",
"g"?}`` with absent positions left out.  These are upstream's keys: the
bulk loaders and the Python client write and read them.
"""

from __future__ import annotations

from typing import Any

from trustgraph.schema import BLANK, IRI, LITERAL, TRIPLE, Metadata, Term, Triple

from .base import BadRequest, JsonObject, as_object


def term_from_json(data: Any) -> Term:
    """A gateway term as a Term record."""
    data = as_object(data, "a term")
    kind = data.get("t", "")
    if kind == IRI:
        return Term(type=IRI, iri=str(data.get("i", "")))
    if kind == BLANK:
        return Term(type=BLANK, id=str(data.get("d", "")))
    if kind == LITERAL:
        return Term(type=LITERAL, value=str(data.get("v", "")), datatype=str(data.get("dt", "")),
                    language=str(data.get("ln", "")))
    if kind == TRIPLE:
        inner = data.get("tr")
        return Term(type=TRIPLE, triple=triple_from_json(inner) if inner else None)
    return Term(type=str(kind))


def term_to_json(term: Term | None) -> JsonObject:
    """A Term record as a gateway term."""
    if term is None:
        return {}
    out: JsonObject = {"t": term.type}
    if term.type == IRI:
        out["i"] = term.iri
    elif term.type == BLANK:
        out["d"] = term.id
    elif term.type == LITERAL:
        out["v"] = term.value
        if term.datatype:
            out["dt"] = term.datatype
        if term.language:
            out["ln"] = term.language
    elif term.type == TRIPLE and term.triple:
        out["tr"] = triple_to_json(term.triple)
    return out


def triple_from_json(data: Any) -> Triple:
    """A gateway triple as a Triple record (absent or empty positions are None)."""
    data = as_object(data, "a triple")
    return Triple(**{k: term_from_json(data[k]) if data.get(k) else None for k in ("s", "p", "o")},
                  g=data.get("g"))


def triple_to_json(triple: Triple) -> JsonObject:
    """A Triple record as a gateway triple."""
    out: JsonObject = {k: term_to_json(getattr(triple, k)) for k in ("s", "p", "o") if getattr(triple, k)}
    if triple.g:
        out["g"] = triple.g
    return out


def triples_from_json(data: Any) -> list[Triple]:
    if data is None:
        return []
    if not isinstance(data, list):
        raise BadRequest("Bad request: triples must be a JSON array")
    return [triple_from_json(t) for t in data]


def triples_to_json(triples: list[Triple] | None) -> list[JsonObject]:
    return [triple_to_json(t) for t in triples or []]


def metadata_from_json(data: Any, user: str | None = None, collection: str | None = None) -> Metadata:
    """A ``{"id", "metadata", "user", "collection"}`` header as Metadata."""
    data = as_object(data, "metadata")
    return Metadata(id=data.get("id") or "", metadata=triples_from_json(data.get("metadata")),
                    user=data.get("user") or user or "", collection=data.get("collection") or collection or "")


def metadata_to_json(metadata: Metadata | None) -> JsonObject:
    """Metadata as the gateway's header (every key present)."""
    m = metadata or Metadata()
    return {"id": m.id, "metadata": triples_to_json(m.metadata), "user": m.user, "collection": m.collection}
