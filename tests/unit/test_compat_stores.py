"""Upstream 2.1.4's store and query service bases, EmbeddingsService and ChunkingService
(trustgraph.compat.v214.stores / .data_services), driven on the in-memory transport."""

from __future__ import annotations

import argparse
import asyncio
import base64
import importlib

import pytest
import trustgraph.base as base
from trustgraph.base.processors.flow_processor import ConsumerSpec, FlowProcessor, ParameterSpec, ProducerSpec
from trustgraph.base.testing import worker
from trustgraph.compat.v214 import data_services, stores
from trustgraph.exceptions import TooManyRequests
from trustgraph.schema import (
    ChunkEmbeddings,
    DocumentEmbeddings,
    DocumentEmbeddingsRequest,
    DocumentEmbeddingsResponse,
    EmbeddingsRequest,
    EmbeddingsResponse,
    EntityEmbeddings,
    Error,
    GraphEmbeddings,
    GraphEmbeddingsRequest,
    GraphEmbeddingsResponse,
    LibrarianRequest,
    LibrarianResponse,
    Metadata,
    Term,
    TextDocument,
    Triple,
    Triples,
    TriplesQueryRequest,
    TriplesQueryResponse,
)

UPSTREAM_MODULES = {
    "TriplesStoreService": "triples_store_service",
    "TriplesQueryService": "triples_query_service",
    "GraphEmbeddingsStoreService": "graph_embeddings_store_service",
    "GraphEmbeddingsQueryService": "graph_embeddings_query_service",
    "DocumentEmbeddingsStoreService": "document_embeddings_store_service",
    "DocumentEmbeddingsQueryService": "document_embeddings_query_service",
    "EmbeddingsService": "embeddings_service",
    "ChunkingService": "chunking_service",
}


def iri(v: str) -> Term:
    return Term(type="i", iri=v)


TRIPLE = Triple(s=iri("http://x/a"), p=iri("http://x/knows"), o=Term(type="l", value="b"))


def test_upstreams_names_at_trustgraph_base_and_at_their_module_paths():
    for name, module in UPSTREAM_MODULES.items():
        cls = getattr(base, name)
        assert getattr(importlib.import_module(f"trustgraph.base.{module}"), name) is cls
        assert issubclass(cls, FlowProcessor), name


def specs(cls: type) -> list[tuple]:
    proc = cls(id="p", pulsar_host="pulsar://localhost:6650", metrics=False)
    out = []
    for s in proc.specs:
        if isinstance(s, ConsumerSpec):
            out.append(("consumer", s.name, s.schema))
        elif isinstance(s, ProducerSpec):
            out.append(("producer", s.name, s.schema))
        elif isinstance(s, ParameterSpec):
            out.append(("parameter", s.name))
    return out


def test_each_base_declares_upstreams_flow_keys_and_schemas():
    assert specs(base.TriplesStoreService) == [("consumer", "input", Triples)]
    assert specs(base.GraphEmbeddingsStoreService) == [("consumer", "input", GraphEmbeddings)]
    assert specs(base.DocumentEmbeddingsStoreService) == [("consumer", "input", DocumentEmbeddings)]
    assert specs(base.TriplesQueryService) == [("consumer", "request", TriplesQueryRequest),
                                               ("producer", "response", TriplesQueryResponse)]
    assert specs(base.GraphEmbeddingsQueryService) == [("consumer", "request", GraphEmbeddingsRequest),
                                                       ("producer", "response", GraphEmbeddingsResponse)]
    assert specs(base.DocumentEmbeddingsQueryService) == [
        ("consumer", "request", DocumentEmbeddingsRequest), ("producer", "response", DocumentEmbeddingsResponse)]
    assert specs(base.EmbeddingsService) == [("consumer", "request", EmbeddingsRequest),
                                             ("producer", "response", EmbeddingsResponse), ("parameter", "model")]
    assert specs(base.ChunkingService) == [("parameter", "chunk-size"), ("parameter", "chunk-overlap")]


