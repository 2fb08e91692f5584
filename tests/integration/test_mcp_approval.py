"""mcp-server holds a call that tool-policy/approval says needs a person: a 2026-07-28 client is asked
with input_required and its retry carrying the answer makes (or refuses) exactly that call; a forged,
altered or replayed retry calls nothing; a client that cannot be asked is told so.

The server runs in-process on the session broker (``mcp_server_harness``), the tool service is a
real responder on the bus that records every request, the clients are the official SDK's.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest
from agent_stand_ins import service_descriptor, service_tool, unique
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_server_harness import text
from support import wait_for_async
from trustgraph.base import PubSub
from trustgraph.base.testing.stand_ins import Responder
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse
from trustgraph.topics import tool_service_topics

YES = {"approve": types.ElicitResult(action="accept", content={"approve": True})}


class Person:
    """An elicitation callback: answers each question with the next of ``answers``, keeps the questions."""

    def __init__(self, *answers: types.ElicitResult) -> None:
        self.answers = list(answers)
        self.asked: list[Any] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params)
        return self.answers.pop(0)


@pytest.fixture
async def counted(broker: Any, mcp_server: Any) -> Any:
    """An mcp-server offering ``erase`` (says it is destructive) and ``plain`` (says nothing), both
    answered by one recording service, and a ``policy(value)`` that sets tool-policy/approval."""
    name = unique("counted")
    ps = PubSub(broker.url, processor="test")
    service = await Responder(ps, *tool_service_topics(name), ToolServiceRequest,
                              lambda r: [ToolServiceResponse(response="done", end_of_stream=True)]).start()
    server = await mcp_server()
    version = [0]

    async def policy(value: dict | None) -> None:
        version[0] += 1
        config = {"tool": {"erase": json.dumps(service_tool("erase", name, destructive=True)),
                           "plain": json.dumps(service_tool("plain", name))},
                  "tool-service": {name: json.dumps(service_descriptor(name))}}
        if value is not None:
            config["tool-policy"] = {"approval": json.dumps(value)}
        await server.proc.apply_config(config, version[0])
        await wait_for_async("the tools", lambda: set(server.proc.table.tools) == {"erase", "plain"}, 30)

    await policy(None)
    try:
        yield server, service, policy
    finally:
        await ps.close()


def args(service: Responder) -> list[dict]:
    return [json.loads(r.arguments) for r in service.requests]


async def test_a_2026_client_is_asked_and_yes_makes_the_call_once_and_no_makes_none(counted):
    server, service, policy = counted
    person = Person(YES["approve"], types.ElicitResult(action="accept", content={"approve": False}),
                    types.ElicitResult(action="decline"))
    async with Client(server.url, mode="2026-07-28", elicitation_callback=person) as client:
        # A tool the policy does not hold is called at once.
        assert text(await client.call_tool("plain", {"topic": "p"})) == "done"
        assert person.asked == [] and args(service) == [{"topic": "p"}]

        # Asked: the tool, its arguments and why are in the question; yes makes the call, once.
        done = await client.call_tool("erase", {"topic": "a"})
        assert not done.is_error and text(done) == "done"
        (asked,) = person.asked
        assert asked.mode == "form" and "tool 'erase' with {\"topic\": \"a\"}" in asked.message
        assert "it says it is destructive" in asked.message
        assert asked.requested_schema["properties"]["approve"]["type"] == "boolean"
        assert args(service) == [{"topic": "p"}, {"topic": "a"}]

        # No, and a declined form: refused, nothing called.
        for topic in ("b", "c"):
            refused = await client.call_tool("erase", {"topic": topic})
            assert refused.is_error, topic
            assert text(refused) == f"The user refused the call of tool 'erase' with {{\"topic\": \"{topic}\"}}, " \
                                    "so it was not made."
        assert len(person.asked) == 3
        assert text(await client.call_tool("plain", {"topic": "q"})) == "done"
        assert args(service) == [{"topic": "p"}, {"topic": "a"}, {"topic": "q"}]

    # The policy names a tool and asks nothing of destructive ones: the same one reader as the agent's.
    await policy({"tools": ["plain"], "destructive": False})
    await wait_for_async("the new policy", lambda: server.proc.table.approval.tools == {"plain"}, 30)
    person = Person(YES["approve"])
    async with Client(server.url, mode="2026-07-28", elicitation_callback=person) as client:
        assert text(await client.call_tool("erase", {"topic": "d"})) == "done"
        assert person.asked == []
        assert text(await client.call_tool("plain", {"topic": "e"})) == "done"
        assert len(person.asked) == 1 and "tool 'plain'" in person.asked[0].message
        assert "tool-policy/approval names it" in person.asked[0].message
    assert args(service)[-2:] == [{"topic": "d"}, {"topic": "e"}]


async def test_a_forged_altered_or_replayed_retry_calls_nothing(counted):
    server, service, _ = counted
    async with Client(server.url, mode="2026-07-28", elicitation_callback=Person()) as client:
        await client.list_tools()
        session = client.session
        asked = await session.call_tool("erase", {"topic": "a"}, allow_input_required=True)
        assert isinstance(asked, types.InputRequiredResult) and set(asked.input_requests) == {"approve"}
        state = asked.request_state
        assert state and "topic" not in state   # sealed: the client cannot read it

        async def retry(tool: str, arguments: dict, request_state: str) -> Any:
            return await session.call_tool(tool, arguments, input_responses=YES, request_state=request_state,
                                           allow_input_required=True)

        # Other arguments, another tool, a state we did not seal, our own plaintext unsealed: each is
        # the protocol's invalid-params error, before anything runs.
        tries = [("erase", {"topic": "z"}, state), ("plain", {"topic": "a"}, state),
                 ("erase", {"topic": "a"}, "v1.forged"),
                 ("erase", {"topic": "a"}, json.dumps({"id": "x", "until": 4e9}))]
        for tool, arguments, request_state in tries:
            with pytest.raises(MCPError) as e:
                await retry(tool, arguments, request_state)
            assert e.value.error.code == -32602 and e.value.error.message == "Invalid or expired requestState"
        # Yes without the state is a new call: asked again, not made.
        again = await session.call_tool("erase", {"topic": "a"}, input_responses=YES, allow_input_required=True)
        assert isinstance(again, types.InputRequiredResult)
        assert service.requests == []

        # The real retry makes the call; the same retry again is refused.
        done = await retry("erase", {"topic": "a"}, state)
        assert isinstance(done, types.CallToolResult) and not done.is_error and text(done) == "done"
        replayed = await retry("erase", {"topic": "a"}, state)
        assert replayed.is_error and "this approval was used for a call already" in text(replayed)
        # The retry of the other asking, with no answer in it: refused too.
        unanswered = await session.call_tool("erase", {"topic": "a"}, request_state=again.request_state,
                                             allow_input_required=True)
        assert unanswered.is_error and "carried no answer" in text(unanswered)
        assert text(await client.call_tool("plain", {"topic": "q"})) == "done"
    assert args(service) == [{"topic": "a"}, {"topic": "q"}]


@pytest.mark.parametrize("mode, why", [("legacy", "it speaks MCP 2025-11-25, which has no input_required"),
                                       ("2026-07-28", "it does not answer elicitations")])
async def test_a_client_that_cannot_be_asked_is_told_so_and_nothing_is_called(counted, mode, why):
    server, service, _ = counted
    person = Person(YES["approve"])
    # The legacy client declares elicitation (its callback); the 2026 one declares none.
    async with Client(server.url, mode=mode, elicitation_callback=person if mode == "legacy" else None) as client:
        refused = await client.call_tool("erase", {"topic": "a"})
        assert refused.is_error and person.asked == []
        assert text(refused) == (
            f"The call of tool 'erase' with {{\"topic\": \"a\"}} needs a person's approval (it says it is "
            f"destructive, and tool-policy/approval asks first for every destructive tool), and this client "
            f"cannot give it ({why}), so it was not made. Use an MCP 2026-07-28 client that answers "
            "elicitations, or the agent (tg-invoke-agent asks on the terminal).")
        assert text(await client.call_tool("plain", {"topic": "q"})) == "done"
    assert args(service) == [{"topic": "q"}]
