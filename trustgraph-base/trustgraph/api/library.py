"""``Library``: the document library (librarian) over REST (``POST api/v1/librarian``).

Documents of 2 MiB or more are uploaded in 5 MiB chunks (begin-upload,
upload-chunk..., complete-upload; aborted on failure), as upstream's client
does, so both clients work against the same librarian.
"""

from __future__ import annotations

import base64
import datetime
import logging
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..knowledge import hash
from .exceptions import ProtocolException
from .terms import from_value, metadata_triples, to_value, triple_from_json  # noqa: F401 - re-exported
from .types import DocumentMetadata, ProcessingMetadata

if TYPE_CHECKING:
    from .api import Api

logger = logging.getLogger(__name__)

CHUNKED_UPLOAD_THRESHOLD = 2 * 1024 * 1024
DEFAULT_CHUNK_SIZE = 5 * 1024 * 1024

Progress = Callable[[int, int], None]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("utf-8")


def _document(v: dict[str, Any]) -> DocumentMetadata:
    return DocumentMetadata(
        id=v["id"], time=datetime.datetime.fromtimestamp(v["time"]), kind=v["kind"], title=v["title"],
        comments=v.get("comments", ""), metadata=[triple_from_json(t) for t in v.get("metadata") or []],
        user=v["user"], tags=v.get("tags") or [], parent_id=v.get("parent-id", ""),
        document_type=v.get("document-type", "source"))


def _documents(reply: dict[str, Any]) -> list[DocumentMetadata]:
    try:
        return [_document(v) for v in reply.get("document-metadatas") or []]
    except (KeyError, TypeError, ValueError):
        raise ProtocolException("Response not formatted correctly") from None


