"""Stand-ins for the agent's integration tests: a scripted model, small responders, an agent harness.

The ``ScriptedModel`` is a TEST STAND-IN for the prompt service and the LLM
behind it: it answers ``agent-react`` requests with replies written in the
test, chosen by the iteration (the length of the history), so a test can
make the "model" call a tool, make a mistake, or answer.  Everything else is
real: the broker, the agent processor, tool services and the clients.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trustgraph.agent.react import Processor
from trustgraph.agent.react.service import CLIENTS
from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.schema import AgentRequest, AgentResponse, AgentStep, PromptRequest, PromptResponse

PROBE = "(probe: are you listening?)"


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def flow_definition(flow: str) -> dict[str, str]:
    """The sixteen agent-manager keys of WIRE.md section 5, on this flow's own topics."""
    d = {"request": f"non-persistent://tg/request/agent:{flow}",
         "next": f"non-persistent://tg/request/agent:{flow}",
         "response": f"non-persistent://tg/response/agent:{flow}"}
    for prefix in CLIENTS:
        d[f"{prefix}-request"] = f"non-persistent://tg/request/{prefix}:{flow}"
        d[f"{prefix}-response"] = f"non-persistent://tg/response/{prefix}:{flow}"
    return d


class Responder:
    """Answers requests on one topic pair with ``answer(request) -> [responses]``; records requests."""

    def __init__(self, ps: PubSub, flow: dict[str, str], prefix: str,
                 answer: Callable[[Any], list[Any]]) -> None:
        self.ps, self.answer = ps, answer
        self.req_topic, self.resp_topic = flow[f"{prefix}-request"], flow[f"{prefix}-response"]
        self.schema = CLIENTS[prefix][0]
        self.requests: list[Any] = []

    async def start(self) -> Responder:
        self.out = await self.ps.producer(self.resp_topic)
        await self.ps.consumer(self.req_topic, unique("stand-in"), self.schema, handler=self._on,
                               concurrency=16)
        return self

    async def _on(self, msg: Any) -> None:
        self.requests.append(msg.value)
        result = self.answer(msg.value)
        if asyncio.iscoroutine(result):
            result = await result
        for resp in result:
            await self.out.send(resp, {"id": msg.id})


Reply = str | Callable[[dict[str, Any]], str]


@dataclass
class ScriptedModel:
    """Replies to ``agent-react`` by iteration: ``replies[len(history)]`` (the last one repeats).

    A reply may be a function of the decoded terms.  Other template ids are
    answered by ``templates[id](terms)``.  Streaming replies go out in small
    chunks, as a streaming LLM would send them.
    """

    replies: list[Reply] = field(default_factory=list)
    templates: dict[str, Callable[[dict[str, Any]], str]] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)
    silent: bool = False
    chunk: int = 4

    def __call__(self, req: PromptRequest) -> list[PromptResponse]:
        terms = {k: json.loads(v) for k, v in req.terms.items()}
        self.calls.append({"id": req.id, "streaming": req.streaming, **terms})
        if self.silent:
            return []
        if req.id != "agent-react":
            return [PromptResponse(text=self.templates[req.id](terms), object=None, end_of_stream=True)]
        reply = self.replies[min(len(terms["history"]), len(self.replies) - 1)]
        text = reply(terms) if callable(reply) else reply
        if not req.streaming:
            return [PromptResponse(text=text, object=None, end_of_stream=True)]
        parts = [text[i:i + self.chunk] for i in range(0, len(text), self.chunk)]
        return ([PromptResponse(text=p, object=None, end_of_stream=False) for p in parts]
                + [PromptResponse(text="", object=None, end_of_stream=True)])


class AgentHarness:
    """An in-process agent on a flow of its own, a scripted model, and a client to ask it."""

    def __init__(self, broker: Any, **params: Any) -> None:
        self.broker = broker
        self.flow = unique("flow")
        self.definition = flow_definition(self.flow)
        self.ident = unique("agent-manager")
        self.model = ScriptedModel()
        self.version = 1000
        self.seen: list[tuple[str, AgentRequest]] = []  # every message on request/next
        # Config topics of our own: no other test's config-svc can reach this agent.
        own = unique("cfg")
        self.proc = Processor(id=self.ident, pulsar_host=broker.url, metrics=False,
                              config_push_queue=f"non-persistent://tg/config/{own}",
                              config_request_queue=f"non-persistent://tg/request/{own}",
                              config_response_queue=f"non-persistent://tg/response/{own}",
                              **params)
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

    async def _wait_until_listening(self) -> None:
        """Ask until the agent answers: its new subscription may not be live yet.

        Measured on pulsar-lite under CPU load: a message published from another
        connection right after ``subscribe`` returns is lost about one time in
        twenty on a non-persistent topic (never from the same connection, never
        50 ms later).  The probe has a full history, so the agent answers
        "Too many agent iterations" at once, without calling the model.
        """
        probe = AgentRequest(question=PROBE, history=[AgentStep()] * self.proc.manager.max_iterations)
        for _ in range(40):
            try:
                await self.client.request(probe, timeout=0.25)
                return
            except TimeoutError:
                continue
        raise AssertionError("the agent never answered a probe")

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
                  state: str = "", user: str = "alice", timeout: float = 20) -> list[AgentResponse]:
        """Every response message of one dialog, up to its last."""
        got: list[AgentResponse] = []

        def last(r: AgentResponse) -> bool:
            return r.error is not None or (r.end_of_dialog if streaming else r.answer is not None)

        try:
            async for r in self.client.stream(AgentRequest(question=question, group=group, state=state,
                                                           user=user, streaming=streaming),
                                              final=last, timeout=timeout):
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


def call(tool: str, **args: Any) -> str:
    return f"Thought: I will use {tool}\nAction: {tool}\nArgs: {json.dumps(args)}"


def final(text: str | Callable[[dict[str, Any]], str]) -> Reply:
    if callable(text):
        return lambda terms: f"Thought: I know now\nFinal Answer: {text(terms)}"
    return f"Thought: I know now\nFinal Answer: {text}"


def observations(responses: list[AgentResponse]) -> list[str]:
    return [r.observation for r in responses if r.observation]


def last_observation(terms: dict[str, Any]) -> str:
    return terms["history"][-1]["observation"]
