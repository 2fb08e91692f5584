"""mcp-tool on a real broker against a real MCP server (the SDK's, ``mcp_stand_in.py``).

The agent runs in-process with a scripted model (``agent_stand_ins``); the
mcp-tool processor runs in-process on the agent's ``mcp-tool-*`` topics; the
MCP server is a process of its own on 127.0.0.1, killed and restarted where
a test needs it.
"""

from __future__ import annotations

import json
import time

import pytest
from agent_stand_ins import AgentHarness, call, final, observations, unique
from trustgraph.agent.mcp_tool import Processor as McpTool
from trustgraph.base import RequestResponseClient
from trustgraph.base.messaging import deadlines
from trustgraph.schema import ToolRequest, ToolResponse

TOKEN = "s3cret-token-for-tests"


class McpToolHarness:
    """The mcp-tool processor on one flow's topics, and a client that calls it as the agent does."""

    def __init__(self, broker, definition: dict[str, str], **params) -> None:
        self.ident = unique("mcp-tool")
        self.flow = unique("flow")
        self.topics = {"request": definition["mcp-tool-request"], "response": definition["mcp-tool-response"]}
        self.proc = McpTool(id=self.ident, pulsar_host=broker.url, metrics=False, follow_config=False, **params)
        self.version = 0

    async def start(self, pubsub) -> McpToolHarness:
        await self.proc.start()
        self.client = RequestResponseClient(
            pubsub, request_topic=self.topics["request"], response_topic=self.topics["response"],
            request_schema=ToolRequest, response_schema=ToolResponse, subscription=unique("mcp-caller"))
        await self.client.start()
        return self

    async def configure(self, mcp: dict[str, dict]) -> None:
        self.version += 1
        await self.proc.apply_config({
            "active-flow": {self.ident: json.dumps({self.flow: self.topics})},
            "mcp": {k: json.dumps(v) for k, v in mcp.items()}}, self.version)
        assert self.flow in self.proc.flows, self.proc.flow_errors

    async def call(self, name: str, params: dict, timeout: float = 20.0) -> ToolResponse:
        return await self.client.request(ToolRequest(name=name, parameters=json.dumps(params)), timeout=timeout,
                                         properties={deadlines.DEADLINE: deadlines.stamp(timeout)})

    async def stop(self) -> None:
        await self.client.stop()
        await self.proc.stop()


@pytest.fixture
async def stack(broker):
    """An agent and an mcp-tool on the agent's flow."""
    parts: list = []

    async def make(**params):
        agent = await AgentHarness(broker).start()
        mcp = await McpToolHarness(broker, agent.definition, **params).start(agent.ps)
        parts.extend([mcp, agent])
        return agent, mcp

    yield make
    for p in parts:
        await p.stop()


def entry(server, remote: str, token: str | None = TOKEN) -> dict:
    e = {"url": server.url, "remote-name": remote}
    if token is not None:
        e["auth-token"] = token
    return e


def tool(name: str, key: str, *args: str) -> dict:
    return {"type": "mcp-tool", "name": name, "description": f"the {name} tool", "mcp-tool": key,
            "arguments": [{"name": a, "type": "string", "description": a} for a in args]}


async def test_agent_calls_mcp_tools_structured_text_and_failing(stack, mcp_stand_in):
    server = mcp_stand_in(token=TOKEN)
    agent, mcp = await stack()
    await mcp.configure({"wx": entry(server, "lookup"), "loud": entry(server, "shout"),
                         "broken": entry(server, "fail")})
    agent.model.replies = [call("weather", city="Oslo"), call("shout", text="hello"),
                           call("explode", reason="the disk is full"), final("done")]
    await agent.configure(tools={"weather": tool("weather", "wx", "city"), "shout": tool("shout", "loud", "text"),
                                 "explode": tool("explode", "broken", "reason")},
                          mcp={k: json.dumps(entry(server, "x")) for k in ("wx", "loud", "broken")})
    got = await agent.ask("what now?", timeout=60)
    seen = observations(got)
    assert json.loads(seen[0]) == {"city": "Oslo", "temp": 4}       # structuredContent, as an object
    assert seen[1] == "HELLO"                                        # text content
    assert seen[2].startswith("Error:") and "tool-error" in seen[2] and "the disk is full" in seen[2]
    assert got[-1].answer == "done"
    # Upstream 2.1.4's shapes: structuredContent in object, else the joined text.
    obj = await mcp.call("wx", {"city": "Paris"})
    assert obj.error is None and obj.text is None and json.loads(obj.object) == {"city": "Paris", "temp": 21}
    text = await mcp.call("loud", {"text": "a"})
    assert text.error is None and text.text == "A" and text.object is None
    # Five calls through three entries of one server: one connection, kept (upstream opens a session
    # per call); the server speaks MCP 2026-07-28, so it is stateless: no session at all.
    await mcp.configure({"wx": entry(server, "lookup"), "loud": entry(server, "shout"),
                         "count": entry(server, "sessions")})
    assert (await mcp.call("count", {})).text == "0"


