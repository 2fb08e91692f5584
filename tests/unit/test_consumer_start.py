"""A consumer whose messages arrive before subscribe() has returned: none is lost.

pulsar-client may call the message listener before ``subscribe()`` returns
the consumer to ``attach()``; measured on the real broker, 5 of 120 client
starts under load did, and ``Consumer._flush_acks`` then raised
``AttributeError: 'NoneType' object has no attribute 'acknowledge'`` and the
acknowledgements were dropped.  Every message is now acknowledged through the
consumer object that delivered it (a transport's listener is given it: the
seam, ``transport.Listener``; Pulsar's side of it is in test_pulsar_transport.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from trustgraph.base import PubSub
from trustgraph.base.messaging.transport import Capabilities
from trustgraph.base.testing import MemoryBroker, memory_pubsub
from trustgraph.base.testing.memory import MemoryMessage
from trustgraph.schema import ToolServiceRequest
from trustgraph.schema.codec import encode

TOPIC = "persistent://tg/flow/early"


@pytest.fixture
async def loop_errors():
    """Exceptions the event loop reported from callbacks (``Exception in callback ...``)."""
    errors: list[Any] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, ctx: errors.append(ctx.get("exception") or ctx["message"]))
    yield errors
    loop.set_exception_handler(None)


class Counting:
    def __init__(self, n: int) -> None:
        self.n = n
        self.seen: list[str] = []
        self.all = asyncio.Event()

    def direct(self, msg: Any) -> None:
        self.seen.append(msg.value.user)
        if len(self.seen) >= self.n:
            self.all.set()

    async def handler(self, msg: Any) -> None:
        self.direct(msg)


@pytest.mark.parametrize("kind", ["direct", "handler"])
async def test_messages_delivered_during_subscribe_are_all_acknowledged(kind, loop_errors):
    # The in-memory broker hands a persistent subscription's backlog to the
    # listener inside subscribe(), before PubSub.consumer can attach it.
    broker = MemoryBroker()
    sender, receiver = memory_pubsub(broker, "sender"), memory_pubsub(broker, "receiver")
    out = await sender.producer(TOPIC)
    for i in range(50):
        await out.send(ToolServiceRequest(user=str(i)), {"id": str(i)})
    got = Counting(50)
    how = {"direct": got.direct} if kind == "direct" else {"handler": got.handler, "concurrency": 4}
    consumer = await receiver.consumer(TOPIC, "early", ToolServiceRequest, initial_position="earliest", **how)
    async with asyncio.timeout(10):
        await got.all.wait()
    await asyncio.sleep(0)  # the acks of a direct consumer go out after the callbacks just woken
    assert sorted(got.seen, key=int) == [str(i) for i in range(50)]
    assert consumer._consumer._unacked == {}  # every delivery acknowledged
    assert loop_errors == []
    await receiver.close()
    await sender.close()


class _Consumer:
    """A transport's consumer, recording what it is asked to acknowledge."""

    def __init__(self) -> None:
        self.acked: list[Any] = []

    def ack(self, msg: Any) -> None:
        self.acked.append(msg)

    def nack(self, msg: Any) -> None:
        raise AssertionError("nothing fails here")

    def pause(self) -> None:
        pass

    def resume(self) -> None:
        pass

    def is_connected(self) -> bool:
        return True

    def close(self) -> None:
        pass


class Timeout(Exception):
    """The transport's "try again" error."""


class _RetriedSubscribe:
    """A transport whose first open of a consumer delivers messages and then times out.

    As pulsar-lite does when two replicas' consumer ids clash: the attempt
    that times out has delivered messages on its own consumer before the
    retry returns another one.
    """

    capabilities = Capabilities(name="retried", reconnects=False)
    retryable = (Timeout,)
    open_advice = None

    def __init__(self) -> None:
        self.first, self.second = _Consumer(), _Consumer()
        self.calls = 0
        self.messages = [MemoryMessage(encode(ToolServiceRequest(user=str(i))), {"id": str(i)}, TOPIC, i)
                         for i in range(5)]

    def open_consumer(self, topic: str, subscription: str, *, listener: Any, **_: Any) -> Any:
        self.calls += 1
        if self.calls == 1:
            for msg in self.messages:
                listener(self.first, msg)
            raise Timeout("operation timed out")
        return self.second

    async def problem(self) -> str | None:
        return None

    def close(self) -> None:
        pass


async def test_messages_of_a_timed_out_subscribe_are_acknowledged_on_their_own_consumer(loop_errors):
    client = _RetriedSubscribe()
    pubsub = PubSub("memory://retried", processor="retried", transport=client)
    got = Counting(5)
    await pubsub.consumer(TOPIC, "sub", ToolServiceRequest, direct=got.direct)
    async with asyncio.timeout(10):
        await got.all.wait()
    await asyncio.sleep(0)
    assert client.calls == 2
    assert client.first.acked == client.messages and client.second.acked == []
    assert loop_errors == []
    await pubsub.close()
