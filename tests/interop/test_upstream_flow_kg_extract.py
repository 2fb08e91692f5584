"""Upstream 2.1.4's own kg-extract-definitions and kg-extract-relationships on our trustgraph-base.

``.interop/flow-on-ours`` holds our trustgraph-base with upstream's trustgraph-flow 2.1.4
(``interop/venvs.py``): each extractor is a ``FlowProcessor`` with a ``ConsumerSpec`` (Chunk), a
``PromptClientSpec``, ``ProducerSpec``s (Triples, and EntityContexts for definitions) and two
``ParameterSpec``s (``llm-model``, ``ontology``), which there are our compatibility layer over our
messaging; the RDF names and provenance builders it imports (``trustgraph.rdf``,
``trustgraph.provenance``) are ours too.  Both run as processes beside our config-svc, our
prompt-template (two templates of the test's own with upstream's names and JSON answers) and our
``text-completion-scripted``, and read one chunk topic, as upstream's flow blueprint has them.

The chunks sent: one the scripted model answers with entities and relationships (some with an
empty or null field, which upstream drops); then one answered ``[]``, one answered with a JSON
object instead of an array, and one no rule answers (the model's error, which prompt-template
returns as its error); then the first chunk's text again, as a marker.  Upstream's extractors
send nothing for the three middle ones and go on, so the message after the first chunk's
batches is the marker's.  Statement and activity IRIs (fresh UUIDs) and the time are read by
their form; everything else is compared whole, built here from upstream 2.1.4's source (the IRIs
are written out, not imported from our base, so that ours cannot drift from them unseen).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import uuid
from typing import Any

import pulsar
import pytest
from flow_stack import pair, uid, until_served
from rows import interop_row
from support import Proc, wait_for_async
from trustgraph.schema import (
    IRI,
    LITERAL,
    TRIPLE,
    Chunk,
    EntityContexts,
    Metadata,
    PromptRequest,
    PromptResponse,
    Term,
    Triples,
    decode,
    encode,
)

pytestmark = [pytest.mark.interop, pytest.mark.long, pytest.mark.timeout(900)]

DEFINITIONS_PEER = "upstream kg-extract-definitions 2.1.4 on our base"
RELATIONSHIPS_PEER = "upstream kg-extract-relationships 2.1.4 on our base"
THROUGH = "Chunk (ours) → prompt-template (ours, scripted model) → "

# The IRIs upstream 2.1.4 writes (trustgraph-base's rdf.py and provenance/namespaces.py at v2.1.4).
ENTITIES = "http://trustgraph.ai/e/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
DEFINITION = "http://www.w3.org/2004/02/skos/core#definition"
SUBJECT_OF = "https://schema.org/subjectOf"
PROV = "http://www.w3.org/ns/prov#"
TG = "https://trustgraph.ai/ns/"
#: A statement or activity IRI: upstream mints each from a fresh UUID.
MINTED = re.compile(r"^https://trustgraph\.ai/(stmt|activity)/"
                    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
#: ``datetime.utcnow().isoformat() + "Z"``.
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")

ONTOLOGY = "https://example.org/ontology/computing-history"
MODEL = "scripted-model"
TRIPLES_BATCH, ENTITY_BATCH = 10, 3

DOCS = "https://trustgraph.ai/doc/"
TEXT = "Ada Lovelace wrote the first program for Babbage's Analytical Engine and published it in 1843."
#: The scripted model's answers to the two templates for TEXT; the last entries have an empty or null
#: field, which upstream's extractors skip.
DEFINITIONS = [
    {"entity": "Ada Lovelace", "definition": "An English mathematician, the first programmer."},
    {"entity": "Analytical Engine", "definition": "A mechanical computer Charles Babbage designed."},
    {"entity": "", "definition": "An entity without a name."},
    {"entity": "Note G", "definition": ""},
    {"entity": None, "definition": "A null entity."},
    {"entity": "Charles Babbage", "definition": None},
]
RELATIONSHIPS = [
    {"subject": "Ada Lovelace", "predicate": "wrote a program for", "object": "Babbage's Analytical Engine",
     "object-entity": True},
    {"subject": "Ada Lovelace", "predicate": "published in", "object": "1843", "object-entity": False},
    {"subject": "Ada Lovelace", "predicate": "", "object": "nothing", "object-entity": False},
    {"subject": "Note G", "predicate": "describes", "object": None, "object-entity": True},
]
#: The chunks after the first: answered ``[]``, answered with an object, answered by no rule.
QUIET = ["Nothing to see here.", "Just noise.", "Unreadable."]

TEMPLATES = {
    "extract-definitions": "Name each entity this text defines, with its definition, as a JSON array of "
                           "objects with the fields entity and definition.\n\nText: {{text}}",
    "extract-relationships": "List the relationships between the entities of this text as a JSON array of "
                             "objects with the fields subject, predicate, object and object-entity (true "
                             "when the object is an entity).\n\nText: {{text}}",
}
SCRIPT = {"rules": [
    {"match": "entity this text defines.*Ada Lovelace", "reply": json.dumps(DEFINITIONS)},
    {"match": "relationships between the entities.*Ada Lovelace", "reply": json.dumps(RELATIONSHIPS)},
    {"match": "Nothing to see here", "reply": "[]"},
    {"match": "Just noise", "reply": json.dumps({"entity": "noise", "definition": "not a list"})},
]}


# -- the expected graph, as upstream's extractors build it ------------------------------------------


def iri(value: str) -> tuple:
    return ("i", value)


def lit(value: str) -> tuple:
    return ("l", value)


#: What upstream's ``to_uri`` makes of each name: spaces to hyphens, lower case, percent-quoted.
URI_PARTS = {"Ada Lovelace": "ada-lovelace", "Analytical Engine": "analytical-engine",
             "wrote a program for": "wrote-a-program-for", "published in": "published-in",
             "Babbage's Analytical Engine": "babbage%27s-analytical-engine"}


def entity(name: str) -> tuple:
    """A name's IRI as upstream's ``to_uri`` makes it: under the entities prefix."""
    return iri(ENTITIES + URI_PARTS[name])


def provenance(fact: tuple, chunk: str, component: str, n: int) -> list[tuple]:
    """``triple_provenance_triples`` for the n-th fact: a statement reifies it and derives from the chunk."""
    stmt, act = iri(f"<stmt {n}>"), iri(f"<activity {n}>")
    agent = iri(f"https://trustgraph.ai/agent/{component}")
    return [(stmt, iri(TG + "reifies"), ("t", fact)),
            (stmt, iri(PROV + "wasDerivedFrom"), iri(chunk)),
            (stmt, iri(PROV + "wasGeneratedBy"), act),
            (act, iri(RDF_TYPE), iri(PROV + "Activity")),
            (act, iri(RDFS_LABEL), lit(f"{component} extraction")),
            (act, iri(PROV + "used"), iri(chunk)),
            (act, iri(PROV + "wasAssociatedWith"), agent),
            (act, iri(PROV + "startedAtTime"), lit("<time>")),
            (act, iri(TG + "componentVersion"), lit("2.1.4")),
            (agent, iri(RDF_TYPE), iri(PROV + "Agent")),
            (agent, iri(RDFS_LABEL), lit(component)),
            (act, iri(TG + "llmModel"), lit(MODEL)),
            (act, iri(TG + "ontology"), iri(ONTOLOGY))]


def definition_triples(chunk: str) -> list[tuple]:
    out: list[tuple] = []
    for n, d in enumerate(DEFINITIONS[:2], 1):
        s = entity(d["entity"])
        fact = (s, iri(DEFINITION), lit(d["definition"]))
        out += [(s, iri(RDFS_LABEL), lit(d["entity"])), fact,
                *provenance(fact, chunk, "kg-extract-definitions", n), (s, iri(SUBJECT_OF), iri(chunk))]
    return out


def entity_contexts(document: str) -> list[tuple]:
    return [c for d in DEFINITIONS[:2] for c in ((entity(d["entity"]), d["entity"], document),
                                                 (entity(d["entity"]), d["definition"], document))]


def relationship_triples(chunk: str) -> list[tuple]:
    out: list[tuple] = []
    for n, r in enumerate(RELATIONSHIPS[:2], 1):
        s, p = entity(r["subject"]), entity(r["predicate"])
        o = entity(r["object"]) if r["object-entity"] else lit(r["object"])
        fact = (s, p, o)
        out += [fact, *provenance(fact, chunk, "kg-extract-relationships", n),
                (s, iri(RDFS_LABEL), lit(r["subject"])), (p, iri(RDFS_LABEL), lit(r["predicate"]))]
        if r["object-entity"]:
            out.append((o, iri(RDFS_LABEL), lit(r["object"])))
        out.append((s, iri(SUBJECT_OF), iri(chunk)))
        if r["object-entity"]:
            out.append((o, iri(SUBJECT_OF), iri(chunk)))
    return out


# -- what came out, in the same form ----------------------------------------------------------------


class Reader:
    """Terms as tuples, with minted IRIs named by the order they appear in and the time by its form."""

    def __init__(self) -> None:
        self.minted: dict[str, str] = {}
        self.problems: list[str] = []

    def term(self, t: Term) -> tuple:
        if t.type == IRI:
            m = MINTED.match(t.iri)
            if not m:
                return iri(t.iri)
            if t.iri not in self.minted:
                kind = m[1]
                n = sum(v.startswith(f"<{kind} ") for v in self.minted.values()) + 1
                self.minted[t.iri] = f"<{kind} {n}>"
            return iri(self.minted[t.iri])
        if t.type == LITERAL:
            return lit(t.value)
        if t.type == TRIPLE and t.triple is not None:
            return ("t", self.triple(t.triple))
        return ("?", repr(t))

    def triple(self, t: Any) -> tuple:
        s, p, o = self.term(t.s), self.term(t.p), self.term(t.o)
        if p == iri(PROV + "startedAtTime"):
            if not TIME.match(o[1]):
                self.problems.append(f"startedAtTime {o[1]!r}")
            o = lit("<time>")
        return (s, p, o)


async def receive(consumer: pulsar.Consumer, schema: type) -> Any:
    """The next message on a topic, decoded as our codec reads it (a 60 s hang bound)."""
    msg = await asyncio.to_thread(consumer.receive, 60_000)
    consumer.acknowledge(msg)
    return decode(schema, msg.data())


def sent_metadata(batch: Any, chunk: str) -> bool:
    m = batch.metadata
    return (m.id, m.metadata, m.user, m.collection) == (chunk, [], "alice", "papers")


async def test_upstreams_kg_extractors_build_the_graph_on_our_base(flow_on_ours, stack, procs, tmp_path, row):
    tag = uid()
    script, record = tmp_path / "script.json", tmp_path / "llm.jsonl"
    script.write_text(json.dumps({**SCRIPT, "record": str(record)}))
    llm_id, prompt_id = f"tc-{tag}", f"prompt-{tag}"
    defs_id, rels_id = f"kg-definitions-{tag}", f"kg-relationships-{tag}"
    tc, pr = pair(f"text-completion-{tag}"), pair(f"prompt-{tag}")
    chunks = f"persistent://tg/flow/chunk-load:{tag}"
    defs_triples, rels_triples = (f"persistent://tg/flow/triples-store:{tag}-{x}" for x in ("d", "r"))
    contexts = f"persistent://tg/flow/entity-contexts:{tag}"
    extractor = {"input": chunks, "prompt-request": pr[0], "prompt-response": pr[1], "llm-model": MODEL,
                 "ontology": ONTOLOGY}

    stack.start("text-completion-scripted", llm_id, "--script", str(script))
    stack.start("prompt-template", prompt_id)
    stack.ready()
    await stack.put({
        ("active-flow", llm_id): json.dumps({"f": {"request": tc[0], "response": tc[1]}}),
        ("active-flow", prompt_id): json.dumps({"f": {
            "request": pr[0], "response": pr[1],
            "text-completion-request": tc[0], "text-completion-response": tc[1]}}),
        ("active-flow", defs_id): json.dumps({"f": {**extractor, "triples": defs_triples,
                                                    "entity-contexts": contexts}}),
        ("active-flow", rels_id): json.dumps({"f": {**extractor, "triples": rels_triples}}),
        ("prompt", "system"): json.dumps("You extract knowledge as JSON."),
        ("prompt", "template-index"): json.dumps(list(TEMPLATES)),
        **{("prompt", f"template.{name}"): json.dumps({"prompt": text, "response-type": "json"})
           for name, text in TEMPLATES.items()}})
    # Our prompt-template answers the template as the extractor will ask it, before the extractors start.
    prompt = stack.client(pr, PromptRequest, PromptResponse)
    probe = PromptRequest(id="extract-definitions", terms={"text": json.dumps(TEXT)})
    r = await until_served(lambda: prompt.request(probe, timeout=10), "our prompt-template", total=90,
                           ok=lambda r: r.error is None)
    assert json.loads(r.object) == DEFINITIONS, r

    raw = pulsar.Client(stack.broker.url)
    try:
        watch = f"watch-{uuid.uuid4().hex[:6]}"
        out = {t: raw.subscribe(t, watch) for t in (defs_triples, contexts, rels_triples)}
        started = []
        for ident, command, extra in (
                (defs_id, "kg-extract-definitions", ["--entity-batch-size", str(ENTITY_BATCH)]),
                (rels_id, "kg-extract-relationships", [])):
            # Ready once its flow is open: it runs on our AsyncProcessor, which writes the ready file.
            ready = tmp_path / f"{command}.ready"
            proc = Proc([str(flow_on_ours.bin(command)), *stack.follow(ident), "--triples-batch-size",
                         str(TRIPLES_BATCH), *extra, "--no-metrics", "--pulsar-host", stack.broker.url],
                        tmp_path / f"{command}.log",
                        env={"TG_READY_FILE": str(ready), "TG_READY_AFTER_CONFIG": "1"}).start()
            procs.append(proc)
            started.append((proc, ready))
        for proc, ready in started:
            await wait_for_async(f"upstream's {proc.args[0]} ready", ready.exists, 120, detail=proc.output,
                                 gone=proc.exited)

        producer = raw.create_producer(chunks)
        documents = [f"lovelace-notes/c{n}" for n in range(1, 6)]
        texts = [TEXT, *QUIET, TEXT]
        for document, text in zip(documents, texts, strict=True):
            metadata = Metadata(id=DOCS + document, metadata=[], user="alice", collection="papers")
            producer.send(encode(Chunk(metadata=metadata, chunk=text.encode(), document_id=document)))
        first, marker = DOCS + documents[0], DOCS + documents[-1]
        after: dict[str, str] = {}  # per output topic: the chunk of the message after the first chunk's

        async def batches(topic: str, schema: type, expected: int, size: int) -> list[Any]:
            """The first chunk's batches on ``topic`` (as many as ``expected`` items make), then notes the
            chunk of the next message."""
            got = [await receive(out[topic], schema) for _ in range(math.ceil(expected / size))]
            after[topic] = (await receive(out[topic], schema)).metadata.id
            return got

        def sizes(expected: int, size: int) -> list[int]:
            return [min(size, expected - i) for i in range(0, expected, size)]

        async def triples_sent(check, topic, want: list) -> tuple[list, list]:
            """The Triples batches on ``topic``, checked whole against ``want``: sizes, metadata, triples."""
            got = await batches(topic, Triples, len(want), TRIPLES_BATCH)
            reader = Reader()
            seen = [reader.triple(t) for b in got for t in b.triples]
            check.check([len(b.triples) for b in got] == sizes(len(want), TRIPLES_BATCH),
                        lambda: f"batch sizes {[len(b.triples) for b in got]}")
            check.check(all(sent_metadata(b, first) for b in got), lambda: f"metadata {got[0].metadata}")
            check.check(not reader.problems, lambda: f"{reader.problems}")
            check.check(seen == want, lambda: f"triples {seen}")
            return seen, got

        with interop_row(row, DEFINITIONS_PEER, THROUGH + "Triples and EntityContexts") as check:
            seen, got = await triples_sent(check, defs_triples, definition_triples(first))
            want_contexts = entity_contexts(documents[0])
            got_c = await batches(contexts, EntityContexts, len(want_contexts), ENTITY_BATCH)
            seen_c = [(Reader().term(e.entity), e.context, e.chunk_id) for b in got_c for e in b.entities]
            check.check([len(b.entities) for b in got_c] == sizes(len(want_contexts), ENTITY_BATCH),
                        lambda: f"batch sizes {[len(b.entities) for b in got_c]}")
            check.check(all(sent_metadata(b, first) for b in got_c), lambda: f"metadata {got_c[0].metadata}")
            check.check(seen_c == want_contexts, lambda: f"entity contexts {seen_c}")
            check.saw(f"{len(seen)} triples in {len(got)} batches, "
                      f"{len(seen_c)} entity contexts in {len(got_c)}")

        with interop_row(row, RELATIONSHIPS_PEER, THROUGH + "Triples") as check:
            seen, got = await triples_sent(check, rels_triples, relationship_triples(first))
            check.saw(f"{len(seen)} triples in {len(got)} batches")

        prompts = [json.loads(line)["prompt"] for line in record.read_text().splitlines()]
        for peer, template, outputs in ((DEFINITIONS_PEER, "extract-definitions", (defs_triples, contexts)),
                                        (RELATIONSHIPS_PEER, "extract-relationships", (rels_triples,))):
            with interop_row(row, peer, "an empty list, a JSON object, a prompt error → nothing sent; "
                                        "the next chunk is served") as check:
                # Each extractor asked about every chunk, in order (the records of the scripted model).
                lead = TEMPLATES[template].split("{{")[0]
                asked = [p.removeprefix(lead) for p in prompts if p.startswith(lead)]
                # Before them, our own check of prompt-template asked about TEXT (once, or more if retried).
                ours = asked[:-len(texts)] if template == "extract-definitions" else []
                check.check(asked[len(ours):] == texts and ours == [TEXT] * len(ours),
                            lambda asked=asked: f"texts asked about: {asked}")
                # The message after the first chunk's batches is the marker's: nothing came in between.
                nexts = [after[t] for t in outputs]
                check.check(nexts == [marker] * len(outputs),
                            lambda nexts=nexts: f"after the first chunk's: {nexts}")
                check.saw(f"asked about {len(texts)} chunks; after the first chunk's output, the marker's")
    finally:
        raw.close()
