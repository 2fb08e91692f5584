"""The gateway's view of which request topics nothing serves."""

from __future__ import annotations

import asyncio
import json
import logging
import time

from support import wait_for_async
from trustgraph.base import RequestResponseClient
from trustgraph.base.launching.stack import stack_starting
from trustgraph.base.messaging import unserved
from trustgraph.base.messaging.transport import Capabilities, TransportError
from trustgraph.base.messaging.unserved import GRACE, POLL, UnservedTopics
from trustgraph.base.testing import MemoryBroker, memory_pubsub
from trustgraph.base.testing.stand_ins import Responder
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse

TOPIC = "non-persistent://tg/request/embeddings:default"
KEY = "tg/request/embeddings:default"
RESPONSE = "non-persistent://tg/response/embeddings:default"


def test_a_topic_without_consumers_for_the_grace_period_is_unserved():
    u = UnservedTopics(None)
    t = 100.0
    while t < 100.0 + GRACE:
        u.take({}, t)
        assert not u.unserved(TOPIC, t)  # too early: the gauge may lag a processor that just started
        t += POLL
    u.take({}, t)
    assert u.unserved(TOPIC, t)


def test_a_consumer_seen_within_the_grace_period_keeps_it_served():
    u = UnservedTopics(None)
    u.take({KEY: 1}, 100.0)
    u.take({KEY: 0}, 100.0 + GRACE - 1)  # e.g. restarting
    assert not u.unserved(TOPIC, 100.0 + GRACE - 1)
    u.take({KEY: 0}, 100.0 + GRACE + 1)
    assert u.unserved(TOPIC, 100.0 + GRACE + 1)
    u.take({KEY: 1}, 100.0 + GRACE + 3)  # back
    assert not u.unserved(TOPIC, 100.0 + GRACE + 3)


def test_without_recent_readings_nothing_is_refused():
    never = UnservedTopics(None)
    assert not never.unserved(TOPIC, 1000.0)
    stale = UnservedTopics(None)
    stale.take({}, 100.0)
    assert not stale.unserved(TOPIC, 100.0 + GRACE + 10 * POLL)


def test_why_says_what_a_caller_is_told_and_nothing_while_served():
    u = UnservedTopics(None)
    u.take({KEY: 1}, 100.0)
    assert u.why(TOPIC, 100.0) is None
    u.take({KEY: 0}, 100.0 + GRACE + 1)
    assert u.why(TOPIC, 100.0 + GRACE + 1).startswith(f"nothing serves {TOPIC}: the broker has counted")


def test_a_topic_listed_late_gets_its_own_grace():
    # A tool service started while the stack runs: the broker lists its topic at once, with no
    # consumer until its next refresh; the readings began long before, and that must not matter.
    u = UnservedTopics(None)
    for t in range(100, 200, int(POLL)):
        u.take({}, float(t))
    assert u.unserved(TOPIC, 200.0)                          # never listed: a route nothing runs
    u.take({KEY: 0}, 202.0)                                  # listed: its grace starts now
    assert not u.unserved(TOPIC, 202.0)
    u.take({KEY: 0}, 202.0 + GRACE - 1)
    assert not u.unserved(TOPIC, 202.0 + GRACE - 1)
    u.take({KEY: 0}, 202.0 + GRACE)
    assert u.unserved(TOPIC, 202.0 + GRACE)                  # nothing came: refused, as before
    u.take({KEY: 1}, 202.0 + GRACE + POLL)
    assert not u.unserved(TOPIC, 202.0 + GRACE + POLL)


def test_a_topic_a_processor_says_it_serves_is_served_before_the_gauge_shows_it():
    # The LLM service loads its model while the prompt service's producer has listed its topic
    # already: unserved by the grace, then it subscribes and says so; the gauge shows the
    # consumer only at its next refresh, and a call made meanwhile must not be refused.
    u = UnservedTopics(None)
    u.take({KEY: 0}, 100.0)
    u.take({KEY: 0}, 100.0 + GRACE)
    assert u.unserved(TOPIC, 100.0 + GRACE)
    u.heard(TOPIC, 100.0 + GRACE + 1)
    u.take({KEY: 0}, 100.0 + GRACE + 2)                      # the gauge, not refreshed yet
    assert not u.unserved(TOPIC, 100.0 + GRACE + 2)
    # a process that said so and then died is unserved again once the gauge has had its grace
    u.take({KEY: 0}, 100.0 + 2 * GRACE + 1)
    assert u.unserved(TOPIC, 100.0 + 2 * GRACE + 1)


