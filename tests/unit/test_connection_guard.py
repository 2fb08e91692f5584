"""A server's connections under a ConnectionGuard: the cap, idle and header deadlines, the body pace.

The guard's bookkeeping alone first (fake connections, the sweep given its time), then the
gateway's aiohttp site on a real socket of this machine: a connection that never sends a
request, headers sent a byte at a time, a body that stalls, a request in progress longer than
the idle timeout, a websocket, and more connections than the cap.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from support import wait_for_async
from trustgraph.base.launching.broker import free_port
from trustgraph.base.safety import connections
from trustgraph.base.safety.connections import (
    BodyPace,
    BodyTooSlow,
    ConnectionGuard,
    ServerLimits,
    quiet_accept_errors,
)
from trustgraph.gateway.auth import TokenAuth
from trustgraph.gateway.connections import GuardedSite, answer_and_close, busy_middleware, read_body
from trustgraph.gateway.endpoints import Parts, build_app


class Conn:
    def __init__(self, name: str) -> None:
        self.name = name
        self.closed = False

    def close_now(self) -> None:
        self.closed = True

    def __repr__(self) -> str:
        return self.name


def guard(cap: int, idle: float = 60.0, header: float = 10.0) -> ConnectionGuard:
    return ConnectionGuard(
        "test", ServerLimits(max_connections=cap, idle_timeout=idle, header_timeout=header), cap=cap
    )


def test_at_the_cap_the_connection_idle_longest_makes_room_and_a_busy_one_never_does():
    g = guard(3)
    a, b, c, d, e = (Conn(n) for n in "abcde")
    for conn in (a, b, c):
        assert g.opened(conn)
    g.started(a)  # a request in progress on a: not idle
    assert g.opened(d) and b.closed and not a.closed
    g.closed(b)  # its close arrives later: nothing more happens
    assert g.opened(e) and c.closed and not a.closed and not d.closed
    assert (len(g), g.made_room, g.refused) == (3, 2, 0)


def test_when_every_connection_is_busy_a_new_one_is_refused_in_one_log_line(caplog):
    g = guard(2)
    a, b = Conn("a"), Conn("b")
    for conn in (a, b):
        g.opened(conn)
        g.started(conn)
    with caplog.at_level(logging.WARNING, logger=connections.__name__):
        refused = [g.opened(Conn(f"x{i}")) for i in range(1000)]
    assert not any(refused) and g.refused == 1000 and len(g) == 2
    lines = [r for r in caplog.records if r.name == connections.__name__]
    assert len(lines) == 1 and "has a request in progress" in lines[0].getMessage()
    g.finished(a)  # a's request is over: a is idle, and makes room
    assert g.opened(Conn("y")) and a.closed


def test_the_sweep_closes_idle_connections_and_late_headers_but_not_a_request_in_progress():
    g = guard(10, idle=30.0, header=5.0)
    idle, slow_headers, busy = Conn("idle"), Conn("slow"), Conn("busy")
    for conn in (idle, slow_headers, busy):
        g.opened(conn)
    now = time.monotonic()
    g.receiving(slow_headers)  # its first bytes: its headers have 5 s
    g.started(busy)
    g.receiving(busy)  # a body arriving: no header deadline
    assert g.sweep(now + 4) == 0
    assert g.sweep(now + 6) == 1 and slow_headers.closed and not idle.closed
    assert g.sweep(now + 31) == 1 and idle.closed and not busy.closed
    assert g.sweep(now + 1000) == 0 and not busy.closed  # however long its request takes
    g.finished(busy)  # idle from now on, for its own 30 s
    assert g.sweep(time.monotonic() + 29) == 0
    assert g.sweep(time.monotonic() + 31) == 1 and busy.closed
    assert (len(g), g.timed_out) == (0, 3)


def test_a_failing_accept_is_one_line_a_minute_and_other_loop_errors_keep_their_handler(caplog):
    loop = asyncio.new_event_loop()
    try:
        quiet_accept_errors(loop, "test-server", lambda: "7 connections open")
        with caplog.at_level(logging.DEBUG):
            for _ in range(5000):  # asyncio reports each accept of the backlog, every tick
                loop.call_exception_handler(
                    {
                        "message": "socket.accept() out of system resource",
                        "exception": OSError(errno.EMFILE, "Too many open files"),
                        "socket": object(),
                    }
                )
            loop.call_exception_handler({"message": "something else", "exception": ValueError("kept")})
    finally:
        loop.close()
    accepts = [r for r in caplog.records if "cannot accept" in r.getMessage()]
    assert len(accepts) == 1 and accepts[0].exc_info is None
    assert accepts[0].getMessage() == (
        "test-server cannot accept connections: Too many open files; "
        "7 connections open (retried every second)"
    )
    others = [r for r in caplog.records if r.name == "asyncio"]
    assert len(others) == 1 and others[0].getMessage() == "something else" and others[0].exc_info


@pytest.mark.parametrize(("limits", "cap"), [("300:300", 150), ("300:2000", 1616), ("20000:20000", 4096)])
def test_the_cap_stays_below_the_file_limit_raised_to_the_hard_one_first(limits, cap):
    code = "from trustgraph.base.safety.connections import connection_cap; print(connection_cap(4096))"
    r = subprocess.run(
        ["prlimit", f"--nofile={limits}", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == cap


# -- the gateway's site, on a real socket ------------------------------------------------------


class Site:
    """A GuardedSite with test routes: ``/slow`` holds until ``release`` is set."""

    def __init__(self, g: ConnectionGuard, runner: web.AppRunner, port: int) -> None:
        self.guard = g
        self.runner = runner
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.release = asyncio.Event()
        self.slow_started = 0

    async def raw(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection("127.0.0.1", self.port)


async def closed_within(reader: asyncio.StreamReader, bound: float) -> tuple[bytes, float]:
    """What the server sent before closing, and how long it took to close."""
    start = time.monotonic()
    data = await asyncio.wait_for(reader.read(), bound)
    return data, time.monotonic() - start


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    g = guard(4, idle=1.0, header=1.0)
    holder: list[Site] = []

    async def slow(_request: web.Request) -> web.Response:
        holder[0].slow_started += 1
        await holder[0].release.wait()
        return web.json_response({"slow": "done"})

    async def hello(_request: web.Request) -> web.Response:
        return web.json_response({"hello": "there"})

    async def body(request: web.Request) -> web.Response:
        try:
            data = await read_body(request, BodyPace(grace=0.5, min_rate=1000))
        except BodyTooSlow as e:
            return await answer_and_close(request, web.json_response({"error": str(e)}, status=408))
        return web.json_response({"bytes": len(data)})

    async def socket(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for msg in ws:
            await ws.send_str(f"echo {msg.data}")
        return ws

    app = web.Application(middlewares=[busy_middleware(g)])
    app.router.add_get("/slow", slow)
    app.router.add_get("/hello", hello)
    app.router.add_post("/body", body)
    app.router.add_get("/ws", socket)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await GuardedSite(runner, "127.0.0.1", port, g, access_log=None).start()
    s = Site(g, runner, port)
    holder.append(s)
    yield s
    s.release.set()
    await runner.cleanup()


async def test_a_connection_that_sends_nothing_and_one_that_trickles_its_headers_are_closed(site):
    idle, _ = await site.raw()
    slow, writer = await site.raw()
    writer.write(b"GET /hello HTTP/1.1\r\n")  # and nothing more
    await writer.drain()
    for reader in (idle, slow):
        data, took = await closed_within(reader, 30)
        assert data == b"" and took < 15  # its 1 s, not aiohttp's hour
    assert site.guard.timed_out == 2 and len(site.guard) == 0


async def test_a_request_in_progress_and_a_websocket_outlive_the_idle_timeout(site):
    async with aiohttp.ClientSession() as http:
        call = asyncio.ensure_future(http.get(f"{site.url}/slow"))
        async with http.ws_connect(f"{site.url}/ws") as ws:
            await wait_for_async("the slow request in its handler", lambda: site.slow_started == 1, 30)
            # A marker: an idle connection opened after both is closed for idleness, so both have
            # gone longer than the idle timeout without a byte.
            marker, _ = await site.raw()
            await closed_within(marker, 30)
            await ws.send_str("still here")
            assert (await asyncio.wait_for(ws.receive(), 10)).data == "echo still here"
            site.release.set()
            async with await asyncio.wait_for(call, 10) as r:
                assert r.status == 200 and await r.json() == {"slow": "done"}


async def test_past_the_cap_idle_connections_make_room_and_only_busy_ones_refuse(site):
    idle = [await site.raw() for _ in range(10)]  # more idle sockets than the cap of 4
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{site.url}/hello") as r:
            assert r.status == 200 and await r.json() == {"hello": "there"}
        # Each connection past the fourth closed the idle one opened first (or the sweep had).
        assert site.guard.made_room + site.guard.timed_out >= 7
        # Four requests in progress fill it: the fifth connection is refused, and says why.
        calls = [asyncio.ensure_future(http.get(f"{site.url}/slow")) for _ in range(4)]
        await wait_for_async("four slow requests in their handlers", lambda: site.slow_started == 4, 30)
        reader, writer = await site.raw()
        writer.write(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        data, _ = await closed_within(reader, 30)
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503 Service Unavailable") and b"Retry-After: 5" in head
        assert json.loads(body) == {
            "error": "The gateway holds its limit of 4 connections, each with a "
            "request in progress: try again shortly"
        }
        site.release.set()
        for call in calls:
            async with await asyncio.wait_for(call, 10) as r:
                assert r.status == 200
    assert site.guard.refused == 1
    for _, writer in idle:
        writer.close()


async def test_a_body_that_stalls_is_cut_and_one_that_flows_is_read(site):
    reader, writer = await site.raw()
    writer.write(b"POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n0123456789")
    await writer.drain()
    data, took = await closed_within(reader, 30)
    assert took < 15 and data.startswith(b"HTTP/1.1 408")
    assert b"Request body too slow: 10 byte(s) in " in data
    writer.close()
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{site.url}/body", data=b"x" * 200_000) as r:
            assert r.status == 200 and await r.json() == {"bytes": 200_000}


async def test_the_gateway_answers_a_stalled_body_with_408_in_one_line():
    async def health(_authorized: bool) -> dict[str, Any]:
        return {"status": "ok"}

    from trustgraph.base.testing import MemoryBroker, memory_pubsub
    from trustgraph.gateway.dispatch import Dispatcher
    from trustgraph.gateway.tool_services import ToolServices

    ps = memory_pubsub(MemoryBroker(), "gateway")
    dispatcher = Dispatcher(
        ps,
        timeout=10.0,
        config_topics=("non-persistent://tg/request/c", "non-persistent://tg/response/c"),
        flow_topics=("non-persistent://tg/request/fl", "non-persistent://tg/response/fl"),
    )
    tools = ToolServices(ps, timeout=10.0)
    g = guard(16)
    app = build_app(
        Parts(
            dispatcher=dispatcher,
            tools=tools,
            auth=TokenAuth(""),
            timeout=10.0,
            prometheus_url="http://unused",
            health=health,
            guard=g,
            pace=BodyPace(grace=0.5, min_rate=1000),
        )
    )
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await GuardedSite(runner, "127.0.0.1", port, g, access_log=None).start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /api/v1/config HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{")
        await writer.drain()
        data, took = await closed_within(reader, 30)
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408") and took < 8  # at once, not after a lingering read
        error = json.loads(body)["error"]
        assert error.startswith("Request body too slow: 1 byte(s) in ") and error.endswith(
            " s, where a body must arrive within 0.5 s plus 1 s per 0.976562 KiB; send the whole body at once"
        )
        writer.close()
    finally:
        await runner.cleanup()
        await dispatcher.stop()
        await tools.stop()
