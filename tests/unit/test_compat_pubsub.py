"""Upstream 2.1.4's Consumer, Producer, Publisher, Subscriber and backends (trustgraph.compat.v214).

They run on our messaging core (a real PubSub on the in-memory broker) or, given a backend of the
caller's own, through upstream's backend protocol (``QueueBackend`` below, a small one in memory).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import queue
import threading
import time
from typing import Any

import pytest
import trustgraph.base as base
from prometheus_client import REGISTRY
from support import wait_for_async
from trustgraph.base.messaging.errors import MessageTooLarge
from trustgraph.base.messaging.pubsub import PubSub
from trustgraph.base.messaging.pulsar_backend import PulsarBackend as OurPulsarBackend
from trustgraph.base.testing import MemoryBroker, memory_pubsub
from trustgraph.compat.v214 import backends
from trustgraph.compat.v214 import pubsub as compat_pubsub
from trustgraph.compat.v214.backends import (
    BackendLink,
    CoreLink,
    PubSubBackend,
    PulsarBackend,
    PulsarClient,
    core_pubsub,
    dataclass_to_dict,
    dict_to_dataclass,
    get_pubsub,
    link_for,
)
from trustgraph.compat.v214.consumer import Consumer
from trustgraph.compat.v214.metrics import SubscriberMetrics
from trustgraph.compat.v214.pubsub import Producer, Publisher, Subscriber, SubscriberSpec
from trustgraph.exceptions import TooManyRequests
from trustgraph.schema import Error, ToolServiceRequest, ToolServiceResponse

PERSISTENT = "persistent://tg/flow/compat-pubsub"
NON_PERSISTENT = "non-persistent://tg/request/compat-pubsub"


class Recorder:
    """Upstream's metrics objects' methods (Consumer/Producer/SubscriberMetrics), recording calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def state(self, state: str) -> None:
        self.calls.append(("state", state))

    def process(self, status: str) -> None:
        self.calls.append(("process", status))

    def rate_limit(self) -> None:
        self.calls.append(("rate_limit",))

    @contextlib.contextmanager
    def record_time(self):
        self.calls.append(("time",))
        yield

    def inc(self) -> None:
        self.calls.append(("inc",))

    def received(self) -> None:
        self.calls.append(("received",))

    def dropped(self, *_: Any) -> None:
        self.calls.append(("dropped",))

    def count(self, *call: Any) -> int:
        return self.calls.count(call)


class Timeout(Exception):
    """What QueueBackend's receive raises when nothing came (upstream recognises it by its name)."""


class QueueMessage:
    def __init__(self, value: Any, properties: dict[str, str]) -> None:
        self._value, self._properties = value, properties

    def value(self) -> Any:
        return self._value

    def properties(self) -> dict[str, str]:
        return self._properties


class QueueBackend:
    """A backend of a user's own, implementing upstream's protocol: one queue per topic."""

    def __init__(self) -> None:
        self.topics: dict[str, queue.Queue] = {}
        self.acked: list[Any] = []
        self.nacked: list[Any] = []
        self.producers = 0
        self.consumers = 0
        self.unsubscribed = 0
        self.fail_sends = 0          # the next n sends raise
        self.fail_subscribes = 0     # the next n create_consumer calls raise
        self.hold = threading.Event()  # set: sends go through; clear: a send waits for it
        self.hold.set()

    def _q(self, topic: str) -> queue.Queue:
        return self.topics.setdefault(topic, queue.Queue())

    def create_producer(self, topic: str, schema: Any, **options: Any) -> Any:
        self.producers += 1
        backend = self

        class P:
            def send(self, message: Any, properties: dict = {}) -> None:  # noqa: B006
                backend.hold.wait()
                if backend.fail_sends:
                    backend.fail_sends -= 1
                    raise ConnectionError("connection closed")
                backend._q(topic).put(QueueMessage(message, dict(properties)))

            def flush(self) -> None:
                pass

            def close(self) -> None:
                pass

        return P()

    def create_consumer(self, topic: str, subscription: str, schema: Any, initial_position: str = "latest",
                        consumer_type: str = "shared", **options: Any) -> Any:
        if self.fail_subscribes:
            self.fail_subscribes -= 1
            raise ConnectionError("broker unavailable")
        self.consumers += 1
        backend, q = self, self._q(topic)

        class C:
            def receive(self, timeout_millis: int = 2000) -> Any:
                try:
                    return q.get(timeout=min(timeout_millis, 50) / 1000)
                except queue.Empty:
                    raise Timeout("receive timed out") from None

            def acknowledge(self, message: Any) -> None:
                backend.acked.append(message.value())

            def negative_acknowledge(self, message: Any) -> None:
                backend.nacked.append(message.value())

            def unsubscribe(self) -> None:
                backend.unsubscribed += 1

            def close(self) -> None:
                pass

        return C()

    def close(self) -> None:
        pass


