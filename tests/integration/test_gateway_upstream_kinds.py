"""The gateway routes every kind upstream 2.1.4's gateway routes, for processors this fork does not ship.

Real gateway, config-svc and broker; the upstream processors (librarian, knowledge, triples
store, document-rag...) are played by responders and consumers in the test, which check the
records the gateway puts on the bus and answer as those processors do.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import msgpack
import pytest
from gateway_stack import eventually, post, responder, start_gateway, unique
from trustgraph.api import Api, Uri
from trustgraph.base.launching.broker import EmbeddedBroker
from trustgraph.schema import (
    IRI,
    LITERAL,
    DocumentRagQuery,
    DocumentRagResponse,
    EntityEmbeddings,
    GraphEmbeddings,
    KnowledgeRequest,
    KnowledgeResponse,
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

RR_KINDS = ("document-rag", "triples")
ONE_WAY = ("text-load", "triples-store", "graph-embeddings-store")


def rr(tag: str, kind: str, flow: str) -> dict[str, str]:
    return {"request": f"non-persistent://tg/request/{kind}:{flow}-{tag}",
            "response": f"non-persistent://tg/response/{kind}:{flow}-{tag}"}


def one_way(tag: str, kind: str, flow: str) -> str:
    return f"persistent://tg/flow/{kind}:{flow}-{tag}"


async def start_upstream_flow(http: aiohttp.ClientSession, url: str, tag: str, flow: str) -> None:
    interfaces: dict[str, Any] = {k: rr(tag, k, "{id}") for k in RR_KINDS}
    interfaces.update({k: one_way(tag, k, "{id}") for k in ONE_WAY})
    blueprint = {"description": "upstream kinds", "interfaces": interfaces, "blueprint": {}, "flow": {}}
    api = f"{url}/api/v1/flow"
    await post(http, api, {"operation": "put-blueprint", "blueprint-name": f"up-{tag}",
                           "blueprint-definition": json.dumps(blueprint)})
    await post(http, api, {"operation": "start-flow", "blueprint-name": f"up-{tag}", "flow-id": flow,
                           "description": "d"})

    async def routed() -> bool:
        return await post(http, f"{url}/api/v1/flow/{flow}/service/prompt", {}) == {
            "error": "This kind not supported by flow"}

    await eventually(routed)


@pytest.fixture(scope="module")
def upstream_gateway(stack, broker: EmbeddedBroker, tmp_path_factory: pytest.TempPathFactory):
    """A second gateway with librarian and knowledge topics of this module's own."""
    tag = stack.tag
    extra = []
    for name in ("librarian", "knowledge"):
        for side in ("request", "response"):
            extra += [f"--{name}-{side}-queue", f"non-persistent://tg/{side}/{name}-{tag}"]
    proc, url = start_gateway(tmp_path_factory.mktemp("up-gw"), broker, stack.queues, *extra)
    yield url
    proc.stop()


async def test_flow_kinds_of_upstream_processors(stack, upstream_gateway, http, pubsub) -> None:
    url, flow = upstream_gateway, unique("f")
    await start_upstream_flow(http, url, stack.tag, flow)

    async def triples(req: TriplesQueryRequest) -> AsyncIterator[TriplesQueryResponse]:
        yield TriplesQueryResponse(triples=[Triple(s=req.s, p=Term(type=IRI, iri="https://p"),
                                                   o=Term(type=LITERAL, value="v", language="en"))])

    async def rag(req: DocumentRagQuery) -> AsyncIterator[DocumentRagResponse]:
        yield DocumentRagResponse(response="part ", end_of_stream=False)
        yield DocumentRagResponse(response=f"answer to {req.query}", end_of_stream=True)

    pair = rr(stack.tag, "triples", flow)
    seen = await responder(pubsub, (pair["request"], pair["response"]), TriplesQueryRequest, triples)
    pair = rr(stack.tag, "document-rag", flow)
    await responder(pubsub, (pair["request"], pair["response"]), DocumentRagQuery, rag)

    service = f"{url}/api/v1/flow/{flow}/service"
    reply = await post(http, f"{service}/triples", {"s": {"t": "i", "i": "https://s"}, "limit": 5})
    assert reply == {"response": [{"s": {"t": "i", "i": "https://s"}, "p": {"t": "i", "i": "https://p"},
                                   "o": {"t": "l", "v": "v", "ln": "en"}}]}
    assert seen[0].s == Term(type=IRI, iri="https://s") and seen[0].p is None
    assert (seen[0].limit, seen[0].user, seen[0].collection) == (5, "trustgraph", "default")
    # Upstream's Python client reads the same JSON into its values.
    found = await asyncio.to_thread(Api(url).flow().id(flow).triples_query, Uri("https://s"))
    assert [(t.s, t.p, t.o) for t in found] == [("https://s", "https://p", "v")]
    assert await post(http, f"{service}/document-rag", {"query": "q"}) == {
        "response": "answer to q", "end_of_stream": True}
    assert await post(http, f"{service}/triples", {"s": 5}) == {
        "error": {"type": "gateway-error", "message": "Bad request: a term must be a JSON object"}}


