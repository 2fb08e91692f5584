"""mcp-server speaks MCP 2025-11-25 and 2026-07-28 to the SDK's own client, runs long calls as tasks,
and refuses a revision it does not speak without changing anything.

The server runs in-process on the session broker (``mcp_server_harness``);
the clients are the official SDK's (``mcp.Client``, forced to each revision:
``mode="legacy"`` is the 2025-11-25 handshake, ``mode="2026-07-28"`` the
stateless revision, ``mode="auto"`` asks ``server/discover``), with the tasks
extension written in ``mcp_tasks``; raw HTTP where a test sends what no SDK
client would.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time

import httpx2
import mcp_tasks
import pytest
from agent_stand_ins import service_descriptor, service_tool, unique
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_server_harness import HEADERS, announcing, open_session, session_headers, text
from support import wait_for_async
from trustgraph.base import PubSub
from trustgraph.base.testing.stand_ins import Responder
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse
from trustgraph.topics import tool_service_topics

SPOKEN = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]


async def test_the_sdks_client_of_either_revision_lists_calls_streams_and_hears_of_changes(
        mcp_server, broker, spawn, tmp_path):
    topic = unique("joke")
    spawn("joke-service", "-t", topic, broker=broker)
    server = await mcp_server()
    await server.configure(tools={"tell-joke": service_tool("tell-joke", topic, style="pun")},
                           services={topic: service_descriptor(topic, ["style"])})
    for mode, revision in (("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28"), ("auto", "2026-07-28")):
        async with Client(server.url, mode=mode) as client:
            assert client.protocol_version == revision
            assert [t.name for t in (await client.list_tools()).tools] == ["tell-joke"]
            joke = await client.call_tool("tell-joke", {"topic": "cats"})
            assert not joke.is_error and text(joke).startswith("Hey trustgraph! Here's a pun for you:"), mode
    # The stateless revision opened no session (the legacy client's ended when it left).
    assert len(server.proc.sessions) == 0

    # server/discover says what a 2026-07-28 client can use: tools that change, and tasks.
    async with Client(server.url, mode="auto") as client:
        caps = client.server_capabilities
        assert caps.tools.list_changed and caps.extensions == {"io.modelcontextprotocol/tasks": {}}
        assert client.server_info.name == "trustgraph"

        # A change of the tool list reaches a 2026 client on its subscriptions/listen stream, and a
        # streaming service's chunks come as progress notifications of its call.
        async with client.listen(tools_list_changed=True) as events:
            name = unique("weather")
            proc = announcing(broker, tmp_path, server.topics, "--tool", name, "--stream")
            try:
                await asyncio.wait_for(anext(aiter(events)), 30)
                listed = await client.list_tools(cache_mode="bypass")
                assert name in {t.name for t in listed.tools}
                chunks: list[str] = []

                async def on_progress(progress, total, message) -> None:
                    chunks.append(message)

                sunny = await client.call_tool(name, {"city": "Oslo"}, progress_callback=on_progress)
                assert text(sunny) == "It is sunny in Oslo (metric), trustgraph. "
                assert len(chunks) > 1 and "".join(chunks) == text(sunny)
            finally:
                proc.stop()


async def test_a_stateless_request_is_answered_without_waiting_for_the_clients_delayed_ack(mcp_server):
    """Each 2026-07-28 request is a JSON reply whose body took 44 ms (Nagle's algorithm behind the
    client's delayed ACK) until mcp-server's socket said it was TCP, so asyncio set TCP_NODELAY."""
    # Read off the server's own connections, not timed: a median of 30 requests went over a 20 ms
    # bound on a loaded machine (CI with the embedded model busy beside it).
    server = await mcp_server()
    await server.configure(tools={}, services={})
    async with Client(server.url, mode="2026-07-28", cache=None) as client:
        await client.list_tools()
        connections = list(server.proc._http.server_state.connections)
        assert connections
        for connection in connections:
            sock = connection.transport.get_extra_info("socket")
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY), "Nagle's algorithm is on"
        await client.list_tools()   # and answered, the option set


async def test_a_long_call_of_a_client_that_takes_tasks_is_a_task_it_polls_to_the_result(
        mcp_server, broker, tmp_path):
    server = await mcp_server(task_after=0.5)
    await server.configure(tools={}, services={})
    hold = tmp_path / "hold"
    proc = announcing(broker, tmp_path, server.topics, "--stream", "--hold", str(hold))
    try:
        await wait_for_async("the announced tool", lambda: "weather" in server.proc.table.tools, 30)
        async with Client(server.url, mode="2026-07-28", extensions=[mcp_tasks.Tasks()]) as client:
            await client.list_tools()
            started = time.monotonic()
            task = await client.session.call_tool("weather", {"city": "Oslo"}, allow_claimed=True)
            assert isinstance(task, mcp_tasks.CreatedTask), task
            assert task.status == "working" and time.monotonic() - started < 10
            assert (await mcp_tasks.get(client.session, task.task_id)).status == "working"
            hold.touch()   # the service may finish now
            done = await mcp_tasks.until_done(client.session, task.task_id)
            assert done.status == "completed" and done.result["isError"] is False
            assert [c["text"] for c in done.result["content"]] == ["It is sunny in Oslo (metric), trustgraph. "]

            # The SDK's call_tool, given the extension, polls a task to its result by itself; a
            # call that ends in time is answered as usual.
            hold.unlink()
            waiting = asyncio.ensure_future(client.call_tool("weather", {"city": "Rome"}))
            await wait_for_async("the second task", lambda: len(server.proc.tasks) == 2, 30)
            hold.touch()
            assert text(await asyncio.wait_for(waiting, 60)) == "It is sunny in Rome (metric), trustgraph. "
            assert text(await client.call_tool("weather", {"city": "Bern"})).startswith("It is sunny in Bern")
            assert len(server.proc.tasks) == 2

        # A client that does not take tasks waits for its result, however long.
        hold.unlink()
        async with Client(server.url, mode="2026-07-28") as client:
            waiting = asyncio.ensure_future(client.call_tool("weather", {"city": "Lima"}))
            await asyncio.sleep(0)
            done_early, _ = await asyncio.wait({waiting}, timeout=1.5)
            assert not done_early and len(server.proc.tasks) == 2
            hold.touch()
            assert text(await asyncio.wait_for(waiting, 60)).startswith("It is sunny in Lima")
    finally:
        proc.stop()


async def test_cancelling_a_task_cancels_the_call_and_the_service_stops_at_its_deadline(
        mcp_server, broker, tmp_path):
    server = await mcp_server(task_after=0, timeout=6)
    await server.configure(tools={}, services={})
    started, stopped = tmp_path / "started", tmp_path / "stopped"
    proc = announcing(broker, tmp_path, server.topics, "--stream", "--hold", str(tmp_path / "never"),
                      "--started", str(started), "--stopped", str(stopped))
    try:
        await wait_for_async("the announced tool", lambda: "weather" in server.proc.table.tools, 30)
        async with Client(server.url, mode="2026-07-28", extensions=[mcp_tasks.Tasks()]) as client:
            began = time.monotonic()
            task = await client.session.call_tool("weather", {"city": "Oslo"}, allow_claimed=True)
            await wait_for_async("the service starting the call", started.exists, 30)
            await mcp_tasks.cancel(client.session, task.task_id)
            state = await mcp_tasks.get(client.session, task.task_id)
            assert state.status == "cancelled" and state.result is None, state
            (call,) = [t.call for t in server.proc.tasks._tasks.values()]
            assert call.cancelled()   # mcp-server no longer waits for the service
            # The service's invocation ends when the deadline mcp-server sent with it passes
            # (--timeout 6 from the call's start), not whenever it would have finished.
            await wait_for_async("the service stopping its invocation", stopped.exists, 30)
            assert 4 < time.monotonic() - began < 20
            assert (await mcp_tasks.get(client.session, task.task_id)).status == "cancelled"
    finally:
        proc.stop()


async def test_task_methods_are_refused_where_they_do_not_apply(mcp_server):
    server = await mcp_server()
    await server.configure(tools={}, services={})
    for mode, extensions, code in (("2026-07-28", [mcp_tasks.Tasks()], -32602),   # no such task
                                   ("2026-07-28", [], -32021),                   # did not declare tasks
                                   ("legacy", [], -32601)):                      # no tasks at 2025-11-25
        async with Client(server.url, mode=mode, extensions=extensions) as client:
            with pytest.raises(MCPError) as e:
                await mcp_tasks.get(client.session, "no-such-task")
            assert e.value.error.code == code, (mode, e.value.error)


async def test_a_request_of_a_revision_it_does_not_speak_is_refused_and_changes_nothing(mcp_server, broker):
    name = unique("counted")
    ps = PubSub(broker.url, processor="test")
    service = await Responder(ps, *tool_service_topics(name), ToolServiceRequest,
                              lambda r: [ToolServiceResponse(response="counted", end_of_stream=True)]).start()
    server = await mcp_server(max_sessions=1)
    await server.configure(tools={"count": service_tool("count", name)}, services={name: service_descriptor(name)})
    try:
        async with httpx2.AsyncClient(timeout=30) as http:
            # One session, idle (a raw client holds no stream open), at the cap of one.
            old = session_headers(await open_session(http, server.url))
            envelope = {"io.modelcontextprotocol/protocolVersion": "2099-01-01",
                        "io.modelcontextprotocol/clientCapabilities": {}}
            call = {"name": "count", "arguments": {"topic": "b"}}
            tries = [
                # A 2026-style call naming the revision in header and envelope.
                ({"mcp-protocol-version": "2099-01-01", "mcp-method": "tools/call", "mcp-name": "count"},
                 {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {**call, "_meta": envelope}}),
                # In the envelope only.
                ({}, {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {**call, "_meta": envelope}}),
                # A session-era request naming it in its header.
                ({**old, "mcp-protocol-version": "2099-01-01"},
                 {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": call}),
            ]
            for headers, body in tries:
                r = await http.post(server.url, headers={**HEADERS, **headers}, json=body)
                assert r.status_code == 400, r.text
                error = r.json()["error"]
                assert r.json()["id"] == body["id"] and error["code"] == -32022
                assert error["data"] == {"supported": SPOKEN, "requested": "2099-01-01"}
                assert error["message"].startswith("Unsupported protocol version '2099-01-01': this server speaks "
                                                   "MCP 2026-07-28 (stateless) and 2024-11-05, 2025-03-26")
            # Nothing reached the tool, no session was ended to make room, and the server goes on:
            # a 2026-07-28 client is served (and ends no session either), and so is the old session.
            assert service.requests == []
            async with Client(server.url, mode="2026-07-28") as new:
                assert text(await new.call_tool("count", {"topic": "c"})) == "counted"
                assert text(await new.call_tool("count", {"topic": "d"})) == "counted"
            r = await http.post(server.url, headers=old, json={"jsonrpc": "2.0", "id": 10, "method": "tools/call",
                                                               "params": {"name": "count", "arguments": {"topic": "e"}}})
            assert r.status_code == 200 and "counted" in r.text, r.text
            assert server.proc.sessions.ended_for_room == 0
            assert [json.loads(r.arguments) for r in service.requests] == [{"topic": t} for t in "cde"]
    finally:
        await ps.close()


@pytest.mark.parametrize("revision, spoken", [("2025-11-25", "2025-11-25"), ("2026-07-28", "2026-07-28")])
async def test_our_client_hears_of_tool_changes_and_of_the_server_going_away_in_either_revision(
        mcp_stand_in, revision, spoken):
    """What tg-import-mcp-tools --watch relies on: a session's notification, or a listen stream."""
    from trustgraph.mcp_client.connection import McpConnection, ServerAddress

    server = mcp_stand_in(revision=revision)
    changed = asyncio.Event()

    async def on_change() -> None:
        changed.set()

    conn = McpConnection(ServerAddress(server.url), on_tools_changed=on_change)
    try:
        await conn.open(30)
        assert conn.revision == spoken
        assert text(await conn.call_tool("grow", {"name": "fresh"}, 30)) == "added fresh"
        await asyncio.wait_for(changed.wait(), 30)
        assert "fresh" in [t.name for t in await conn.list_tools(30)]
        if spoken == "2026-07-28":
            # The listen stream's end ends the connection, so --watch reconnects.  (A session-era
            # connection does not notice a server that went away until its next call: the SDK's
            # client keeps retrying its event stream; measured before this change too.)
            server.kill()
            await asyncio.wait_for(conn.closed(), 30)
            assert not conn.is_open
    finally:
        await conn.close()
