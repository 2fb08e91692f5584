"""MCP both ways, both revisions: the official SDK's own clients and servers beside our mcp-server,
mcp-tool and tg-import-mcp-tools.

The SDK of each era: mcp 2.3 (the project's venv) speaks 2025-11-25 and 2026-07-28, its client forced
to one by ``mode``, its server speaking both and limited to one by the front in
``tests/integration/mcp_stand_in.py`` (the SDK cannot be told to); mcp 1.30, the last of the session
era (``.interop/mcp-2025``, ``interop.venvs.MCP_2025``), speaks 2025-11-25 and before only.  Our
mcp-server runs in-process (``mcp_server_harness``) in front of our joke-service and an announcing
service; our mcp-tool is a process following a config-svc of the test's own (``flow_stack``).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path

import mcp_tasks
import pytest
from agent_stand_ins import service_descriptor, service_tool, unique
from flow_stack import pair, uid, until_served
from mcp import Client
from mcp_server_harness import McpServer, announcing, text
from rows import interop_row
from support import BIN, Proc, free_port, wait_for_async
from trustgraph.base.launching.broker import wait_for_port
from trustgraph.schema import ToolRequest, ToolResponse

from interop.venvs import MCP_2025

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600)]

SCRIPT_2025 = Path(__file__).with_name("mcp_2025.py")
THROUGH = "our mcp-server (in-process, pulsar-lite) -> our joke-service"


@pytest.fixture(scope="session")
def sdk_2025():
    return MCP_2025.ensure()


@pytest.fixture
async def our_server(broker, spawn):
    """Our mcp-server offering our joke-service as ``tell-joke``."""
    topic = unique("joke")
    spawn("joke-service", "-t", topic, broker=broker)
    server = McpServer(broker, task_after=1, timeout=8)
    await server.proc.start()
    await server.configure(tools={"tell-joke": service_tool("tell-joke", topic, style="pun")},
                           services={topic: service_descriptor(topic, ["style"])})
    yield server
    await server.proc.stop()


async def sdk_client_row(row, url: str, mode: str, revision: str) -> None:
    with interop_row(row, f"official MCP SDK 2.3 client, mode={mode}",
                     f"SDK client -> {THROUGH}: tools/list, tools/call") as r:
        async with Client(url, mode=mode) as client:
            spoke = client.protocol_version
            r.check(spoke == revision, lambda: f"spoke {spoke}")
            names = [t.name for t in (await client.list_tools()).tools]
            r.check(names == ["tell-joke"], lambda: f"listed {names}")
            joke = text(await client.call_tool("tell-joke", {"topic": "cats"}))
            r.check(joke.startswith("Hey trustgraph! Here's a pun for you:"), lambda: f"answered {joke!r}")
            r.saw(f"MCP {spoke}; listed {names}; the joke: {joke.splitlines()[-1]!r}")


async def test_the_sdks_clients_of_each_revision_list_and_call_through_our_mcp_server(our_server, sdk_2025, row):
    for mode, revision in (("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28"), ("auto", "2026-07-28")):
        await sdk_client_row(row, our_server.url, mode, revision)

    with interop_row(row, "official MCP SDK 1.30 client (the session era)",
                     f"SDK client -> {THROUGH}: initialize, tools/list, tools/call; no tasks offered") as r:
        done = await asyncio.to_thread(subprocess.run, [
            str(sdk_2025.python), str(SCRIPT_2025), "client", our_server.url, "tell-joke", '{"topic": "dogs"}'],
            capture_output=True, text=True, timeout=120)
        r.check(done.returncode == 0, lambda: done.stderr.strip().splitlines()[-1])
        seen = json.loads(done.stdout)
        r.check(seen["revision"] == "2025-11-25", lambda: f"negotiated {seen['revision']}")
        r.check(seen["tools"] == ["tell-joke"] and not seen["is_error"], lambda: str(seen))
        r.check(seen["text"].startswith("Hey trustgraph! Here's a pun for you:"), lambda: seen["text"])
        # 2025-11-25's experimental tasks were withdrawn (the extension replaces them): none offered.
        r.check(seen["tasks"] is None, lambda: f"capabilities offer tasks: {seen['tasks']}")
        r.saw(f"MCP {seen['revision']}, server {seen['server']!r}, no tasks capability; the joke: "
              f"{seen['text'].splitlines()[-1]!r}")


async def test_a_long_call_through_our_mcp_server_runs_as_a_task_the_sdks_client_polls_or_cancels(
        our_server, broker, tmp_path, row):
    hold, started, stopped = tmp_path / "hold", tmp_path / "started", tmp_path / "stopped"
    proc = announcing(broker, tmp_path, our_server.topics, "--stream", "--hold", str(hold),
                      "--started", str(started), "--stopped", str(stopped))
    peer = "official MCP SDK 2.3 client, 2026-07-28, tasks extension (written on the SDK's ClientExtension)"
    via = "our mcp-server (in-process) -> a tool service that waits (announcing_service.py)"
    try:
        await wait_for_async("the announced tool", lambda: "weather" in our_server.proc.table.tools, 30)
        async with Client(our_server.url, mode="2026-07-28", extensions=[mcp_tasks.Tasks()]) as client:
            await client.list_tools()
            with interop_row(row, peer, f"SDK client -> {via}: tools/call answered with a task; tasks/get "
                                        "until completed") as r:
                task = await client.session.call_tool("weather", {"city": "Oslo"}, allow_claimed=True)
                r.check(isinstance(task, mcp_tasks.CreatedTask) and task.status == "working", lambda: repr(task))
                first = await mcp_tasks.get(client.session, task.task_id)
                r.check(first.status == "working", lambda: f"tasks/get: {first.status}")
                hold.touch()
                done = await mcp_tasks.until_done(client.session, task.task_id)
                got = "".join(c["text"] for c in (done.result or {}).get("content", []))
                r.check(done.status == "completed" and got == "It is sunny in Oslo (metric), trustgraph. ",
                        lambda: f"{done.status}: {done.result or done.error}")
                r.saw(f"resultType task, then tasks/get: working, completed with {got.strip()!r}")

            with interop_row(row, peer, f"SDK client -> {via}: tasks/cancel; the task says cancelled, the "
                                        "service's invocation ends at its deadline") as r:
                hold.unlink()
                began = time.monotonic()
                task = await client.session.call_tool("weather", {"city": "Rome"}, allow_claimed=True)
                await wait_for_async("the service starting the call", started.exists, 30)
                await mcp_tasks.cancel(client.session, task.task_id)
                state = await mcp_tasks.get(client.session, task.task_id)
                r.check(state.status == "cancelled", lambda: f"after tasks/cancel: {state.status}")
                await wait_for_async("the service stopping its invocation", stopped.exists, 30)
                took = time.monotonic() - began
                r.saw(f"cancelled at once; the service stopped {took:.1f}s after the call began "
                      "(mcp-server --timeout 8)")
    finally:
        proc.stop()


class Servers:
    """The SDK's servers of each era, as processes on free ports."""

    def __init__(self, tmp_path: Path, mcp_stand_in, sdk_2025) -> None:
        self.urls: dict[str, str] = {}
        self.procs: list[Proc] = []
        port = free_port()
        p = Proc([str(sdk_2025.python), str(SCRIPT_2025), "server", str(port)], tmp_path / "mcp-2025.log").start()
        wait_for_port("127.0.0.1", port, 60, p.p)
        self.procs.append(p)
        self.urls["official MCP SDK 1.30 server (the session era: 2025-11-25)"] = f"http://127.0.0.1:{port}/mcp"
        for revision, name in (("both", "official MCP SDK 2.3 server (both revisions)"),
                               ("2026-07-28", "official MCP SDK 2.3 server, 2026-07-28 only")):
            self.urls[name] = mcp_stand_in(revision=revision).url

    def stop(self) -> None:
        for p in self.procs:
            p.stop()