async def wait_until(what: str, probe: Any, timeout: float = 30) -> Any:
    return await wait_for_async(what, probe, timeout=timeout, every=0.005)


def req(user: str) -> ToolServiceRequest:
    return ToolServiceRequest(user=user)


# -- what is importable where ---------------------------------------------------------------

def test_trustgraph_base_gives_upstreams_consumer_and_producer_and_ours_stay_in_messaging():
    assert base.Consumer is Consumer and base.Producer is Producer
    assert base.Publisher is Publisher and base.Subscriber is Subscriber and base.SubscriberSpec is SubscriberSpec
    assert base.get_pubsub is get_pubsub and base.PulsarClient is PulsarClient
    from trustgraph.base.messaging import pubsub as ours
    assert ours.Consumer is not Consumer and ours.Producer is not Producer


def test_upstream_module_paths_hold_upstreams_names():
    import trustgraph.base.backend as backend_path
    import trustgraph.base.consumer as consumer_path
    import trustgraph.base.pubsub as pubsub_path
    import trustgraph.base.pulsar_backend as pulsar_path
    import trustgraph.base.subscriber as subscriber_path
    from trustgraph.base.producer import Producer as P
    from trustgraph.base.publisher import Publisher as Pub
    from trustgraph.base.subscriber_spec import SubscriberSpec as S

    assert (P, Pub, S) == (Producer, Publisher, SubscriberSpec)
    assert consumer_path.Consumer is Consumer and subscriber_path.Subscriber is Subscriber
    # Upstream's TimeoutError of those modules; ours is a builtin TimeoutError too.
    assert issubclass(consumer_path.TimeoutError, TimeoutError)
    assert subscriber_path.TimeoutError is consumer_path.TimeoutError
    assert pubsub_path.get_pubsub is get_pubsub and pubsub_path.PulsarClient is PulsarClient
    assert pulsar_path.PulsarBackend is PulsarBackend
    assert {"Message", "BackendProducer", "BackendConsumer", "PubSubBackend"} <= set(backend_path.__all__)


def test_upstream_signatures_and_defaults():
    import inspect

    def params(cls: type) -> dict[str, Any]:
        return {n: p.default for n, p in inspect.signature(cls).parameters.items()}

    e = inspect.Parameter.empty
    assert params(Consumer) == {
        "taskgroup": e, "flow": e, "backend": e, "topic": e, "subscriber": e, "schema": e, "handler": e,
        "metrics": None, "start_of_messages": False, "rate_limit_retry_time": 10,
        "rate_limit_timeout": 7200, "reconnect_time": 5, "concurrency": 1}
    assert params(Producer) == {"backend": e, "topic": e, "schema": e, "metrics": None, "chunking_enabled": True}
    assert params(Publisher) == {"backend": e, "topic": e, "schema": None, "max_size": 10,
                                 "chunking_enabled": True, "drain_timeout": 5.0}
    assert params(Subscriber) == {"backend": e, "topic": e, "subscription": e, "consumer_name": e,
                                  "schema": None, "max_size": 100, "metrics": None,
                                  "backpressure_strategy": "block", "drain_timeout": 5.0}
    assert params(SubscriberSpec) == {"name": e, "schema": e}


