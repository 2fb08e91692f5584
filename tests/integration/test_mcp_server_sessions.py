"""mcp-server's sessions and connections: idle sessions end, the cap makes room, busy ones refuse.

Before, sessions never expired and had no cap (6,000 sessions took 218 MB; a
session idle for 24 minutes still worked), and uvicorn held a connection that
never sent a request for ever.  The server runs in-process on the session
broker; the clients speak Streamable HTTP with plain requests, so that a
session is idle exactly when the test leaves it so (the SDK's client keeps a
``GET`` stream open, which makes its session busy).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time

import httpx2
import pytest
from mcp_server_harness import HEADERS, INITIALIZE, open_session, session_headers
from support import wait_for_async
from trustgraph.mcp_server import Processor


@pytest.fixture
def server(mcp_server):
    """``await server(**params)``: a started mcp-server processor with no tools."""

    async def make(**params) -> Processor:
        s = await mcp_server(**params)
        await s.configure({}, {})
        return s.proc

    return make


async def list_tools(http: httpx2.AsyncClient, url: str, sid: str) -> int:
    """The HTTP status of a tools/list on session ``sid`` (404: the session is gone)."""
    r = await http.post(
        url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=session_headers(sid)
    )
    return r.status_code


async def test_a_session_idle_past_its_timeout_ends_and_a_new_one_opens(server, caplog):
    proc = await server(session_idle_timeout=1)
    async with httpx2.AsyncClient(timeout=30) as http:
        sid = await open_session(http, proc.url)
        with caplog.at_level(logging.INFO, logger="mcp.server.streamable_http_manager"):
            await wait_for_async(
                "the SDK ending the idle session", lambda: f"Session {sid} idle timeout" in caplog.text, 30
            )
        assert await list_tools(http, proc.url, sid) == 404  # its client is told to start again
        again = await open_session(http, proc.url)
        assert await list_tools(http, proc.url, again) == 200


async def test_at_the_cap_the_least_recently_used_idle_session_makes_room(server):
    proc = await server(max_sessions=3)
    async with httpx2.AsyncClient(timeout=30) as http:
        first, second, third = [await open_session(http, proc.url) for _ in range(3)]
        assert await list_tools(http, proc.url, first) == 200  # used: second is now the oldest
        fourth = await open_session(http, proc.url)
        statuses = {
            name: await list_tools(http, proc.url, sid)
            for name, sid in (("first", first), ("second", second), ("third", third), ("fourth", fourth))
        }
        assert statuses == {"first": 200, "second": 404, "third": 200, "fourth": 200}
        assert proc.sessions is not None and proc.sessions.ended_for_room == 1 and len(proc.sessions) == 3


async def test_when_every_session_is_busy_a_new_one_is_refused_in_a_sentence(server):
    proc = await server(max_sessions=2)
    async with httpx2.AsyncClient(timeout=30) as http, contextlib.AsyncExitStack() as streams:
        for _ in range(2):
            sid = await open_session(http, proc.url)
            # An open GET stream (server-to-client messages): the session is in use.
            stream = await streams.enter_async_context(
                http.stream("GET", proc.url, headers={**session_headers(sid), "accept": "text/event-stream"})
            )
            assert stream.status_code == 200
        r = await http.post(proc.url, json=INITIALIZE, headers=HEADERS)
        assert r.status_code == 503
        assert json.loads(r.text)["error"]["message"] == "Too many open sessions"
        assert proc.sessions is not None and proc.sessions.ended_for_room == 0


async def test_a_connection_that_sends_nothing_or_trickles_its_headers_is_closed(server):
    proc = await server(idle_timeout=1, header_timeout=1)
    idle, _ = await asyncio.open_connection("127.0.0.1", proc.bound_port)
    slow, writer = await asyncio.open_connection("127.0.0.1", proc.bound_port)
    writer.write(b"POST /mcp HTTP/1.1\r\n")
    await writer.drain()
    for reader in (idle, slow):
        start = time.monotonic()
        assert await asyncio.wait_for(reader.read(), 30) == b""
        assert time.monotonic() - start < 15
    assert proc.guard is not None and proc.guard.timed_out == 2
    async with httpx2.AsyncClient(timeout=30) as http:  # the server itself goes on
        assert await list_tools(http, proc.url, await open_session(http, proc.url)) == 200


async def test_past_its_connection_cap_idle_connections_make_room_and_busy_ones_refuse(server):
    proc = await server(max_connections=2)
    idle = [await asyncio.open_connection("127.0.0.1", proc.bound_port) for _ in range(5)]
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(2):  # two connections, each holding a GET stream open: both busy
            http = await stack.enter_async_context(httpx2.AsyncClient(timeout=30))
            sid = await open_session(http, proc.url)
            stream = await stack.enter_async_context(
                http.stream("GET", proc.url, headers={**session_headers(sid), "accept": "text/event-stream"})
            )
            assert stream.status_code == 200
        assert proc.guard is not None and proc.guard.made_room >= 4
        reader, writer = await asyncio.open_connection("127.0.0.1", proc.bound_port)
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = await asyncio.wait_for(reader.read(), 30)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503 Service Unavailable")
        assert json.loads(body)["error"]["message"] == (
            "mcp-server holds its limit of 2 connections, each with a request in progress: try again shortly"
        )
        writer.close()
    for _, w in idle:
        w.close()
