"""The messaging core against a real pulsar-lite broker: what is Pulsar's own (a topic nobody
subscribes to, a broker restart, raw pulsar-client senders) and the core's behaviour under load.

What every backend must do alike is in tests/conformance, run on pulsar-lite among the others.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

import pulsar
import pytest
from support import answers_again, wait_for_async
from trustgraph.base import PubSub, RequestResponseClient, RequestTimeout
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse


def topics() -> tuple[str, str]:
    n = uuid.uuid4().hex[:8]
    return f"non-persistent://tg/request/t-{n}", f"non-persistent://tg/response/t-{n}"


async def echo_server(pubsub: PubSub, req: str, resp: str, delay: float = 0.0,
                      seen: list | None = None, concurrency: int = 64):
    """A responder that answers each request with its own user field, after ``delay``."""
    out = await pubsub.producer(resp)

    async def handle(msg):
        if seen is not None:
            seen.append(msg.value)
        if delay:
            await asyncio.sleep(delay)
        await out.send(ToolServiceResponse(response=msg.value.user, end_of_stream=True), {"id": msg.id})

    return await pubsub.consumer(req, "echo", ToolServiceRequest, handler=handle, concurrency=concurrency)


def client(pubsub: PubSub, req: str, resp: str, **kw) -> RequestResponseClient:
    return RequestResponseClient(pubsub, request_topic=req, response_topic=resp,
                                 request_schema=ToolServiceRequest, response_schema=ToolServiceResponse,
                                 subscription=f"c-{uuid.uuid4()}", **kw)


async def test_call_nobody_serves_times_out_at_deadline(broker):
    req, resp = topics()
    caller = PubSub(broker.url, processor="c")
    try:
        c = client(caller, req, resp)
        await c.start()
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout, match="no response"):
            await c.request(ToolServiceRequest(user="x"), timeout=0.5)
        elapsed = time.monotonic() - t0
        assert 0.45 <= elapsed < 30   # at its deadline, not before; and it ends
        assert c._waiters == {}  # the waiter was cleaned up
    finally:
        await caller.close()


async def test_deadline_covers_the_whole_streaming_call(broker):
    """A service that keeps sending chunks but never finishes cannot hold the caller."""
    req, resp = topics()
    server, caller = PubSub(broker.url, processor="s"), PubSub(broker.url, processor="c")
    try:
        out = await server.producer(resp)

        async def dribble(msg):   # a chunk every 0.05 s for 30 s
            for _ in range(600):
                await out.send(ToolServiceResponse(response=".", end_of_stream=False), {"id": msg.id})
                await asyncio.sleep(0.05)

        await server.consumer(req, "drip", ToolServiceRequest, handler=dribble)
        c = client(caller, req, resp)
        chunks = []
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout):
            async for r in c.stream(ToolServiceRequest(user="x"), final=lambda r: r.end_of_stream,
                                    timeout=2.0):
                chunks.append(r.response)
        # Ended by its 2 s deadline while chunks kept coming, long before the 30 s of chunks.
        assert time.monotonic() - t0 < 20
        assert 1 <= len(chunks) < 600
    finally:
        await caller.close()
        await server.close()


async def test_bound_on_requests_in_flight(broker):
    req, resp = topics()
    server, caller = PubSub(broker.url, processor="s"), PubSub(broker.url, processor="c")
    seen: list = []
    try:
        out = await server.producer(resp)
        release = asyncio.Event()
        four = asyncio.Event()

        async def hold(msg):   # answers nothing until released: no slot frees before that
            seen.append(msg.value)
            if len(seen) >= 4:
                four.set()
            await release.wait()
            await out.send(ToolServiceResponse(response=msg.value.user, end_of_stream=True), {"id": msg.id})

        await server.consumer(req, "hold", ToolServiceRequest, handler=hold, concurrency=64)
        c = client(caller, req, resp, max_in_flight=4)
        await c.start()
        calls = [asyncio.create_task(c.request(ToolServiceRequest(user=str(i)), timeout=30)) for i in range(12)]
        await asyncio.wait_for(four.wait(), 60)
        # A request of another client, sent now: a fifth of c's, had it been sent, was sent
        # before it and reaches the service first.
        other = client(caller, req, resp)
        marker = asyncio.create_task(other.request(ToolServiceRequest(user="marker"), timeout=60))
        await wait_for_async("the marker request", lambda: any(m.user == "marker" for m in seen), 60)
        assert [m.user for m in seen].index("marker") == 4  # only four were sent; the rest wait for a slot
        release.set()
        await asyncio.gather(*calls, marker)
        assert len(seen) == 13
    finally:
        await caller.close()
        await server.close()


async def test_consumer_survives_malformed_messages(broker):
    req, resp = topics()
    server = PubSub(broker.url, processor="s")
    raw = pulsar.Client(broker.url)
    got: list = []
    malformed: list = []
    try:
        async def handle(msg):
            got.append(msg.value.user)

        async def on_bad(props, reason):
            malformed.append((props.get("id"), reason))

        await server.consumer(req, "m", ToolServiceRequest, handler=handle, malformed=on_bad)
        producer = raw.create_producer(req)
        producer.send(b"this is not json", properties={"id": "a"})
        producer.send(b'["a", "list"]', properties={"id": "b"})
        producer.send(b'{"user": 42}', properties={"id": "c"})
        producer.send(b'{"user": "good"}', properties={"id": "d"})
        await wait_for_async("the good message and three malformed", lambda: got and len(malformed) == 3, 60)
        assert got == ["good"]
        assert [m[0] for m in malformed] == ["a", "b", "c"]
        assert "ToolServiceRequest.user" in malformed[2][1]
    finally:
        raw.close()
        await server.close()


async def test_each_handler_is_its_own_task_and_timeouts_work_inside_it(broker):
    """Handlers start eagerly on Python 3.12+ (consumer.EAGER_HANDLERS): each is still the current
    task of its own, so asyncio.timeout() (the deadlines' mechanism) cancels only that one."""
    import sys

    from trustgraph.base.messaging import consumer

    assert consumer.EAGER_HANDLERS == (sys.version_info >= (3, 12))
    req, resp = topics()
    ps = PubSub(broker.url, processor="s")
    tasks: dict[str, asyncio.Task | None] = {}
    outcomes: dict[str, str] = {}
    never = asyncio.Event()
    try:
        async def handle(msg):
            user = msg.value.user
            tasks[user] = asyncio.current_task()
            try:
                async with asyncio.timeout(0.2 if user.startswith("slow") else 60):
                    if user.startswith("slow"):
                        await never.wait()
                    await asyncio.sleep(0)
                outcomes[user] = "done"
            except TimeoutError:
                outcomes[user] = "timed out"

        await ps.consumer(req, "eager", ToolServiceRequest, handler=handle, concurrency=8)
        out = await ps.producer(req)
        users = ["slow-1", "fast-1", "fast-2", "slow-2", "fast-3"]
        for n, user in enumerate(users):
            await out.send(ToolServiceRequest(user=user), {"id": str(n)})
        await wait_for_async("every handler to end", lambda: len(outcomes) == len(users), 60)
        assert outcomes == {u: "timed out" if u.startswith("slow") else "done" for u in users}
        assert all(t is not None for t in tasks.values())
        assert len({id(t) for t in tasks.values()}) == len(users)   # one task each
    finally:
        await ps.close()


async def test_requests_succeed_again_after_broker_restart(own_broker):
    """The client reconnects by itself: no restart of either side is needed."""
    req, resp = topics()
    server, caller = PubSub(own_broker.url, processor="s"), PubSub(own_broker.url, processor="c")
    try:
        await echo_server(server, req, resp)
        c = client(caller, req, resp)
        await c.start()
        assert (await c.request(ToolServiceRequest(user="before"), timeout=5)).response == "before"
        own_broker.restart()

        assert await answers_again(c, "an answer after the restart") == "after"
    finally:
        await caller.close()
        await server.close()


async def test_deadline_holds_when_the_broker_is_unreachable():
    """The first call opens the client; that too is inside the call's deadline."""
    from trustgraph.base.launching.broker import free_port
    ps = PubSub(f"pulsar://127.0.0.1:{free_port()}", processor="c", connect_timeout=30)
    try:
        c = client(ps, *topics())
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout):
            await c.request(ToolServiceRequest(user="x"), timeout=1.0)
        assert time.monotonic() - t0 < 15   # its 1 s deadline, not the 30 s connect timeout
        await c.stop()
    finally:
        await ps.close()


