"""IRIs for the things provenance talks about: documents, their pages and chunks, activities.

A document's id is already an IRI (the librarian gives one); its pages and
chunks get IRIs under it, so an IRI alone says where a chunk came from
(``<doc>/p3/c7`` is chunk 7 of page 3), and re-extracting the same document
gives the same IRIs: its triples replace, rather than duplicate, the old ones.
Activities and statements are events, so each gets a fresh UUID unless the
caller names it.
"""

from __future__ import annotations

import uuid
from urllib.parse import quote

#: Prefix of the IRIs minted here for activities, statements and agents.
TRUSTGRAPH_BASE = "https://trustgraph.ai"


def _segment(value: object) -> str:
    """One path segment: every reserved character escaped, so an id cannot add segments."""
    return quote(str(value), safe="")


def document_uri(doc_iri: str) -> str:
    """The document's IRI: its id, unchanged."""
    return doc_iri


def page_uri(doc_iri: str, page_number: int) -> str:
    """Page ``page_number`` of a document."""
    return f"{doc_iri}/p{page_number}"


def chunk_uri_from_page(doc_iri: str, page_number: int, chunk_index: int) -> str:
    """Chunk ``chunk_index`` of a page (a paged document: PDF)."""
    return f"{page_uri(doc_iri, page_number)}/c{chunk_index}"


def chunk_uri_from_doc(doc_iri: str, chunk_index: int) -> str:
    """Chunk ``chunk_index`` of a document without pages (text)."""
    return f"{doc_iri}/c{chunk_index}"


def activity_uri(activity_id: str | None = None) -> str:
    """One extraction run; a new UUID when ``activity_id`` is not given."""
    return f"{TRUSTGRAPH_BASE}/activity/{_segment(activity_id if activity_id is not None else uuid.uuid4())}"


def statement_uri(stmt_id: str | None = None) -> str:
    """A reified (quoted) extracted statement; a new UUID when ``stmt_id`` is not given."""
    return f"{TRUSTGRAPH_BASE}/stmt/{_segment(stmt_id if stmt_id is not None else uuid.uuid4())}"


def agent_uri(component_name: str) -> str:
    """The component (``chunker``, ``kg-extract-definitions``) that ran an activity."""
    return f"{TRUSTGRAPH_BASE}/agent/{_segment(component_name)}"


__all__ = ["TRUSTGRAPH_BASE", "activity_uri", "agent_uri", "chunk_uri_from_doc", "chunk_uri_from_page",
           "document_uri", "page_uri", "statement_uri"]