# -- backends -------------------------------------------------------------------------------

def test_get_pubsub_is_our_pulsar_backend_with_upstreams_settings(monkeypatch):
    monkeypatch.setenv("PULSAR_HOST", "pulsar://env-host:6650")
    monkeypatch.delenv("PULSAR_API_KEY", raising=False)
    backend = get_pubsub(pulsar_listener="internal")
    try:
        assert isinstance(backend, OurPulsarBackend) and isinstance(backend, PubSubBackend)
        assert (backend.host, backend.api_key, backend.listener) == ("pulsar://env-host:6650", None, "internal")
    finally:
        backend.close()
    with pytest.raises(ValueError, match="Unknown pub/sub backend"):
        get_pubsub(pubsub_backend="mqtt")


async def test_which_transport_carries_the_parts():
    broker = MemoryBroker()
    ours = memory_pubsub(broker)
    assert core_pubsub(ours) is ours and isinstance(link_for(ours), CoreLink)
    backend = PulsarBackend("pulsar://127.0.0.1:1")
    try:
        core = core_pubsub(backend)
        assert isinstance(core, PubSub) and core_pubsub(backend) is core   # one per backend
        assert core.url == "pulsar://127.0.0.1:1"
    finally:
        backend.close()
    assert isinstance(link_for(QueueBackend()), BackendLink)
    await asyncio.gather(*backends._closing)


def test_dataclass_dict_conversions_are_our_codecs():
    record = ToolServiceResponse(error=Error(type="x", message="y"), response="r")
    data = dataclass_to_dict(record)
    assert data["error"] == {"type": "x", "message": "y"} and data["response"] == "r"
    assert dict_to_dataclass(data, ToolServiceResponse) == record
    assert dataclass_to_dict([record, None, b"caf\xc3\xa9"]) == [data, None, "café"]
    assert dataclass_to_dict({"k": record}) == {"k": data}
    assert dict_to_dataclass(None, ToolServiceResponse) is None
    assert dict_to_dataclass({"a": 1}, dict) == {"a": 1}


def test_pulsar_client_flags_and_settings(monkeypatch):
    monkeypatch.delenv("PULSAR_HOST", raising=False)
    parser = argparse.ArgumentParser()
    PulsarClient.add_args(parser)
    args = parser.parse_args(["-p", "pulsar://127.0.0.1:1", "--pulsar-api-key", "k", "--pulsar-listener", "l"])
    assert (args.pulsar_host, args.pulsar_api_key, args.pulsar_listener) == ("pulsar://127.0.0.1:1", "k", "l")
    client = PulsarClient(**vars(args))
    try:
        assert (client.pulsar_host, client.pulsar_api_key, client.pulsar_listener) == (
            "pulsar://127.0.0.1:1", "k", "l")
        assert client.client is not None
    finally:
        client.close()
    assert client.client is None


# -- Consumer ---------------------------------------------------------------------------------

@pytest.fixture
def two():
    """Two processes' PubSubs on one in-memory broker."""
    broker = MemoryBroker()
    return broker, memory_pubsub(broker, "sender"), memory_pubsub(broker, "receiver")


