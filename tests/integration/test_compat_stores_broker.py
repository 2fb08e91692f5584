"""Processors written against upstream 2.1.4's store, query, embeddings and chunking bases, run on
ours on the real broker and spoken to with upstream's wire messages (JSON written as upstream's
records encode, sent and read with a bare pulsar-client, as an upstream peer would)."""

from __future__ import annotations

import asyncio
import json
import uuid
from contextlib import asynccontextmanager

import pulsar
from support import wait_for_async
from trustgraph.base import (
    ChunkingService,
    ConsumerSpec,
    EmbeddingsService,
    ProducerSpec,
    TriplesQueryService,
    TriplesStoreService,
)
from trustgraph.schema import Chunk, Term, TextDocument, Triple


class Graph:
    """What the store below keeps: one dict per user and collection, as a real store's keyspaces."""

    def __init__(self) -> None:
        self.triples: dict[tuple[str, str], list[Triple]] = {}


class DictStore(TriplesStoreService):
    """A triple store as upstream's docs show one: ``store_triples(message)``, nothing else."""

    graph: Graph

    async def store_triples(self, message):
        key = (message.metadata.user, message.metadata.collection)
        self.graph.triples.setdefault(key, []).extend(message.triples)


class DictQuery(TriplesQueryService):
    """Answers ``query_triples(query)`` from the same dict: every triple matching the given terms."""

    graph: Graph

    async def query_triples(self, query):
        if query.collection == "missing":
            raise LookupError("no collection 'missing'")

        def fits(term: Term | None, given: Term | None) -> bool:
            return given is None or term == given

        found = [t for t in self.graph.triples.get((query.user, query.collection), [])
                 if fits(t.s, query.s) and fits(t.p, query.p) and fits(t.o, query.o)]
        return found[:query.limit] if query.limit else found


class Hashing(EmbeddingsService):
    """An embeddings service: one vector per text, of letter counts, and the model it was asked for."""

    models: list

    async def on_embeddings(self, text, model=None):
        self.models.append(model)
        return [[float(text.count(c)) for c in "aeiou"]]


class Sentences(ChunkingService):
    """A chunker as upstream's chunker-token is written: its own consumer and producer, upstream's handler."""

    def __init__(self, **params):
        super().__init__(**params)
        self.register_specification(ConsumerSpec(name="input", schema=TextDocument, handler=self.on_message))
        self.register_specification(ProducerSpec(name="output", schema=Chunk))

    async def on_message(self, msg, consumer, flow):
        doc = msg.value()
        text = await self.get_document_text(doc)
        size, _overlap = await self.chunk_document(msg, consumer, flow, 2, 0)
        sentences = [s.strip() + "." for s in text.split(".") if s.strip()]
        for i in range(0, len(sentences), int(size)):
            await flow("output").send(Chunk(metadata=doc.metadata, chunk=" ".join(sentences[i:i + int(size)]).encode()))


def term(iri: str) -> dict:
    return {"type": "i", "iri": iri, "id": "", "value": "", "datatype": "", "language": "", "triple": None}


def literal(value: str) -> dict:
    return {"type": "l", "iri": "", "id": "", "value": value, "datatype": "", "language": "", "triple": None}


def metadata(user: str, collection: str) -> dict:
    return {"id": "doc-1", "metadata": [], "user": user, "collection": collection}


@asynccontextmanager
async def running(cls, broker, definition: dict, **attrs):
    """``cls`` started on the broker with one flow ``f`` of ``definition``, as config would give it."""
    ident = f"{cls.__name__.lower()}-{uuid.uuid4().hex[:6]}"
    proc = cls(id=ident, pulsar_host=broker.url, metrics=False, follow_config=False, **attrs.pop("params", {}))
    for name, value in attrs.items():
        setattr(proc, name, value)
    try:
        await proc.start()
        await proc.apply_config({"active-flow": {ident: json.dumps({"f": definition})}}, 1)
        assert "f" in proc.flows, proc.flow_errors
        yield proc
    finally:
        await proc.stop()


class Peer:
    """An upstream peer: raw JSON out, raw JSON in, correlated by the ``id`` property."""

    def __init__(self, broker) -> None:
        self.client = pulsar.Client(broker.url)
        self.producers: dict[str, pulsar.Producer] = {}

    def listen(self, topic: str) -> pulsar.Consumer:
        return self.client.subscribe(topic, f"peer-{uuid.uuid4().hex[:8]}")

    def send(self, topic: str, body: dict, rid: str | None = None) -> None:
        if topic not in self.producers:
            self.producers[topic] = self.client.create_producer(topic)
        self.producers[topic].send(json.dumps(body).encode(), properties={"id": rid} if rid else {})

    async def receive(self, consumer: pulsar.Consumer) -> tuple[dict, dict]:
        msg = await asyncio.to_thread(consumer.receive, 15_000)
        consumer.acknowledge(msg)
        return json.loads(msg.data()), msg.properties()

    def close(self) -> None:
        self.client.close()


