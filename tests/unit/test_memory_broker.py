"""The in-memory broker under the real PubSub: what it models beyond what every backend does.

What every backend must do alike (shared subscriptions, what a topic keeps, nacks, unsubscribe
and close, ...) is in tests/conformance, run on this broker among the others.
"""

from __future__ import annotations

import asyncio

import pytest
from trustgraph.base.testing import MemoryBroker, memory_pubsub
from trustgraph.schema import ToolServiceRequest

NP = "non-persistent://tg/request/mem"
P = "persistent://tg/flow/mem"


class Seen:
    """Handler that records users and lets a test wait for a count (an event, not a sleep)."""

    def __init__(self) -> None:
        self.users: list[str] = []
        self._changed = asyncio.Event()

    async def __call__(self, msg) -> None:
        self.users.append(msg.value.user)
        self._changed.set()

    async def until(self, n: int) -> list[str]:
        async with asyncio.timeout(10):
            while len(self.users) < n:
                self._changed.clear()
                await self._changed.wait()
        return self.users


@pytest.fixture
async def ps():
    made = []

    def make(name: str = "p"):
        p = memory_pubsub(broker, name)
        made.append(p)
        return p

    broker = MemoryBroker()
    make.broker = broker
    yield make
    for p in made:
        await p.close()


async def test_non_persistent_drops_unsubscribed_and_persistent_keeps_for_earliest(ps):
    out_np, out_p = await ps().producer(NP), await ps().producer(P)
    await out_np.send(ToolServiceRequest(user="lost"))
    await out_p.send(ToolServiceRequest(user="kept"))
    late_np, late_p, latest = Seen(), Seen(), Seen()
    await ps().consumer(NP, "late", ToolServiceRequest, handler=late_np)
    await ps().consumer(P, "late", ToolServiceRequest, handler=late_p, initial_position="earliest")
    await ps().consumer(P, "latest", ToolServiceRequest, handler=latest)
    await out_np.send(ToolServiceRequest(user="new"))
    await out_p.send(ToolServiceRequest(user="new"))
    assert await late_np.until(1) == ["new"]
    assert await late_p.until(2) == ["kept", "new"]
    assert await latest.until(1) == ["new"]


async def test_a_busy_consumer_pauses_the_listener_and_loses_nothing(ps):
    # Persistent topics only: their broker keeps the backlog (a non-persistent
    # consumer never pauses: tests/unit/test_consumer_backlog.py).
    release = asyncio.Event()
    seen = Seen()

    async def slow(msg):
        await release.wait()
        await seen(msg)

    consumer = await ps().consumer(P, "slow", ToolServiceRequest, handler=slow, concurrency=1)
    out = await ps().producer(P)
    for i in range(30):
        out.send_nowait(ToolServiceRequest(user=str(i)), {"id": str(i)})
    fake = consumer._consumer
    assert fake._paused and len(fake._pending) > 0  # held back below the real consumer
    release.set()
    assert await seen.until(30) == [str(i) for i in range(30)]  # all of them, in order
    assert not fake._paused


async def test_malformed_payload_goes_to_the_malformed_callback(ps):
    seen, bad = Seen(), []
    got_bad = asyncio.Event()

    async def on_bad(props, reason):
        bad.append((props.get("id"), reason))
        got_bad.set()

    p = ps()
    await p.consumer(NP, "m", ToolServiceRequest, handler=seen, malformed=on_bad)
    ps.broker.publish(NP, b'{"user": 42}', {"id": "c"})
    ps.broker.publish(NP, b'{"user": "good"}', {"id": "d"})
    assert await seen.until(1) == ["good"]
    async with asyncio.timeout(10):
        await got_bad.wait()
    assert bad[0][0] == "c" and "ToolServiceRequest.user" in bad[0][1]


async def test_properties_must_be_strings_and_refused_topics_fail(ps):
    from trustgraph.base.messaging.pubsub import PubSubError
    out = await ps().producer(NP)
    with pytest.raises(TypeError):
        out.send_nowait(ToolServiceRequest(), {"id": None})
    ps.broker.refuse_sends(NP)
    with pytest.raises(PubSubError, match="refuses"):
        out.send_nowait(ToolServiceRequest(), {"id": "x"})


async def test_an_own_subscription_is_refused_to_another_process_and_to_a_shared_open(ps):
    """A subscription a process says is its own (a caller's responses) is exclusive on a broker whose
    own queues are (RabbitMQ's); the in-memory broker refuses the same misuse, so a caller that
    would share one shows here."""
    from trustgraph.base.messaging.transport import TransportError
    first, second = ps("first"), ps("second")
    mine = await first.consumer(NP, "mine", ToolServiceRequest, handler=Seen(), own=True)
    # Not an error worth retrying (the transport's retryable ones): raised at once.
    with pytest.raises(TransportError, match="subscription mine on .* is another process's own"):
        await second.consumer(NP, "mine", ToolServiceRequest, handler=Seen(), own=True)
    with pytest.raises(TransportError, match="opened as own and now as shared"):
        await first.consumer(NP, "mine", ToolServiceRequest, handler=Seen())
    await first.remove(mine)
    again = Seen()
    await second.consumer(NP, "mine", ToolServiceRequest, handler=again, own=True)  # free once it is gone
    await (await first.producer(NP)).send(ToolServiceRequest(user="x"))
    assert await again.until(1) == ["x"]


async def test_a_refused_send_and_a_send_after_close_are_pubsub_errors_in_one_line(ps):
    from trustgraph.base.messaging.pubsub import PubSubError
    p = ps()
    out = await p.producer(NP)
    ps.broker.refuse_sends(NP)
    with pytest.raises(PubSubError, match=f"^send to {NP} failed: in-memory broker refuses sends on {NP}$"):
        await out.send(ToolServiceRequest())
    ps.broker.refuse_sends(NP, refused=False)
    await p.remove(out)
    with pytest.raises(PubSubError, match=f"^send to {NP} failed: producer on {NP} is closed$"):
        out.send_nowait(ToolServiceRequest())
