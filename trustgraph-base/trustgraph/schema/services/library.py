"""The librarian: stored documents, their processing, and chunked uploads.

Operations include add-document, remove-document, update-document,
get-document-metadata, get-document-content, list-documents,
add-processing, remove-processing, list-processing, and the chunked upload
begin-upload / upload-chunk / complete-upload / abort-upload /
get-upload-status / list-uploads.  ``content`` travels as base64 text.
"""

from dataclasses import dataclass, field

from ...topics import topic
from ..core.primitives import Error, Triple


@dataclass
class DocumentMetadata:
    """A stored document's description; ``parent_id`` is set on child documents."""

    id: str = ""
    time: int = 0
    kind: str = ""
    title: str = ""
    comments: str = ""
    metadata: list[Triple] = field(default_factory=list)
    user: str = ""
    tags: list[str] = field(default_factory=list)
    parent_id: str = ""
    document_type: str = "source"


@dataclass
class ProcessingMetadata:
    """A document handed to a flow for processing into a collection."""

    id: str = ""
    document_id: str = ""
    time: int = 0
    flow: str = ""
    user: str = ""
    collection: str = ""
    tags: list[str] = field(default_factory=list)


@dataclass
class Criteria:
    """A search condition on document metadata."""

    key: str = ""
    value: str = ""
    operator: str = ""


@dataclass
class UploadProgress:
    """How far a chunked upload has got."""

    upload_id: str = ""
    chunks_received: int = 0
    total_chunks: int = 0
    bytes_received: int = 0
    total_bytes: int = 0


@dataclass
class UploadSession:
    """A chunked upload in progress."""

    upload_id: str = ""
    document_id: str = ""
    document_metadata_json: str = ""
    total_size: int = 0
    chunk_size: int = 0
    total_chunks: int = 0
    chunks_received: int = 0
    created_at: str = ""


@dataclass
class LibrarianRequest:
    """One librarian operation; the fields used depend on ``operation``."""

    operation: str = ""
    document_id: str = ""
    processing_id: str = ""
    document_metadata: DocumentMetadata | None = None
    processing_metadata: ProcessingMetadata | None = None
    content: bytes = b""
    user: str = ""
    collection: str = ""
    criteria: list[Criteria] = field(default_factory=list)
    total_size: int = 0
    chunk_size: int = 0
    upload_id: str = ""
    chunk_index: int = 0
    include_children: bool = False


@dataclass
class LibrarianResponse:
    """The answer to one librarian operation."""

    error: Error | None = None
    document_metadata: DocumentMetadata | None = None
    content: bytes = b""
    document_metadatas: list[DocumentMetadata] | None = field(default_factory=list)
    processing_metadatas: list[ProcessingMetadata] | None = field(default_factory=list)
    upload_id: str = ""
    chunk_size: int = 0
    total_chunks: int = 0
    chunk_index: int = 0
    chunks_received: int = 0
    bytes_received: int = 0
    total_bytes: int = 0
    document_id: str = ""
    object_id: str = ""
    upload_state: str = ""
    received_chunks: list[int] = field(default_factory=list)
    missing_chunks: list[int] = field(default_factory=list)
    upload_sessions: list[UploadSession] = field(default_factory=list)


# Persistent (q1), unlike the other global services: documents are large and
# only persistent topics chunk.
librarian_request_queue = topic("librarian", qos="q1", namespace="request")
librarian_response_queue = topic("librarian", qos="q1", namespace="response")
