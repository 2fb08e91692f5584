"""Upstream trustgraph-flow 2.1.4's chunker-recursive, run on our trustgraph-base (the flow-on-ours venv).

The chunker is upstream's code from PyPI, unchanged; everything under it is ours: its
ChunkingService base (trustgraph.compat.v214), FlowProcessor and messaging, and our
config-svc, which hands it its flow.  A librarian stand-in of ours takes the chunks it saves
as child documents.  (chunker-token needs tiktoken's encoding file from the network at start,
on upstream's base too, so it cannot run here.)
"""

from __future__ import annotations

import asyncio
import json
import uuid

import pulsar
import pytest
from support import BIN, Proc, wait_for_async
from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.base.testing import Responder
from trustgraph.schema import (
    ConfigRequest,
    ConfigResponse,
    ConfigValue,
    LibrarianRequest,
    LibrarianResponse,
    librarian_request_queue,
    librarian_response_queue,
)
from trustgraph.topics import CONFIG_REQUEST, CONFIG_RESPONSE

pytestmark = [pytest.mark.interop, pytest.mark.long, pytest.mark.timeout(900)]

TEXT = "aaaa bbbb cccc dddd eeee ffff gggg hhhh"
#: What RecursiveCharacterTextSplitter makes of TEXT with chunk-size 20, overlap 0: words joined up to 20.
CHUNKS = ["aaaa bbbb cccc dddd", "eeee ffff gggg hhhh"]


async def receive(consumer: pulsar.Consumer) -> dict:
    msg = await asyncio.to_thread(consumer.receive, 30_000)
    consumer.acknowledge(msg)
    return json.loads(msg.data())


async def test_upstream_chunker_recursive_chunks_on_our_base(flow_on_ours, own_broker, tmp_path, row):
    url = own_broker.url
    procs: list[Proc] = []
    ps = PubSub(url, processor="interop-test")
    raw = pulsar.Client(url)
    tag = uuid.uuid4().hex[:6]
    flow = {"input": f"persistent://tg/flow/chunk-load:{tag}", "output": f"persistent://tg/flow/chunks:{tag}",
            "triples": f"persistent://tg/flow/triples:{tag}", "chunk-size": "20", "chunk-overlap": "0"}
    try:
        ready = tmp_path / "config-svc.ready"
        procs.append(Proc([str(BIN / "config-svc"), "--no-metrics", "-p", url, "--store", str(tmp_path / "c.db")],
                          tmp_path / "config-svc.log", env={"TG_READY_FILE": str(ready)}).start())
        procs[-1].wait_ready(ready, timeout=60)
        config = RequestResponseClient(ps, request_topic=CONFIG_REQUEST, response_topic=CONFIG_RESPONSE,
                                       request_schema=ConfigRequest, response_schema=ConfigResponse,
                                       subscription=f"interop-{uuid.uuid4()}")
        put = await config.request(ConfigRequest(operation="put", values=[
            ConfigValue(type="active-flow", key="up-chunker", value=json.dumps({"f": flow}))]), timeout=30)
        assert put.error is None, put.error
        librarian = await Responder(ps, librarian_request_queue, librarian_response_queue, LibrarianRequest,
                                    lambda req: [LibrarianResponse()]).start()
        chunks, triples = raw.subscribe(flow["output"], "watch"), raw.subscribe(flow["triples"], "watch")

        # Ready once its flow is open: it runs on our AsyncProcessor, which writes the ready file.
        ready = tmp_path / "chunker.ready"
        chunker = Proc([str(flow_on_ours.bin("chunker-recursive")), "--no-metrics", "-p", url, "--id",
                        "up-chunker", "--no-loki-enabled"], tmp_path / "chunker.log",
                       env={"TG_READY_FILE": str(ready), "TG_READY_AFTER_CONFIG": "1"}).start()
        procs.append(chunker)
        await wait_for_async("upstream's chunker ready", ready.exists, 120, detail=chunker.output,
                             gone=chunker.exited)
        raw.create_producer(flow["input"]).send(json.dumps({
            "metadata": {"id": "doc-1", "metadata": [], "user": "u1", "collection": "c1"},
            "text": TEXT, "document_id": ""}).encode())

        got = [await receive(chunks) for _ in CHUNKS]
        provenance = [await receive(triples) for _ in CHUNKS]
        ok = ([g["chunk"] for g in got] == CHUNKS
              and [g["document_id"] for g in got] == ["doc-1/c1", "doc-1/c2"]
              and all(g["metadata"]["user"] == "u1" and g["metadata"]["collection"] == "c1" for g in got)
              and all(p["triples"] for p in provenance)
              and [(r.operation, r.document_metadata.id, r.document_metadata.parent_id)
                   for r in librarian.requests] == [("add-child-document", "doc-1/c1", "doc-1"),
                                                    ("add-child-document", "doc-1/c2", "doc-1")])
        row("upstream chunker-recursive 2.1.4 on our trustgraph-base",
            "upstream processor on our base <- our config-svc; -> chunks, provenance, librarian", ok,
            "" if ok else json.dumps(got)[:160])
        assert ok, (got, librarian.requests, chunker.output())
        await config.stop()
    finally:
        raw.close()
        await ps.close()
        for proc in procs:
            proc.stop()