def test_flags_and_defaults_are_upstreams():
    def parse(cls, *argv):
        parser = argparse.ArgumentParser()
        cls.add_args(parser)
        return vars(parser.parse_args(list(argv)))

    assert parse(base.EmbeddingsService)["concurrency"] == 1
    assert parse(base.EmbeddingsService, "-c", "4")["concurrency"] == 4
    chunking = parse(base.ChunkingService)
    assert chunking["librarian_request_queue"] == "q1/tg/request/librarian"
    assert chunking["librarian_response_queue"] == "q1/tg/response/librarian"
    # The stores add nothing to FlowProcessor's flags, as upstream's.
    assert parse(base.TriplesQueryService) == parse(FlowProcessor)


def test_a_subclass_written_for_upstream_adds_its_flags_through_the_base():
    class Store(base.TriplesStoreService):
        @staticmethod
        def add_args(parser):
            base.TriplesStoreService.add_args(parser)
            parser.add_argument("-g", "--graph-host", default="bolt://localhost:7687")

    parser = argparse.ArgumentParser()
    Store.add_args(parser)
    args = vars(parser.parse_args(["-g", "bolt://db:7687"]))
    assert args["graph_host"] == "bolt://db:7687" and "pulsar_host" in args


def test_embeddings_concurrency_is_the_request_consumers():
    proc = base.EmbeddingsService(id="e", pulsar_host="pulsar://localhost:6650", metrics=False, concurrency=3)
    assert proc.concurrency == 3
    assert [s.concurrency for s in proc.specs if isinstance(s, ConsumerSpec)] == [3]


# -- stores -----------------------------------------------------------------------------------------

class Kept:
    """What a store was handed, for a test to wait on."""

    def __init__(self) -> None:
        self.records: list = []
        self.failures = 0
        self.arrived = asyncio.Event()

    def add(self, record) -> None:
        self.records.append(record)
        self.arrived.set()

    async def wait(self, n: int) -> list:
        async with asyncio.timeout(10):
            while len(self.records) < n:
                self.arrived.clear()
                await self.arrived.wait()
        return self.records


def store_class(base_cls: type, method: str, fail: tuple[type[Exception], ...] = ()):
    """A store as upstream's are written: only its one method, which fails once per exception given."""

    async def store(self, message):
        if len(fail) > self.kept.failures:
            self.kept.failures += 1
            raise fail[self.kept.failures - 1]("backend says no")
        self.kept.add(message)

    return type("Store", (base_cls,), {method: store, "kept": None, "rate_limit_retry": 0.05})


STORES = [
    (base.TriplesStoreService, "store_triples", Triples(metadata=Metadata(id="d", user="u", collection="c"),
                                                        triples=[TRIPLE])),
    (base.GraphEmbeddingsStoreService, "store_graph_embeddings",
     GraphEmbeddings(metadata=Metadata(id="d"), entities=[EntityEmbeddings(entity=iri("http://x/a"),
                                                                           vectors=[[0.5, 0.25]], chunk_id="c1")])),
    (base.DocumentEmbeddingsStoreService, "store_document_embeddings",
     DocumentEmbeddings(metadata=Metadata(id="d"), chunks=[ChunkEmbeddings(chunk_id="c1", vectors=[[1.0]])])),
]


@pytest.mark.parametrize("base_cls,method,record", STORES, ids=[s[1] for s in STORES])
async def test_a_store_is_handed_each_record_of_its_input_topic(base_cls, method, record):
    cls = store_class(base_cls, method)
    async with worker(cls) as w:
        w.processor.kept = Kept()
        flow = await w.open_flow("f")
        await w.send(flow.definition["input"], record, id=None)
        assert await w.processor.kept.wait(1) == [record]


async def test_a_failed_store_is_negatively_acknowledged_and_delivered_again():
    cls = store_class(base.TriplesStoreService, "store_triples", fail=(RuntimeError,))
    record = STORES[0][2]
    async with worker(cls) as w:
        w.processor.kept = Kept()
        # Persistent, as upstream's flow blueprints make a store's input: the broker keeps it.
        flow = await w.open_flow("f", {"input": "persistent://tg/flow/triples-store:f"})
        await w.send(flow.definition["input"], record, id=None)
        assert await w.processor.kept.wait(1) == [record]
        assert w.processor.kept.failures == 1