async def test_consumer_hands_upstreams_message_shape_to_the_handler_and_acks(two):
    broker, sender, receiver = two
    seen: list[tuple[Any, ...]] = []
    flow = object()

    async def handler(msg, consumer, flow_):
        seen.append((msg.value(), msg.properties(), consumer, flow_))

    metrics = Recorder()
    c = Consumer(None, flow, receiver, PERSISTENT, "sub", ToolServiceRequest, handler, metrics=metrics)
    await c.start()
    await wait_until("subscribed", lambda: c.consumer is not None)
    out = await sender.producer(PERSISTENT)
    await out.send(req("ada"), {"id": "1"})
    await wait_until("handled", lambda: seen)
    value, props, consumer, flow_ = seen[0]
    assert value == req("ada") and props["id"] == "1" and consumer is c and flow_ is flow
    states = [c for c in metrics.calls if c[0] == "state"]
    assert states[0] == ("state", "stopped") and states[-1] == ("state", "running")
    await wait_until("counted", lambda: metrics.count("process", "success"))
    assert metrics.count("time") == 1
    await c.stop()
    assert metrics.calls[-1] == ("state", "stopped")
    assert c.consumer is None and c.consumer_task is None


async def test_consumer_failing_handler_is_redelivered_and_counted_as_error(two):
    broker, sender, receiver = two
    calls: list[str] = []

    async def handler(msg, consumer, flow):
        calls.append(msg.value().user)
        if len(calls) == 1:
            raise RuntimeError("first try fails")

    metrics = Recorder()
    c = Consumer(None, None, receiver, PERSISTENT, "sub", ToolServiceRequest, handler, metrics=metrics)
    await c.start()
    await wait_until("subscribed", lambda: c.consumer is not None)
    out = await sender.producer(PERSISTENT)
    await out.send(req("x"))
    await wait_until("redelivered and handled", lambda: len(calls) == 2)
    assert metrics.count("process", "error") == 1
    await wait_until("success", lambda: metrics.count("process", "success") == 1)
    await c.stop()


async def test_consumer_retries_a_rate_limited_message_then_gives_up_at_its_timeout(two):
    _, _, receiver = two
    attempts: list[int] = []

    async def limited(msg, consumer, flow):
        attempts.append(1)
        if len(attempts) < 3:
            raise TooManyRequests()

    metrics = Recorder()
    c = Consumer(None, None, receiver, PERSISTENT, "sub", ToolServiceRequest, limited, metrics=metrics,
                 rate_limit_retry_time=0.01)
    msg = QueueMessage(req("a"), {})
    await c.handle_one_from_queue(msg)
    assert len(attempts) == 3 and metrics.count("rate_limit") == 2 and metrics.count("process", "success") == 1

    async def always_limited(msg, consumer, flow):
        raise TooManyRequests()

    metrics = Recorder()
    c = Consumer(None, None, receiver, PERSISTENT, "sub", ToolServiceRequest, always_limited, metrics=metrics,
                 rate_limit_retry_time=0.01, rate_limit_timeout=0.05)
    with pytest.raises(TooManyRequests):   # raised: the message is negatively acknowledged
        await c.handle_one_from_queue(msg)
    assert metrics.count("process", "error") == 1 and metrics.count("rate_limit") >= 2


async def test_consumer_stop_removes_its_subscription_as_upstreams_does(two):
    broker, sender, receiver = two
    seen: list[str] = []

    async def handler(msg, consumer, flow):
        seen.append(msg.value().user)

    c = Consumer(None, None, receiver, PERSISTENT, "sub", ToolServiceRequest, handler)
    await c.start()
    await wait_until("subscribed", lambda: c.consumer is not None)
    await c.stop()
    out = await sender.producer(PERSISTENT)
    await out.send(req("while-away"))      # nobody keeps it: the subscription is gone
    again = Consumer(None, None, receiver, PERSISTENT, "sub", ToolServiceRequest, handler)
    await again.start()
    await wait_until("subscribed again", lambda: again.consumer is not None)
    await out.send(req("marker"))
    await wait_until("marker", lambda: "marker" in seen)
    assert seen == ["marker"]
    await again.stop()


