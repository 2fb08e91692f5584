"""Pulsar behind the seam: what PulsarTransport makes of pulsar-client (receipts, errors, the
consumer of each subscribe attempt, receive queues) and what it says of itself (capabilities,
the probe, consumer counts).  The core above it is tested on the in-memory transport, and on
pulsar-lite in tests/integration/test_messaging.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pulsar
import pytest
from aiohttp import web
from trustgraph.base.messaging.broker_consumers import BrokerStatsError
from trustgraph.base.messaging.broker_url import BrokerUrlError
from trustgraph.base.messaging.pubsub import PubSub
from trustgraph.base.messaging.pulsar_transport import (
    HTTP_ADVICE,
    SUBSCRIBE_SETTLE,
    PulsarConsumer,
    PulsarProducer,
    PulsarTransport,
    problem_of,
    receive_queue_size,
)
from trustgraph.base.messaging.transport import Transport, TransportError
from trustgraph.base.testing import MemoryBroker


class SentAsync:
    """pulsar.Producer's ``send_async``, recording each call's callback (or raising ``error``)."""

    def __init__(self, error: Exception | None = None) -> None:
        self.callbacks: list[Any] = []
        self.error = error

    def send_async(self, data: bytes, callback: Any, properties: dict[str, str]) -> None:
        if self.error is not None:
            raise self.error
        self.callbacks.append(callback)


def test_a_receipt_says_none_when_the_broker_has_the_message_else_the_result():
    assert problem_of(pulsar.Result.Ok) is None
    assert problem_of(pulsar.Result.Timeout) == "Result.Timeout"
    assert problem_of(pulsar.Result.AlreadyClosed) == "Result.AlreadyClosed"


def test_sends_without_a_receipt_pass_no_callback_and_one_receipt_is_adapted_once():
    raw = SentAsync()
    producer = PulsarProducer(raw)
    told: list[str | None] = []
    logging_receipt = told.append
    producer.send(b"a", {}, None)
    producer.send(b"b", {}, logging_receipt)
    producer.send(b"c", {}, logging_receipt)
    assert raw.callbacks[0] is None
    assert raw.callbacks[1] is raw.callbacks[2]          # the hot path makes no callback per message
    raw.callbacks[1](pulsar.Result.Ok, None)
    raw.callbacks[2](pulsar.Result.Timeout, None)
    assert told == [None, "Result.Timeout"]
    other: list[str | None] = []
    producer.send(b"d", {}, other.append)
    raw.callbacks[3](pulsar.Result.Ok, None)
    assert raw.callbacks[3] is not raw.callbacks[1] and other == [None] and len(told) == 2


def test_a_send_the_client_refuses_is_a_transport_error_in_its_words():
    producer = PulsarProducer(SentAsync(pulsar.AlreadyClosed("producer closed")))
    with pytest.raises(TransportError, match="^producer closed$"):
        producer.send(b"x", {}, None)


class PulsarSide:
    """pulsar.Consumer as the listener sees it: one object per attempt, recording acks."""

    def __init__(self, unsubscribe_error: Exception | None = None) -> None:
        self.acked: list[Any] = []
        self.nacked: list[Any] = []
        self.unsubscribe_error = unsubscribe_error

    def acknowledge(self, msg: Any) -> None:
        self.acked.append(msg)

    def negative_acknowledge(self, msg: Any) -> None:
        self.nacked.append(msg)

    def unsubscribe(self) -> None:
        if self.unsubscribe_error is not None:
            raise self.unsubscribe_error

    def close(self) -> None:
        raise pulsar.AlreadyClosed("closed already")


def test_a_message_delivered_before_subscribe_returns_is_acknowledged_through_its_attempt():
    # pulsar-client may call the listener before subscribe() returns; the attempt that then times
    # out delivered on its own consumer, and the retry's consumer is another.
    seen: list[tuple[Any, str]] = []
    timed_out, retried = PulsarSide(), PulsarSide()
    first = PulsarConsumer(lambda consumer, msg: seen.append((consumer, msg)))
    first.deliver(timed_out, "m1")                  # before (instead of) the attach
    second = PulsarConsumer(lambda consumer, msg: seen.append((consumer, msg)))
    second.attach(retried)
    second.deliver(retried, "m2")
    for consumer, msg in seen:
        consumer.ack(msg)
    second.nack("m3")
    assert [c for c, _ in seen] == [first, second]
    assert (timed_out.acked, retried.acked, retried.nacked) == (["m1"], ["m2"], ["m3"])


def test_unsubscribe_failing_is_a_transport_error_and_close_never_raises():
    consumer = PulsarConsumer(lambda c, m: None)
    consumer.attach(PulsarSide(pulsar.ConnectError("broker gone")))
    with pytest.raises(TransportError, match="broker gone"):
        consumer.unsubscribe()
    consumer.close()
    PulsarConsumer(lambda c, m: None).close()       # never attached: nothing to close


@pytest.mark.parametrize(("topic", "big"), [("non-persistent://tg/response/x", True),
                                            ("persistent://tg/flow/x", False)])
def test_non_persistent_consumers_get_a_receive_queue_for_every_callers_replies(topic, big):
    assert (receive_queue_size(topic) >= 20_000) is big


def test_what_the_transport_says_of_itself():
    plain = PulsarTransport("pulsar://127.0.0.1:1")
    caps = plain.capabilities
    assert (caps.name, caps.subscribe_settle, caps.consumer_counts, caps.reconnects) == (
        "pulsar", SUBSCRIBE_SETTLE, False, True)
    assert plain.open_advice is None
    assert PulsarTransport("pulsar://h:1", admin_url="http://h:8080").capabilities.consumer_counts
    assert not PulsarTransport("pulsar://h:1", admin_url="").capabilities.consumer_counts
    assert PulsarTransport("http://h:8080").open_advice == HTTP_ADVICE
    assert {pulsar.ConnectError, pulsar.Timeout, pulsar.TopicNotFound} <= set(plain.retryable)
    assert isinstance(plain, Transport) and isinstance(MemoryBroker().transport(), Transport)


def test_pubsub_makes_a_pulsar_transport_of_a_url_and_refuses_a_malformed_one_at_once():
    ps = PubSub("pulsar://127.0.0.1:1", api_key="k", admin_url="http://127.0.0.1:2")
    assert isinstance(ps.transport, PulsarTransport) and ps.transport.admin_url == "http://127.0.0.1:2"
    assert ps.subscribe_settle == SUBSCRIBE_SETTLE
    with pytest.raises(BrokerUrlError, match="unknown scheme"):
        PubSub("amqp://127.0.0.1:5672")


async def test_the_probe_says_why_the_broker_cannot_be_reached():
    assert await PulsarTransport("pulsar://127.0.0.1:1").problem() == (
        "connection refused on 127.0.0.1:1 (nothing listens there)")


@pytest.fixture
async def metrics():
    """An HTTP service answering ``/metrics`` with what the test puts in ``answer``."""
    answer: dict[str, Any] = {"status": 200, "text": ""}

    async def serve(_request: web.Request) -> web.Response:
        return web.Response(status=answer["status"], text=answer["text"])

    app = web.Application()
    app.router.add_get("/metrics", serve)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    answer["url"] = f"http://127.0.0.1:{port}"
    yield answer
    await runner.cleanup()


async def test_consumer_counts_come_from_the_admin_urls_gauge(metrics):
    metrics["text"] = ('pulsar_consumers_count{namespace="tg/request",topic="echo"} 2\n'
                       'pulsar_consumers_count{topic="persistent://tg/flow/x"} 1\n')
    transport = PulsarTransport("pulsar://127.0.0.1:1", admin_url=metrics["url"])
    assert await transport.consumer_counts() == {"tg/request/echo": 2, "tg/flow/x": 1}
    metrics["status"] = 500
    with pytest.raises(TransportError, match=r"/metrics answered HTTP 500") as e:
        await transport.consumer_counts()
    assert isinstance(e.value, BrokerStatsError)
    assert await PulsarTransport("pulsar://127.0.0.1:1").consumer_counts() is None


async def test_unreadable_counts_are_one_line_within_the_timeout():
    # A port that accepts and never answers: the reading ends at its timeout, as a TransportError.
    hold = asyncio.Event()

    async def silent(_reader: asyncio.StreamReader, _writer: asyncio.StreamWriter) -> None:
        await hold.wait()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        transport = PulsarTransport("pulsar://127.0.0.1:1", admin_url=f"http://127.0.0.1:{port}")
        with pytest.raises(TransportError, match=rf"^cannot read http://127.0.0.1:{port}/metrics: TimeoutError"):
            await asyncio.wait_for(transport.consumer_counts(timeout=0.2), 15)
    finally:
        hold.set()
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize(("url", "spread"), [
    ("pulsar://127.0.0.1:6650", True), ("pulsar://localhost:6650", True), ("pulsar://[::1]:6650", True),
    ("pulsar://pulsar.example:6650", False), ("pulsar://127.0.0.1:6650,10.0.0.7:6650", False),
])
def test_only_a_loopback_broker_gets_its_consumer_ids_spread(monkeypatch, url, spread):
    # pulsar-lite's collision of consumer ids (spread_consumer_ids): Apache Pulsar has none to avoid.
    from trustgraph.base.messaging import pulsar_transport
    made, spreads = [], []
    monkeypatch.setattr(pulsar_transport.pulsar, "Client", lambda *a, **k: made.append(a) or object())
    monkeypatch.setattr(pulsar_transport, "spread_consumer_ids", lambda client, n, stopping: spreads.append(n))
    transport = PulsarTransport(url)
    transport.lane_client("default")
    transport.lane_client("default")   # a lane's client is made once
    assert len(made) == 1
    assert (len(spreads) == 1 and 0 <= spreads[0] < pulsar_transport.CONSUMER_ID_SPREAD) if spread else spreads == []
    transport._lanes.clear()   # nothing real to close


def test_the_spread_ends_at_the_first_subscribe_the_broker_refuses():
    from trustgraph.base.messaging.pulsar_transport import spread_consumer_ids
    opened = []

    class Refusing:
        def subscribe(self, topic, name, consumer_type):
            opened.append(topic)
            raise pulsar.Timeout("no")

    assert spread_consumer_ids(Refusing(), 40) == 0 and len(opened) == 1


class _Consumer:
    def __init__(self, name: str, log: list[tuple[str, str]]) -> None:
        self.name, self.log = name, log

    def close(self) -> None:
        self.log.append(("close", self.name))

    def unsubscribe(self) -> None:
        self.log.append(("unsubscribe", self.name))


class _Accepting:
    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []

    def subscribe(self, topic, name, consumer_type):
        self.log.append(("subscribe", name))
        return _Consumer(name, self.log)


def test_the_spread_stops_when_its_client_is_about_to_close():
    from trustgraph.base.messaging.pulsar_transport import spread_consumer_ids
    client = _Accepting()
    subscribed = lambda: sum(1 for what, _ in client.log if what == "subscribe")   # noqa: E731
    assert spread_consumer_ids(client, 40, lambda: subscribed() >= 3) == 3 and subscribed() == 3


def test_the_spread_takes_its_ids_with_one_subscription_it_removes_at_the_end():
    # pulsar-lite keeps every subscription ever made (and lists each in its metrics, which three
    # processes read every 2 s): a subscription per id left 32 a process start.  One name, each
    # consumer closed before the next, the last one unsubscribed.
    from trustgraph.base.messaging.pulsar_transport import spread_consumer_ids
    client = _Accepting()
    assert spread_consumer_ids(client, 3) == 3
    names = {name for _, name in client.log}
    assert len(names) == 1
    assert [what for what, _ in client.log] == ["subscribe", "close", "subscribe", "close", "subscribe", "unsubscribe"]
    nothing = _Accepting()
    assert spread_consumer_ids(nothing, 0) == 0 and nothing.log == []
