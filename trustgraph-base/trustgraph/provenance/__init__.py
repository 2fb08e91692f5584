"""Provenance written at extraction time: which document, page and chunk each piece of the graph came from.

Upstream TrustGraph's chunkers, PDF decoder and knowledge extractors import
these helpers from ``trustgraph.provenance`` (our base is installed in their
place, so the names and the triples they build are upstream's):

* :mod:`.uris`: IRIs for documents, pages, chunks, activities, statements, agents;
* :mod:`.namespaces`: the PROV-O, Dublin Core and TrustGraph IRIs;
* :mod:`.triples`: the PROV-O triples for a document, a derived page or chunk,
  and an extracted (reified) fact;
* :mod:`.vocabulary`: label triples for all of those IRIs, sent once per collection.

For example, a chunker writes ``derived_entity_triples(chunk_uri_from_doc(doc, 3),
doc, "chunker", "1.0", chunk_index=3)`` next to the chunk it emits.
"""

from __future__ import annotations

from .namespaces import (
    DC,
    DC_CREATOR,
    DC_DATE,
    DC_SOURCE,
    DC_TITLE,
    PROV,
    PROV_ACTIVITY,
    PROV_AGENT,
    PROV_ENTITY,
    PROV_STARTED_AT_TIME,
    PROV_USED,
    PROV_WAS_ASSOCIATED_WITH,
    PROV_WAS_DERIVED_FROM,
    PROV_WAS_GENERATED_BY,
    RDF,
    RDF_TYPE,
    RDFS,
    RDFS_LABEL,
    TG,
    TG_CHAR_LENGTH,
    TG_CHAR_OFFSET,
    TG_CHUNK_INDEX,
    TG_CHUNK_OVERLAP,
    TG_CHUNK_SIZE,
    TG_COMPONENT_VERSION,
    TG_EMBEDDING_MODEL,
    TG_LLM_MODEL,
    TG_MIME_TYPE,
    TG_ONTOLOGY,
    TG_PAGE_COUNT,
    TG_PAGE_NUMBER,
    TG_REIFIES,
    TG_SOURCE_CHAR_LENGTH,
    TG_SOURCE_CHAR_OFFSET,
    TG_SOURCE_TEXT,
)
from .triples import derived_entity_triples, document_triples, triple_provenance_triples
from .uris import (
    TRUSTGRAPH_BASE,
    activity_uri,
    agent_uri,
    chunk_uri_from_doc,
    chunk_uri_from_page,
    document_uri,
    page_uri,
    statement_uri,
)
from .vocabulary import (
    DC_PREDICATE_LABELS,
    PROV_CLASS_LABELS,
    PROV_PREDICATE_LABELS,
    TG_PREDICATE_LABELS,
    get_vocabulary_triples,
)

__all__ = [
    "TRUSTGRAPH_BASE", "activity_uri", "agent_uri", "chunk_uri_from_doc", "chunk_uri_from_page",
    "document_uri", "page_uri", "statement_uri",
    "DC", "DC_CREATOR", "DC_DATE", "DC_SOURCE", "DC_TITLE",
    "PROV", "PROV_ACTIVITY", "PROV_AGENT", "PROV_ENTITY", "PROV_STARTED_AT_TIME", "PROV_USED",
    "PROV_WAS_ASSOCIATED_WITH", "PROV_WAS_DERIVED_FROM", "PROV_WAS_GENERATED_BY",
    "RDF", "RDFS", "RDFS_LABEL", "RDF_TYPE",
    "TG", "TG_CHAR_LENGTH", "TG_CHAR_OFFSET", "TG_CHUNK_INDEX", "TG_CHUNK_OVERLAP", "TG_CHUNK_SIZE",
    "TG_COMPONENT_VERSION", "TG_EMBEDDING_MODEL", "TG_LLM_MODEL", "TG_MIME_TYPE", "TG_ONTOLOGY",
    "TG_PAGE_COUNT", "TG_PAGE_NUMBER", "TG_REIFIES", "TG_SOURCE_CHAR_LENGTH", "TG_SOURCE_CHAR_OFFSET",
    "TG_SOURCE_TEXT",
    "derived_entity_triples", "document_triples", "triple_provenance_triples",
    "DC_PREDICATE_LABELS", "PROV_CLASS_LABELS", "PROV_PREDICATE_LABELS", "TG_PREDICATE_LABELS",
    "get_vocabulary_triples",
]