async def test_text_load_and_import_export_sockets(stack, upstream_gateway, http, pubsub) -> None:
    url, flow = upstream_gateway, unique("f")
    await start_upstream_flow(http, url, stack.tag, flow)
    loaded: asyncio.Queue = asyncio.Queue()

    async def keep(msg: Any) -> None:
        await loaded.put(msg.value)

    await pubsub.consumer(one_way(stack.tag, "text-load", flow), unique("sub"), TextDocument, handler=keep)
    await pubsub.consumer(one_way(stack.tag, "triples-store", flow), unique("sub"), Triples, handler=keep)

    text = base64.b64encode("héllo".encode("latin-1")).decode()
    assert await post(http, f"{url}/api/v1/flow/{flow}/service/text-load",
                      {"id": "doc-1", "text": text, "charset": "latin-1"}) == {}
    doc = await asyncio.wait_for(loaded.get(), 10)
    assert doc.text == "héllo".encode() and doc.metadata == Metadata(id="doc-1", user="trustgraph",
                                                                      collection="default")

    frame = {"metadata": {"id": "m", "metadata": [], "user": "u", "collection": "c"},
             "triples": [{"s": {"t": "i", "i": "https://a"}, "p": {"t": "i", "i": "https://b"},
                          "o": {"t": "l", "v": "c"}}]}
    async with http.ws_connect(f"{url}/api/v1/flow/{flow}/import/triples") as ws:
        await ws.send_str("{not json")
        assert (await asyncio.wait_for(ws.receive_json(), 10))["error"].startswith("Bad message")
        await ws.send_json(frame)
        got = await asyncio.wait_for(loaded.get(), 10)
    assert got.metadata.user == "u" and got.triples[0].o == Term(type=LITERAL, value="c")

    producer = await pubsub.producer(one_way(stack.tag, "graph-embeddings-store", flow))
    async with http.ws_connect(f"{url}/api/v1/flow/{flow}/export/graph-embeddings") as ws:
        record = GraphEmbeddings(metadata=Metadata(id="x", user="u", collection="c"), entities=[
            EntityEmbeddings(entity=Term(type=IRI, iri="https://e"), vectors=[[0.5, 1]])])

        async def exported() -> Any:
            await producer.send(record)
            try:
                return await asyncio.wait_for(ws.receive_json(), 0.5)
            except TimeoutError:
                return None  # the export's subscription may not exist yet: send again

        frame = await eventually(exported)
    assert frame == {"metadata": {"id": "x", "metadata": [], "user": "u", "collection": "c"},
                     "entities": [{"vectors": [[0.5, 1]], "entity": {"t": "i", "i": "https://e"}}]}

    async with http.ws_connect(f"{url}/api/v1/flow/{flow}/import/rows") as ws:
        assert await asyncio.wait_for(ws.receive_json(), 10) == {"error": "This kind not supported by flow"}


