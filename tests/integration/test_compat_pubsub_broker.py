"""Upstream 2.1.4's Publisher, Subscriber, Consumer and Producer on the real pulsar-lite broker.

Built as upstream's processors build them (its gateway's requestor: a ``Publisher`` of requests
and a ``Subscriber`` of responses on ``get_pubsub()``'s backend; a service: a ``Consumer`` with a
handler and a ``Producer`` of replies on its processor's ``pubsub``, ours), so code written
against upstream's base exchanges messages on ours (issue 36, point 3).
"""

from __future__ import annotations

import asyncio
import uuid

from support import wait_for_async
from trustgraph.base import Consumer, Producer, Publisher, PubSub, Subscriber, get_pubsub
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse


def topics() -> tuple[str, str]:
    n = uuid.uuid4().hex[:8]
    return f"non-persistent://tg/request/compat-{n}", f"non-persistent://tg/response/compat-{n}"


async def echo_service(service: PubSub, request_topic: str, response_topic: str) -> tuple[Consumer, Producer]:
    """An upstream-shaped service: answers each request with its user, under the request's id."""
    replies = Producer(backend=service, topic=response_topic, schema=ToolServiceResponse)
    await replies.start()

    async def on_request(msg, consumer, flow):
        request = msg.value()
        await replies.send(ToolServiceResponse(response=f"hello {request.user}", end_of_stream=True),
                           properties={"id": msg.properties()["id"]})

    consumer = Consumer(taskgroup=None, flow=None, backend=service, topic=request_topic, subscriber="echo",
                        schema=ToolServiceRequest, handler=on_request)
    await consumer.start()
    await wait_for_async("the service subscribed", lambda: consumer.consumer is not None, timeout=60)
    return consumer, replies


async def test_publisher_and_subscriber_pair_calls_an_upstream_shaped_service(broker):
    request_topic, response_topic = topics()
    service = PubSub(broker.url, processor="echo")
    backend = get_pubsub(pulsar_host=broker.url)      # upstream's gateway takes its backend so
    consumer, replies = await echo_service(service, request_topic, response_topic)
    requests = Publisher(backend, request_topic, schema=ToolServiceRequest)
    responses = Subscriber(backend, response_topic, f"gw-{uuid.uuid4()}", "api-gateway", ToolServiceResponse)
    try:
        await responses.start()
        await requests.start()

        async def call(user: str) -> str:
            rid = str(uuid.uuid4())
            q = await responses.subscribe(rid)
            try:
                await requests.send(rid, ToolServiceRequest(user=user))
                answer = await asyncio.wait_for(q.get(), 60)
                return answer.response
            finally:
                await responses.unsubscribe(rid)

        users = [f"user-{i}" for i in range(20)]
        answers = await asyncio.gather(*(call(u) for u in users))
        assert answers == [f"hello {u}" for u in users]    # each caller got its own answer
    finally:
        await requests.stop()
        await responses.stop()
        await consumer.stop()
        await replies.stop()
        backend.close()
        await service.close()


async def test_consumer_handles_what_a_producer_sends_on_a_persistent_topic_once(broker):
    topic = f"persistent://tg/flow/compat-{uuid.uuid4().hex[:8]}"
    sender, receiver = PubSub(broker.url, processor="sender"), PubSub(broker.url, processor="receiver")
    seen: list[str] = []
    failed_once: set[str] = set()

    async def handler(msg, consumer, flow):
        user = msg.value().user
        if user == "flaky" and user not in failed_once:    # the first try fails: redelivered
            failed_once.add(user)
            raise RuntimeError("not yet")
        seen.append(user)

    consumer = Consumer(None, None, receiver, topic, "store", ToolServiceRequest, handler, concurrency=4)
    producer = Producer(sender, topic, ToolServiceRequest)
    try:
        await consumer.start()
        await wait_for_async("subscribed", lambda: consumer.consumer is not None, timeout=60)
        await producer.start()
        users = [f"u{i}" for i in range(30)] + ["flaky"]
        for user in users:
            await producer.send(ToolServiceRequest(user=user))
        await wait_for_async("all handled", lambda: len(seen) == len(users), timeout=60)
        assert sorted(seen) == sorted(users) and failed_once == {"flaky"}
        # Acknowledged: a later marker arrives alone, nothing handled before comes again.
        await producer.send(ToolServiceRequest(user="marker"))
        await wait_for_async("the marker", lambda: "marker" in seen, timeout=60)
        assert len(seen) == len(users) + 1
    finally:
        await producer.stop()
        await consumer.stop()
        await sender.close()
        await receiver.close()
