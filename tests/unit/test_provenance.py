"""trustgraph.rdf and trustgraph.provenance: upstream 2.1.4's vocabulary and the PROV-O triples it builds."""

from __future__ import annotations

import re
from datetime import datetime

import trustgraph.provenance as prov
from trustgraph import rdf
from trustgraph.knowledge import IS_A, LABEL
from trustgraph.provenance import namespaces, vocabulary
from trustgraph.schema import IRI, LITERAL, TRIPLE, Term, Triple, decode, encode

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def spo(triples: list[Triple]) -> set[tuple[str, str, str]]:
    """Each triple as (subject, predicate, object) strings; a literal object as ``"value"``."""
    out = set()
    for t in triples:
        o = t.o.iri if t.o.type == IRI else f'"{t.o.value}"' if t.o.type == LITERAL else "<<triple>>"
        out.add((t.s.iri, t.p.iri, o))
    return out


def test_rdf_constants_are_upstreams_strings_and_the_knowledge_package_shares_them():
    assert rdf.RDF_TYPE == "http://www.w3.org/1999/02/22-rdf-syntax-ns#type" == IS_A
    assert rdf.RDF_LABEL == "http://www.w3.org/2000/01/rdf-schema#label" == LABEL
    assert rdf.DEFINITION == "http://www.w3.org/2004/02/skos/core#definition"
    assert rdf.SUBJECT_OF == "https://schema.org/subjectOf"
    assert rdf.TRUSTGRAPH_ENTITIES == "http://trustgraph.ai/e/"
    assert prov.RDF_TYPE == rdf.RDF_TYPE and prov.RDFS_LABEL == rdf.RDF_LABEL
    assert namespaces.SKOS_DEFINITION == rdf.DEFINITION and namespaces.SCHEMA_SUBJECT_OF == rdf.SUBJECT_OF


def test_namespaces_are_upstreams():
    assert prov.PROV_WAS_DERIVED_FROM == "http://www.w3.org/ns/prov#wasDerivedFrom"
    assert prov.DC_TITLE == "http://purl.org/dc/elements/1.1/title"
    assert prov.TG_CHUNK_INDEX == "https://trustgraph.ai/ns/chunkIndex"
    assert prov.TG_SOURCE_CHAR_LENGTH == "https://trustgraph.ai/ns/sourceCharLength"


def test_uris_of_documents_pages_and_chunks_nest_under_the_document():
    doc = "https://trustgraph.ai/doc/abc123"
    assert prov.document_uri(doc) == doc
    assert prov.page_uri(doc, 3) == f"{doc}/p3"
    assert prov.chunk_uri_from_page(doc, 3, 7) == f"{doc}/p3/c7"
    assert prov.chunk_uri_from_doc(doc, 7) == f"{doc}/c7"


def test_event_uris_are_fresh_unless_named_and_a_name_cannot_add_path_segments():
    a, b = prov.activity_uri(), prov.activity_uri()
    assert a != b and re.fullmatch(f"https://trustgraph.ai/activity/{UUID}", a)
    assert re.fullmatch(f"https://trustgraph.ai/stmt/{UUID}", prov.statement_uri())
    assert prov.activity_uri("run 1/2") == "https://trustgraph.ai/activity/run%201%2F2"
    assert prov.statement_uri("s?x#y") == "https://trustgraph.ai/stmt/s%3Fx%23y"
    assert prov.agent_uri("pdf-decoder") == "https://trustgraph.ai/agent/pdf-decoder"
    assert prov.agent_uri("a b/c") == "https://trustgraph.ai/agent/a%20b%2Fc"


def test_document_triples_say_what_is_known_and_leave_out_the_rest():
    doc = "urn:doc"
    assert spo(prov.document_triples(doc)) == {(doc, rdf.RDF_TYPE, prov.PROV_ENTITY)}
    got = prov.document_triples(doc, title="Report", source="https://example.com/r.pdf", date="2026-01-02",
                                creator="Ann", page_count=0, mime_type="")
    assert spo(got) == {
        (doc, rdf.RDF_TYPE, prov.PROV_ENTITY), (doc, prov.DC_TITLE, '"Report"'), (doc, rdf.RDF_LABEL, '"Report"'),
        (doc, prov.DC_SOURCE, "https://example.com/r.pdf"), (doc, prov.DC_DATE, '"2026-01-02"'),
        (doc, prov.DC_CREATOR, '"Ann"'), (doc, prov.TG_PAGE_COUNT, '"0"'),
    }


