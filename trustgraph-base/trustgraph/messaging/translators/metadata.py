"""Metadata as client JSON: the librarian's document and processing records (kebab-case keys) and
the ``{"id", "metadata", "user", "collection"}`` header of knowledge and loading messages."""

from __future__ import annotations

from typing import Any

from trustgraph.schema import DocumentMetadata, Metadata, ProcessingMetadata

from .base import JsonObject, Translator, as_object, build
from .primitives import triples_from_json, triples_to_json

__all__ = ["DocumentMetadataTranslator", "ProcessingMetadataTranslator", "metadata_from_json",
           "metadata_to_json"]

# (JSON key, record field): the JSON side is kebab-case.
_DOC_FIELDS = (("id", "id"), ("time", "time"), ("kind", "kind"), ("title", "title"),
               ("comments", "comments"), ("user", "user"), ("tags", "tags"),
               ("parent-id", "parent_id"), ("document-type", "document_type"))
_PROC_FIELDS = (("id", "id"), ("document-id", "document_id"), ("time", "time"), ("flow", "flow"),
                ("user", "user"), ("collection", "collection"), ("tags", "tags"))


def _present(value: Any, name: str) -> bool:
    # Empty values are left out, except tags: an empty tag list is still said.
    return bool(value) or (name == "tags" and value is not None)


class DocumentMetadataTranslator(Translator):
    """A document's librarian record; absent fields take the record's defaults."""

    def to_pulsar(self, data: JsonObject) -> DocumentMetadata:
        data = as_object(data, "'document-metadata'")
        record = build(DocumentMetadata, {dst: data.get(src) for src, dst in _DOC_FIELDS})
        record.metadata = triples_from_json(data.get("metadata"))
        return record

    def from_pulsar(self, obj: DocumentMetadata) -> JsonObject:
        out: JsonObject = {src: getattr(obj, dst) for src, dst in _DOC_FIELDS if _present(getattr(obj, dst), dst)}
        if obj.metadata is not None:
            out["metadata"] = triples_to_json(obj.metadata)
        return out


class ProcessingMetadataTranslator(Translator):
    """A processing record (which flow processes which document)."""

    def to_pulsar(self, data: JsonObject) -> ProcessingMetadata:
        data = as_object(data, "'processing-metadata'")
        return build(ProcessingMetadata, {dst: data.get(src) for src, dst in _PROC_FIELDS})

    def from_pulsar(self, obj: ProcessingMetadata) -> JsonObject:
        return {src: getattr(obj, dst) for src, dst in _PROC_FIELDS if _present(getattr(obj, dst), dst)}


def metadata_from_json(data: Any, user: str | None = None, collection: str | None = None) -> Metadata:
    """A ``{"id", "metadata", "user", "collection"}`` header as Metadata (``user`` and
    ``collection``: the defaults for empty ones)."""
    data = as_object(data, "metadata")
    return Metadata(id=data.get("id") or "", metadata=triples_from_json(data.get("metadata")),
                    user=data.get("user") or user or "", collection=data.get("collection") or collection or "")


def metadata_to_json(metadata: Metadata | None) -> JsonObject:
    """Metadata as the header, every key present."""
    m = metadata or Metadata()
    return {"id": m.id, "metadata": triples_to_json(m.metadata), "user": m.user, "collection": m.collection}
