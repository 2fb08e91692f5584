"""Upstream 2.1.4's ``AgentService`` and ``ToolService``: the bases of its agent and its MCP tool service.

Each is a :class:`~.processor.FlowProcessor` that consumes a flow's
``request`` topic and answers on ``response`` (the agent also on ``next``,
where it sends itself the dialog's next step); a subclass writes one method:

* ``AgentService.agent_request(request, respond, next, flow)``: ``await
  respond(AgentResponse)`` for each message of the answer, ``await
  next(AgentRequest)`` to continue the dialog in a later request;
* ``ToolService.invoke_tool(name, parameters)``: returns text, or an object
  sent as JSON.

Errors are answered as upstream answers them (``agent-error`` with both
ends of the dialog set, ``tool-error``), with the exception's text; a
``TooManyRequests`` is not answered but tried again (the consumer's rate
limit handling).  A request without an ``id`` gets no answer (nobody could
match it): it is logged, where upstream answers under no id or fails.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from prometheus_client import Counter

from ...exceptions import TooManyRequests
from ...schema import AgentRequest, AgentResponse, Error, ToolRequest, ToolResponse
from .processor import ConsumerSpec, FlowProcessor, ProducerSpec

logger = logging.getLogger(__name__)

__all__ = ["AgentService", "ToolService", "default_concurrency", "default_ident"]

#: Upstream's default id of an agent (agent_service.py).
default_ident = "agent-manager"
#: Upstream's default concurrency of a tool service (tool_service.py).
default_concurrency = 1

#: Upstream's count of tool invocations, by processor id, flow and tool name.
tool_invocations = Counter("tool_invocation_count", "Tool invocation count", ["id", "flow", "name"])


def _request_id(msg: Any, service: str) -> str | None:
    rid = msg.properties().get("id")
    if rid is None:
        logger.warning("%s: request without an id dropped (no caller could match an answer)", service)
    return rid


class AgentService(FlowProcessor):
    """Base of an agent: write ``agent_request(request, respond, next, flow)``."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.register_specification(ConsumerSpec(name="request", schema=AgentRequest, handler=self.on_request))
        self.register_specification(ProducerSpec(name="next", schema=AgentRequest))
        self.register_specification(ProducerSpec(name="response", schema=AgentResponse))

    async def on_request(self, msg: Any, consumer: Any, flow: Any) -> None:
        rid = _request_id(msg, self.id)
        if rid is None:
            return
        properties = {"id": rid}

        async def respond(resp: AgentResponse) -> None:
            await flow("response").send(resp, properties=properties)

        async def next(req: AgentRequest) -> None:  # noqa: A001 - upstream's name
            await flow("next").send(req, properties=properties)

        try:
            await self.agent_request(request=msg.value(), respond=respond, next=next, flow=flow)
        except TooManyRequests:
            raise
        except Exception as e:
            logger.error("Agent request %s failed: %s", rid, e, exc_info=True)
            await flow("response").send(AgentResponse(
                error=Error(type="agent-error", message=str(e)), thought=None, observation=None,
                answer=None, end_of_message=True, end_of_dialog=True), properties=properties)

    async def agent_request(self, request: AgentRequest, respond: Callable[[AgentResponse], Awaitable[None]],
                            next: Callable[[AgentRequest], Awaitable[None]], flow: Any) -> None:  # noqa: A002
        raise NotImplementedError(f"{type(self).__name__} does not implement agent_request")


class ToolService(FlowProcessor):
    """Base of a tool service: write ``invoke_tool(name, parameters)``; ``-c/--concurrency`` requests at once."""

    def __init__(self, **params: Any) -> None:
        concurrency = int(params.get("concurrency") or default_concurrency)
        super().__init__(**params | {"concurrency": concurrency})
        self.register_specification(ConsumerSpec(name="request", schema=ToolRequest, handler=self.on_request,
                                                 concurrency=concurrency))
        self.register_specification(ProducerSpec(name="response", schema=ToolResponse))

    async def on_request(self, msg: Any, consumer: Any, flow: Any) -> None:
        rid = _request_id(msg, self.id)
        if rid is None:
            return
        request = msg.value()
        try:
            parameters = json.loads(request.parameters) if request.parameters else {}
            result = await self.invoke_tool(request.name, parameters)
            if isinstance(result, str):
                response = ToolResponse(error=None, text=result, object=None)
            else:
                response = ToolResponse(error=None, text=None, object=json.dumps(result))
        except TooManyRequests:
            raise
        except Exception as e:
            logger.error("Tool %s failed: %s", request.name, e, exc_info=True)
            response = ToolResponse(error=Error(type="tool-error", message=str(e)), text=None, object=None)
            await flow("response").send(response, properties={"id": rid})
            return
        await flow("response").send(response, properties={"id": rid})
        tool_invocations.labels(id=self.id, flow=flow.name, name=request.name).inc()

    async def invoke_tool(self, name: str, parameters: dict[str, Any]) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not implement invoke_tool")

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("-c", "--concurrency", type=int, default=default_concurrency,
                            help=f"requests handled at once (default: {default_concurrency})")
        super().add_args(parser)