async def test_consumer_start_of_messages_reads_a_persistent_topic_from_its_start(two):
    broker, sender, receiver = two
    out = await sender.producer(PERSISTENT)
    await out.send(req("before"))
    seen: list[str] = []

    async def handler(msg, consumer, flow):
        seen.append(msg.value().user)

    c = Consumer(None, None, receiver, PERSISTENT, "new-sub", ToolServiceRequest, handler, start_of_messages=True)
    await c.start()
    await wait_until("the earlier message", lambda: seen)
    assert seen == ["before"]
    await c.stop()


async def test_consumer_runs_concurrency_handlers_at_once(two):
    _, sender, receiver = two
    running: list[str] = []
    release = asyncio.Event()

    async def handler(msg, consumer, flow):
        running.append(msg.value().user)
        await release.wait()

    c = Consumer(None, None, receiver, NON_PERSISTENT, "sub", ToolServiceRequest, handler, concurrency=3)
    await c.start()
    await wait_until("subscribed", lambda: c.consumer is not None)
    out = await sender.producer(NON_PERSISTENT)
    for i in range(4):
        await out.send(req(str(i)))
    await wait_until("three at once", lambda: len(running) == 3)
    release.set()
    await wait_until("the fourth", lambda: len(running) == 4)
    await c.stop()


async def test_consumer_with_upstream_metrics_is_not_counted_twice_by_ours(two):
    _, sender, receiver = two
    done = asyncio.Event()

    async def handler(msg, consumer, flow):
        done.set()

    def ours(name: str) -> float:
        return REGISTRY.get_sample_value("processing_count_total", {
            "processor": "receiver", "consumer": name, "status": "success"}) or 0.0

    with_metrics = Consumer(None, None, receiver, NON_PERSISTENT, "counted-upstream", ToolServiceRequest,
                            handler, metrics=Recorder())
    await with_metrics.start()
    await wait_until("subscribed", lambda: with_metrics.consumer is not None)
    out = await sender.producer(NON_PERSISTENT)
    await out.send(req("a"))
    await done.wait()
    await with_metrics.stop()
    assert ours("counted-upstream") == 0.0

    done.clear()
    without = Consumer(None, None, receiver, NON_PERSISTENT, "counted-ours", ToolServiceRequest, handler)
    await without.start()
    await wait_until("subscribed", lambda: without.consumer is not None)
    await out.send(req("b"))
    await wait_until("counted by ours", lambda: ours("counted-ours") == 1.0)
    await without.stop()


async def test_consumer_runs_in_the_given_taskgroup():
    broker = MemoryBroker()
    receiver = memory_pubsub(broker)

    async def handler(msg, consumer, flow):
        pass

    async with asyncio.TaskGroup() as tg:
        c = Consumer(tg, None, receiver, PERSISTENT, "sub", ToolServiceRequest, handler)
        await c.start()
        await wait_until("subscribed", lambda: c.consumer is not None)
        await c.stop()


async def test_consumer_on_a_users_backend_resubscribes_after_a_failure_and_acks_by_outcome():
    backend = QueueBackend()
    backend.fail_subscribes = 1
    seen: list[str] = []

    async def handler(msg, consumer, flow):
        seen.append(msg.value())
        if msg.value() == "bad":
            raise ValueError("cannot")

    c = Consumer(None, None, backend, "q0/tg/request/x", "sub", None, handler, reconnect_time=0.01)
    await c.start()
    await wait_until("subscribed after one failure", lambda: backend.consumers == 1 and c.consumer is not None)
    q = backend.topics["q0/tg/request/x"]
    q.put(QueueMessage("good", {}))
    q.put(QueueMessage("bad", {}))
    await wait_until("both handled", lambda: backend.acked == ["good"] and backend.nacked == ["bad"])
    await c.stop()
    assert backend.unsubscribed == 1


