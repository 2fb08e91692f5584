"""Overload: many clients at once against one service, every call answered.

Before the fix, a burst of 5,000 config calls from 20 clients lost about a
third of them: config-svc paused its listener when busy, and on a
non-persistent topic the broker drops (silently) what a consumer without
flow permits cannot take; and each client's response subscription, which
receives every client's replies, ran out of room in its receive queue the
same way.  Now every call gets its reply (or, past the service's backlog
bound, an error reply at once): none is lost and none outlives its deadline.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.base.messaging.request_response import RequestTimeout
from trustgraph.schema import ConfigRequest, ConfigResponse
from trustgraph.topics import CONFIG_REQUEST, CONFIG_RESPONSE

IN_FLIGHT = 256          # each client's own bound (RequestResponseClient's default)
DEADLINE = 90.0          # per call; on an idle machine the 5,000-call burst takes ~6 s
# config-svc answers 16 at a time, and received into a queue of 1,000 before the fix:
# 20 x 256 calls in flight at once are 5x that queue, 40 x 256 are 10x.


@pytest.mark.parametrize(("n_clients", "calls"), [
    (20, 5000),
    pytest.param(40, 40 * IN_FLIGHT, marks=[pytest.mark.long, pytest.mark.timeout(600)]),
])
async def test_a_burst_from_many_clients_loses_no_reply(own_broker, spawn, tmp_path, scenario, n_clients, calls):
    spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
    pubsubs = [PubSub(own_broker.url, processor=f"burst-{i}") for i in range(n_clients)]
    clients = [RequestResponseClient(ps, request_topic=CONFIG_REQUEST, response_topic=CONFIG_RESPONSE,
                                     request_schema=ConfigRequest, response_schema=ConfigResponse,
                                     subscription=f"burst-{uuid.uuid4()}", max_in_flight=IN_FLIGHT)
               for ps in pubsubs]
    outcome = {"ok": 0, "error": 0, "lost": 0, "hung": 0}
    try:
        for c in clients:
            await c.start()
        # One answered call each first: the subscriptions are in place before the burst.
        await asyncio.gather(*(c.request(ConfigRequest(operation="list", type="tool"), timeout=30)
                               for c in clients))

        async def call(c: RequestResponseClient) -> None:
            # A bound above the deadline: a call still waiting then is hung.
            task = asyncio.ensure_future(c.request(ConfigRequest(operation="list", type="tool"),
                                                   timeout=DEADLINE))
            done, _ = await asyncio.wait([task], timeout=DEADLINE + 30)
            if not done:
                task.cancel()
                outcome["hung"] += 1
            elif isinstance(task.exception(), RequestTimeout):
                outcome["lost"] += 1
            else:
                outcome["error" if task.result().error is not None else "ok"] += 1

        started = time.monotonic()
        await asyncio.gather(*(call(clients[i % n_clients]) for i in range(calls)))
        took = time.monotonic() - started
    finally:
        for c in clients:
            await c.stop()
        for ps in pubsubs:
            await ps.close()
    scenario(scenario=f"overload: config burst of {calls:,}", load=f"{calls:,} calls from {n_clients} clients at once "
             f"({IN_FLIGHT} in flight each) on config-svc (16 at a time)",
             fault="none: overload", expected="every call answered (or refused with an error), none lost or hung",
             observed=f"{outcome['ok']:,} answered, {outcome['error']} error replies, in {took:.1f} s",
             lost=outcome["lost"], hung=outcome["hung"], ok=outcome["lost"] == outcome["hung"] == 0)
    assert outcome["lost"] == 0 and outcome["hung"] == 0, outcome
    assert outcome["ok"] + outcome["error"] == calls


@pytest.mark.long
@pytest.mark.timeout(600)
async def test_a_persistent_topic_loses_nothing_under_10x_its_receive_queue(own_broker, scenario):
    """A slow consumer of a persistent topic: the backlog waits at the broker, nothing is lost."""
    from trustgraph.schema import ToolServiceRequest

    n = 10_000  # 10x the receive queue of a persistent consumer (PERSISTENT_RECEIVE_QUEUE)
    topic = f"persistent://tg/flow/overload-{uuid.uuid4().hex[:8]}"
    ps = PubSub(own_broker.url, processor="overload-persistent")
    seen: set[str] = set()
    done = asyncio.Event()

    async def slow(msg) -> None:
        await asyncio.sleep(0)  # one yield per message: the handler is slower than the sender
        seen.add(msg.value.user)
        if len(seen) == n:
            done.set()

    try:
        await ps.consumer(topic, "slow", ToolServiceRequest, handler=slow, concurrency=2,
                          initial_position="earliest")
        out = await ps.producer(topic)
        started = time.monotonic()
        for i in range(n):
            out.send_nowait(ToolServiceRequest(user=str(i)))
        try:
            await asyncio.wait_for(done.wait(), 300)
        except TimeoutError:
            pass
        took = time.monotonic() - started
    finally:
        await ps.close()
    lost = n - len(seen)
    scenario(scenario="overload: persistent topic", load=f"{n:,} messages sent at once to a consumer "
             "handling 2 at a time (10x its receive queue)", fault="none: overload",
             expected="every message handled", observed=f"{len(seen):,} handled in {took:.1f} s",
             lost=lost, ok=lost == 0)
    assert lost == 0
