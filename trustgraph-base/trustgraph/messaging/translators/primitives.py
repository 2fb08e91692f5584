"""RDF terms, triples and row schemas as client JSON.

A term is written with short keys: ``{"t": "i", "i": iri}``, ``{"t": "b",
"d": id}``, ``{"t": "l", "v": value, "dt"?: datatype, "ln"?: language}``,
``{"t": "t", "tr": triple}``; a triple is ``{"s", "p", "o", "g"?}`` with
absent positions left out.  These are upstream's keys: the bulk loaders, the
Python client and both gateways write and read them.  The functions are the
implementation; the classes are upstream's names for them.
"""

from __future__ import annotations

from typing import Any

from trustgraph.schema import BLANK, IRI, LITERAL, TRIPLE, Field, RowSchema, Term, Triple

from .base import BadRequest, JsonObject, Translator, as_object, list_of

__all__ = ["FieldTranslator", "RowSchemaTranslator", "SubgraphTranslator", "TermTranslator", "TripleTranslator",
           "ValueTranslator", "field_translator", "row_schema_translator", "term_from_json", "term_to_json",
           "triple_from_json", "triple_to_json", "triples_from_json", "triples_to_json"]


def term_from_json(data: Any) -> Term:
    """A client term as a Term record (an unknown ``t`` gives a Term of that type and nothing else)."""
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
    """A Term record as a client term; only the keys of its type."""
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
    """A client triple as a Triple record (absent or empty positions are None)."""
    data = as_object(data, "a triple")
    return Triple(**{k: term_from_json(data[k]) if data.get(k) else None for k in ("s", "p", "o")},
                  g=data.get("g"))


def triple_to_json(triple: Triple) -> JsonObject:
    """A Triple record as a client triple."""
    out: JsonObject = {k: term_to_json(getattr(triple, k)) for k in ("s", "p", "o") if getattr(triple, k)}
    if triple.g:
        out["g"] = triple.g
    return out


def triples_from_json(data: Any) -> list[Triple]:
    """A JSON array of triples (null: none)."""
    return [triple_from_json(t) for t in list_of(data, "triples")]


def triples_to_json(triples: list[Triple] | None) -> list[JsonObject]:
    return [triple_to_json(t) for t in triples or []]


class TermTranslator(Translator):
    """One RDF term (:func:`term_from_json`, :func:`term_to_json`)."""

    def to_pulsar(self, data: JsonObject) -> Term:
        return term_from_json(data)

    def from_pulsar(self, obj: Term) -> JsonObject:
        return term_to_json(obj)


#: Upstream's older name for the term translator.
ValueTranslator = TermTranslator


class TripleTranslator(Translator):
    """One triple, with its graph when it has one."""

    def to_pulsar(self, data: JsonObject) -> Triple:
        return triple_from_json(data)

    def from_pulsar(self, obj: Triple) -> JsonObject:
        return triple_to_json(obj)


class SubgraphTranslator(Translator):
    """A list of triples."""

    def to_pulsar(self, data: list[JsonObject]) -> list[Triple]:
        return triples_from_json(data)

    def from_pulsar(self, obj: list[Triple]) -> list[JsonObject]:
        return triples_to_json(obj)


def _field_from_json(data: Any) -> Field:
    data = as_object(data, "a field")
    enum_values = data.get("enum_values") or []
    if not isinstance(enum_values, list):
        raise BadRequest("Bad request: a field's 'enum_values' must be a JSON array")
    return Field(name=data.get("name", ""), type=data.get("type", "string"), size=data.get("size", 0),
                 primary=data.get("primary", False), description=data.get("description", ""),
                 required=data.get("required", False), indexed=data.get("indexed", False),
                 enum_values=list(enum_values))


def _field_to_json(f: Field) -> JsonObject:
    out: JsonObject = {"name": f.name, "type": f.type, "size": f.size, "primary": f.primary,
                       "description": f.description, "required": f.required, "indexed": f.indexed}
    if f.enum_values:
        out["enum_values"] = list(f.enum_values)
    return out


class FieldTranslator(Translator):
    """One field of a row schema; ``enum_values`` only when it has some."""

    def to_pulsar(self, data: JsonObject) -> Field:
        return _field_from_json(data)

    def from_pulsar(self, obj: Field) -> JsonObject:
        return _field_to_json(obj)


class RowSchemaTranslator(Translator):
    """A row schema (name, description, fields), as the row extractor hands it to its prompt."""

    def to_pulsar(self, data: JsonObject) -> RowSchema:
        data = as_object(data, "a row schema")
        return RowSchema(name=data.get("name", ""), description=data.get("description", ""),
                         fields=[_field_from_json(f) for f in list_of(data.get("fields"), "'fields'")])

    def from_pulsar(self, obj: RowSchema) -> JsonObject:
        return {"name": obj.name, "description": obj.description,
                "fields": [_field_to_json(f) for f in obj.fields or []]}


#: Ready-made instances, as upstream offers them.
row_schema_translator = RowSchemaTranslator()
field_translator = FieldTranslator()