async def test_consumer_stopped_while_its_backend_refuses_to_subscribe_stops():
    backend = QueueBackend()
    backend.fail_subscribes = 10**6

    async def handler(msg, consumer, flow):
        pass

    c = Consumer(None, None, backend, "q0/tg/request/x", "sub", None, handler, reconnect_time=60)
    await c.start()
    await wait_until("tried", lambda: backend.fail_subscribes < 10**6)
    t0 = time.monotonic()
    await c.stop()
    assert time.monotonic() - t0 < 15   # not the 60 s reconnect_time


# -- Producer ---------------------------------------------------------------------------------

async def test_producer_sends_with_properties_and_counts(two):
    broker, sender, receiver = two
    got: list[Any] = []

    async def handler(msg):
        got.append((msg.value, msg.properties))

    await receiver.consumer(PERSISTENT, "sub", ToolServiceRequest, handler=handler)
    metrics = Recorder()
    p = Producer(sender, PERSISTENT, ToolServiceRequest, metrics=metrics)
    await p.start()
    await p.send(req("a"), {"id": "7"})
    await p.send(req("b"))
    await wait_until("both", lambda: len(got) == 2)
    assert got[0] == (req("a"), {"id": "7"}) and got[1][0] == req("b")
    assert metrics.count("inc") == 2
    await p.stop()
    await p.send(req("after stop"))   # upstream: a stopped producer sends nothing
    assert len(broker.sent[PERSISTENT]) == 2


async def test_producer_raises_at_once_for_what_can_never_be_sent(two):
    _, sender, _ = two
    p = Producer(sender, NON_PERSISTENT, ToolServiceRequest)
    with pytest.raises(MessageTooLarge):
        await p.send(req("x" * 6_000_000))
    with pytest.raises(TypeError):
        await p.send(object())
    await p.stop()


async def test_producer_on_a_users_backend_reconnects_and_sends_again(monkeypatch):
    monkeypatch.setattr(compat_pubsub, "SEND_RETRY", 0.01)
    backend = QueueBackend()
    backend.fail_sends = 1
    p = Producer(backend, "q1/tg/flow/x", None)
    await p.send("hello", {"id": "1"})
    msg = backend.topics["q1/tg/flow/x"].get_nowait()
    assert (msg.value(), msg.properties()) == ("hello", {"id": "1"})
    assert backend.producers == 2      # the failed one closed, a new one opened
    await p.stop()


# -- Publisher --------------------------------------------------------------------------------

async def test_publisher_sends_queued_items_with_their_id_and_drains_on_stop(two):
    broker, sender, receiver = two
    got: list[Any] = []

    async def handler(msg):
        got.append((msg.value.user, msg.properties.get("id")))

    await receiver.consumer(PERSISTENT, "sub", ToolServiceRequest, handler=handler)
    pub = Publisher(sender, PERSISTENT, schema=ToolServiceRequest)
    await pub.start()
    await pub.send("r1", req("a"))
    await pub.send(None, req("b"))
    for i in range(5):
        await pub.send(f"q{i}", req(f"q{i}"))
    await pub.stop()                  # returns once what was queued is sent
    assert [m.properties().get("id") for m in broker.sent[PERSISTENT]] == ["r1", None, "q0", "q1", "q2", "q3", "q4"]
    await wait_until("delivered", lambda: len(got) == 7)
    assert got[:2] == [("a", "r1"), ("b", None)]


async def test_publisher_refuses_items_while_draining_and_the_drain_ends_at_its_timeout():
    backend = QueueBackend()
    backend.hold.clear()              # every send waits
    pub = Publisher(backend, "q1/tg/flow/x", drain_timeout=0.2)
    await pub.start()
    try:
        await pub.send("1", "one")
        await pub.send("2", "two")
        t0 = time.monotonic()
        stopping = asyncio.create_task(pub.stop())
        await wait_until("draining", lambda: pub.draining)
        with pytest.raises(RuntimeError, match="Publisher is shutting down"):
            await pub.send("late", "refused while draining")
        await stopping
        assert time.monotonic() - t0 < 15
        assert pub.draining is False
    finally:
        backend.hold.set()     # the send still waiting in its thread


