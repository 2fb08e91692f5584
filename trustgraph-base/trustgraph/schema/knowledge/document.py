"""Documents on their way into the graph: the raw file, its text, and its chunks.

``document_id`` set means "fetch the content from the librarian" (large
documents); otherwise the content travels inline.
"""

from dataclasses import dataclass

from ..core.metadata import Metadata


@dataclass
class Document:
    """A binary document (PDF, ...); on the gateway's document-load its ``data`` is base64 text."""

    metadata: Metadata | None = None
    data: bytes = b""
    document_id: str = ""


@dataclass
class TextDocument:
    """A plain-text document."""

    metadata: Metadata | None = None
    text: bytes = b""
    document_id: str = ""


@dataclass
class Chunk:
    """One chunk of a document's text."""

    metadata: Metadata | None = None
    chunk: bytes = b""
    document_id: str = ""
