"""RequestResponseClient's request() and stream() on the in-memory transport."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time

import pytest
from trustgraph.base import RequestResponseClient, RequestTimeout
from trustgraph.base.testing import MemoryBroker, Responder, memory_pubsub
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse

REQ, RESP = "non-persistent://tg/request/rr", "non-persistent://tg/response/rr"


def chunk(text: str, last: bool = False) -> ToolServiceResponse:
    return ToolServiceResponse(response=text, end_of_stream=last)


def last(r: ToolServiceResponse) -> bool:
    return r.end_of_stream


class Service:
    """Answers ``user="n"`` with n chunks then the end; ``user="stall"`` with one chunk, then
    nothing until ``release`` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    def __call__(self, req: ToolServiceRequest):
        return self._stall() if req.user == "stall" else self._count(int(req.user))

    async def _stall(self):
        yield chunk("first")
        await self.release.wait()
        yield chunk("late", True)

    async def _count(self, n: int):
        for i in range(n):
            yield chunk(str(i))
        yield chunk("", True)


@pytest.fixture
async def setup():
    broker = MemoryBroker()
    server, caller = memory_pubsub(broker, "server"), memory_pubsub(broker, "caller")
    service = Service()
    responder = await Responder(server, REQ, RESP, ToolServiceRequest, service).start()
    client = RequestResponseClient(caller, request_topic=REQ, response_topic=RESP,
                                   request_schema=ToolServiceRequest, response_schema=ToolServiceResponse,
                                   subscription="c", max_in_flight=2)
    yield client, service, responder
    service.release.set()
    await client.stop()
    await caller.close()
    await server.close()


def idle(client: RequestResponseClient) -> bool:
    """No waiter left and every in-flight slot free."""
    return client._waiters == {} and client._slots._value == 2


async def test_stream_yields_every_response_up_to_the_final_one(setup):
    client, _, _ = setup
    got = [r.response async for r in client.stream(ToolServiceRequest(user="3"), final=last, timeout=10)]
    assert got == ["0", "1", "2", ""]
    assert idle(client)
    assert (await client.request(ToolServiceRequest(user="0"), timeout=10)).end_of_stream
    assert idle(client)


async def test_breaking_out_early_frees_the_waiter_and_the_slot(setup):
    client, _, _ = setup
    # With aclosing (or async with, or close()) the call ends where the caller stops ...
    async with contextlib.aclosing(client.stream(ToolServiceRequest(user="5"), final=last, timeout=10)) as s:
        async for r in s:
            assert r.response == "0"
            break
    assert idle(client)
    # ... and a caller that just breaks out and drops the iterator frees it as well.
    async for _ in client.stream(ToolServiceRequest(user="5"), final=last, timeout=10):
        break
    gc.collect()  # CPython frees it at once; collect() makes that independent of refcounting
    assert idle(client)


async def test_cancelling_the_caller_frees_the_call(setup):
    client, _, responder = setup

    async def consume():
        async for _ in client.stream(ToolServiceRequest(user="stall"), final=last, timeout=10):
            pass

    task = asyncio.ensure_future(consume())
    await responder.wait_for_requests(1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert idle(client)


async def test_the_deadline_covers_the_whole_stream(setup):
    client, service, _ = setup
    got: list[str] = []
    t0 = time.monotonic()
    with pytest.raises(RequestTimeout, match="no response from .* within 0.5s"):
        # The service stalls after its first chunk: the deadline still ends the call.
        async for r in client.stream(ToolServiceRequest(user="stall"), final=last, timeout=0.5):
            got.append(r.response)
    assert time.monotonic() - t0 >= 0.5
    assert got == ["first"]
    assert idle(client)
    # The caller's own time between responses counts too: one deadline per call, not per
    # response.  Past it, the next step fails at once (no new wait of 2 s begins).
    stream = client.stream(ToolServiceRequest(user="stall"), final=last, timeout=2.0)
    assert (await stream.__anext__()).response == "first"
    await asyncio.sleep(2.2)  # the caller's slow work (the scenario, not a synchronisation)
    t0 = time.monotonic()
    with pytest.raises(RequestTimeout):
        await stream.__anext__()
    assert time.monotonic() - t0 < 1.5
    assert idle(client)


async def test_in_flight_bound_and_close_during_a_call(setup):
    client, service, responder = setup
    calls = [asyncio.ensure_future(client.request(ToolServiceRequest(user="stall"), timeout=10))
             for _ in range(3)]
    await responder.wait_for_requests(2)
    assert len(client._waiters) == 2 and client._slots.locked()  # the third waits for a slot
    service.release.set()
    await asyncio.gather(*calls)
    assert len(responder.requests) == 3 and idle(client)
    # A call still waiting when the client closes ends at once, not at its deadline.
    service.release.clear()
    pending = asyncio.ensure_future(client.request(ToolServiceRequest(user="stall"), timeout=60))
    await responder.wait_for_requests(4)
    await client.stop()
    with pytest.raises(RequestTimeout, match="closed during the call"):
        await pending