async def test_a_rate_limited_store_is_tried_again_in_place():
    cls = store_class(base.GraphEmbeddingsStoreService, "store_graph_embeddings",
                      fail=(TooManyRequests, TooManyRequests))
    record = STORES[1][2]
    async with worker(cls) as w:
        w.processor.kept = Kept()
        flow = await w.open_flow("f")   # non-persistent: a negative ack would lose it
        await w.send(flow.definition["input"], record, id=None)
        assert await w.processor.kept.wait(1) == [record]
        assert w.processor.kept.failures == 2


async def test_a_store_without_its_method_says_which_one():
    with pytest.raises(NotImplementedError, match="store_triples"):
        await base.TriplesStoreService(id="s", pulsar_host="pulsar://localhost:6650",
                                       metrics=False).store_triples(Triples())


# -- queries ----------------------------------------------------------------------------------------

class Query:
    """Upstream's query subclasses, each answering from a fixed result or failing."""

    class Triples(base.TriplesQueryService):
        async def query_triples(self, request):
            if request.user == "fail":
                raise ValueError("no such keyspace")
            return [Triple(s=request.s, p=iri("http://x/p"), o=Term(type="l", value=request.collection))]

    class Graph(base.GraphEmbeddingsQueryService):
        async def query_graph_embeddings(self, request):
            if request.user == "fail":
                raise ValueError("no such index")
            return [iri(f"http://x/e{i}") for i in range(request.limit)]

    class Docs(base.DocumentEmbeddingsQueryService):
        async def query_document_embeddings(self, request):
            if request.user == "fail":
                raise ValueError("no such collection")
            return [f"chunk-{len(v)}" for v in request.vectors]


async def ask(cls: type, request) -> list:
    async with worker(cls) as w:
        flow = await w.open_flow("f")
        return await w.call(flow.definition["request"], flow.definition["response"], request,
                            cls.response_schema)


async def test_triples_query_answers_with_the_triples():
    [r] = await ask(Query.Triples, TriplesQueryRequest(user="u", collection="c", s=iri("http://x/a"), limit=5))
    assert r == TriplesQueryResponse(error=None, triples=[Triple(s=iri("http://x/a"), p=iri("http://x/p"),
                                                                 o=Term(type="l", value="c"))])


async def test_graph_embeddings_query_answers_with_the_entities():
    [r] = await ask(Query.Graph, GraphEmbeddingsRequest(vectors=[[0.1]], limit=2, user="u", collection="c"))
    assert r == GraphEmbeddingsResponse(error=None, entities=[iri("http://x/e0"), iri("http://x/e1")])


async def test_document_embeddings_query_answers_with_the_chunk_ids():
    [r] = await ask(Query.Docs, DocumentEmbeddingsRequest(vectors=[[0.1, 0.2], [0.3]], limit=2, user="u"))
    assert r == DocumentEmbeddingsResponse(error=None, chunk_ids=["chunk-2", "chunk-1"])


@pytest.mark.parametrize("cls,request_,expected", [
    (Query.Triples, TriplesQueryRequest(user="fail"),
     TriplesQueryResponse(error=Error(type="triples-query-error", message="no such keyspace"), triples=None)),
    (Query.Graph, GraphEmbeddingsRequest(user="fail"),
     GraphEmbeddingsResponse(error=Error(type="graph-embeddings-query-error", message="no such index"),
                             entities=None)),
    (Query.Docs, DocumentEmbeddingsRequest(user="fail"),
     DocumentEmbeddingsResponse(error=Error(type="document-embeddings-query-error",
                                            message="no such collection"), chunk_ids=[])),
], ids=["triples", "graph-embeddings", "document-embeddings"])
async def test_a_failed_query_is_answered_with_upstreams_error_record(cls, request_, expected):
    assert await ask(cls, request_) == [expected]


