"""A processor of ours on ``--wire 2.11`` takes the place of 2.11.1's on RabbitMQ (fixture ``rabbitmq``).

On 2.11.1's RabbitMQ topology a request topic's queue outlives its consumers: it keeps what arrives
while no replica runs.  A FlowProcessor of ours put in place of 2.11.1's (the same ``--id``, the
flow blueprint's ``<processor>:{id}`` entry) must therefore consume the queue 2.11.1's left,
``{exchange}.{subscription}``, under 2.11.1's subscription name for a flow consumer,
``{id}--{workspace}--{flow}--{spec}`` (trustgraph-base 2.11.1 ``ConsumerSpec.register``): else the
requests waiting there are never served, and the old queue, still bound, keeps a copy of every
request from then on, with nothing to take them.

2.11.1's processor is played by the test: the queue it declares, declared as 2.11.1's topology
declares it (``trustgraph.compat.v211.rabbitmq_topology``, argument for argument), then left with no
consumer, a request waiting in it.
"""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
from support import wait_for_async
from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.base.messaging.rabbitmq_topology import exchange_name
from trustgraph.base.messaging.rabbitmq_transport import RabbitMQTransport
from trustgraph.base.messaging.request_response import RequestTimeout
from trustgraph.base.messaging.serving import Replies
from trustgraph.base.processors.flow_processor import ConsumerSpec, FlowProcessor, ProducerSpec
from trustgraph.base.wire import WIRES
from trustgraph.compat.v211.flows import PROCESSOR_ITEMS
from trustgraph.compat.v211.rabbitmq_topology import UPSTREAM_211
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse
from trustgraph.topics import parse

#: Bound on a hang (a call to a running node), not a performance figure.
CALL_TIMEOUT = 30.0


class Echo(FlowProcessor):
    """Answers each request with its user, one at a time (so in the order they wait)."""

    wires = WIRES

    def __init__(self, **params):
        super().__init__(**params)
        self.register_specification(ConsumerSpec(
            "request", ToolServiceRequest, self.on_request, concurrency=1,
            replies=Replies(error_record=lambda error: ToolServiceResponse(error=error, end_of_stream=True),
                            error_type="tool-service-error")))
        self.register_specification(ProducerSpec("response", ToolServiceResponse))

    async def on_request(self, msg, flow, reply):
        await reply.send(ToolServiceResponse(response=msg.value.user, end_of_stream=True))


def pubsub(node, processor: str) -> PubSub:
    return PubSub(f"amqp://{node.host}:{node.port}", processor=processor, transport=RabbitMQTransport(
        node.host, node.port, node.username, node.password, node.vhost, topology=UPSTREAM_211))


def queues(node) -> dict[str, tuple[int, int]]:
    """Every queue on the node: its consumers, and the messages it holds."""
    listed = json.loads(node.ctl("list_queues", "name", "consumers", "messages", "--formatter", "json"))
    return {q["name"]: (int(q["consumers"]), int(q["messages"])) for q in listed}


async def test_our_flow_processor_consumes_the_queue_2_11s_left_and_leaves_none_behind(rabbitmq) -> None:
    flow = f"f-{uuid.uuid4().hex[:8]}"
    request, response = f"request:tg:echo:default:{flow}", f"response:tg:echo:default:{flow}"
    theirs = f"echo--default--{flow}--request"     # 2.11.1's ConsumerSpec: id--workspace--flow--spec
    exchange = exchange_name(parse(request))
    caller = pubsub(rabbitmq, "caller")
    proc = Echo(id="echo", pubsub=pubsub(rabbitmq, "echo"), metrics=False, follow_config=False, wire="2.11")
    replies: list[tuple[str, str]] = []
    try:
        # 2.11.1's echo served the flow, then stopped: its queue stays, a request waits in it.
        async def unanswered(msg):
            raise AssertionError(f"2.11.1's stopped processor got {msg.id}")

        left = await caller.consumer(request, theirs, ToolServiceRequest, handler=unanswered)
        await caller.remove(left)
        assert queues(rabbitmq)[f"{exchange}.{theirs}"] == (0, 0)

        async def answered(msg):
            replies.append((msg.id, msg.value.response))

        await caller.consumer(response, f"caller-{uuid.uuid4()}", ToolServiceResponse, handler=answered, own=True)
        sender = await caller.producer(request)
        await sender.send(ToolServiceRequest(user="waited"), {"id": "r1"})

        # Ours takes its place, assigned the flow as 2.11's flow service assigns it.
        await proc.start()
        await proc.apply_config(PROCESSOR_ITEMS.assignment({}, "echo", flow, {"request": request,
                                                                              "response": response}), 1)
        assert flow in proc.flows, proc.flow_errors
        await sender.send(ToolServiceRequest(user="marker"), {"id": "r2"})
        await wait_for_async("the marker answered", lambda: ("r2", "marker") in replies, CALL_TIMEOUT)
        # One consumer, one at a time: the request that waited came first.
        assert replies[0] == ("r1", "waited"), replies
        assert sorted(replies) == [("r1", "waited"), ("r2", "marker")], replies   # each answered once
        # One queue is bound to the flow's request exchange, 2.11.1's: ours consumes it, and has
        # acknowledged both requests (the broker has the acks once it holds no message).
        queue = f"{exchange}.{theirs}"

        async def acknowledged() -> bool:
            return (await asyncio.to_thread(queues, rabbitmq)).get(queue) == (1, 0)

        await wait_for_async("both requests acknowledged", acknowledged, CALL_TIMEOUT)
        of_the_flow = [name for name in queues(rabbitmq) if name.startswith(f"{exchange}.")]
        assert of_the_flow == [queue], of_the_flow

        # Ours gone too: a request waits in the queue for a replica, and its caller for its deadline,
        # instead of coming back at once as on our topology (a limitation the transport says at start).
        await proc.stop()
        assert UPSTREAM_211.limitations[0] in proc.pubsub.transport.capabilities.limitations
        client = RequestResponseClient(caller, request_topic=request, response_topic=response,
                                       request_schema=ToolServiceRequest, response_schema=ToolServiceResponse,
                                       subscription=f"client-{uuid.uuid4()}")
        await client.start()
        with pytest.raises(RequestTimeout, match="no response"):
            await client.request(ToolServiceRequest(user="late"), timeout=2.0)
        assert queues(rabbitmq)[queue] == (0, 1)
    finally:
        await proc.stop()
        await caller.close()