async def test_publisher_keeps_an_item_whose_send_failed_and_sends_it_once_reconnected(monkeypatch):
    monkeypatch.setattr(compat_pubsub, "SEND_RETRY", 0.01)
    backend = QueueBackend()
    backend.fail_sends = 1
    pub = Publisher(backend, "q1/tg/flow/x")
    await pub.start()
    await pub.send("1", "kept")
    await pub.stop()
    msg = backend.topics["q1/tg/flow/x"].get_nowait()
    assert (msg.value(), msg.properties()) == ("kept", {"id": "1"}) and backend.producers == 2


# -- Subscriber -------------------------------------------------------------------------------

async def test_subscriber_fans_out_by_id_and_to_every_listener(two):
    broker, sender, receiver = two
    metrics = Recorder()
    sub = Subscriber(receiver, NON_PERSISTENT, "sub", "me", ToolServiceResponse, metrics=metrics)
    await sub.start()
    mine = await sub.subscribe("mine")
    everything = await sub.subscribe_all("all")
    out = await sender.producer(NON_PERSISTENT)
    await out.send(ToolServiceResponse(response="for-me"), {"id": "mine"})
    await out.send(ToolServiceResponse(response="for-other"), {"id": "other"})
    assert (await mine.get()).response == "for-me"
    assert [(await everything.get()).response for _ in range(2)] == ["for-me", "for-other"]
    assert mine.empty()
    await sub.unsubscribe("mine")
    await sub.unsubscribe_all("all")
    await out.send(ToolServiceResponse(response="orphan"), {"id": "mine"})   # nobody waits: dropped
    marker = await sub.subscribe("marker")
    await out.send(ToolServiceResponse(response="m"), {"id": "marker"})
    assert (await marker.get()).response == "m" and mine.empty() and everything.empty()
    assert metrics.count("received") == 4 and metrics.calls[0] == ("state", "running")
    await sub.stop()
    assert metrics.calls[-1] == ("state", "stopped")


@pytest.mark.parametrize("strategy,kept", [("drop_new", ["1"]), ("drop_oldest", ["2"])])
async def test_subscriber_backpressure_drops_by_strategy(two, strategy, kept):
    _, sender, receiver = two
    metrics = Recorder()
    sub = Subscriber(receiver, NON_PERSISTENT, "sub", "me", ToolServiceResponse, max_size=1, metrics=metrics,
                     backpressure_strategy=strategy)
    await sub.start()
    q = await sub.subscribe_all("all")
    out = await sender.producer(NON_PERSISTENT)
    await out.send(ToolServiceResponse(response="1"))
    await out.send(ToolServiceResponse(response="2"))
    await wait_until("one dropped", lambda: metrics.count("dropped") == 1)
    assert [q.get_nowait().response] == kept
    await sub.stop()


async def test_subscriber_blocks_when_a_queue_is_full_and_loses_nothing(two):
    _, sender, receiver = two
    sub = Subscriber(receiver, NON_PERSISTENT, "sub", "me", ToolServiceResponse, max_size=1)
    await sub.start()
    q = await sub.subscribe_all("all")
    out = await sender.producer(NON_PERSISTENT)
    for i in range(3):
        await out.send(ToolServiceResponse(response=str(i)))
    assert [(await q.get()).response for _ in range(3)] == ["0", "1", "2"]
    await sub.stop()


async def test_subscriber_stop_ends_once_its_queues_are_read(two):
    _, sender, receiver = two
    sub = Subscriber(receiver, NON_PERSISTENT, "sub", "me", ToolServiceResponse, drain_timeout=30)
    await sub.start()
    q = await sub.subscribe_all("all")
    out = await sender.producer(NON_PERSISTENT)
    await out.send(ToolServiceResponse(response="last"))
    await wait_until("queued", lambda: not q.empty())
    t0 = time.monotonic()
    stopping = asyncio.create_task(sub.stop())
    await wait_until("draining", lambda: sub.draining)
    assert (await q.get()).response == "last"
    await stopping
    assert time.monotonic() - t0 < 15     # when read, not at the 30 s drain timeout