def test_closing_the_transport_while_a_thread_opens_on_it_ends_both(broker, monkeypatch):
    # pulsar-client closed while another thread is inside create_reader (or subscribe) left that
    # thread blocked for good: 5 of 60 closes during a consumer-id spread, measured; blocked in an
    # asyncio executor, it kept the loop from closing and a test's teardown timed out.  close() now
    # waits for the opens in flight, stops a spread, and an open after it is a TransportError.
    from trustgraph.base.messaging import pulsar_transport
    from trustgraph.base.messaging.transport import TransportError
    real, spreading = pulsar_transport.spread_consumer_ids, threading.Event()

    def long_spread(client, count, stopping):
        spreading.set()
        return real(client, 1_000_000, stopping)   # long enough for close() to come during it

    monkeypatch.setattr(pulsar_transport, "spread_consumer_ids", long_spread)
    topic = f"non-persistent://tg/request/close-{uuid.uuid4().hex[:8]}"
    for attempt in range(40):
        spreading.clear()
        transport = pulsar_transport.PulsarTransport(broker.url)
        ended: list[str] = []

        def open_one(transport=transport, ended=ended):
            try:
                transport.open_consumer(topic, "closing", listener=lambda consumer, msg: None)
                ended.append("opened")
            except TransportError as e:
                ended.append(str(e))

        opener = threading.Thread(target=open_one, daemon=True)
        opener.start()
        assert spreading.wait(60)
        # Jitter, waiting for nothing: close() comes at a different point of the spread's first
        # readers each time (the client connects during them; the old hang needed that window).
        time.sleep(attempt % 20 / 1000)
        transport.close()
        opener.join(60)
        assert not opener.is_alive(), "an open on a closed client never returned"
        assert ended == [f"the connection to {broker.url} is closed: this process is stopping"]
        with pytest.raises(TransportError, match="is closed"):
            transport.open_producer(topic)