@pytest.mark.parametrize("revision, spoken, sessions", [
    ("2025-11-25", "2025-11-25", "1"),   # a server of the session era: one session, kept
    ("2026-07-28", "2026-07-28", "0"),   # a 2026-only server: no handshake, no session
    ("both", "2026-07-28", "0"),         # the SDK's own, speaking both: the newer one
])
async def test_mcp_tool_speaks_the_revision_of_the_server(stack, mcp_stand_in, revision, spoken, sessions):
    server = mcp_stand_in(revision=revision)
    _agent, mcp = await stack()
    await mcp.configure({"wx": entry(server, "lookup", token=None), "loud": entry(server, "shout", token=None),
                         "count": entry(server, "sessions", token=None)})
    assert json.loads((await mcp.call("wx", {"city": "Oslo"})).object) == {"city": "Oslo", "temp": 4}
    assert (await mcp.call("loud", {"text": "hi"})).text == "HI"
    assert (await mcp.call("count", {})).text == sessions
    (conn,) = mcp.proc.connections.values()
    assert conn.revision == spoken


async def test_bearer_token_is_required_and_a_config_change_applies_at_once(stack, mcp_stand_in):
    server = mcp_stand_in(token=TOKEN)
    _agent, mcp = await stack()
    await mcp.configure({"loud": entry(server, "shout", token=None)})
    none = await mcp.call("loud", {"text": "x"})
    assert none.error is not None and none.error.type == "tool-error"
    assert "401" in none.error.message and "auth-token" in none.error.message
    await mcp.configure({"loud": entry(server, "shout", token="wrong")})
    wrong = await mcp.call("loud", {"text": "x"})
    assert wrong.error is not None and "401" in wrong.error.message
    assert "wrong" not in wrong.error.message and TOKEN not in wrong.error.message   # never a token
    await mcp.configure({"loud": entry(server, "shout")})
    assert (await mcp.call("loud", {"text": "ok"})).text == "OK"
    # Same process: a renamed remote tool is used from the next call on.
    await mcp.configure({"loud": entry(server, "lookup")})
    assert json.loads((await mcp.call("loud", {"city": "Oslo"})).object)["temp"] == 4


@pytest.mark.parametrize("revision", ["both", "2025-11-25"])
async def test_a_killed_server_is_an_error_within_the_deadline_then_used_again(stack, mcp_stand_in, revision):
    server = mcp_stand_in(revision=revision)
    _agent, mcp = await stack()
    await mcp.configure({"loud": entry(server, "shout", token=None)})
    assert (await mcp.call("loud", {"text": "before"})).text == "BEFORE"
    server.kill()
    for _ in range(2):   # the broken session, then a fresh connection attempt to nothing
        start = time.monotonic()
        down = await mcp.call("loud", {"text": "down"}, timeout=30)
        assert time.monotonic() - start < 20   # well within its 30 s deadline
        assert down.error is not None and down.error.type == "tool-error" and server.url in down.error.message
        assert "did not answer" not in down.error.message   # known at once, not at the deadline
    server.start()
    assert (await mcp.call("loud", {"text": "after"})).text == "AFTER"     # no restart of mcp-tool
    server.kill()
    server.start()
    # Restarted between calls: a session-era server forgot the session; the call is sent once more, on
    # a new one (a 2026 one has none to forget).
    assert (await mcp.call("loud", {"text": "again"})).text == "AGAIN"


async def test_a_slow_server_is_an_error_before_the_callers_deadline(stack, mcp_stand_in):
    server = mcp_stand_in()
    _agent, mcp = await stack()
    await mcp.configure({"slow": entry(server, "slow", token=None)})
    start = time.monotonic()
    late = await mcp.call("slow", {"seconds": 60}, timeout=10)
    assert time.monotonic() - start < 10   # mcp-tool's answer, before the caller gives up
    assert late.error is not None and "did not answer" in late.error.message


async def test_sse_transport(stack, mcp_stand_in):
    server = mcp_stand_in(transport="sse")
    _agent, mcp = await stack()
    await mcp.configure({"loud": {**entry(server, "shout", token=None), "transport": "sse"}})
    assert (await mcp.call("loud", {"text": "over sse"})).text == "OVER SSE"


@pytest.mark.parametrize("transport, size, says", [
    ("streamable-http", 20_000, "over the 4,096-byte limit of one MCP reply, cut while being read"),
    # The legacy transport's replies share one event stream, which the SDK holds to 1 MiB an event.
    ("sse", 1_100_000, "exceeded the 1048576 byte limit"),
])
async def test_a_reply_over_the_limit_is_cut_while_read_and_the_next_call_works(mcp_stand_in, transport, size,
                                                                                  says):
    from trustgraph.mcp_client.connection import McpConnection, McpReplyTooLarge, ServerAddress

    server = mcp_stand_in(transport=transport)
    conn = McpConnection(ServerAddress(server.url, transport), max_reply=4096)
    try:
        with pytest.raises(McpReplyTooLarge, match=says):
            await conn.call_tool("shout", {"text": "x" * size}, timeout=20)
        result = await conn.call_tool("shout", {"text": "small"}, timeout=20)
        assert result.content[0].text == "SMALL"
    finally:
        await conn.close()
