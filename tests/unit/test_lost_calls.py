"""Calls that can no longer be answered end at once, not at their deadlines.

A request taken by a process that then died is gone (non-persistent topics),
and so is everything in flight when the broker connection drops.  Before,
such calls waited for their deadlines (120 s at the gateway) and kept their
slots; now the restarted service's notice, or the lost connection, ends them
with ``CallLost`` and frees the slots for fresh calls.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from support import wait_for_async
from trustgraph.base import RequestResponseClient
from trustgraph.base.messaging.connection_watch import Resubscribed
from trustgraph.base.messaging.lost_calls import RESTARTED_ENV, WHO_SERVES, CallWatch
from trustgraph.base.messaging.request_response import CallLost
from trustgraph.base.messaging.serving import Replies, serve
from trustgraph.base.testing import MemoryBroker, memory_pubsub
from trustgraph.schema import ServingStarted, ToolServiceRequest, ToolServiceResponse
from trustgraph.topics import SERVING

REQ = "non-persistent://tg/request/lost-calls"
RESP = "non-persistent://tg/response/lost-calls"
REPLIES = Replies(error_record=lambda e: ToolServiceResponse(error=e, end_of_stream=True),
                  error_type="tool-service-error")
_HOLD: list[asyncio.Event] = []  # what a handler that "never answers" waits on (one per test)
DEADLINE = 60.0  # far beyond what the test waits for: a call that keeps it fails the test's bound


@pytest.fixture
async def setup():
    _HOLD[:] = [asyncio.Event()]
    broker = MemoryBroker()
    service_ps, caller_ps = memory_pubsub(broker, "svc"), memory_pubsub(broker, "caller")
    client = RequestResponseClient(caller_ps, request_topic=REQ, response_topic=RESP,
                                   request_schema=ToolServiceRequest, response_schema=ToolServiceResponse,
                                   subscription="caller", max_in_flight=1)
    yield broker, service_ps, caller_ps, client
    _HOLD[0].set()  # the handlers that never answer end, so the consumers stop at once
    await client.stop()
    await service_ps.close()
    await caller_ps.close()


async def _sent(broker, topic) -> None:
    """Until a send on ``topic`` is kept by the (held) in-memory producer."""
    await wait_for_async(f"a held send on {topic}", lambda: broker._held.get(topic), 30, every=0.01)


async def _serve(ps, work, concurrency: int = 1):
    producer = await ps.producer(RESP)
    return await serve(ps, REQ, "svc", ToolServiceRequest, producer=producer, replies=REPLIES, work=work,
                       concurrency=concurrency)


def _late_notices(ps, monkeypatch) -> asyncio.Event:
    """Hold ``ps``'s subscription to the serving notices until the event returned is set: on a
    loaded machine it came late (its worker thread busy with another part's opening)."""
    release = asyncio.Event()
    subscribe = ps.consumer

    async def consumer(topic, *args, **kwargs):
        if topic == ps.serving_topic:
            await release.wait()
        return await subscribe(topic, *args, **kwargs)

    monkeypatch.setattr(ps, "consumer", consumer)
    return release


async def _turns() -> None:
    """Let what is ready on the loop run (no time passes): a request about to go, goes."""
    for _ in range(20):
        await asyncio.sleep(0)


async def test_a_restarted_service_ends_the_calls_its_predecessor_took_and_frees_their_slot(setup, monkeypatch):
    broker, service_ps, caller_ps, client = setup
    taken = asyncio.Event()

    async def dies_with_it(msg, reply):  # the first process takes the request and never answers
        taken.set()
        await _HOLD[0].wait()

    await _serve(service_ps, dies_with_it)
    await client.start()
    lost = asyncio.ensure_future(client.request(ToolServiceRequest(user="old"), timeout=DEADLINE))
    await asyncio.wait_for(taken.wait(), 10)

    async def answers(msg, reply):
        await reply.send(ToolServiceResponse(response=f"hi {msg.value.user}", end_of_stream=True))

    # The service comes back (another process: its own PubSub), started again by a supervisor.
    restarted = memory_pubsub(broker, "svc-again")
    monkeypatch.setenv(RESTARTED_ENV, "1")
    try:
        await _serve(restarted, answers)
        with pytest.raises(CallLost, match="started again"):
            await asyncio.wait_for(lost, 10)
        # The one slot (max_in_flight=1) is free: a fresh call is answered.
        fresh = await asyncio.wait_for(client.request(ToolServiceRequest(user="new"), timeout=DEADLINE), 10)
        assert fresh.response == "hi new"
    finally:
        await restarted.close()


# The response topic in each form a client may be given: every one names a non-persistent topic,
# whose replies the lost connection took (before the Topic value, only the URL was read as one).
@pytest.mark.parametrize("response_topic", [RESP, "q0/tg/response/lost-calls", "response:tg:lost-calls"])
async def test_a_lost_broker_connection_ends_the_calls_in_flight(setup, response_topic):
    _broker, service_ps, caller_ps, client = setup
    if response_topic != RESP:
        await client.stop()
        client = RequestResponseClient(caller_ps, request_topic=REQ, response_topic=response_topic,
                                       request_schema=ToolServiceRequest, response_schema=ToolServiceResponse,
                                       subscription="caller-named", max_in_flight=1)
    taken = asyncio.Event()

    async def holds(msg, reply):
        taken.set()
        await _HOLD[0].wait()

    await _serve(service_ps, holds)
    await client.start()
    call = asyncio.ensure_future(client.request(ToolServiceRequest(user="x"), timeout=DEADLINE))
    await asyncio.wait_for(taken.wait(), 10)
    caller_ps.calls.connection_lost()  # what PubSub's watcher does when the broker goes
    try:
        with pytest.raises(CallLost, match="connection to the broker"):
            await asyncio.wait_for(call, 10)
    finally:
        await client.stop()


async def test_a_service_that_starts_does_not_end_calls_to_other_topics(setup, monkeypatch):
    broker, service_ps, caller_ps, client = setup
    monkeypatch.setenv(RESTARTED_ENV, "1")  # even one that replaces a process that died
    answered = asyncio.Event()

    async def slow(msg, reply):
        await answered.wait()
        await reply.send(ToolServiceResponse(response="late but fine", end_of_stream=True))

    await _serve(service_ps, slow)
    await client.start()
    call = asyncio.ensure_future(client.request(ToolServiceRequest(user="x"), timeout=DEADLINE))
    other = memory_pubsub(broker, "other")
    try:
        producer = await other.producer("non-persistent://tg/response/elsewhere")
        await serve(other, "non-persistent://tg/request/elsewhere", "o", ToolServiceRequest, producer=producer,
                    replies=REPLIES, work=slow)
        answered.set()
        assert (await asyncio.wait_for(call, 10)).response == "late but fine"
    finally:
        await other.close()


async def test_a_process_back_from_a_broker_outage_ends_the_calls_others_sent_before_it(setup):
    # The caller's own watcher missed the outage (one its readings cannot see: connection_watch);
    # another process saw it.
    _broker, service_ps, caller_ps, client = setup
    taken = asyncio.Event()

    async def holds(msg, reply):
        taken.set()
        await _HOLD[0].wait()

    await _serve(service_ps, holds)
    await client.start()
    call = asyncio.ensure_future(client.request(ToolServiceRequest(user="x"), timeout=DEADLINE))
    await asyncio.wait_for(taken.wait(), 10)
    service_ps.calls.broker_back(time.time())
    with pytest.raises(CallLost, match="lost its broker connection"):
        await asyncio.wait_for(call, 10)


async def test_a_replica_started_beside_a_live_one_does_not_end_its_calls(setup, monkeypatch):
    # A first start (no supervisor said it replaces a dead process) may be one more replica on
    # the shared subscription: the call the live replica is working on must go on.
    broker, service_ps, caller_ps, client = setup
    monkeypatch.delenv(RESTARTED_ENV, raising=False)
    taken, finish = asyncio.Event(), asyncio.Event()

    async def working(msg, reply):
        taken.set()
        await finish.wait()
        await reply.send(ToolServiceResponse(response="done", end_of_stream=True))

    await _serve(service_ps, working)
    await client.start()
    call = asyncio.ensure_future(client.request(ToolServiceRequest(user="x"), timeout=DEADLINE))
    await asyncio.wait_for(taken.wait(), 10)
    notices: list[ServingStarted] = []
    sentinel = asyncio.Event()

    def heard(msg) -> None:
        notices.append(msg.value)
        if msg.value.topic == "sentinel":
            sentinel.set()

    await caller_ps.consumer(SERVING, "test-notices", ServingStarted, direct=heard)
    replica = memory_pubsub(broker, "svc-replica")
    try:
        await _serve(replica, working)
        # What the replica would have said comes before what it says next, on one producer.
        await replica.calls.serving("sentinel", time.time())
        await asyncio.wait_for(sentinel.wait(), 10)
        # It says it serves the topic, as a first start, which ends nothing.
        assert [(n.topic, n.first) for n in notices] == [(client.request_topic, True), ("sentinel", False)]
        finish.set()
        assert (await asyncio.wait_for(call, 10)).response == "done"
    finally:
        await replica.close()


async def test_after_an_outage_a_service_names_the_calls_that_reached_it_and_only_those_go_on(setup):
    # Its request consumer was seen down, then back; its last part came back later. The call that
    # reached it in between is being served: the notice names it, and it goes on. The other call
    # went before the consumer was back and is not named (it reached the service before the outage
    # notes began: to the notice, one the subscription never got): it ends at once.
    broker, service_ps, caller_ps, _one_slot = setup
    client = RequestResponseClient(caller_ps, request_topic=REQ, response_topic=RESP,
                                   request_schema=ToolServiceRequest, response_schema=ToolServiceResponse,
                                   subscription="caller-2")
    taken: list[str] = []
    arrived = asyncio.Event()
    finish = asyncio.Event()

    async def working(msg, reply):
        taken.append(msg.value.user)
        arrived.set()
        await finish.wait()
        await reply.send(ToolServiceResponse(response=f"served {msg.value.user}", end_of_stream=True))

    await _serve(service_ps, working, concurrency=2)
    await client.start()
    try:
        unnamed = asyncio.ensure_future(client.request(ToolServiceRequest(user="unnamed"), timeout=DEADLINE))
        await asyncio.wait_for(arrived.wait(), 10)
        down = time.time()
        service_ps.calls.connection_lost()            # the watcher saw the loss: arrivals are noted
        arrived.clear()
        named = asyncio.ensure_future(client.request(ToolServiceRequest(user="named"), timeout=DEADLINE))
        await asyncio.wait_for(arrived.wait(), 10)
        up = time.time() + 1.0                        # both calls went before the consumer was seen back
        notices: list[ServingStarted] = []
        told = asyncio.Event()

        def heard(msg) -> None:
            notices.append(msg.value)
            if msg.value.topic == REQ:
                told.set()

        await caller_ps.consumer(SERVING, "test-notices", ServingStarted, direct=heard)
        service_ps.calls.broker_back(down - 1.0, {REQ: Resubscribed(down=down, up=up)})
        await asyncio.wait_for(told.wait(), 10)
        (notice,) = [n for n in notices if n.topic == REQ]
        assert notice.sent == up and len(notice.received) == 1 and notice.reconnected
        # Its process never stopped: the lost connection is what ended the call, and is named.
        with pytest.raises(CallLost, match="the broker connection was lost") as lost:
            await asyncio.wait_for(unnamed, 10)
        assert "started again" not in str(lost.value)
        finish.set()
        assert (await asyncio.wait_for(named, 10)).response == "served named"
    finally:
        finish.set()
        await client.stop()


def test_only_served_topics_whose_consumer_was_seen_down_are_said_to_be_served_again():
    watch = CallWatch(None)
    watch._served.update({REQ: 1.0, "non-persistent://tg/request/never-down": 1.0})
    watch.connection_lost()
    watch.arrived(REQ, "early")
    watch._arrivals[REQ][0] = (99.0, "early")        # before the consumer was last seen down
    watch.arrived(REQ, "late")
    seen = {REQ: Resubscribed(down=100.0, up=100.02), "non-persistent://tg/request/not-ours": Resubscribed(1, 2)}
    assert watch.served_again(seen) == {REQ: (100.02, ["late"])}


def test_requests_are_noted_only_during_an_outage():
    watch = CallWatch(None)
    watch.arrived(REQ, "before")
    assert watch.served_again({REQ: Resubscribed(0.0, 1.0)}) == {}   # not served: nothing to say
    watch._served[REQ] = 0.5
    assert watch.served_again({REQ: Resubscribed(0.0, 1.0)}) == {REQ: (1.0, [])}


async def test_a_call_kept_while_its_producer_reconnected_is_dated_by_when_it_went_out(setup):
    # pulsar-client keeps what is sent during a reconnect and sends it once back; the lost
    # connection, and a notice about what was lost before the call went out, must not end it.
    broker, service_ps, caller_ps, client = setup

    async def answers(msg, reply):
        await reply.send(ToolServiceResponse(response="after the reconnect", end_of_stream=True))

    await _serve(service_ps, answers)
    await client.start()
    broker.hold_sends(REQ)
    call = asyncio.ensure_future(client.request(ToolServiceRequest(user="x"), timeout=DEADLINE))
    await asyncio.wait_for(_sent(broker, REQ), 10)
    caller_ps.calls.connection_lost()
    client.fail_pending("lost before it went out", before=time.time())
    broker.hold_sends(REQ, held=False)
    # Answered, so the loss did not end it (a failed call would raise here).
    assert (await asyncio.wait_for(call, 10)).response == "after the reconnect"


async def test_an_outage_while_the_service_is_busy_is_seen_and_the_request_it_dropped_ends_at_once(setup):
    # make reliability, kill -9 of the broker (2 of 3 runs): pulsar-lite was back in 0.06 s and each
    # part reconnected 0.1 s after the loss. The gateway's request, kept while its producer
    # reconnected, went out 3 ms before the agent's consumer had subscribed again, and was dropped.
    # The agent's watcher, reading every 0.25 s on its event loop, never saw the loss, so nobody
    # said the request was lost, and it waited out its 120 s deadline. Here the service's event
    # loop is busy for the whole outage: only readings taken off the loop can see it. And the
    # caller's loop runs the kept request's receipt only after the service was seen back, so the
    # call must be dated by when the receipt came, not by when its loop got to it.
    broker, _plain, caller_ps, client = setup
    service_ps = memory_pubsub(broker, "svc-reconnects", reconnects=True)

    async def answers(msg, reply):
        await reply.send(ToolServiceResponse(response="served", end_of_stream=True))

    try:
        consumer = await _serve(service_ps, answers)
        await client.start()
        raw = consumer._consumer
        connected = raw.is_connected
        seen = {"down": threading.Event(), "back": threading.Event()}

        def is_connected() -> bool:   # what the service's watcher reads, and when
            up = connected()
            if not up:
                seen["down"].set()
            elif seen["down"].is_set():
                seen["back"].set()
            return up

        raw.is_connected = is_connected
        broker.hold_sends(REQ)         # the caller's producer reconnecting: the request is kept
        call = asyncio.ensure_future(client.request(ToolServiceRequest(user="x"), timeout=DEADLINE))
        await asyncio.wait_for(_sent(broker, REQ), 10)

        def outage_on_a_busy_loop() -> tuple[bool, bool]:
            # Blocks the event loop, as a long step of work (or a loaded machine) does.
            broker.cut_off(service_ps.transport)       # the service's connection is gone
            broker.hold_sends(REQ, held=False)         # the kept request goes, while nothing consumes it
            down = seen["down"].wait(10)
            broker.cut_off(service_ps.transport, cut=False)
            return down, seen["back"].wait(10)

        down, back = outage_on_a_busy_loop()
        assert down and back, f"the service's watcher read its connection: down {down}, back {back}"
        with pytest.raises(CallLost, match="broker connection"):
            await asyncio.wait_for(call, 10)
        assert REQ not in {m.topic for m in broker.sent.get(RESP, ())}   # never served
        fresh = await asyncio.wait_for(client.request(ToolServiceRequest(user="y"), timeout=DEADLINE), 10)
        assert fresh.response == "served"
    finally:
        await service_ps.close()


def test_a_service_can_tell_whether_a_request_it_took_was_ended_by_its_caller():
    # Its callers end what they sent before any loss they hear of; so does it, for what it took.
    watch = CallWatch(None)
    assert watch.lost_since(0.0) is None
    watch.connection_lost(100.0)                                    # its own watcher: by this process
    assert watch.lost_since(99.0) == (100.0, None) and watch.lost_since(100.0) is None
    watch._on_started(type("M", (), {"value": ServingStarted(topic="*", processor="prompt", instance="x",
                                                             sent=105.0)})())
    assert watch.lost_since(101.0) == (105.0, "prompt")            # a notice from another process
    watch.connection_lost(103.0)                                    # an older loss heard later: the latest stays
    assert watch.lost_since(101.0) == (105.0, "prompt") and watch.lost_since(105.0) is None
    own = ServingStarted(topic="*", processor="self", instance=watch.instance, sent=200.0)
    watch._on_started(type("M", (), {"value": own})())              # its own notice is no news
    assert watch.lost_since(150.0) is None



async def test_a_process_that_starts_listening_hears_the_topics_served_by_those_started_before_it(setup):
    # The LLM service said it serves its topic when it started, before prompt-template listened; the
    # broker's gauge counts it only at its next refresh, so prompt's first call was held for seconds.
    # A process that starts listening asks, and every process of ours says again what it serves.
    broker, service_ps, caller_ps, _client = setup

    async def answers(msg, reply):
        await reply.send(ToolServiceResponse(response="hi", end_of_stream=True))

    await _serve(service_ps, answers)
    heard: list[str] = []
    caller_ps.calls.on_serving(heard.append)
    await wait_for_async("the topic served since before", lambda: REQ in heard, 10, every=0.01)
    assert WHO_SERVES not in heard                    # its own question is not an answer


async def test_probes_that_come_together_get_one_round_of_answers():
    # Anyone on the bus can ask: a flood of questions costs one round of answers per ANSWER_GAP.
    watch = CallWatch(None)
    watch._served[REQ] = 1.0
    probe = type("M", (), {"value": ServingStarted(topic=WHO_SERVES, processor="x", instance="other",
                                                   first=True)})()
    watch._on_started(probe)
    first = watch._answer
    for _ in range(50):
        watch._on_started(probe)
    assert first is not None and watch._answer is first   # one round scheduled for all of them
    watch.close()
    assert watch._answer is None


async def test_a_call_made_before_its_process_hears_the_notices_is_not_left_to_its_deadline(setup, monkeypatch):
    # The notices are non-persistent: a restart notice sent before the caller's process has
    # subscribed is dropped. Its first call went at once, so a call taken by a process that then
    # died waited out its deadline. Now the client sends nothing until its process listens.
    broker, service_ps, caller_ps, client = setup
    release = _late_notices(caller_ps, monkeypatch)
    opened = asyncio.Event()
    open_producer = caller_ps.producer

    async def producer(topic, **kwargs):
        made = await open_producer(topic, **kwargs)
        if topic == REQ:
            opened.set()
        return made

    monkeypatch.setattr(caller_ps, "producer", producer)

    async def dies_with_it(msg, reply):
        await _HOLD[0].wait()

    async def answers(msg, reply):
        await reply.send(ToolServiceResponse(response=f"hi {msg.value.user}", end_of_stream=True))

    first = await _serve(service_ps, dies_with_it)
    call = asyncio.ensure_future(client.request(ToolServiceRequest(user="x"), timeout=DEADLINE))
    await asyncio.wait_for(opened.wait(), 10)
    await _turns()
    _HOLD[0].set()                          # the first process dies with what it took, unanswered
    await service_ps.remove(first)
    restarted = memory_pubsub(broker, "svc-again")
    monkeypatch.setenv(RESTARTED_ENV, "1")
    try:
        await _serve(restarted, answers)     # its notice goes while the caller does not listen yet
        release.set()
        assert (await asyncio.wait_for(call, 10)).response == "hi x"
    finally:
        await restarted.close()


async def test_a_service_says_what_it_serves_only_once_it_hears_who_asks(setup, monkeypatch):
    # A process that starts listening asks who serves what; one that asks while the service's own
    # subscription is not in place gets no answer. The service said it serves its topic before it
    # listened, so that process heard neither the notice nor an answer.
    broker, service_ps, caller_ps, _client = setup
    release = _late_notices(service_ps, monkeypatch)

    async def answers(msg, reply):
        await reply.send(ToolServiceResponse(response="hi", end_of_stream=True))

    serving = asyncio.ensure_future(_serve(service_ps, answers))
    await wait_for_async("the service's notice producer",
                         lambda: any(p.topic == SERVING for p in service_ps._producers), 10, every=0.01)
    await _turns()
    heard: list[str] = []
    caller_ps.calls.on_serving(heard.append)
    await wait_for_async("the question", lambda: any(b'"?"' in m.data() for m in broker.sent.get(SERVING, ())),
                         10, every=0.01)
    release.set()
    await asyncio.wait_for(serving, 10)
    await wait_for_async("the topic served", lambda: REQ in heard, 10, every=0.01)
