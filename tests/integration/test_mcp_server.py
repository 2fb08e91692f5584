"""mcp-server on a real broker, called by the MCP SDK's own client over Streamable HTTP on 127.0.0.1.

The server runs in-process with config handed over directly; the joke
service and an announcing service run as real processes; the client is the
official SDK's ``ClientSession`` (what an IDE or a desktop assistant uses).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess

import pytest
from agent_stand_ins import service_descriptor, service_tool, unique
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_server_harness import announcing, text
from support import BIN
from trustgraph.mcp_client.connection import http_client
from trustgraph.mcp_server import Processor


@contextlib.asynccontextmanager
async def client(url: str, token: str | None = None, changed: asyncio.Event | None = None,
                 statuses: list[int] | None = None):
    """The SDK's client session; ``changed`` is set on ``notifications/tools/list_changed``,
    ``statuses`` gets every HTTP status the server answered with."""
    async def on_message(message) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed" and changed is not None:
            changed.set()

    http = http_client(headers={"Authorization": f"Bearer {token}"} if token else None)

    async def seen(response) -> None:
        if statuses is not None:
            statuses.append(response.status_code)
    http.event_hooks["response"].append(seen)
    async with http, streamable_http_client(url, http_client=http) as (read, write), \
            ClientSession(read, write, message_handler=on_message) as session:
        await session.initialize()
        yield session


async def test_a_client_calls_the_joke_service_and_sees_an_announced_tool_without_reconnecting(
        mcp_server, broker, spawn, tmp_path):
    topic = unique("joke")
    spawn("joke-service", "-t", topic, broker=broker)
    server = await mcp_server()
    await server.configure(
        tools={"tell-joke": service_tool("tell-joke", topic, style="pun"),
               "bad-joke": service_tool("bad-joke", topic, style="no-such-style")},
        services={topic: service_descriptor(topic, ["style"])})
    changed = asyncio.Event()
    async with client(server.proc.url, changed=changed) as session:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        assert set(listed) == {"tell-joke", "bad-joke"}
        assert listed["tell-joke"].input_schema["properties"]["topic"]["type"] == "string"
        assert listed["tell-joke"].input_schema["required"] == ["topic"]
        joke = await session.call_tool("tell-joke", {"topic": "cats"})
        assert not joke.is_error and text(joke).startswith("Hey trustgraph! Here's a pun for you:")
        failed = await session.call_tool("bad-joke", {"topic": "cats"})
        assert failed.is_error and text(failed).startswith("tool-service-error:")
        wrong = await session.call_tool("tell-joke", {"subject": "cats"})
        assert wrong.is_error and "unknown argument(s) 'subject'" in text(wrong)
        unknown = await session.call_tool("no-such-tool", {})
        assert unknown.is_error and "tell-joke" in text(unknown)

        # A service that announces itself (and streams): the client is told, and lists it on
        # the same session.
        name = unique("weather")
        proc = announcing(broker, tmp_path, server.topics, "--tool", name, "--stream")
        try:
            await asyncio.wait_for(changed.wait(), 30)
            assert name in {t.name for t in (await session.list_tools()).tools}
            chunks: list[str] = []

            async def on_progress(progress, total, message) -> None:
                chunks.append(message)

            sunny = await session.call_tool(name, {"city": "Oslo"}, progress_callback=on_progress)
            assert not sunny.is_error and text(sunny) == "It is sunny in Oslo (metric), trustgraph. "
            assert len(chunks) > 1 and "".join(chunks) == text(sunny)   # each chunk as it came
            changed.clear()
        finally:
            proc.stop()
        await asyncio.wait_for(changed.wait(), 30)                        # a clean stop withdraws it
        assert name not in {t.name for t in (await session.list_tools()).tools}


async def test_a_token_is_required_when_set(mcp_server):
    server = await mcp_server(token="mcp-secret")
    await server.configure(tools={}, services={})
    for token in (None, "wrong"):
        statuses: list[int] = []
        with pytest.raises(ExceptionGroup):   # the SDK's task group, wrapping "Server returned an error"
            async with client(server.proc.url, token=token, statuses=statuses):
                pass
        assert statuses == [401]
    async with client(server.proc.url, token="mcp-secret") as session:
        assert (await session.list_tools()).tools == []


async def test_the_gateways_secret_opens_it_as_its_own_token_does(mcp_server):
    server = await mcp_server(token="mcp-secret", api_token="gateway-secret")
    await server.configure(tools={}, services={})
    for token in ("mcp-secret", "gateway-secret"):
        async with client(server.proc.url, token=token) as session:
            assert (await session.list_tools()).tools == []
    statuses: list[int] = []
    with pytest.raises(ExceptionGroup):
        async with client(server.proc.url, token="mcp-secretgateway-secret", statuses=statuses):
            pass
    assert statuses == [401]


async def test_with_only_the_gateways_secret_set_a_call_without_it_is_refused(mcp_server):
    server = await mcp_server(api_token="gateway-secret")
    await server.configure(tools={}, services={})
    statuses: list[int] = []
    with pytest.raises(ExceptionGroup):
        async with client(server.proc.url, statuses=statuses):
            pass
    assert statuses == [401]


async def test_a_tg_command_pointed_at_it_is_told_this_is_the_mcp_server_not_the_gateway(mcp_server):
    """8089 beside 8088: the command's one line says which port it hit, for the websocket and REST alike."""
    server = await mcp_server()
    base = f"http://127.0.0.1:{server.proc.bound_port}/"
    hint = (f"HTTP 404{{}}: {base} is TrustGraph's MCP server (for MCP clients, at its /mcp endpoint), not "
            "the API gateway; give the gateway's URL with -u or TRUSTGRAPH_URL (http://localhost:8088/ under "
            "make run)")
    for command, *args, status in (("tg-invoke-agent", "-q", "hello", ""),
                                   ("tg-show-config", f" Not Found from {base}api/v1/config")):
        r = await asyncio.to_thread(subprocess.run, [str(BIN / command), "-u", base, *args],
                                    capture_output=True, text=True, timeout=60)
        assert (r.returncode, r.stdout) == (1, ""), r.stderr
        (line,) = r.stderr.splitlines()
        assert line.startswith(f"{command}: error: ") and line.endswith(hint.format(status)), line