class Sent:
    """A flow whose ``response`` producer keeps what is sent (for upstream's handler called directly)."""

    def __init__(self, parameters: dict | None = None) -> None:
        self.sent: list = []
        self.parameters = parameters or {}

    def __call__(self, name):
        if name == "response":
            return self
        return self.parameters.get(name)

    async def send(self, record, properties=None):
        self.sent.append((record, properties))


class UpstreamMsg:
    """pulsar-client's message accessors, as upstream's handlers are called with."""

    def __init__(self, value, properties):
        self._value, self._properties = value, properties

    def value(self):
        return self._value

    def properties(self):
        return self._properties


async def test_upstreams_handler_can_be_called_directly():
    proc = Query.Triples(id="q", pulsar_host="pulsar://localhost:6650", metrics=False)
    flow = Sent()
    await proc.on_message(UpstreamMsg(TriplesQueryRequest(user="u", collection="c"), {"id": "r1"}), None, flow)
    await proc.on_message(UpstreamMsg(TriplesQueryRequest(user="fail"), {"id": "r2"}), None, flow)
    [(ok, ok_props), (failed, failed_props)] = flow.sent
    assert ok_props == {"id": "r1"} and ok.error is None and len(ok.triples) == 1
    assert failed_props == {"id": "r2"} and failed.triples is None
    assert failed.error == Error(type="triples-query-error", message="no such keyspace")


# -- embeddings ---------------------------------------------------------------------------------------

class Embedder(base.EmbeddingsService):
    """Upstream's shape: ``on_embeddings(text, model=None)`` returning a list of vectors."""

    rate_limit_retry = 0.05

    def __init__(self, **params):
        super().__init__(**params)
        self.calls: list[tuple[str, str | None]] = []
        self.limited = 0

    async def on_embeddings(self, text, model=None):
        self.calls.append((text, model))
        if text == "fail":
            raise RuntimeError("model not loaded")
        if text.startswith("limited") and self.limited < int(text.split()[1]):
            self.limited += 1
            raise TooManyRequests("slow down")
        return [[float(len(text)), 0.5]]


async def embed(text: str, definition_extra: dict | None = None, **params) -> tuple[list, Embedder]:
    async with worker(Embedder, **params) as w:
        d = w.flow_definition("f") | (definition_extra or {})
        await w.open_flow("f", d)
        replies = await w.call(d["request"], d["response"], EmbeddingsRequest(text=text), EmbeddingsResponse)
        return replies, w.processor


async def test_embeddings_are_answered_with_the_flows_model():
    replies, proc = await embed("hello", {"model": "all-MiniLM"})
    assert replies == [EmbeddingsResponse(error=None, vectors=[[5.0, 0.5]])]
    assert proc.calls == [("hello", "all-MiniLM")]
    replies, proc = await embed("hi")
    assert proc.calls == [("hi", None)]   # no model in the flow: the service's default


async def test_a_failed_embedding_is_answered_with_upstreams_error_record():
    replies, _ = await embed("fail")
    assert replies == [EmbeddingsResponse(error=Error(type="embeddings-error", message="model not loaded"),
                                          vectors=None)]


async def test_a_rate_limited_embedding_is_tried_again_then_answered():
    replies, proc = await embed("limited 2")
    assert replies[0].error is None and proc.limited == 2 and len(proc.calls) == 3


async def test_a_rate_limit_that_outlasts_the_bound_is_answered_too_many_requests():
    class Impatient(Embedder):
        rate_limit_timeout = 0.2

    async with worker(Impatient) as w:
        d = (await w.open_flow("f")).definition
        [r] = await w.call(d["request"], d["response"], EmbeddingsRequest(text="limited 1000"), EmbeddingsResponse)
    assert r.error == Error(type="too-many-requests", message="slow down") and r.vectors is None


