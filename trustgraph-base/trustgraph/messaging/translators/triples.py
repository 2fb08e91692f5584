"""Triples query: a pattern (any of ``s``, ``p``, ``o`` and a graph) in, the matching triples out."""

from __future__ import annotations

from trustgraph.schema import TriplesQueryRequest, TriplesQueryResponse

from .base import (
    DEFAULT_COLLECTION,
    DEFAULT_USER,
    JsonObject,
    MessageTranslator,
    ResponseOnly,
    build,
    given,
    whole_number,
)
from .primitives import term_from_json, term_to_json, triples_to_json

__all__ = ["TriplesQueryRequestTranslator", "TriplesQueryResponseTranslator"]


class TriplesQueryRequestTranslator(MessageTranslator):
    """``s``, ``p``, ``o`` (terms), ``g`` (null: the default graph; ``"*"``: every graph),
    ``limit`` 10000, ``user``, ``collection``."""

    def to_pulsar(self, data: JsonObject) -> TriplesQueryRequest:
        record = build(TriplesQueryRequest, {"limit": whole_number(data, "limit", 10000),
                                             "user": given(data, "user", DEFAULT_USER),
                                             "collection": given(data, "collection", DEFAULT_COLLECTION),
                                             "g": data.get("g")})
        for position in ("s", "p", "o"):
            if position in data:
                setattr(record, position, term_from_json(data[position]))
        return record

    def from_pulsar(self, obj: TriplesQueryRequest) -> JsonObject:
        out: JsonObject = {"limit": obj.limit, "user": obj.user, "collection": obj.collection}
        for position in ("s", "p", "o"):
            term = getattr(obj, position)
            if term:
                out[position] = term_to_json(term)
        if obj.g is not None:
            out["g"] = obj.g
        return out


class TriplesQueryResponseTranslator(ResponseOnly):
    """``response``: the triples."""

    def from_pulsar(self, obj: TriplesQueryResponse) -> JsonObject:
        return {"response": triples_to_json(obj.triples)}