async def test_an_export_socket_removes_its_subscription_when_it_ends(
        stack, broker, http, pubsub, tmp_path) -> None:
    """A closed export leaves no subscription on the persistent topic, so the broker keeps nothing for it."""
    proc, url = start_gateway(tmp_path, broker, stack.queues)
    try:
        flow = unique("f")
        await start_upstream_flow(http, url, stack.tag, flow)
        producer = await pubsub.producer(one_way(stack.tag, "graph-embeddings-store", flow))

        def record(rid: str) -> GraphEmbeddings:
            return GraphEmbeddings(metadata=Metadata(id=rid, user="u", collection="c"), entities=[])

        async with http.ws_connect(f"{url}/api/v1/flow/{flow}/export/graph-embeddings") as ws:
            async def exported() -> Any:
                await producer.send(record("first"))
                try:
                    return await asyncio.wait_for(ws.receive_json(), 0.5)
                except TimeoutError:
                    return None  # the export's subscription may not exist yet: send again

            await eventually(exported)

        async def removed() -> str | None:
            log = proc.output()
            found = re.search(r"Export of (\S+) ended: subscription (\S+) removed", log)
            return found.group(2) if found else None

        subscription = await eventually(removed)
        # Under the export's own name: a subscription kept by the broker would get this first.
        await producer.send(record("while-away"))
        got: asyncio.Queue = asyncio.Queue()

        async def keep(msg: Any) -> None:
            await got.put(msg.value.metadata.id)

        await pubsub.consumer(one_way(stack.tag, "graph-embeddings-store", flow), subscription,
                              GraphEmbeddings, handler=keep)
        await producer.send(record("after"))
        assert await asyncio.wait_for(got.get(), 10) == "after"
    finally:
        proc.stop()


async def test_global_kinds_and_knowledge_cores(stack, upstream_gateway, http, pubsub) -> None:
    url, tag = upstream_gateway, stack.tag
    cores: dict[str, list[Any]] = {}

    async def librarian(req: LibrarianRequest) -> AsyncIterator[LibrarianResponse]:
        yield LibrarianResponse(document_id=req.document_metadata.id, content=req.content,
                                document_metadatas=None, processing_metadatas=None)

    async def knowledge(req: KnowledgeRequest) -> AsyncIterator[KnowledgeResponse]:
        if req.operation == "put-kg-core":
            cores.setdefault(req.id, []).append(req.triples or req.graph_embeddings)
            yield KnowledgeResponse(ids=None)
        elif req.operation == "get-kg-core":
            for part in cores.get(req.id, []):
                yield KnowledgeResponse(ids=None, triples=part)
            yield KnowledgeResponse(ids=None, eos=True)
        else:
            yield KnowledgeResponse(ids=sorted(cores))

    await responder(pubsub, (f"non-persistent://tg/request/librarian-{tag}",
                             f"non-persistent://tg/response/librarian-{tag}"), LibrarianRequest, librarian)
    await responder(pubsub, (f"non-persistent://tg/request/knowledge-{tag}",
                             f"non-persistent://tg/response/knowledge-{tag}"), KnowledgeRequest, knowledge)

    content = base64.b64encode(b"doc").decode()
    assert await post(http, f"{url}/api/v1/librarian", {
        "operation": "add-document", "document-metadata": {"id": "d1", "kind": "text/plain"},
        "content": content}) == {"document-id": "d1", "content": content}

    stream = msgpack.packb(("t", {"m": {"m": []}, "t": [{"s": {"t": "i", "i": "https://s"},
                                                          "p": {"t": "i", "i": "https://p"},
                                                          "o": {"t": "l", "v": "o"}}]}))
    async with http.post(f"{url}/api/v1/import-core?id=core1&user=u", data=stream) as r:
        assert r.status == 200
    assert (await post(http, f"{url}/api/v1/knowledge", {"operation": "list-kg-cores", "user": "u"})) == {
        "ids": ["core1"]}
    async with http.get(f"{url}/api/v1/export-core?id=core1&user=u") as r:
        items = list(msgpack.Unpacker(io.BytesIO(await r.read()), raw=False))
    assert items == [["t", {"m": {"i": "core1", "m": [], "u": "u", "c": "default"},
                            "t": [{"s": {"t": "i", "i": "https://s"}, "p": {"t": "i", "i": "https://p"},
                                   "o": {"t": "l", "v": "o"}}]}]]