# -- a call made during a topic's grace ---------------------------------------------------------
# Sent at once, its request would be dropped by a topic nobody consumes and the call would wait its
# whole deadline (tg-invoke-tool-service past 60 s, the agent 61 s); refused at once, a service
# about to start would be refused. It is held until the topic is judged.

SOON = 0.5  # seconds until the grace of the tests below ends: readings made GRACE - SOON ago
PATIENCE = 60.0  # the calls' deadlines: far beyond what a test waits for


def _in_grace(u: UnservedTopics) -> None:
    """Readings that listed TOPIC with no consumer, the first GRACE - SOON seconds ago."""
    now = time.monotonic()
    u.take({KEY: 0}, now - GRACE + SOON)
    u.take({KEY: 0}, now)


async def test_a_call_made_in_the_grace_is_refused_when_the_grace_ends_not_at_its_deadline():
    u = UnservedTopics(None)
    _in_grace(u)
    assert u.in_grace(TOPIC) and not u.unserved(TOPIC)
    t0 = time.monotonic()
    first, second = (asyncio.ensure_future(u.verdict(TOPIC, PATIENCE)) for _ in range(2))
    await asyncio.sleep(0)
    assert len(u._held) == 1                      # one wait per topic, however many calls
    why = await asyncio.wait_for(first, 30)
    assert why is not None and why.startswith(f"nothing serves {TOPIC}")
    assert await asyncio.wait_for(second, 30) == why
    assert time.monotonic() - t0 < 30             # at the grace's end, not at the deadline
    assert u._held == {}
    # A call after the grace is refused at once, with the same words.
    assert await asyncio.wait_for(u.verdict(TOPIC, PATIENCE), 1) == why


async def test_a_consumer_counted_during_the_grace_lets_the_held_calls_go():
    u = UnservedTopics(None)
    _in_grace(u)
    held = asyncio.ensure_future(u.verdict(TOPIC, PATIENCE))
    await asyncio.sleep(0)
    assert not held.done()
    u.take({KEY: 1}, time.monotonic())           # the broker counts the service that started
    assert await asyncio.wait_for(held, 1) is None


async def test_a_processor_heard_serving_during_the_grace_lets_the_held_calls_go():
    u = UnservedTopics(None)
    _in_grace(u)
    held = asyncio.ensure_future(u.verdict(TOPIC, PATIENCE))
    await asyncio.sleep(0)
    u.heard(TOPIC)                                # its ServingStarted notice, before the gauge shows it
    assert await asyncio.wait_for(held, 1) is None
    assert not u.in_grace(TOPIC)                  # and later calls are not held either
    assert await asyncio.wait_for(u.verdict(TOPIC, PATIENCE), 1) is None


async def test_held_calls_go_when_the_readings_stop_and_a_call_keeps_its_own_deadline():
    u = UnservedTopics(None)
    _in_grace(u)
    t0 = time.monotonic()
    assert await u.verdict(TOPIC, 0.05) is None   # its deadline came first: the caller's timeout says so
    assert time.monotonic() - t0 < SOON + 5
    held = asyncio.ensure_future(u.verdict(TOPIC, PATIENCE))
    await asyncio.sleep(0)
    await u.stop()                                # nothing is judged any more: nothing is held
    assert await asyncio.wait_for(held, 1) is None


async def test_nothing_is_held_without_readings_or_for_a_served_topic():
    assert await asyncio.wait_for(UnservedTopics(None).verdict(TOPIC, PATIENCE), 1) is None
    u = UnservedTopics(None)
    u.take({KEY: 1}, time.monotonic())
    assert not u.in_grace(TOPIC)
    assert await asyncio.wait_for(u.verdict(TOPIC, PATIENCE), 1) is None


async def test_a_client_call_in_the_grace_is_not_sent_until_a_consumer_appears_then_answered():
    # On the real client and PubSub (in memory): the request waits in the client, not on a topic
    # nobody consumes, and goes once the service is there.
    broker = MemoryBroker()
    ps = memory_pubsub(broker, "caller")
    u = UnservedTopics(None)
    _in_grace(u)
    client = RequestResponseClient(ps, request_topic=TOPIC, response_topic=RESPONSE,
                                   request_schema=ToolServiceRequest, response_schema=ToolServiceResponse,
                                   subscription="caller", unserved=u.verdict)
    try:
        call = asyncio.ensure_future(client.request(ToolServiceRequest(user="u"), timeout=PATIENCE))
        await wait_for_async("the call held", lambda: bool(u._held), 10, every=0.01)
        assert not broker.sent.get(TOPIC)
        await Responder(memory_pubsub(broker, "svc"), TOPIC, RESPONSE, ToolServiceRequest,
                        lambda r: [ToolServiceResponse(response="hi", end_of_stream=True)]).start()
        u.heard(TOPIC)
        assert (await asyncio.wait_for(call, 10)).response == "hi"
        assert len(broker.sent[TOPIC]) == 1
    finally:
        await client.stop()
        await ps.close()


