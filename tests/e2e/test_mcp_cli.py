"""MCP both ways on a launched stack: the real commands, a real MCP server, the agent, our MCP server.

A scripted model makes the agent call an imported MCP tool; the MCP server is
the SDK's (``tests/integration/mcp_stand_in.py``) on 127.0.0.1; our
``mcp-server`` is the one tg-launch started, called with the SDK's client.
The same bad calls through our MCP server, the gateway's REST route and
``tg-invoke-tool-service`` get the same refusal.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import urllib.request

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from support import BIN, McpStandIn, status_line, wait_for

TOKEN = "e2e-mcp-token"
# A structured decision, as the bootstrap template asks for (the scripted model enforces its schema).
ACTION = json.dumps({"action": "lookup", "args": {"city": "Oslo"}})


@pytest.fixture(scope="module")
def stack(stack_factory, tmp_path_factory):
    script = tmp_path_factory.mktemp("script") / "script.json"
    script.write_text(json.dumps({"rules": [{"match": "Question: How cold is Oslo", "reply": ACTION}],
                                  "default": "no rule matched"}))
    return stack_factory("--llm", "scripted", "--llm-script", str(script))


@pytest.fixture
def server(tmp_path):
    s = McpStandIn(tmp_path / "mcp.log", token=TOKEN).start()
    yield s
    s.stop()


def test_imported_tools_are_used_by_the_agent_at_once(stack, server):
    dry = stack.cli("tg-import-mcp-tools", server.url, "--only", "lookup", "shout", "--auth-token", TOKEN,
                    "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "mcp/lookup" in dry.stdout and "tool/shout" in dry.stdout and "nothing was written" in dry.stdout
    assert TOKEN not in dry.stdout
    assert "lookup" not in stack.cli("tg-list-config-items", "--type", "tool").stdout
    done = stack.cli("tg-import-mcp-tools", server.url, "--only", "lookup", "shout", "--auth-token", TOKEN)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"Imported 2 tool(s) from {server.url}: lookup, shout"
    # The examples in the server's _meta that a descriptor can hold, and a line for the rest.
    assert done.stderr.splitlines() == [
        "tg-import-mcp-tools: warning: tool/shout: 1 of the server's examples left out (a tool takes at most "
        "10, each a non-empty string of at most 200 characters)"]
    shout = json.loads(stack.cli("tg-get-config-item", "tool/shout").stdout)
    assert (shout["description"], shout["examples"]) == ("The text in capitals (plain text).", ["Say hello loudly"])
    # No waiting: the agent reloads on the config push that the import made.
    r = stack.cli("tg-invoke-agent", "-q", "How cold is Oslo?", "-v")
    assert r.returncode == 0, r.stderr + stack.child_logs()
    assert '🛠️ lookup {"city": "Oslo"}\n💡 {"city": "Oslo", "temp": 4}' in r.stdout
    # The bootstrap template answers with the tool's result (after-result: observation).
    assert r.stdout.rstrip().splitlines()[-1] == '{"city": "Oslo", "temp": 4}'

    # The typed arguments came from the tool's input schema.
    tool = json.loads(stack.cli("tg-get-config-item", "tool/lookup").stdout)
    assert tool["arguments"] == [{"name": "city", "type": "string", "description": "City", "required": True}]


def test_mcp_tool_commands(stack, server):
    r = stack.cli("tg-set-mcp-tool", "--id", "loud", "-r", "shout", "--tool-url", server.url,
                  "--auth-token", TOKEN)
    assert r.returncode == 0, r.stderr
    r = stack.cli("tg-invoke-mcp-tool", "-n", "loud", "-P", '{"text": "quiet"}')
    assert (r.returncode, r.stdout) == (0, "QUIET\n"), r.stderr
    r = stack.cli("tg-show-mcp-tools")
    assert "loud" in r.stdout and "Yes (configured)" in r.stdout and TOKEN not in r.stdout
    assert stack.cli("tg-delete-mcp-tool", "--id", "loud").returncode == 0
    again = stack.cli("tg-delete-mcp-tool", "--id", "loud")
    assert again.returncode == 1 and "not found" in again.stderr
    bad = stack.cli("tg-set-mcp-tool", "--id", "x", "--tool-url", "ftp://nowhere")
    assert bad.returncode == 1 and "http://" in bad.stderr


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_watch_follows_the_servers_tool_list(stack, tmp_path, revision):
    """A session-era server says so on the session; a 2026-07-28 one on a subscriptions/listen stream."""
    server = McpStandIn(tmp_path / "mcp.log", token=TOKEN, revision=revision).start()
    prefix = f"w{revision[:4]}-"
    log = open(tmp_path / "watch.log", "w+")
    watch = subprocess.Popen([str(BIN / "tg-import-mcp-tools"), server.url, "--auth-token", TOKEN,
                              "--prefix", prefix, "--watch", "-u", stack.url], stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for("watching", lambda: "Watching" in (tmp_path / "watch.log").read_text())
        r = stack.cli("tg-invoke-mcp-tool", "-n", f"{prefix}grow", "-P", '{"name": "fresh"}')
        assert r.returncode == 0, r.stderr
        wait_for("the new tool in config", lambda: f"{prefix}fresh" in stack.cli(
            "tg-list-config-items", "--type", "tool").stdout.split(),
                 detail=lambda: (tmp_path / "watch.log").read_text())
        r = stack.cli("tg-invoke-mcp-tool", "-n", f"{prefix}fresh")
        assert (r.returncode, r.stdout) == (0, "fresh ok\n"), r.stderr
    finally:
        watch.terminate()
        watch.wait(10)
        log.close()
        server.stop()


async def _through_our_mcp_server(url: str) -> tuple[list[str], str]:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = [t.name for t in (await session.list_tools()).tools]
        result = await session.call_tool("tell-joke", {"topic": "cats"})
        return names, "".join(c.text for c in result.content)


def test_an_mcp_client_calls_the_joke_service_through_our_mcp_server(stack):
    assert status_line(stack.output(), "mcp-server", f"http://localhost:{stack.mcp_port}/mcp"), stack.output()
    names, joke = asyncio.run(_through_our_mcp_server(stack.mcp_url))
    assert "tell-joke" in names and "tell-dad-joke" in names
    assert joke.startswith("Hey trustgraph! Here's a pun for you:")


# A tool of the joke service whose arguments a caller can get wrong in each way a schema refuses.
FORECAST = {"type": "tool-service", "name": "joke-forecast", "description": "A joke about the days ahead",
            "service": "joke-service",
            "arguments": [{"name": "topic", "type": "string", "description": "What the joke is about"},
                          {"name": "days", "type": "integer", "description": "Days ahead", "required": False},
                          {"name": "unit", "type": "string", "enum": ["C", "F"], "required": False}]}
BAD_CALLS = [  # (the CLI's -a flags, the same arguments as JSON, the problem the refusal names)
    (["topic=rain", "days=two"], {"topic": "rain", "days": "two"},
     "argument 'days' must be of type integer, got \"two\""),
    (["topic=rain", "unit=K"], {"topic": "rain", "unit": "K"}, "argument 'unit' must be one of \"C\", \"F\", got \"K\""),
    (["days=2"], {"days": 2}, "missing argument(s) 'topic'"),
]


async def _mcp_calls(url: str, calls: list[dict]) -> list[tuple[bool, str]]:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out = []
        for arguments in calls:
            result = await session.call_tool("joke-forecast", arguments)
            out.append((result.is_error, "".join(c.text for c in result.content)))
        return out


async def _mcp_lists(url: str, name: str) -> bool:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return name in [t.name for t in (await session.list_tools()).tools]


def _rest(stack, body: dict) -> dict:
    request = urllib.request.Request(stack.url + "api/v1/tool-service", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as resp:
        return json.loads(resp.read())


def test_the_same_bad_call_gets_the_same_refusal_everywhere(stack):
    put = stack.cli("tg-put-config-item", "tool/joke-forecast", input=json.dumps(FORECAST))
    assert put.returncode == 0, put.stderr
    wait_for("the tool in the gateway's catalog", lambda: "error" not in _rest(
        stack, {"tool": "joke-forecast", "arguments": {"topic": "rain"}}), detail=stack.child_logs)
    wait_for("the tool in our MCP server's list", lambda: asyncio.run(_mcp_lists(stack.mcp_url, "joke-forecast")))

    mcp = asyncio.run(_mcp_calls(stack.mcp_url, [arguments for _, arguments, _ in BAD_CALLS]))
    for (flags, arguments, problem), (is_error, mcp_text) in zip(BAD_CALLS, mcp, strict=True):
        assert is_error, mcp_text
        assert mcp_text.startswith(f"tool-argument-error: wrong arguments for tool 'joke-forecast': {problem}. "
                                   "Its arguments are: topic (string): What the joke is about; "), mcp_text
        rest = _rest(stack, {"tool": "joke-forecast", "arguments": arguments})
        assert rest == {"error": {"type": "tool-argument-error",
                                  "message": mcp_text.removeprefix("tool-argument-error: ")}}
        for streaming in ([], ["--no-streaming"]):
            cli = stack.cli("tg-invoke-tool-service", "-n", "joke-forecast",
                            *(a for flag in flags for a in ("-a", flag)), *streaming)
            assert (cli.returncode, cli.stdout.strip()) == (1, ""), cli.stdout
            assert cli.stderr.splitlines() == [f"tg-invoke-tool-service: error: {mcp_text}"]

    # The coercion a model (or -a days=3) relies on holds on every path: the call is answered.
    ok = stack.cli("tg-invoke-tool-service", "-n", "joke-forecast", "-a", "topic=rain", "-a", "days=3",
                   "-a", "unit=C")
    assert ok.returncode == 0 and ok.stdout.startswith("Hey trustgraph!"), ok.stderr
    assert _rest(stack, {"tool": "joke-forecast", "arguments": {"topic": "rain", "days": "3"}})[
        "response"].startswith("Hey trustgraph!")
    (is_error, text), = asyncio.run(_mcp_calls(stack.mcp_url, [{"topic": "rain", "days": "3"}]))
    assert not is_error and text.startswith("Hey trustgraph!"), text