async def test_our_mcp_tool_and_tg_import_mcp_tools_use_the_sdks_servers_of_each_revision(
        stack, mcp_stand_in, sdk_2025, tmp_path, row):
    servers = Servers(tmp_path, mcp_stand_in, sdk_2025)
    try:
        ident, topics = f"mcp-tool-{uid()}", pair(f"mcp-tool-{uid()}")
        stack.start("mcp-tool", ident, "--no-metrics")
        stack.ready()
        entries = {}
        for n, url in enumerate(servers.urls.values()):
            entries[("mcp", f"shout-{n}")] = json.dumps({"url": url, "remote-name": "shout"})
            entries[("mcp", f"lookup-{n}")] = json.dumps({"url": url, "remote-name": "lookup"})
        served = stack.served(topics[0])
        await stack.put({("active-flow", ident): json.dumps({"f": {"request": topics[0], "response": topics[1]}}),
                         **entries})
        tool = stack.client(topics, ToolRequest, ToolResponse)
        await asyncio.wait_for(served, 90)   # a request sent before would be dropped and wait its deadline
        for n, (name, url) in enumerate(servers.urls.items()):
            await mcp_tool_row(row, name, tool, n)
            await import_row(row, name, url)
    finally:
        servers.stop()


async def mcp_tool_row(row, name: str, tool, n: int) -> None:
    with interop_row(row, name, "our mcp-tool (process) -> SDK server: plain text; a structured result as "
                                "object") as r:
        loud = await until_served(lambda: tool.request(ToolRequest(name=f"shout-{n}", parameters='{"text": "hello"}'),
                                                       timeout=20), "our mcp-tool", total=90)
        r.check((loud.error, loud.text) == (None, "HELLO"), lambda: repr(loud))
        wx = await tool.request(ToolRequest(name=f"lookup-{n}", parameters='{"city": "Oslo"}'), timeout=30)
        r.check(wx.error is None and json.loads(wx.object or "null") == {"city": "Oslo", "temp": 4}, lambda: repr(wx))
        r.saw(f"{loud.text!r}; {wx.object}")


async def import_row(row, name: str, url: str) -> None:
    with interop_row(row, name, "our tg-import-mcp-tools --dry-run -> SDK server") as r:
        done = await asyncio.to_thread(subprocess.run, [str(BIN / "tg-import-mcp-tools"), url, "--only", "shout",
                                                        "lookup", "--dry-run"],
                                       capture_output=True, text=True, timeout=120)
        r.check(done.returncode == 0, lambda: (done.stderr.strip().splitlines() or [""])[-1])
        r.check("tool/lookup: {" in done.stdout and "tool/shout: {" in done.stdout, lambda: done.stdout)
        r.saw(done.stdout.strip().splitlines()[-1])