def test_while_the_stack_is_starting_no_grace_runs_out_and_it_counts_from_the_last_start(tmp_path):
    """Item 14: a model that loads for longer than the grace is waited for, not refused."""
    status = tmp_path / "components.json"

    def states(**components: str) -> None:
        status.write_text(json.dumps({"components": {n: {"state": s} for n, s in components.items()}}))

    states(agent="up", llm="starting")
    u = UnservedTopics(None, starting=stack_starting(str(status)))
    t = 100.0
    while t < 100.0 + 5 * GRACE:                  # a model loading for a minute
        u.take({}, t)
        assert u.in_grace(TOPIC, t) and not u.unserved(TOPIC, t)
        t += POLL
    last_start = t - POLL
    states(agent="up", llm="up")                  # everything is up: nothing serves TOPIC after all
    while t < last_start + GRACE:
        u.take({}, t)
        assert not u.unserved(TOPIC, t)
        t += POLL
    u.take({}, t)
    assert u.unserved(TOPIC, t)
    # A stack that is not starting, or no states to read: the grace as before.
    for path in (str(status), str(tmp_path / "none.json"), None):
        plain = UnservedTopics(None, starting=stack_starting(path))
        plain.take({}, 100.0)
        plain.take({}, 100.0 + GRACE)
        assert plain.unserved(TOPIC, 100.0 + GRACE)


async def test_a_call_held_while_the_stack_starts_goes_when_its_processor_is_heard(tmp_path):
    status = tmp_path / "components.json"
    status.write_text(json.dumps({"components": {"llm": {"state": "starting"}}}))
    u = UnservedTopics(None, starting=stack_starting(str(status)))
    now = time.monotonic()
    u.take({KEY: 0}, now - 3 * GRACE)             # listed, no consumer, for longer than the grace
    u.take({KEY: 0}, now)
    held = asyncio.ensure_future(u.verdict(TOPIC, PATIENCE))
    await asyncio.sleep(0)
    assert not held.done() and u.in_grace(TOPIC)
    u.heard(TOPIC)                                # the model loaded, and its service says so
    assert await asyncio.wait_for(held, 1) is None


def test_a_topic_named_in_any_form_is_read_as_the_brokers_metrics_label_it():
    """A blueprint may name a request topic in upstream's generic (2.1) or class (2.11) form: each is
    the same topic, served when the broker counts consumers on it (it was read as unserved)."""
    from trustgraph.base.messaging.broker_consumers import topic_key

    for name in ("non-persistent://tg/request/x", "q0/tg/request/x", "request:tg:x", "tg/request/x"):
        assert topic_key(name) == "tg/request/x"


class Counting:
    """A transport's consumer counts (``Transport.consumer_counts``), as the test gives them."""

    def __init__(self, counts: bool = True) -> None:
        self.capabilities = Capabilities(name="counting", consumer_counts=counts)
        self.readings: list[dict[str, int] | TransportError] = []
        self.asked = 0

    async def consumer_counts(self, timeout: float = 5.0) -> dict[str, int] | None:
        self.asked += 1
        reading = self.readings.pop(0) if self.readings else {}
        if isinstance(reading, TransportError):
            raise reading
        return reading


async def test_the_counts_are_read_from_the_transport_and_an_unreadable_reading_is_one_line(monkeypatch, caplog):
    monkeypatch.setattr(unserved, "POLL", 0.01)
    transport = Counting()
    transport.readings = [{KEY: 1}, TransportError("cannot read http://b:8080/metrics"),
                          TransportError("cannot read http://b:8080/metrics"), {KEY: 0}]
    u = UnservedTopics(transport)
    with caplog.at_level(logging.INFO, logger="trustgraph.base.messaging.unserved"):
        u.start()
        try:
            await wait_for_async("four readings", lambda: transport.asked >= 4, 10, every=0.01)
        finally:
            await u.stop()
    assert u._served_at.get(KEY) is not None                   # the first reading counted a consumer
    assert [r.getMessage() for r in caplog.records] == [
        "Broker metrics unreadable (cannot read http://b:8080/metrics): no interface is refused meanwhile"]


async def test_a_transport_that_cannot_count_is_never_asked():
    transport = Counting(counts=False)
    u = UnservedTopics(transport)
    u.start()
    assert u._task is None and not u.counting
    await u.stop()
    assert transport.asked == 0
