"""Stand-ins for the agent's integration tests: a scripted model, small responders, an agent harness.

The scripted model is :class:`trustgraph.base.testing.ScriptedPrompt`, a TEST
STAND-IN for the prompt service and the LLM behind it: it answers
``agent-react`` requests with replies written in the test, chosen by the
iteration (the length of the history), so a test can make the "model" call a
tool, make a mistake, or answer.  Everything else is real: the broker, the
agent processor, tool services and the clients.  (The unit tests use the same
stand-ins on the in-memory transport.)
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from support import wait_for_async
from trustgraph.agent.react import Processor
from trustgraph.agent.react.service import CLIENTS
from trustgraph.base import PubSub, RequestResponseClient, testing
from trustgraph.base.testing import ScriptedPrompt, action, final_answer
from trustgraph.schema import AgentRequest, AgentResponse, AgentStep
from trustgraph.schema.services.agent import SHOW_ACTIONS

PROBE = "(probe: are you listening?)"


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def flow_definition(flow: str) -> dict[str, str]:
    """The sixteen agent-manager keys upstream 2.1.4 requires, on this flow's own topics."""
    d = {"request": f"non-persistent://tg/request/agent:{flow}",
         "next": f"non-persistent://tg/request/agent:{flow}",
         "response": f"non-persistent://tg/response/agent:{flow}"}
    for prefix in CLIENTS:
        d[f"{prefix}-request"] = f"non-persistent://tg/request/{prefix}:{flow}"
        d[f"{prefix}-response"] = f"non-persistent://tg/response/{prefix}:{flow}"
    return d


def Responder(ps: PubSub, flow: dict[str, str], prefix: str,
              answer: Callable[[Any], list[Any]]) -> testing.Responder:
    """A stand-in on one of the agent's client topic pairs (``graph-rag``, ``mcp-tool``...)."""
    return testing.Responder(ps, flow[f"{prefix}-request"], flow[f"{prefix}-response"],
                             CLIENTS[prefix][0], answer)


class AgentHarness:
    """An in-process agent on a flow of its own, a scripted model, and a client to ask it."""

    def __init__(self, broker: Any, announce: dict[str, str] | None = None, **params: Any) -> None:
        self.broker = broker
        self.flow = unique("flow")
        self.definition = flow_definition(self.flow)
        self.ident = unique("agent-manager")
        self.model = ScriptedPrompt()
        self.version = 1000
        self.seen: list[tuple[str, AgentRequest]] = []  # every message on request/next
        self.seen_properties: list[dict[str, str]] = []  # and its properties
        # Config and announce topics of our own: no other test's config-svc or
        # tool service can reach this agent (a test's own services use ``announce``).
        own = unique("cfg")
        self.announce = announce or {"announce_queue": f"non-persistent://tg/config/{own}-announce",
                                     "announce_probe_queue": f"non-persistent://tg/config/{own}-probe"}
        # The scripted model's argument values are test data, often not in the question: the
        # check that they were said (grounding) is off unless a test asks for it.
        params.setdefault("argument_check", False)
        self.proc = Processor(id=self.ident, pulsar_host=broker.url, metrics=False,
                              config_push_queue=f"non-persistent://tg/config/{own}",
                              config_request_queue=f"non-persistent://tg/request/{own}",
                              config_response_queue=f"non-persistent://tg/response/{own}",
                              **self.announce, **params)
        self.ps = PubSub(broker.url, processor="test")

    async def start(self) -> AgentHarness:
        await self.proc.start()
        self.prompt = await Responder(self.ps, self.definition, "prompt", self.model).start()
        await self.ps.consumer(self.definition["request"], unique("watch"), AgentRequest,
                               handler=self._watch)
        self.client = RequestResponseClient(
            self.ps, request_topic=self.definition["request"], response_topic=self.definition["response"],
            request_schema=AgentRequest, response_schema=AgentResponse, subscription=unique("ask"))
        await self.client.start()
        return self

    async def _watch(self, msg: Any) -> None:
        if msg.value.question != PROBE:
            self.seen.append((msg.id, msg.value))
            self.seen_properties.append(dict(msg.properties))

    async def _wait_until_listening(self) -> None:
        """Ask until the agent answers: its new subscription may not be live yet.

        Measured on pulsar-lite under CPU load: a message published from another
        connection right after ``subscribe`` returns is lost about one time in
        twenty on a non-persistent topic (never from the same connection, never
        50 ms later).  The probe has a full history, so the agent answers
        "Too many agent iterations" at once, without calling the model.
        """
        probe = AgentRequest(question=PROBE, history=[AgentStep()] * self.proc.manager.max_iterations)

        async def answered() -> bool:
            try:
                await self.client.request(probe, timeout=2.0)
                return True
            except TimeoutError:
                return False

        await wait_for_async("an answer of the agent to a probe", answered, 60, every=0)

    async def configure(self, tools: dict[str, Any] | None = None, services: dict[str, Any] | None = None,
                        **more: dict[str, str]) -> None:
        """Give the agent a whole config, as a push would (a new version each time)."""
        def enc(d: dict[str, Any] | None) -> dict[str, str]:
            return {k: v if isinstance(v, str) else json.dumps(v) for k, v in (d or {}).items()}
        self.version += 1
        new_flow = self.flow not in self.proc.flows
        await self.proc.apply_config({
            "active-flow": {self.ident: json.dumps({self.flow: self.definition})},
            "tool": enc(tools), "tool-service": enc(services), **more}, self.version)
        assert self.flow in self.proc.flows, self.proc.flow_errors
        if new_flow:
            await self._wait_until_listening()

    async def ask(self, question: str, *, streaming: bool = False, group: list[str] | None = None,
                  show_actions: bool = True,
                  state: str = "", user: str = "alice", timeout: float = 20,
                  into: list[AgentResponse] | None = None) -> list[AgentResponse]:
        """Every response message of one dialog, up to its last (also appended to ``into`` as they come)."""
        got: list[AgentResponse] = into if into is not None else []

        def last(r: AgentResponse) -> bool:
            return r.error is not None or (r.end_of_dialog if streaming else r.answer is not None)

        try:
            async for r in self.client.stream(AgentRequest(question=question, group=group, state=state,
                                                           user=user, streaming=streaming),
                                              final=last, timeout=timeout,
                                              properties={SHOW_ACTIONS: "true"} if show_actions else None):
                got.append(r)
        except TimeoutError:
            # Say where the dialog stopped: a flaky broker and a stuck agent look alike otherwise.
            raise AssertionError(f"no end of dialog in {timeout}s: {len(self.seen)} agent message(s) seen, "
                                 f"{len(self.model.calls)} prompt call(s), responses {got}") from None
        return got

    async def stop(self) -> None:
        await self.ps.close()
        await self.proc.stop()


def service_descriptor(topic: str, params: list[Any] | None = None) -> dict[str, Any]:
    return {"id": topic, "request-queue": f"non-persistent://tg/request/{topic}",
            "response-queue": f"non-persistent://tg/response/{topic}", "config-params": params or []}


def service_tool(name: str, service: str, args: tuple[str, ...] = ("topic",), **extra: Any) -> dict[str, Any]:
    return {"type": "tool-service", "name": name, "description": f"The {name} tool", "service": service,
            "arguments": [{"name": a, "type": "string", "description": f"the {a}"} for a in args],
            **extra}


call = action
final = final_answer


def observations(responses: list[AgentResponse]) -> list[str]:
    return [r.observation for r in responses if r.observation]


def last_observation(terms: dict[str, Any]) -> str:
    return terms["history"][-1]["observation"]