async def test_subscriber_without_schema_hands_over_the_payloads_json(two):
    # As upstream's schema-less value(): the JSON parsed (a dump reads any topic); what is no
    # JSON comes as its bytes (upstream's raised).
    _, sender, receiver = two
    sub = Subscriber(receiver, NON_PERSISTENT, "dump", "dump", schema=None)
    await sub.start()
    q = await sub.subscribe_all("dump")
    out = await sender.producer(NON_PERSISTENT)
    await out.send(b'{"anything": [1, "two"]}')
    await out.send(b"\xffnot json")
    assert await q.get() == {"anything": [1, "two"]}
    assert await q.get() == b"\xffnot json"
    await sub.stop()


async def test_subscriber_on_a_users_backend():
    backend = QueueBackend()
    sub = Subscriber(backend, "q0/tg/response/x", "sub", "me")
    await sub.start()
    q = await sub.subscribe("r1")
    backend.topics["q0/tg/response/x"].put(QueueMessage("answer", {"id": "r1"}))
    assert await q.get() == "answer"
    await sub.stop()
    assert backend.acked == ["answer"] and backend.unsubscribed == 1


async def test_subscriber_acknowledges_orphaned_and_dropped_messages_too():
    # Redelivering them would only make every replica of a shared subscription drop them again.
    backend = QueueBackend()
    sub = Subscriber(backend, "q0/tg/response/x", "sub", "me", max_size=1, backpressure_strategy="drop_new")
    await sub.start()
    q = await sub.subscribe("r1")
    topic = backend.topics["q0/tg/response/x"]
    topic.put(QueueMessage("orphan", {"id": "gone"}))
    topic.put(QueueMessage("kept", {"id": "r1"}))
    topic.put(QueueMessage("dropped", {"id": "r1"}))
    await wait_until("all three acknowledged", lambda: len(backend.acked) == 3)
    assert backend.acked == ["orphan", "kept", "dropped"] and backend.nacked == []
    assert q.get_nowait() == "kept" and q.empty()
    await sub.stop()


async def test_subscriber_stop_ends_at_its_drain_timeout_when_nobody_reads():
    broker = MemoryBroker()
    sender, receiver = memory_pubsub(broker, "s"), memory_pubsub(broker, "r")
    sub = Subscriber(receiver, NON_PERSISTENT, "sub", "me", ToolServiceResponse, drain_timeout=0.2)
    await sub.start()
    q = await sub.subscribe_all("all")
    out = await sender.producer(NON_PERSISTENT)
    await out.send(ToolServiceResponse(response="unread"))
    await wait_until("queued", lambda: not q.empty())
    t0 = time.monotonic()
    await sub.stop()
    assert time.monotonic() - t0 < 15 and sub.draining is False and q.qsize() == 1


def test_subscriber_spec_puts_a_subscriber_of_the_flow_in_its_consumers():
    class Flow:
        id, name, consumer = "proc", "flow-a", {}

    class Processor:
        pubsub = object()

    SubscriberSpec("input", ToolServiceResponse).add(Flow, Processor, {"input": "q0/tg/flow/in"})
    sub = Flow.consumer["input"]
    assert isinstance(sub, Subscriber)
    assert (sub.backend, sub.topic, sub.subscription, sub.consumer_name, sub.schema) == (
        Processor.pubsub, "q0/tg/flow/in", "proc", "proc", ToolServiceResponse)
    assert isinstance(sub.metrics, SubscriberMetrics)
    from trustgraph.base.spec import Spec
    assert isinstance(SubscriberSpec("x", None), Spec)
    assert (sub.metrics.processor, sub.metrics.flow, sub.metrics.name) == ("proc", "flow-a", "input")