def test_it_will_not_listen_beyond_this_machine_without_a_token(broker, tmp_path):
    from trustgraph.base.processors.async_processor import StartRefused

    with pytest.raises(StartRefused, match="will not listen on 0.0.0.0 without a token"):
        Processor(id=unique("mcp-server"), pulsar_host=broker.url, metrics=False, host="0.0.0.0", port=0)
    r = subprocess.run([str(BIN / "mcp-server"), "--host", "0.0.0.0", "--port", "0", "--no-metrics",
                        "-p", broker.url], capture_output=True, text=True, timeout=60,
                       env={k: v for k, v in os.environ.items() if k not in ("GATEWAY_SECRET", "MCP_SERVER_TOKEN")})
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "mcp-server: error: will not listen on 0.0.0.0 without a token: anything that reaches it "
        "could call every tool; set MCP_SERVER_TOKEN (or GATEWAY_SECRET), or keep --host 127.0.0.1"]


async def test_a_tools_examples_are_listed_and_read_back_by_the_import(mcp_server):
    topic = unique("joke")
    examples = ["Make me laugh about cats", "Got a pun on dogs?"]
    server = await mcp_server()
    await server.configure(tools={"tell-joke": service_tool("tell-joke", topic, examples=examples),
                                  "plain": service_tool("plain", topic)},
                           services={topic: service_descriptor(topic)})
    changed = asyncio.Event()
    async with client(server.proc.url, changed=changed) as session:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        # What the client's model reads, and the same list for a program.
        assert listed["tell-joke"].description == (
            "The tell-joke tool\n\nExamples:\n- Make me laugh about cats\n- Got a pun on dogs?")
        assert listed["tell-joke"].meta == {"ai.trustgraph/examples": examples}
        assert (listed["plain"].description, listed["plain"].meta) == ("The plain tool", None)

        # tg-import-mcp-tools, the real command, takes them back off our listing.
        imported, err = await import_dry_run(server.proc.url)
        assert imported["tool/tell-joke"]["description"] == "The tell-joke tool"
        assert imported["tool/tell-joke"]["examples"] == examples
        assert "examples" not in imported["tool/plain"]
        assert err == ""

        # Other examples are another listing: the client is told.
        await server.configure(tools={"tell-joke": service_tool("tell-joke", topic, examples=examples[:1]),
                                      "plain": service_tool("plain", topic)},
                               services={topic: service_descriptor(topic)})
        await asyncio.wait_for(changed.wait(), 30)
        listed = {t.name: t for t in (await session.list_tools()).tools}
        assert listed["tell-joke"].meta == {"ai.trustgraph/examples": examples[:1]}


