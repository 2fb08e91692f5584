"""One-way messages that load documents into a flow: a document (``document-load``), a text
(``text-load``), a chunk, a document's chunk embeddings (the import socket).

A document travels as base64 text, checked here (upstream decodes it and
fails on the first bad character, and so do we, with a message saying so); a
text arrives as base64 in a ``charset`` (default UTF-8) and travels as UTF-8.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from trustgraph.schema import Chunk, ChunkEmbeddings, Document, DocumentEmbeddings, Metadata, TextDocument

from .base import (
    DEFAULT_COLLECTION,
    DEFAULT_USER,
    BadRequest,
    JsonObject,
    SendTranslator,
    as_object,
    build,
    list_of,
    required,
)
from .metadata import metadata_from_json
from .primitives import triples_to_json

__all__ = ["ChunkTranslator", "DocumentEmbeddingsTranslator", "DocumentTranslator", "TextDocumentTranslator"]


def _b64decode(text: Any, what: str) -> bytes:
    if not isinstance(text, str):
        raise BadRequest(f"Bad request: '{what}' must be base64 text")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest(f"Bad request: '{what}' is not valid base64") from None


def _text(value: bytes | str) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _load_metadata(data: JsonObject) -> Metadata:
    """The metadata of a loaded item, from its top-level ``id``, ``metadata``, ``user``, ``collection``."""
    return metadata_from_json({"id": data.get("id"), "metadata": data.get("metadata")},
                              user=data.get("user") or DEFAULT_USER,
                              collection=data.get("collection") or DEFAULT_COLLECTION)


def _metadata_json(m: Metadata | None) -> JsonObject | None:
    """The set parts of a loaded item's metadata (upstream's shape for these messages)."""
    if m is None:
        return None
    out: JsonObject = {name: getattr(m, name) for name in ("id", "user", "collection") if getattr(m, name)}
    if m.metadata:
        out["metadata"] = triples_to_json(m.metadata)
    return out


def _with_metadata(out: JsonObject, m: Metadata | None) -> JsonObject:
    meta = _metadata_json(m)
    if meta is not None:
        out["metadata"] = meta
    return out


class DocumentTranslator(SendTranslator):
    """``data`` (base64, required), ``id``, ``metadata`` (triples), ``user``, ``collection``."""

    def to_pulsar(self, data: JsonObject) -> Document:
        content = base64.b64encode(_b64decode(required(data, "data"), "data"))
        return Document(metadata=_load_metadata(data), data=content)

    def from_pulsar(self, obj: Document) -> JsonObject:
        return _with_metadata({"data": _text(obj.data)}, obj.metadata)


class TextDocumentTranslator(SendTranslator):
    """``text`` (base64 of text in ``charset``, required), and the metadata fields."""

    def to_pulsar(self, data: JsonObject) -> TextDocument:
        raw = _b64decode(required(data, "text"), "text")
        charset = data.get("charset") or "utf-8"
        try:
            text = raw.decode(charset)
        except (LookupError, UnicodeDecodeError) as e:
            raise BadRequest(f"Bad request: 'text' is not {charset} text ({e})") from None
        return TextDocument(metadata=_load_metadata(data), text=text.encode("utf-8"))

    def from_pulsar(self, obj: TextDocument) -> JsonObject:
        return _with_metadata({"text": _text(obj.text)}, obj.metadata)


class ChunkTranslator(SendTranslator):
    """``chunk`` (text, required), and the metadata fields."""

    def to_pulsar(self, data: JsonObject) -> Chunk:
        chunk = required(data, "chunk")
        if not isinstance(chunk, str):
            raise BadRequest("Bad request: 'chunk' must be text")
        return Chunk(metadata=_load_metadata(data), chunk=chunk.encode("utf-8"))

    def from_pulsar(self, obj: Chunk) -> JsonObject:
        return _with_metadata({"chunk": _text(obj.chunk)}, obj.metadata)


class DocumentEmbeddingsTranslator(SendTranslator):
    """``metadata`` (a header object) and ``chunks`` (``[{chunk_id, vectors}]``)."""

    def to_pulsar(self, data: JsonObject) -> DocumentEmbeddings:
        meta = as_object(data.get("metadata"), "metadata")
        return DocumentEmbeddings(
            metadata=metadata_from_json(meta, user=DEFAULT_USER, collection=DEFAULT_COLLECTION),
            chunks=[build(ChunkEmbeddings, {"chunk_id": c.get("chunk_id"), "vectors": c.get("vectors")})
                    for c in (as_object(c, "a chunk") for c in list_of(data.get("chunks"), "'chunks'"))])

    def from_pulsar(self, obj: DocumentEmbeddings) -> JsonObject:
        out: JsonObject = {"chunks": [{"chunk_id": c.chunk_id, "vectors": c.vectors} for c in obj.chunks or []]}
        return _with_metadata(out, obj.metadata)
