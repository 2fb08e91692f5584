"""ToolServiceClients.invoke on the in-memory transport: fail-fast, retries only where safe."""

from __future__ import annotations

import time

import pytest
from trustgraph.base.messaging.unserved import GRACE, UnservedTopics
from trustgraph.base.testing import MemoryBroker, memory_pubsub
from trustgraph.base.testing.stand_ins import Responder
from trustgraph.base.tool_services.tool_service_client import ServiceUnavailable, ToolServiceClients
from trustgraph.catalog import ToolServiceDescriptor
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse
from trustgraph.topics import tool_service_topics

REQ, RESP = tool_service_topics("unit-pool")


def service(idempotent: bool) -> ToolServiceDescriptor:
    return ToolServiceDescriptor.model_validate(
        {"id": "svc", "request-queue": REQ, "response-queue": RESP, "idempotent": idempotent})


class Flaky:
    """Answers requests except the first ``ignore`` ones (as if they were lost)."""

    def __init__(self, ignore: int) -> None:
        self.ignore = ignore
        self.ids: list[str] = []

    def __call__(self, request: ToolServiceRequest, props: dict[str, str] | None = None) -> list:
        if len(self.ids) <= self.ignore - 1:
            self.ids.append("?")
            return []
        self.ids.append("!")
        return [ToolServiceResponse(response="ok", end_of_stream=True)]


@pytest.fixture
async def pool():
    broker = MemoryBroker()
    ps = memory_pubsub(broker, "caller")
    state = {"live": None}
    clients = ToolServiceClients(ps, name="test", liveness=lambda sid, queue: state["live"])
    yield broker, clients, state
    await clients.close()
    await ps.close()


async def responder(broker: MemoryBroker, answer) -> Responder:
    return await Responder(memory_pubsub(broker, "svc"), REQ, RESP, ToolServiceRequest, answer).start()


async def test_a_service_known_to_be_down_fails_at_once_and_nothing_is_sent(pool):
    broker, clients, state = pool
    state["live"] = False
    t0 = time.monotonic()
    with pytest.raises(ServiceUnavailable) as e:
        await clients.invoke(service(False), "u", {}, {}, timeout=60)
    assert time.monotonic() - t0 < 30  # not the deadline: nothing was waited for
    assert e.value.type == "tool-service-unavailable" and "'svc' is not running" in e.value.message
    assert broker.sent.get(REQ) is None


async def test_an_idempotent_service_is_retried_under_the_same_request_id(pool):
    broker, clients, _ = pool
    flaky = Flaky(ignore=1)
    await responder(broker, flaky)
    assert await clients.invoke(service(True), "u", {}, {}, timeout=3) == "ok"
    ids = [m.props["id"] for m in broker.sent[REQ]]
    assert len(ids) == 2 and ids[0] == ids[1]


async def test_any_other_service_is_called_once(pool):
    broker, clients, _ = pool
    await responder(broker, Flaky(ignore=1))
    with pytest.raises(TimeoutError):
        await clients.invoke(service(False), "u", {}, {}, timeout=1)
    assert len(broker.sent[REQ]) == 1


async def test_no_retry_once_a_chunk_was_passed_on(pool):
    broker, clients, _ = pool

    def half(request: ToolServiceRequest, props=None) -> list:
        return [ToolServiceResponse(response="first half", end_of_stream=False)]  # then silence

    await responder(broker, half)
    seen: list[str] = []
    with pytest.raises(TimeoutError):
        await clients.invoke(service(True), "u", {}, {}, timeout=1, on_chunk=seen.append)
    assert seen == ["first half"] and len(broker.sent[REQ]) == 1


async def test_a_service_whose_replica_announces_itself_is_called_whatever_the_broker_gauge_says():
    # The broker's consumer gauge counts a service that has just started only at its next refresh;
    # its heartbeats are fresher, so a live announced service is called, an unknown one refused.
    broker = MemoryBroker()
    ps = memory_pubsub(broker, "caller")
    state = {"live": True}
    readings = UnservedTopics(None)               # the broker's gauge: nothing on REQ for long
    now = time.monotonic()
    readings.take({}, now - GRACE - 1)
    readings.take({}, now)
    clients = ToolServiceClients(ps, name="test", liveness=lambda sid, queue: state["live"] if queue == REQ else None,
                                 unserved=readings)
    try:
        await responder(broker, Flaky(ignore=0))
        assert await clients.invoke(service(False), "u", {}, {}, timeout=5) == "ok"
        state["live"] = None                       # not announced: the gauge decides
        with pytest.raises(ServiceUnavailable, match="nothing serves"):
            await clients.invoke(service(False), "u", {}, {}, timeout=5)
        assert len(broker.sent[REQ]) == 1
    finally:
        await clients.close()
        await ps.close()


async def test_a_call_whose_service_stops_while_it_runs_ends_at_once_not_at_its_deadline(pool):
    broker, clients, state = pool
    state["live"] = True

    def dies(request: ToolServiceRequest, props=None) -> list:
        state["live"] = False    # killed while the call runs: no answer, and it misses its lease
        return []

    await responder(broker, dies)
    t0 = time.monotonic()
    with pytest.raises(ServiceUnavailable) as e:
        await clients.invoke(service(False), "u", {}, {}, timeout=60)
    assert time.monotonic() - t0 < 30   # the watch, not the 60 s deadline
    assert "its replica stopped while the call ran" in e.value.message
    assert len(broker.sent[REQ]) == 1


async def test_a_callers_own_cancel_is_not_mistaken_for_a_stopped_service(pool):
    import asyncio
    broker, clients, state = pool
    state["live"] = True
    arrived = asyncio.Event()

    def silent(request: ToolServiceRequest, props=None) -> list:
        arrived.set()
        return []

    await responder(broker, silent)
    call = asyncio.ensure_future(clients.invoke(service(False), "u", {}, {}, timeout=60))
    await arrived.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
