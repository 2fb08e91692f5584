"""Upstream 2.1.4's tool-service tool (``trustgraph.agent.react.tools.ToolServiceImpl``) on the real broker.

Code written against upstream's agent builds ``ToolServiceImpl(context,
request_queue, response_queue, config_values, arguments, processor)`` and
calls ``invoke(**arguments)``: here against a running DynamicToolService of
ours, through our ToolServiceClient on the processor's PubSub.
"""

from __future__ import annotations

import json
import uuid

import pytest
from trustgraph.base import DynamicToolService, PubSub
from trustgraph.base.tool_services.dynamic_tool_service import ToolError


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


class Echo(DynamicToolService):
    """Says who called it, with which config and arguments; refuses topic "fail"."""

    async def invoke(self, user, config, arguments):
        if arguments.get("topic") == "fail":
            raise ToolError("no jokes about failure")
        return {"user": user, "config": config, "arguments": arguments}


class Processor:
    """What upstream's tool needs of its agent: the bus, and where it keeps its clients."""

    def __init__(self, url: str) -> None:
        self.id = "upstream-agent"
        self.pubsub = PubSub(url, processor=self.id)


class Context:
    """Upstream's agent's context for one request: gives flow clients and carries the user."""

    def __init__(self, user: str) -> None:
        self._user = user

    def __call__(self, key: str):
        raise KeyError(key)    # a tool service needs no flow client


@pytest.fixture
async def echo(broker):
    topic = unique("echo")
    svc = Echo(id=topic, pulsar_host=broker.url, metrics=False, topic=topic)
    await svc.start()
    yield topic
    await svc.stop()


async def test_upstreams_tool_service_tool_calls_a_service_of_ours(broker, echo) -> None:
    from trustgraph.agent.react.tools import ToolServiceImpl
    from trustgraph.agent.react.types import Argument
    processor = Processor(broker.url)
    queues = (f"non-persistent://tg/request/{echo}", f"non-persistent://tg/response/{echo}")
    try:
        args = [Argument("topic", "string", "What about")]
        tool = ToolServiceImpl(Context("alice"), *queues, config_values={"style": "pun"}, arguments=args,
                               processor=processor)
        assert tool.get_arguments() == args
        got = json.loads(await tool.invoke(topic="cats"))
        assert got == {"user": "alice", "config": {"style": "pun"}, "arguments": {"topic": "cats"}}
        # A second tool on the same service shares the processor's one client (one subscription).
        other = ToolServiceImpl(Context(""), *queues, processor=processor)
        assert json.loads(await other.invoke())["user"] == "trustgraph"    # no user: upstream's default
        assert list(processor.tool_service_clients) == ["|".join(queues)]
        with pytest.raises(RuntimeError, match="no jokes about failure"):
            await tool.invoke(topic="fail")
    finally:
        for client in getattr(processor, "tool_service_clients", {}).values():
            await client.stop()
        await processor.pubsub.close()


async def test_without_a_processor_the_tool_says_so() -> None:
    from trustgraph.agent.react.tools import ToolServiceImpl
    tool = ToolServiceImpl(Context("a"), "non-persistent://tg/request/x", "non-persistent://tg/response/x")
    with pytest.raises(RuntimeError, match="no processor"):
        await tool.invoke(topic="x")