class Library:
    """Add, list, fetch, update and remove documents, and hand them to flows for processing."""

    def __init__(self, api: Api) -> None:
        self.api = api

    def request(self, request: dict[str, Any]) -> dict[str, Any]:
        """One raw librarian operation."""
        return self.api.request("librarian", request)

    def add_document(self, document: bytes, id: str | None, metadata: Any, user: str,  # noqa: A002
                     title: str | None, comments: str | None, kind: str = "text/plain",
                     tags: list[str] | None = None, on_progress: Progress | None = None) -> dict[str, Any]:
        """Store a document (chunked when large); ``metadata`` is Triples or an ``emit``-able entity."""
        if id is None:
            if metadata is not None:
                raise RuntimeError("Can't specify metadata without id")
            id = hash(document)  # noqa: A001
        doc_meta = {"id": id, "time": int(time.time()), "kind": kind, "title": title or "",
                    "comments": comments or "", "metadata": metadata_triples(metadata), "user": user,
                    "tags": list(tags or [])}
        if len(document) >= CHUNKED_UPLOAD_THRESHOLD:
            return self._upload_chunked(document, doc_meta, user, on_progress)
        return self.request({"operation": "add-document", "document-metadata": doc_meta,
                             "content": _b64(document)})

    def _upload_chunked(self, document: bytes, doc_meta: dict[str, Any], user: str,
                        on_progress: Progress | None) -> dict[str, Any]:
        total = len(document)
        begin = self.request({"operation": "begin-upload", "document-metadata": doc_meta,
                              "total-size": total, "chunk-size": DEFAULT_CHUNK_SIZE})
        upload_id = begin.get("upload-id")
        if not upload_id:
            raise RuntimeError("Failed to begin upload: no upload_id returned")
        size = begin.get("chunk-size") or DEFAULT_CHUNK_SIZE
        chunks = begin.get("total-chunks") or math.ceil(total / size)
        try:
            for index in range(chunks):
                end = min((index + 1) * size, total)
                self.request({"operation": "upload-chunk", "upload-id": upload_id, "chunk-index": index,
                              "content": _b64(document[index * size:end]), "user": user})
                if on_progress:
                    on_progress(end, total)
            return self.request({"operation": "complete-upload", "upload-id": upload_id, "user": user})
        except Exception:
            try:
                self.abort_upload(upload_id, user)
            except Exception as e:  # noqa: BLE001 - the upload's own failure is the one to raise
                logger.warning("Could not abort upload %s: %s", upload_id, e)
            raise

    def get_documents(self, user: str, include_children: bool = False) -> list[DocumentMetadata]:
        """A user's documents."""
        return _documents(self.request({"operation": "list-documents", "user": user,
                                        "include-children": include_children}))

    def get_document(self, user: str, id: str) -> DocumentMetadata:  # noqa: A002
        """One document's metadata."""
        reply = self.request({"operation": "get-document", "user": user, "document-id": id})
        try:
            return _document(reply["document-metadata"])
        except (KeyError, TypeError, ValueError):
            raise ProtocolException("Response not formatted correctly") from None

    def update_document(self, user: str, id: str, metadata: DocumentMetadata) -> dict[str, Any]:  # noqa: A002
        """Change a document's title, comments, metadata triples and tags."""
        return self.request({"operation": "update-document", "document-metadata": {
            "user": user, "document-id": id, "time": metadata.time, "title": metadata.title,
            "comments": metadata.comments, "metadata": metadata_triples(metadata.metadata),
            "tags": metadata.tags}})

    def remove_document(self, user: str, id: str) -> dict[str, Any]:  # noqa: A002
        """Delete a document."""
        self.request({"operation": "remove-document", "user": user, "document-id": id})
        return {}

    def start_processing(self, id: str, document_id: str, flow: str = "default",  # noqa: A002
                         user: str = "trustgraph", collection: str = "default",
                         tags: list[str] | None = None) -> dict[str, Any]:
        """Hand a document to a flow, into a collection."""
        self.request({"operation": "add-processing", "processing-metadata": {
            "id": id, "document-id": document_id, "time": int(time.time()), "flow": flow,
            "user": user, "collection": collection, "tags": list(tags or [])}})
        return {}

    def stop_processing(self, id: str, user: str = "trustgraph") -> dict[str, Any]:  # noqa: A002
        """Stop processing a document."""
        self.request({"operation": "remove-processing", "processing-id": id, "user": user})
        return {}

    def get_processings(self, user: str = "trustgraph") -> list[ProcessingMetadata]:
        """What is being processed for a user."""
        reply = self.request({"operation": "list-processing", "user": user})
        try:
            return [ProcessingMetadata(
                id=v["id"], document_id=v["document-id"], time=datetime.datetime.fromtimestamp(v["time"]),
                flow=v["flow"], user=v["user"], collection=v["collection"], tags=v.get("tags") or [])
                for v in reply.get("processing-metadatas") or []]
        except (KeyError, TypeError, ValueError):
            raise ProtocolException("Response not formatted correctly") from None

    def get_pending_uploads(self, user: str) -> list[dict[str, Any]]:
        """A user's unfinished chunked uploads."""
        return self.request({"operation": "list-uploads", "user": user}).get("upload-sessions", [])

    def get_upload_status(self, upload_id: str, user: str) -> dict[str, Any]:
        """Which chunks of an upload have arrived."""
        return self.request({"operation": "get-upload-status", "upload-id": upload_id, "user": user})

    def abort_upload(self, upload_id: str, user: str) -> dict[str, Any]:
        """Give up an upload."""
        return self.request({"operation": "abort-upload", "upload-id": upload_id, "user": user})

    def resume_upload(self, upload_id: str, document: bytes, user: str,
                      on_progress: Progress | None = None) -> dict[str, Any]:
        """Send the chunks an interrupted upload is missing, then complete it."""
        status = self.get_upload_status(upload_id, user)
        state = status.get("upload-state")
        if state == "expired":
            raise RuntimeError("Upload session has expired, please start a new upload")
        if state == "completed":
            return {"message": "Upload already completed"}
        missing = status.get("missing-chunks", [])
        chunks = status.get("total-chunks", 0)
        total = status.get("total-bytes", len(document))
        size = total // chunks if chunks > 0 else DEFAULT_CHUNK_SIZE
        for done, index in enumerate(missing, start=1):
            self.request({"operation": "upload-chunk", "upload-id": upload_id, "chunk-index": index,
                          "content": _b64(document[index * size:(index + 1) * size]), "user": user})
            if on_progress:
                on_progress(min((chunks - len(missing) + done) * size, total), total)
        return self.request({"operation": "complete-upload", "upload-id": upload_id, "user": user})

    def add_child_document(self, document: bytes, id: str | None, parent_id: str, user: str,  # noqa: A002
                           title: str | None, comments: str | None, kind: str = "text/plain",
                           tags: list[str] | None = None, metadata: Any = None) -> dict[str, Any]:
        """Store a document derived from another (a page, an extract)."""
        if not parent_id:
            raise RuntimeError("parent_id is required for child documents")
        return self.request({"operation": "add-child-document", "document-metadata": {
            "id": id or hash(document), "time": int(time.time()), "kind": kind, "title": title or "",
            "comments": comments or "", "metadata": metadata_triples(metadata) if isinstance(metadata, list) else [],
            "user": user, "tags": list(tags or []), "parent-id": parent_id, "document-type": "extracted"},
            "content": _b64(document)})

    def list_children(self, document_id: str, user: str) -> list[DocumentMetadata]:
        """The documents derived from one."""
        return _documents(self.request({"operation": "list-children", "document-id": document_id,
                                        "user": user}))

    def get_document_content(self, user: str, id: str) -> bytes:  # noqa: A002
        """A document's content."""
        reply = self.request({"operation": "get-document-content", "user": user, "document-id": id})
        return base64.b64decode(reply.get("content", ""))

    def stream_document_to_file(self, user: str, id: str, file_path: str,  # noqa: A002
                                chunk_size: int = 1024 * 1024,
                                on_progress: Progress | None = None) -> int:
        """Fetch a document chunk by chunk into a file; returns the bytes written."""
        written = 0
        index = 0
        with open(file_path, "wb") as f:
            while True:
                reply = self.request({"operation": "stream-document", "user": user, "document-id": id,
                                      "chunk-index": index, "chunk-size": chunk_size})
                data = base64.b64decode(reply.get("content", ""))
                if not data:
                    break
                f.write(data)
                written += len(data)
                if on_progress:
                    on_progress(written, reply.get("total-bytes", written))
                if index >= reply.get("total-chunks", 1) - 1:
                    break
                index += 1
        return written