def test_a_spread_leaves_no_subscription_per_id_on_pulsar_lite(broker):
    # pulsar-lite keeps every subscription ever made and lists each in its /metrics, which the
    # gateway, agent and prompt-template read every 2 s: a reader per id left 32 a process start
    # (795 of 875 on a fresh stack; after ~300 restarts, 27 MB of metrics and half a core).
    import re
    import urllib.request

    from trustgraph.base.messaging.pulsar_transport import spread_consumer_ids
    name = f"spread-count-{uuid.uuid4().hex[:8]}"
    client = pulsar.Client(broker.url, operation_timeout_seconds=3)
    try:
        assert spread_consumer_ids(client, 40, topic=f"non-persistent://tg/config/{name}") == 40
        consumer = client.subscribe(f"non-persistent://tg/config/{name}", "after")   # the metrics list the topic
        with urllib.request.urlopen(f"{broker.admin_url}/metrics", timeout=60) as reply:
            metrics = reply.read().decode()
        consumer.close()
    finally:
        client.close()
    subscriptions = set(re.findall(f'subscription="([^"]*)",topic="{name}"', metrics))
    assert "after" in subscriptions and len(subscriptions) <= 2, sorted(subscriptions)


def test_two_clients_spread_apart_share_a_non_persistent_subscription_on_pulsar_lite(broker):
    # pulsar-lite keys a non-persistent subscription's consumers by the id each client chose, and
    # every client numbers its consumers from 0: two replicas started alike collide, and the second
    # one's connection is dropped until its subscribe times out.  Spread apart, both join at once.
    from trustgraph.base.messaging.pulsar_transport import spread_consumer_ids
    topic, sub = f"non-persistent://tg/request/spread-{uuid.uuid4().hex[:8]}", "replicas"
    one = pulsar.Client(broker.url, operation_timeout_seconds=3)
    two = pulsar.Client(broker.url, operation_timeout_seconds=3)
    try:
        assert spread_consumer_ids(two, 3) == 3
        first = one.subscribe(topic, sub, consumer_type=pulsar.ConsumerType.Shared)
        second = two.subscribe(topic, sub, consumer_type=pulsar.ConsumerType.Shared)   # raised Timeout unspread
        producer = one.create_producer(topic)
        got = {"first": 0, "second": 0}
        deadline = time.monotonic() + 60
        while not all(got.values()) and time.monotonic() < deadline:
            # Until each has had its share: both are members the subscription's messages go to.
            producer.send(b"request")
            for name, consumer in (("first", first), ("second", second)):
                try:
                    consumer.acknowledge(consumer.receive(timeout_millis=100))
                except pulsar.Timeout:
                    continue
                got[name] += 1
        assert all(got.values()), got
    finally:
        one.close()
        two.close()
