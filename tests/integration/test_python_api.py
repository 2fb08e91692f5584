"""``trustgraph.api`` (our upstream-compatible Python client) against our real gateway.

The gateway, config-svc and broker are real (the ``stack`` of test_gateway.py); flow services
are responders in the test.  The client is synchronous, so its calls run in a thread while the
responders answer on the test's event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from gateway_stack import responder, start_flow, topics, unique
from trustgraph.api import (
    AgentAnswer,
    AgentObservation,
    AgentThought,
    Api,
    ApplicationException,
    ConfigKey,
    ConfigValue,
    GatewayError,
    LLMError,
)
from trustgraph.schema import (
    AgentRequest,
    AgentResponse,
    Error,
    TextCompletionRequest,
    TextCompletionResponse,
)


async def in_thread(fn: Any, *args: Any) -> Any:
    return await asyncio.to_thread(fn, *args)


async def test_config_interface(stack) -> None:
    api = Api(stack.url, timeout=30)
    kind = unique("type")
    config = api.config()
    await in_thread(config.put, [ConfigValue(type=kind, key="a", value='"one"'),
                                 ConfigValue(type=kind, key="b", value="2")])
    assert await in_thread(config.get, [ConfigKey(type=kind, key="a")]) == [ConfigValue(kind, "a", '"one"')]
    assert await in_thread(config.list, kind) == ["a", "b"]
    assert {v.key for v in await in_thread(config.get_values, kind)} == {"a", "b"}
    whole, version = await in_thread(config.all)
    assert whole[kind] == {"a": '"one"', "b": "2"} and version >= 1
    await in_thread(config.delete, [ConfigKey(type=kind, key="a")])
    assert await in_thread(config.list, kind) == ["b"]
    with pytest.raises(ApplicationException, match="bad-operation: Bad operation"):
        await in_thread(config.request, {"operation": "nonsense"})


async def test_flow_interface_and_services(stack, http, pubsub) -> None:
    flow_id = unique("f")
    await start_flow(http, stack, flow_id)
    api = Api(stack.url, timeout=30)
    flows = api.flow()
    assert flow_id in await in_thread(flows.list)
    assert (await in_thread(flows.get, flow_id))["description"] == "test flow"
    assert f"bp-{stack.tag}" in await in_thread(flows.list_blueprints)
    assert "interfaces" in await in_thread(flows.get_blueprint, f"bp-{stack.tag}")

    async def complete(req: TextCompletionRequest) -> AsyncIterator[TextCompletionResponse]:
        if req.prompt == "fail":
            yield TextCompletionResponse(error=Error(type="llm-error", message="model gone"))
            return
        if req.streaming:
            yield TextCompletionResponse(response="one ", end_of_stream=False)
        yield TextCompletionResponse(response=f"echo {req.prompt}", end_of_stream=True)

    async def agent(req: AgentRequest) -> AsyncIterator[AgentResponse]:
        yield AgentResponse(chunk_type="thought", content="hmm", end_of_message=True)
        yield AgentResponse(chunk_type="observation", content="seen", end_of_message=True)
        yield AgentResponse(chunk_type="answer", content="42", end_of_message=True, end_of_dialog=True)

    await responder(pubsub, topics(stack, "text-completion", flow_id), TextCompletionRequest, complete)
    await responder(pubsub, topics(stack, "agent", flow_id), AgentRequest, agent)

    assert await in_thread(flows.id(flow_id).text_completion, "sys", "hi") == "echo hi"
    socket = api.socket().flow(flow_id)
    assert await in_thread(socket.text_completion, "", "hi") == "echo hi"
    pieces = await in_thread(lambda: list(socket.text_completion("", "hi", streaming=True)))
    assert pieces == ["one ", "echo hi"]
    chunks = await in_thread(lambda: list(socket.agent("q", user="ann", streaming=True)))
    assert [type(c) for c in chunks] == [AgentThought, AgentObservation, AgentAnswer]
    assert chunks[-1].content == "42" and chunks[-1].end_of_dialog
    with pytest.raises(LLMError, match="model gone"):
        await in_thread(socket.text_completion, "", "fail")

    async_socket = api.async_socket().flow(flow_id)
    assert await async_socket.text_completion("", "there") == "echo there"
    assert await api.async_flow().id(flow_id).text_completion("", "x") == "echo x"
    await api.aclose()
    api.close()


async def test_routing_errors_raise(stack) -> None:
    api = Api(stack.url, timeout=30)
    with pytest.raises(GatewayError, match="Invalid flow"):
        await in_thread(api.socket().flow(unique("nope")).text_completion, "", "hi")
    with pytest.raises(ApplicationException, match="Invalid flow"):
        await in_thread(api.flow().id(unique("nope")).text_completion, "", "hi")
    api.close()


async def test_flow_parameters_of_any_json_type_are_stored_as_upstream_stores_them(stack, http) -> None:
    flow_id = unique("f")
    await start_flow(http, stack, flow_id)  # puts the blueprint
    api = Api(stack.url, timeout=30)
    other = unique("g")
    await in_thread(api.flow().start, f"bp-{stack.tag}", other, "typed parameters",
                    {"n": 1, "b": True, "o": {"a": 1}, "s": "x"})
    stored = await in_thread(api.flow().get, other)
    assert stored["parameters"] == {"n": "1", "b": "True", "o": "{'a': 1}", "s": "x"}
    await in_thread(api.flow().stop, other)


async def test_a_null_flow_parameter_is_stored_as_upstream_stores_it(stack, http) -> None:
    """Through the gateway to config-svc: null is upstream's str(None), not a missing value."""
    flow_id = unique("f")
    await start_flow(http, stack, flow_id)  # puts the blueprint
    api = Api(stack.url, timeout=30)
    other = unique("g")
    await in_thread(api.flow().start, f"bp-{stack.tag}", other, "a null parameter", {"n": None})
    stored = await in_thread(api.flow().get, other)
    assert stored["parameters"] == {"n": "None"}
    await in_thread(api.flow().stop, other)
