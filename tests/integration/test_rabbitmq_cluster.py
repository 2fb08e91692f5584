"""The RabbitMQ transport over a cluster's nodes, on a real 3-node cluster (fixture ``rabbitmq_cluster``).

Given every node (``host`` as ``h1:p1,h2:p2,h3:p3``), a process connects to the first and, when that
node dies, moves to another by itself: its connection watch says "lost" once and "back" once with
no node restarted, its queues are declared again on the surviving node, calls are answered again,
and what a quorum queue held before the kill is all there afterwards.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

import pytest
from rabbitmq_nodes import START_TIMEOUT
from support import answers_again, wait_for_async
from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.base.messaging.rabbitmq_transport import RabbitMQTransport
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse

#: Bound on a hang (a call to a running cluster), not a performance figure.
CALL_TIMEOUT = 30.0
KEPT = 20   # messages a quorum queue holds through the kill

#: The bound on a whole test, its cluster's forming (the fixture's, up to START_TIMEOUT) included:
#: above the sum of the waits below, so that a miss fails with its own message, not pytest-timeout's.
pytestmark = [pytest.mark.slow,   # a cluster of 3 nodes each (about 14 s to form here, 60 s loaded)
              pytest.mark.timeout(START_TIMEOUT + 300)]


def nodes(cluster) -> str:
    """Every node of ``cluster``, as ``--rabbitmq-host`` takes a cluster: ``h1:p1,h2:p2,h3:p3``."""
    return ",".join(f"{n.host}:{n.port}" for n in cluster.nodes)


def pubsub(cluster, processor: str) -> PubSub:
    first = cluster.nodes[0]
    transport = RabbitMQTransport(nodes(cluster), first.port, first.username, first.password, first.vhost,
                                  name=processor)
    return PubSub(f"amqp://{nodes(cluster)}", processor=processor, transport=transport)


def described(cluster, *processes: PubSub) -> str:
    """What the surviving nodes and each process hold, for a failure's message: the queues with their
    consumers, the bindings, and each process's lanes and channels (connected, restored)."""
    lines = []
    node = next((n for n in cluster.nodes if n.running()), None)
    for args in (("list_queues", "name", "type", "consumers", "messages", "pid"),
                 ("list_bindings", "source_name", "destination_name")):
        try:
            lines.append(node.ctl(*args) if node else "no node runs")
        except RuntimeError as e:
            lines.append(str(e))
    for process in processes:
        for lane, connection in process.transport._lanes.items():
            channels = getattr(connection, "_RobustConnection__channels", ())
            lines.append(f"{process.processor} {lane} lane on {connection.node}: connected "
                         f"{connection.connected.is_set()}, restored {connection.restored.is_set()}; channels "
                         + ", ".join(f"{c.number}: closed {c.is_closed}, restored "
                                     f"{getattr(c, '_RobustChannel__restored', None) and c._RobustChannel__restored.is_set()}"
                                     for c in list(channels)))
    return "\n".join(lines)


async def test_a_process_moves_to_a_surviving_node_when_its_node_dies(rabbitmq_cluster, caplog) -> None:
    """kill -9 of the node a server and a caller are on (the first listed, where the request queue
    is too: a classic queue lives on the node that declared it): each process says "lost" once and
    "back" once, on another node, with the killed node still down; a call is answered afterwards;
    and the persistent messages published before the kill are all consumed after it."""
    cluster = rabbitmq_cluster
    n = uuid.uuid4().hex[:8]
    req, resp = f"non-persistent://tg/request/c-{n}", f"non-persistent://tg/response/c-{n}"
    kept_topic = f"persistent://tg/flow/kept-{n}"
    server, caller = pubsub(cluster, "s"), pubsub(cluster, "c")
    try:
        out = await server.producer(resp)

        async def echo(msg):
            await out.send(ToolServiceResponse(response=msg.value.user, end_of_stream=True), {"id": msg.id})

        await server.consumer(req, "echo", ToolServiceRequest, handler=echo, concurrency=16)
        c = RequestResponseClient(caller, request_topic=req, response_topic=resp, request_schema=ToolServiceRequest,
                                  response_schema=ToolServiceResponse, subscription=f"c-{uuid.uuid4()}")
        await c.start()
        assert (await c.request(ToolServiceRequest(user="before"), timeout=CALL_TIMEOUT)).response == "before"
        # A quorum queue (a persistent topic's shared subscription), then messages while nobody consumes it.
        keeper = await caller.consumer(kept_topic, "keeper", ToolServiceRequest, handler=lambda msg: None)
        await caller.remove(keeper)
        kept = await caller.producer(kept_topic)
        for i in range(KEPT):
            await kept.send(ToolServiceRequest(user=str(i)), {"id": str(i)})

        # DEBUG: a miss shows each send's and receipt's fate (the log's tail, beside the broker's view).
        with caplog.at_level(logging.DEBUG, logger="trustgraph.base.messaging"):
            await asyncio.to_thread(cluster.kill, 0)
            await wait_for_async("both processes back on another node",
                                 lambda: caplog.text.count("Reconnected to the broker") >= 2, 90,
                                 detail=lambda: caplog.text[-3000:])

            assert await answers_again(c, "an answer on the surviving nodes",
                                       detail=lambda: described(cluster, server, caller) + "\n"
                                       + caplog.text[-6000:]) == "after"
            got: list[str] = []
            await caller.consumer(kept_topic, "keeper", ToolServiceRequest, handler=lambda msg: got.append(msg.id))
            await wait_for_async(f"the {KEPT} persistent messages", lambda: len(got) >= KEPT, CALL_TIMEOUT,
                                 detail=lambda: f"got {sorted(got, key=int)}")
        assert sorted(got, key=int) == [str(i) for i in range(KEPT)]
        assert not cluster.nodes[0].running()
        assert caplog.text.count("Lost the connection to the broker") == 2   # once per process
        assert caplog.text.count("Reconnected to the broker") == 2
        killed = f"{cluster.nodes[0].host}:{cluster.nodes[0].port}"
        moved = [r.getMessage() for r in caplog.records
             if r.name.startswith("trustgraph") and "lane restored on node" in r.getMessage()]
        assert moved and all(not m.endswith(killed) for m in moved), moved
    finally:
        await caller.close()
        await server.close()


async def test_a_process_starts_on_the_first_node_that_answers(rabbitmq_cluster) -> None:
    """The first node listed is down when the process starts: it connects to the next, and a
    transport's probe says nothing is wrong while one node answers."""
    cluster = rabbitmq_cluster
    await asyncio.to_thread(cluster.kill, 0)
    n = uuid.uuid4().hex[:8]
    req, resp = f"non-persistent://tg/request/f-{n}", f"non-persistent://tg/response/f-{n}"
    server, caller = pubsub(cluster, "s"), pubsub(cluster, "c")
    try:
        assert await server.transport.problem() is None
        out = await server.producer(resp)

        async def echo(msg):
            await out.send(ToolServiceResponse(response=msg.value.user, end_of_stream=True), {"id": msg.id})

        await server.consumer(req, "echo", ToolServiceRequest, handler=echo)
        c = RequestResponseClient(caller, request_topic=req, response_topic=resp, request_schema=ToolServiceRequest,
                                  response_schema=ToolServiceResponse, subscription=f"c-{uuid.uuid4()}")
        await c.start()
        assert (await c.request(ToolServiceRequest(user="x"), timeout=CALL_TIMEOUT)).response == "x"
    finally:
        await caller.close()
        await server.close()
