"""Knowledge cores: list, get (streamed as triples and graph-embeddings messages until one with
``eos``), put, delete, load into a flow.

A core travels as ``{"metadata", "triples"}`` and ``{"metadata", "entities":
[{"entity", "vectors"}]}`` messages; the gateway's triples and
graph-embeddings import and export sockets use the same two shapes
(:class:`TriplesTranslator`, :class:`GraphEmbeddingsTranslator`, ours).
"""

from __future__ import annotations

from typing import Any

from trustgraph.schema import EntityEmbeddings, GraphEmbeddings, KnowledgeRequest, KnowledgeResponse, Triples

from .base import JsonObject, MessageTranslator, ResponseOnly, Translator, as_object, build, list_of
from .metadata import metadata_from_json, metadata_to_json
from .primitives import term_from_json, term_to_json, triples_from_json, triples_to_json

__all__ = ["GraphEmbeddingsTranslator", "KnowledgeRequestTranslator", "KnowledgeResponseTranslator",
           "TriplesTranslator"]


class TriplesTranslator(Translator):
    """``{"metadata", "triples"}`` as a Triples record and back."""

    def to_pulsar(self, data: Any) -> Triples:
        data = as_object(data, "a triples message")
        return Triples(metadata=metadata_from_json(data.get("metadata")),
                       triples=triples_from_json(data.get("triples")))

    def from_pulsar(self, obj: Triples) -> JsonObject:
        return {"metadata": metadata_to_json(obj.metadata), "triples": triples_to_json(obj.triples)}


class GraphEmbeddingsTranslator(Translator):
    """``{"metadata", "entities": [{"entity", "vectors"}]}`` as a GraphEmbeddings record and back."""

    def to_pulsar(self, data: Any) -> GraphEmbeddings:
        data = as_object(data, "a graph-embeddings message")
        return GraphEmbeddings(metadata=metadata_from_json(data.get("metadata")), entities=[
            EntityEmbeddings(entity=term_from_json(as_object(e, "an entity").get("entity")),
                             vectors=e.get("vectors") or [])
            for e in list_of(data.get("entities"), "'entities'")])

    def from_pulsar(self, obj: GraphEmbeddings) -> JsonObject:
        return {"metadata": metadata_to_json(obj.metadata),
                "entities": [{"vectors": e.vectors, "entity": term_to_json(e.entity)} for e in obj.entities or []]}


_TRIPLES = TriplesTranslator()
_GRAPH_EMBEDDINGS = GraphEmbeddingsTranslator()
_FIELDS = ("operation", "user", "id", "flow", "collection")


class KnowledgeRequestTranslator(MessageTranslator):
    """``operation``, ``user``, ``id``, ``flow``, ``collection``; ``triples`` and
    ``graph-embeddings`` messages for a put."""

    def to_pulsar(self, data: JsonObject) -> KnowledgeRequest:
        record = build(KnowledgeRequest, {k: data.get(k) for k in _FIELDS})
        if "triples" in data:
            record.triples = _TRIPLES.to_pulsar(data["triples"])
        if "graph-embeddings" in data:
            record.graph_embeddings = _GRAPH_EMBEDDINGS.to_pulsar(data["graph-embeddings"])
        return record

    def from_pulsar(self, obj: KnowledgeRequest) -> JsonObject:
        out: JsonObject = {k: getattr(obj, k) for k in _FIELDS if getattr(obj, k)}
        if obj.triples:
            out["triples"] = _TRIPLES.from_pulsar(obj.triples)
        if obj.graph_embeddings:
            out["graph-embeddings"] = _GRAPH_EMBEDDINGS.from_pulsar(obj.graph_embeddings)
        return out


class KnowledgeResponseTranslator(ResponseOnly):
    """``ids`` (a list), or one ``triples`` / ``graph-embeddings`` message of a core, or ``eos``.

    Final: a list, the ``eos`` message, or an empty response (a put or a delete).
    """

    def from_pulsar(self, obj: KnowledgeResponse) -> JsonObject:
        if obj.ids is not None:
            return {"ids": obj.ids}
        if obj.triples:
            return {"triples": _TRIPLES.from_pulsar(obj.triples)}
        if obj.graph_embeddings:
            return {"graph-embeddings": _GRAPH_EMBEDDINGS.from_pulsar(obj.graph_embeddings)}
        return {"eos": True} if obj.eos else {}

    def from_response_with_completion(self, obj: KnowledgeResponse) -> tuple[JsonObject, bool]:
        final = obj.ids is not None or bool(obj.eos) or (not obj.triples and not obj.graph_embeddings)
        return self.from_pulsar(obj), final
