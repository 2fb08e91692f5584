"""Building PROV-O triples at extraction time: where a page, chunk or extracted fact came from.

Every step that derives something (a page from a PDF, a chunk from a page, a
triple from a chunk) says so in the graph as it writes: the derived entity,
the activity that made it (which component, which version, when, from what)
and the component as a PROV agent.  A question answered from the graph can
then be traced back to the text it came from, and a bad extractor version
found by what it made.  The records are our schema's (``Triple``, ``Term``),
ready to send.
"""

from __future__ import annotations

from datetime import UTC, datetime

from ..schema import IRI, LITERAL, TRIPLE, Term, Triple
from .namespaces import (
    DC_CREATOR,
    DC_DATE,
    DC_SOURCE,
    DC_TITLE,
    PROV_ACTIVITY,
    PROV_AGENT,
    PROV_ENTITY,
    PROV_STARTED_AT_TIME,
    PROV_USED,
    PROV_WAS_ASSOCIATED_WITH,
    PROV_WAS_DERIVED_FROM,
    PROV_WAS_GENERATED_BY,
    RDF_TYPE,
    RDFS_LABEL,
    TG_CHAR_LENGTH,
    TG_CHAR_OFFSET,
    TG_CHUNK_INDEX,
    TG_CHUNK_OVERLAP,
    TG_CHUNK_SIZE,
    TG_COMPONENT_VERSION,
    TG_LLM_MODEL,
    TG_MIME_TYPE,
    TG_ONTOLOGY,
    TG_PAGE_COUNT,
    TG_PAGE_NUMBER,
    TG_REIFIES,
)
from .uris import activity_uri, agent_uri


def _iri(value: str) -> Term:
    return Term(type=IRI, iri=value)


def _literal(value: object) -> Term:
    return Term(type=LITERAL, value=str(value))


def _link(s: str, p: str, o: Term) -> Triple:
    """``<s> <p> o``: subject and predicate are always IRIs here."""
    return Triple(s=_iri(s), p=_iri(p), o=o)


def _now() -> str:
    """An ISO-8601 UTC time as upstream writes it (no offset, a ``Z``)."""
    return datetime.now(UTC).replace(tzinfo=None).isoformat() + "Z"


def _run(act: str, used: str, component_name: str, component_version: str, timestamp: str) -> list[Triple]:
    """The activity that ``used`` something, run by the component (a PROV agent), and that agent."""
    agent = agent_uri(component_name)
    return [
        _link(act, RDF_TYPE, _iri(PROV_ACTIVITY)),
        _link(act, RDFS_LABEL, _literal(f"{component_name} extraction")),
        _link(act, PROV_USED, _iri(used)),
        _link(act, PROV_WAS_ASSOCIATED_WITH, _iri(agent)),
        _link(act, PROV_STARTED_AT_TIME, _literal(timestamp)),
        _link(act, TG_COMPONENT_VERSION, _literal(component_version)),
        _link(agent, RDF_TYPE, _iri(PROV_AGENT)),
        _link(agent, RDFS_LABEL, _literal(component_name)),
    ]


def document_triples(doc_uri: str, title: str | None = None, source: str | None = None,
                     date: str | None = None, creator: str | None = None, page_count: int | None = None,
                     mime_type: str | None = None) -> list[Triple]:
    """A source document as a PROV entity, with what is known of it (empty values are left out).

    The title is also its ``rdfs:label``, so the graph shows the document by
    name; ``source`` is an IRI (where it was fetched from).
    """
    out = [_link(doc_uri, RDF_TYPE, _iri(PROV_ENTITY))]
    if title:
        out += [_link(doc_uri, DC_TITLE, _literal(title)), _link(doc_uri, RDFS_LABEL, _literal(title))]
    if source:
        out.append(_link(doc_uri, DC_SOURCE, _iri(source)))
    if date:
        out.append(_link(doc_uri, DC_DATE, _literal(date)))
    if creator:
        out.append(_link(doc_uri, DC_CREATOR, _literal(creator)))
    if page_count is not None:
        out.append(_link(doc_uri, TG_PAGE_COUNT, _literal(page_count)))
    if mime_type:
        out.append(_link(doc_uri, TG_MIME_TYPE, _literal(mime_type)))
    return out


def derived_entity_triples(entity_uri: str, parent_uri: str, component_name: str, component_version: str,
                           label: str | None = None, page_number: int | None = None,
                           chunk_index: int | None = None, char_offset: int | None = None,
                           char_length: int | None = None, chunk_size: int | None = None,
                           chunk_overlap: int | None = None, timestamp: str | None = None) -> list[Triple]:
    """A page or chunk derived from ``parent_uri`` by ``component_name``: the entity, a new activity, its agent.

    Where the entity sits in its parent (page number, chunk index, character
    span) belongs to the entity; how the chunker was set (``chunk_size``,
    ``chunk_overlap``) to the activity.  ``timestamp`` defaults to now (UTC).
    """
    act = activity_uri()
    out = [
        _link(entity_uri, RDF_TYPE, _iri(PROV_ENTITY)),
        _link(entity_uri, PROV_WAS_DERIVED_FROM, _iri(parent_uri)),
        _link(entity_uri, PROV_WAS_GENERATED_BY, _iri(act)),
        *_run(act, parent_uri, component_name, component_version, _now() if timestamp is None else timestamp),
    ]
    if label:
        out.append(_link(entity_uri, RDFS_LABEL, _literal(label)))
    for subject, predicate, value in (
        (entity_uri, TG_PAGE_NUMBER, page_number),
        (entity_uri, TG_CHUNK_INDEX, chunk_index),
        (entity_uri, TG_CHAR_OFFSET, char_offset),
        (entity_uri, TG_CHAR_LENGTH, char_length),
        (act, TG_CHUNK_SIZE, chunk_size),
        (act, TG_CHUNK_OVERLAP, chunk_overlap),
    ):
        if value is not None:
            out.append(_link(subject, predicate, _literal(value)))
    return out


def triple_provenance_triples(stmt_uri: str, extracted_triple: Triple, chunk_uri: str, component_name: str,
                              component_version: str, llm_model: str | None = None,
                              ontology_uri: str | None = None, timestamp: str | None = None) -> list[Triple]:
    """Where one extracted fact came from: ``stmt_uri`` reifies it (RDF-star) and derives from the chunk.

    The fact itself is quoted, not asserted again: ``<stmt> tg:reifies
    <<s p o>>``.  The activity records the model and ontology the extractor
    used, when given.  ``timestamp`` defaults to now (UTC).
    """
    act = activity_uri()
    out = [
        Triple(s=_iri(stmt_uri), p=_iri(TG_REIFIES), o=Term(type=TRIPLE, triple=extracted_triple)),
        _link(stmt_uri, PROV_WAS_DERIVED_FROM, _iri(chunk_uri)),
        _link(stmt_uri, PROV_WAS_GENERATED_BY, _iri(act)),
        *_run(act, chunk_uri, component_name, component_version, _now() if timestamp is None else timestamp),
    ]
    if llm_model:
        out.append(_link(act, TG_LLM_MODEL, _literal(llm_model)))
    if ontology_uri:
        out.append(_link(act, TG_ONTOLOGY, _iri(ontology_uri)))
    return out


__all__ = ["derived_entity_triples", "document_triples", "triple_provenance_triples"]
