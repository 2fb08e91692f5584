"""The connection watcher: what counts as a lost broker, and when each consumer was back.

Before, a consumer that ``PubSub.remove`` was still closing counted as
disconnected (pulsar-client reports a closing consumer so), and each fetch of
a config too big for one message made and closed such a client: every
config change ended every call in flight in the process ("Lost the
connection to the broker", then "Reconnected after 0s", no TCP connection
changed).  And a process back from an outage said it served its request
topics again from when its *last* part reconnected, which ended the calls
that had reached its consumer in between.
"""

from __future__ import annotations

import asyncio
import threading

from trustgraph.base.messaging.connection_watch import Back, ConnectionWatch, Lost, Resubscribed
from trustgraph.base.testing import MemoryBroker, memory_pubsub
from trustgraph.schema import ToolServiceResponse

REQ = "non-persistent://tg/request/watched"
OTHER = "non-persistent://tg/request/other"


def test_one_loss_is_one_lost_and_one_back():
    watch = ConnectionWatch()
    assert watch.observe([(REQ, True), (None, True)], 100.0, 1.0) is None
    assert watch.observe([(REQ, False), (None, True)], 100.5, 1.5) == Lost(100.5)
    assert watch.lost
    assert watch.observe([(REQ, False), (None, False)], 101.0, 2.0) is None  # still the same loss
    back = watch.observe([(REQ, True), (None, True)], 104.0, 5.0)
    assert isinstance(back, Back) and (back.lost_at, back.down_for) == (100.5, 3.5)
    assert not watch.lost
    assert watch.observe([(REQ, True), (None, True)], 104.25, 5.25) is None


def test_each_consumer_topic_is_dated_by_its_own_return_not_by_the_last_part():
    watch = ConnectionWatch()
    watch.observe([(REQ, False), (OTHER, False), (None, False)], 10.0, 0.0)
    watch.observe([(REQ, False), (OTHER, False), (None, False)], 10.02, 0.02)
    watch.observe([(REQ, True), (OTHER, False), (None, False)], 10.04, 0.04)   # REQ resubscribed
    watch.observe([(REQ, True), (OTHER, False), (None, False)], 12.0, 2.0)
    back = watch.observe([(REQ, True), (OTHER, True), (None, True)], 13.0, 3.0)  # the producer last
    assert back.resubscribed == {REQ: Resubscribed(down=10.02, up=10.04), OTHER: Resubscribed(down=12.0, up=13.0)}


def test_a_topic_is_served_while_any_of_its_consumers_is_connected():
    watch = ConnectionWatch()
    watch.observe([(REQ, True), (REQ, False), (None, False)], 10.0, 0.0)
    back = watch.observe([(REQ, True), (REQ, True), (None, True)], 11.0, 1.0)
    assert back.resubscribed == {}


async def test_a_consumer_being_removed_is_no_lost_connection():
    broker = MemoryBroker()
    ps = memory_pubsub(broker, "watched")
    closing, release = threading.Event(), threading.Event()
    try:
        consumer = await ps.consumer(REQ, "fetch", ToolServiceResponse, direct=lambda msg: None)
        raw = consumer._consumer
        close = raw.close

        def slow_close() -> None:   # pulsar-client: "Closing" (not connected) until the broker answers
            closing.set()
            release.wait(10)
            close()

        raw.close = slow_close
        raw.is_connected = lambda: not closing.is_set()
        removing = asyncio.ensure_future(ps.remove(consumer))
        assert await asyncio.to_thread(closing.wait, 10)
        states = ps.connection_states()
        release.set()
        await asyncio.wait_for(removing, 10)
        assert all(connected for _topic, connected in states), states
        assert ps.connection_states() == []
    finally:
        release.set()
        await ps.close()


async def test_a_part_removed_while_it_is_read_is_no_lost_connection():
    # The watcher reads in a thread of its own, so PubSub.remove may take a part away, and its close
    # begin, between the copy of the parts and the reading of that one: a disconnected reading
    # counts only if the part is still open after it.
    broker = MemoryBroker()
    ps = memory_pubsub(broker, "watched")
    try:
        consumer = await ps.consumer(REQ, "fetch", ToolServiceResponse, direct=lambda msg: None)
        kept = await ps.consumer(OTHER, "kept", ToolServiceResponse, direct=lambda msg: None)

        def removed_and_closing_as_it_is_read() -> bool:
            ps._consumers.remove(consumer)   # what remove() does first, then the close
            return False

        consumer._consumer.is_connected = removed_and_closing_as_it_is_read
        assert ps.connection_states() == [(OTHER, True)]
        kept._consumer.is_connected = lambda: False   # an open part that reads disconnected still counts
        assert ps.connection_states() == [(OTHER, False)]
        await consumer.stop()
    finally:
        await ps.close()