async def test_a_triple_store_and_its_query_service_speak_upstreams_messages(broker):
    tag = uuid.uuid4().hex[:6]
    graph = Graph()
    store_def = {"input": f"persistent://tg/flow/triples-store:{tag}"}
    query_def = {"request": f"non-persistent://tg/request/triples:{tag}",
                 "response": f"non-persistent://tg/response/triples:{tag}"}
    peer = Peer(broker)
    try:
        async with running(DictStore, broker, store_def, graph=graph), \
                running(DictQuery, broker, query_def, graph=graph):
            knows, alice = term("http://ex/knows"), term("http://ex/alice")
            peer.send(store_def["input"], {"metadata": metadata("u1", "c1"), "triples": [
                {"s": alice, "p": knows, "o": term("http://ex/bob"), "g": None},
                {"s": alice, "p": term("http://ex/name"), "o": literal("Alice"), "g": None},
                {"s": term("http://ex/bob"), "p": knows, "o": alice, "g": None},
            ]})
            await wait_for_async("the triples stored", lambda: len(graph.triples.get(("u1", "c1"), [])) == 3, 30)

            responses = peer.listen(query_def["response"])
            peer.send(query_def["request"], {"user": "u1", "collection": "c1", "s": alice, "p": knows,
                                             "o": None, "g": None, "limit": 10}, rid="q-1")
            body, props = await peer.receive(responses)
            assert props["id"] == "q-1"
            assert body == {"error": None, "triples": [{"s": alice, "p": knows, "o": term("http://ex/bob"),
                                                        "g": None}]}

            peer.send(query_def["request"], {"user": "u1", "collection": "missing", "s": None, "p": None,
                                             "o": None, "g": None, "limit": 0}, rid="q-2")
            body, props = await peer.receive(responses)
            assert props["id"] == "q-2"
            assert body == {"error": {"type": "triples-query-error", "message": "no collection 'missing'"},
                            "triples": None}
    finally:
        peer.close()


async def test_an_embeddings_service_answers_upstreams_request(broker):
    tag = uuid.uuid4().hex[:6]
    definition = {"request": f"non-persistent://tg/request/embeddings:{tag}",
                  "response": f"non-persistent://tg/response/embeddings:{tag}", "model": "vowels-v1"}
    peer = Peer(broker)
    models: list = []
    try:
        async with running(Hashing, broker, definition, models=models, params={"concurrency": 2}):
            responses = peer.listen(definition["response"])
            peer.send(definition["request"], {"text": "a queue of audio"}, rid="e-1")
            body, props = await peer.receive(responses)
            assert props["id"] == "e-1"
            assert body == {"error": None, "vectors": [[2.0, 2.0, 1.0, 2.0, 3.0]]}
            assert models == ["vowels-v1"]
    finally:
        peer.close()


async def test_a_chunker_chunks_an_inline_document_and_one_held_by_the_librarian(broker):
    tag = uuid.uuid4().hex[:6]
    definition = {"input": f"persistent://tg/flow/chunk-load:{tag}",
                  "output": f"persistent://tg/flow/chunks:{tag}", "chunk-size": "2"}
    librarian = {"librarian_request_queue": f"non-persistent://tg/request/librarian-{tag}",
                 "librarian_response_queue": f"non-persistent://tg/response/librarian-{tag}"}
    peer = Peer(broker)
    try:
        async with running(Sentences, broker, definition, params=librarian):
            chunks = peer.listen(definition["output"])
            peer.send(definition["input"], {"metadata": metadata("u1", "c1"),
                                            "text": "One. Two. Three. Four. Five.", "document_id": ""})
            got = [await peer.receive(chunks) for _ in range(3)]
            assert [b["chunk"] for b, _ in got] == ["One. Two.", "Three. Four.", "Five."]
            assert all(b["metadata"] == metadata("u1", "c1") for b, _ in got)

            # A document too big to travel inline: the chunker asks the librarian for it.
            requests = peer.listen(librarian["librarian_request_queue"])
            peer.send(definition["input"], {"metadata": metadata("u2", "c2"), "text": "",
                                            "document_id": "big-doc"})
            asked, props = await peer.receive(requests)
            assert (asked["operation"], asked["document_id"], asked["user"]) == (
                "get-document-content", "big-doc", "u2")
            content = "U2l4LiBTZXZlbi4="   # base64 of "Six. Seven."
            peer.send(librarian["librarian_response_queue"], {"error": None, "content": content}, rid=props["id"])
            body, _ = await peer.receive(chunks)
            assert body["chunk"] == "Six. Seven." and body["metadata"]["user"] == "u2"
    finally:
        peer.close()
