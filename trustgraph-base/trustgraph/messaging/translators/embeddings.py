"""Embeddings: a text in, its vectors out."""

from __future__ import annotations

from trustgraph.schema import EmbeddingsRequest, EmbeddingsResponse, from_dict

from .base import JsonObject, MessageTranslator, ResponseOnly, given

__all__ = ["EmbeddingsRequestTranslator", "EmbeddingsResponseTranslator"]


class EmbeddingsRequestTranslator(MessageTranslator):
    """``text`` (ours: "" when absent)."""

    def to_pulsar(self, data: JsonObject) -> EmbeddingsRequest:
        return from_dict(EmbeddingsRequest, {"text": given(data, "text", "")})

    def from_pulsar(self, obj: EmbeddingsRequest) -> JsonObject:
        return {"text": obj.text}


class EmbeddingsResponseTranslator(ResponseOnly):
    """``vectors``: one list of floats per vector."""

    def from_pulsar(self, obj: EmbeddingsResponse) -> JsonObject:
        return {"vectors": obj.vectors}
