"""The RDF vocabulary the knowledge-graph extractors write: one module for every IRI they share.

Extracted triples name their predicates with these IRIs, and the graph
readers and stores look for the same strings, so a typo in one of them would
silently split the graph; upstream TrustGraph's extractors import them from
``trustgraph.rdf``, so this module keeps upstream's names.  The namespaces
come first, so that :mod:`trustgraph.provenance` and :mod:`trustgraph.knowledge`
build on the same strings.
"""

from __future__ import annotations

#: RDF and RDF Schema.
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
#: SKOS (definitions) and schema.org (documents, what a text is about).
SKOS = "http://www.w3.org/2004/02/skos/core#"
SCHEMA = "https://schema.org/"

#: ``x rdf:type C``: x is an instance of class C.
RDF_TYPE = RDF + "type"
#: ``x rdfs:label "name"``: how x is shown to people (entity names, predicate names).
RDF_LABEL = RDFS + "label"
#: ``x skos:definition "text"``: what a definitions extractor found x to mean.
DEFINITION = SKOS + "definition"
#: ``x schema:subjectOf doc``: x was extracted from (is discussed in) doc.
SUBJECT_OF = SCHEMA + "subjectOf"

#: Where extracted entities get their IRIs (``TRUSTGRAPH_ENTITIES + quoted name``).
TRUSTGRAPH_ENTITIES = "http://trustgraph.ai/e/"

__all__ = [
    "DEFINITION", "RDF", "RDFS", "RDF_LABEL", "RDF_TYPE", "SCHEMA", "SKOS", "SUBJECT_OF",
    "TRUSTGRAPH_ENTITIES",
]