def test_a_derived_chunk_names_its_parent_its_activity_and_the_component():
    doc, chunk = "urn:doc", "urn:doc/c4"
    got = prov.derived_entity_triples(chunk, doc, "chunker", "2.1.4", label="Chunk 4", chunk_index=4,
                                      char_offset=100, char_length=0, chunk_size=250, chunk_overlap=15,
                                      timestamp="2026-01-02T03:04:05Z")
    act = got[2].o.iri
    agent = "https://trustgraph.ai/agent/chunker"
    assert act.startswith("https://trustgraph.ai/activity/")
    assert spo(got) == {
        (chunk, rdf.RDF_TYPE, prov.PROV_ENTITY), (chunk, prov.PROV_WAS_DERIVED_FROM, doc),
        (chunk, prov.PROV_WAS_GENERATED_BY, act),
        (act, rdf.RDF_TYPE, prov.PROV_ACTIVITY), (act, rdf.RDF_LABEL, '"chunker extraction"'),
        (act, prov.PROV_USED, doc), (act, prov.PROV_WAS_ASSOCIATED_WITH, agent),
        (act, prov.PROV_STARTED_AT_TIME, '"2026-01-02T03:04:05Z"'), (act, prov.TG_COMPONENT_VERSION, '"2.1.4"'),
        (agent, rdf.RDF_TYPE, prov.PROV_AGENT), (agent, rdf.RDF_LABEL, '"chunker"'),
        (chunk, rdf.RDF_LABEL, '"Chunk 4"'), (chunk, prov.TG_CHUNK_INDEX, '"4"'),
        (chunk, prov.TG_CHAR_OFFSET, '"100"'), (chunk, prov.TG_CHAR_LENGTH, '"0"'),
        (act, prov.TG_CHUNK_SIZE, '"250"'), (act, prov.TG_CHUNK_OVERLAP, '"15"'),
    }
    # Each call is an activity of its own.
    assert prov.derived_entity_triples(chunk, doc, "chunker", "1")[2].o.iri != act


def test_a_page_gets_its_number_and_the_time_defaults_to_now_in_utc():
    got = prov.derived_entity_triples("urn:doc/p2", "urn:doc", "pdf-decoder", "1", page_number=2)
    assert ("urn:doc/p2", prov.TG_PAGE_NUMBER, '"2"') in spo(got)
    started = next(t.o.value for t in got if t.p.iri == prov.PROV_STARTED_AT_TIME)
    assert started.endswith("Z") and abs((datetime.fromisoformat(started[:-1] + "+00:00")
                                          - datetime.now().astimezone()).total_seconds()) < 300
    assert not any(t.p.iri in (prov.TG_CHUNK_INDEX, prov.TG_CHUNK_SIZE, rdf.RDF_LABEL) and t.s.iri == "urn:doc/p2"
                   for t in got)


def test_an_extracted_fact_is_quoted_not_asserted_and_traced_to_its_chunk():
    fact = Triple(s=Term(type=IRI, iri="http://trustgraph.ai/e/cat"), p=Term(type=IRI, iri=rdf.RDF_LABEL),
                  o=Term(type=LITERAL, value="cat"))
    stmt, chunk = prov.statement_uri("s1"), "urn:doc/c1"
    got = prov.triple_provenance_triples(stmt, fact, chunk, "kg-extract-definitions", "2.1.4",
                                         llm_model="gpt-x", ontology_uri="urn:onto")
    assert got[0].s.iri == stmt and got[0].p.iri == prov.TG_REIFIES
    assert got[0].o.type == TRIPLE and got[0].o.triple == fact
    act = got[2].o.iri
    facts = spo(got)
    assert (stmt, prov.PROV_WAS_DERIVED_FROM, chunk) in facts and (act, prov.PROV_USED, chunk) in facts
    assert (act, prov.TG_LLM_MODEL, '"gpt-x"') in facts and (act, prov.TG_ONTOLOGY, "urn:onto") in facts
    # Ready for the wire: our codec round-trips the quoted triple.
    assert [decode(Triple, encode(t)) for t in got] == got
    plain = prov.triple_provenance_triples(stmt, fact, chunk, "x", "1")
    assert not {prov.TG_LLM_MODEL, prov.TG_ONTOLOGY} & {t.p.iri for t in plain}


def test_the_vocabulary_labels_every_term_the_builders_write_and_hands_out_copies():
    labels = prov.get_vocabulary_triples()
    assert len(labels) == 34 and all(t.p.iri == rdf.RDF_LABEL and t.o.type == LITERAL for t in labels)
    labelled = {t.s.iri for t in labels}
    terms = {v for k, v in vars(namespaces).items() if k.startswith(("PROV_", "DC_", "TG_", "SCHEMA_", "SKOS_"))}
    assert terms == labelled
    assert (prov.PROV_WAS_DERIVED_FROM, rdf.RDF_LABEL, '"was derived from"') in spo(labels)
    assert labels[:3] == prov.PROV_CLASS_LABELS
    assert prov.get_vocabulary_triples()[-16:] == prov.TG_PREDICATE_LABELS == vocabulary.TG_PREDICATE_LABELS
    labels[0].o.value = "changed"
    assert prov.get_vocabulary_triples()[0].o.value == "Entity" == prov.PROV_CLASS_LABELS[0].o.value
