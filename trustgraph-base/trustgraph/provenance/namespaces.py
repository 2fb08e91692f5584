"""The IRIs provenance triples use: W3C PROV-O, Dublin Core, and TrustGraph's own predicates.

Kept apart from the builders so that a reader of the graph (a query that
follows ``prov:wasDerivedFrom`` back to a document) can import the names
without the schema records.  RDF, RDFS, SKOS and schema.org come from
:mod:`trustgraph.rdf`, the one place the graph's shared vocabulary is spelt.
"""

from __future__ import annotations

from ..rdf import RDF, RDF_LABEL, RDF_TYPE, RDFS, SCHEMA, SKOS

#: W3C PROV-O: what was derived from what, by which activity, run by which agent.
PROV = "http://www.w3.org/ns/prov#"
PROV_ENTITY = f"{PROV}Entity"
PROV_ACTIVITY = f"{PROV}Activity"
PROV_AGENT = f"{PROV}Agent"
PROV_WAS_DERIVED_FROM = f"{PROV}wasDerivedFrom"
PROV_WAS_GENERATED_BY = f"{PROV}wasGeneratedBy"
PROV_USED = f"{PROV}used"
PROV_WAS_ASSOCIATED_WITH = f"{PROV}wasAssociatedWith"
PROV_STARTED_AT_TIME = f"{PROV}startedAtTime"

#: Dublin Core elements: a source document's own description.
DC = "http://purl.org/dc/elements/1.1/"
DC_TITLE = f"{DC}title"
DC_SOURCE = f"{DC}source"
DC_DATE = f"{DC}date"
DC_CREATOR = f"{DC}creator"

#: RDFS's label under the name the provenance code gives it (``trustgraph.rdf.RDF_LABEL``).
RDFS_LABEL = RDF_LABEL

#: The schema.org and SKOS terms the vocabulary bootstrap labels.
SCHEMA_SUBJECT_OF = f"{SCHEMA}subjectOf"
SCHEMA_DIGITAL_DOCUMENT = f"{SCHEMA}DigitalDocument"
SCHEMA_DESCRIPTION = f"{SCHEMA}description"
SCHEMA_KEYWORDS = f"{SCHEMA}keywords"
SCHEMA_NAME = f"{SCHEMA}name"
SKOS_DEFINITION = f"{SKOS}definition"

#: TrustGraph's predicates: where in its parent a page or chunk sits, how it was made.
TG = "https://trustgraph.ai/ns/"
TG_REIFIES = f"{TG}reifies"
TG_PAGE_COUNT = f"{TG}pageCount"
TG_MIME_TYPE = f"{TG}mimeType"
TG_PAGE_NUMBER = f"{TG}pageNumber"
TG_CHUNK_INDEX = f"{TG}chunkIndex"
TG_CHAR_OFFSET = f"{TG}charOffset"
TG_CHAR_LENGTH = f"{TG}charLength"
TG_CHUNK_SIZE = f"{TG}chunkSize"
TG_CHUNK_OVERLAP = f"{TG}chunkOverlap"
TG_COMPONENT_VERSION = f"{TG}componentVersion"
TG_LLM_MODEL = f"{TG}llmModel"
TG_ONTOLOGY = f"{TG}ontology"
TG_EMBEDDING_MODEL = f"{TG}embeddingModel"
TG_SOURCE_TEXT = f"{TG}sourceText"
TG_SOURCE_CHAR_OFFSET = f"{TG}sourceCharOffset"
TG_SOURCE_CHAR_LENGTH = f"{TG}sourceCharLength"

__all__ = [
    "DC", "DC_CREATOR", "DC_DATE", "DC_SOURCE", "DC_TITLE",
    "PROV", "PROV_ACTIVITY", "PROV_AGENT", "PROV_ENTITY", "PROV_STARTED_AT_TIME", "PROV_USED",
    "PROV_WAS_ASSOCIATED_WITH", "PROV_WAS_DERIVED_FROM", "PROV_WAS_GENERATED_BY",
    "RDF", "RDFS", "RDFS_LABEL", "RDF_TYPE",
    "SCHEMA", "SCHEMA_DESCRIPTION", "SCHEMA_DIGITAL_DOCUMENT", "SCHEMA_KEYWORDS", "SCHEMA_NAME",
    "SCHEMA_SUBJECT_OF", "SKOS", "SKOS_DEFINITION",
    "TG", "TG_CHAR_LENGTH", "TG_CHAR_OFFSET", "TG_CHUNK_INDEX", "TG_CHUNK_OVERLAP", "TG_CHUNK_SIZE",
    "TG_COMPONENT_VERSION", "TG_EMBEDDING_MODEL", "TG_LLM_MODEL", "TG_MIME_TYPE", "TG_ONTOLOGY",
    "TG_PAGE_COUNT", "TG_PAGE_NUMBER", "TG_REIFIES", "TG_SOURCE_CHAR_LENGTH", "TG_SOURCE_CHAR_OFFSET",
    "TG_SOURCE_TEXT",
]