async def test_upstreams_embeddings_handler_called_directly():
    proc = Embedder(id="e", pulsar_host="pulsar://localhost:6650", metrics=False)
    flow = Sent({"model": "m"})
    await proc.on_request(UpstreamMsg(EmbeddingsRequest(text="abc"), {"id": "r1"}), None, flow)
    await proc.on_request(UpstreamMsg(EmbeddingsRequest(text="fail"), {"id": "r2"}), None, flow)
    assert flow.sent == [
        (EmbeddingsResponse(error=None, vectors=[[3.0, 0.5]]), {"id": "r1"}),
        (EmbeddingsResponse(error=Error(type="embeddings-error", message="model not loaded"), vectors=None),
         {"id": "r2"}),
    ]
    with pytest.raises(TooManyRequests):
        await proc.on_request(UpstreamMsg(EmbeddingsRequest(text="limited 1"), {"id": "r3"}), None, flow)


# -- chunking -----------------------------------------------------------------------------------------

LIB_REQ, LIB_RESP = "non-persistent://tg/test/librarian-request", "non-persistent://tg/test/librarian-response"


def chunker(**params):
    return worker(base.ChunkingService, librarian_request_queue=LIB_REQ, librarian_response_queue=LIB_RESP,
                  **params)


async def test_chunk_document_takes_the_flows_parameters_over_the_defaults():
    async with chunker() as w:
        both = await w.open_flow("both", {"chunk-size": "400", "chunk-overlap": "40"})
        neither = await w.open_flow("neither", {})
        size_only = await w.open_flow("size", {"chunk-size": "300"})
        proc = w.processor
        assert await proc.chunk_document(None, None, both, 250, 15) == ("400", "40")
        assert await proc.chunk_document(None, None, neither, 250, 15) == (250, 15)
        assert await proc.chunk_document(None, None, size_only, 250, 15) == ("300", 15)


async def test_inline_text_needs_no_librarian():
    async with chunker() as w:
        doc = TextDocument(metadata=Metadata(id="d", user="u"), text="café au lait".encode())
        assert await w.processor.get_document_text(doc) == "café au lait"
        assert not w.processor.librarian.started


async def test_a_document_named_only_is_fetched_from_the_librarian():
    def answer(req: LibrarianRequest):
        if req.document_id == "missing":
            return [LibrarianResponse(error=Error(type="not-found", message="no document missing"))]
        return [LibrarianResponse(content=base64.b64encode(f"text of {req.document_id}".encode()))]

    async with chunker() as w:
        librarian = await w.respond(LIB_REQ, LIB_RESP, LibrarianRequest, answer)
        doc = TextDocument(metadata=Metadata(id="d", user="alice"), document_id="doc-1")
        assert await w.processor.get_document_text(doc) == "text of doc-1"
        assert librarian.requests == [LibrarianRequest(operation="get-document-content", document_id="doc-1",
                                                       user="alice")]
        with pytest.raises(RuntimeError, match="^Librarian error: not-found: no document missing$"):
            await w.processor.fetch_document_content("missing", "alice")


async def test_a_librarian_that_does_not_answer_is_a_timeout_naming_the_document():
    async with chunker() as w:
        with pytest.raises(RuntimeError, match="^Timeout fetching document doc-9$"):
            await w.processor.fetch_document_content("doc-9", "u", timeout=0.3)


async def test_save_child_document_sends_upstreams_request():
    async with chunker() as w:
        librarian = await w.respond(LIB_REQ, LIB_RESP, LibrarianRequest, lambda req: [LibrarianResponse()])
        assert await w.processor.save_child_document("c1", "doc-1", "alice", "chunk text") == "c1"
        [req] = librarian.requests
        assert req.operation == "add-child-document"
        assert base64.b64decode(req.content) == b"chunk text"
        md = req.document_metadata
        assert (md.id, md.user, md.kind, md.title, md.parent_id, md.document_type) == (
            "c1", "alice", "text/plain", "c1", "doc-1", "chunk")


def test_the_modules_are_the_compatibility_packages():
    assert base.TriplesStoreService is stores.TriplesStoreService
    assert base.ChunkingService is data_services.ChunkingService