async def test_a_declared_default_is_listed_given_to_the_service_and_read_back_by_the_import(
        mcp_server, broker, spawn):
    # An optional argument's declared default: a call that leaves it out reaches the real joke
    # service with it (its jokes are seeded by the topic, so the same topic tells the same joke).
    topic = unique("joke")
    spawn("joke-service", "-t", topic, broker=broker)
    server = await mcp_server()
    joke = service_tool("tell-joke", topic, style="pun")
    joke["arguments"] = [{"name": "topic", "type": "string", "description": "the topic", "required": False,
                          "default": "cats"}]
    await server.configure(tools={"tell-joke": joke}, services={topic: service_descriptor(topic, ["style"])})
    async with client(server.proc.url) as session:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        assert listed["tell-joke"].input_schema["properties"]["topic"]["default"] == "cats"
        left_out = await session.call_tool("tell-joke", {})
        cats = await session.call_tool("tell-joke", {"topic": "cats"})
        dogs = await session.call_tool("tell-joke", {"topic": "dogs"})
        assert not left_out.is_error and text(left_out) == text(cats) != text(dogs)
        imported, err = await import_dry_run(server.proc.url)
        assert imported["tool/tell-joke"]["arguments"][0]["default"] == "cats" and err == ""


async def import_dry_run(url: str) -> tuple[dict[str, dict], str]:
    """What the real tg-import-mcp-tools would write from the MCP server at ``url`` (its ``--dry-run``),
    and its stderr."""
    proc = await asyncio.create_subprocess_exec(str(BIN / "tg-import-mcp-tools"), url, "--dry-run",
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    return dry_run_items(out.decode()), err.decode()


def dry_run_items(out: str) -> dict[str, dict]:
    """``{"tool/x": value}`` from tg-import-mcp-tools --dry-run's ``type/key: JSON`` blocks."""
    items: dict[str, dict] = {}
    decoder = json.JSONDecoder()
    rest = out
    while ": {" in rest:
        head, _, tail = rest.partition(": ")
        value, end = decoder.raw_decode(tail)
        items[head.strip().splitlines()[-1]] = value
        rest = tail[end:]
    return items


async def test_a_tools_annotations_are_listed_as_mcp_hints_and_read_back_by_the_import(mcp_server):
    topic = unique("files")
    server = await mcp_server()
    await server.configure(
        tools={"remove": service_tool("remove", topic, destructive=True),     # its own, over its service's
               "peek": service_tool("peek", topic, **{"read-only": True}),
               "plain": {"type": "text-completion", "name": "plain", "description": "Says nothing"}},
        services={topic: {**service_descriptor(topic), "idempotent": True, "open-world": False}})
    async with client(server.proc.url) as session:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        # The SDK's client reads them as MCP's hints; what nobody said is not sent (the client's
        # defaults, the worst case, apply).
        hints = {name: t.annotations.model_dump(by_alias=True, exclude_none=True) if t.annotations else None
                 for name, t in listed.items()}
        assert hints == {
            "remove": {"destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
            "peek": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
            "plain": None,
        }

        # tg-import-mcp-tools, the real command, keeps them as our keys.
        imported, _ = await import_dry_run(server.proc.url)
        keys = ("read-only", "destructive", "idempotent", "open-world")
        assert {k: v for k, v in imported["tool/remove"].items() if k in keys} == {
            "destructive": True, "idempotent": True, "open-world": False}
        assert {k: v for k, v in imported["tool/peek"].items() if k in keys} == {
            "read-only": True, "idempotent": True, "open-world": False}
        assert not set(imported["tool/plain"]) & set(keys)
