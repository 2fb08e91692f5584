"""Stand-ins for the services a processor calls, on any PubSub (in-memory or a real broker).

* :class:`Responder` answers one request topic with a function of the request;
* :class:`ScriptedPrompt` is that function for the prompt service the agent
  calls: it answers ``agent-react`` with replies the test writes, chosen by
  the iteration, and other templates with functions of their terms;
* :func:`action` and :func:`final_answer` write such replies in the ReAct
  text format.

They are TEST STAND-INS: the processor under test and the transport are
real, the service on the other end is scripted.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...schema import Error, PromptRequest, PromptResponse
from ..formats.decision_schema import SCORES_PROPERTY
from ..messaging.pubsub import PubSub

__all__ = ["Answer", "Responder", "ScriptedPrompt", "action", "final_answer"]

#: ``answer(request)``: a list of responses, a coroutine of one, or an async
#: generator of responses (each sent as it is yielded: a streaming service).
Answer = Callable[[Any], Any]


class Responder:
    """Answers requests on one topic pair with ``answer(request)``; records every request and its properties."""

    def __init__(self, pubsub: PubSub, request_topic: str, response_topic: str, schema: type,
                 answer: Answer) -> None:
        self.pubsub = pubsub
        self.request_topic = request_topic
        self.response_topic = response_topic
        self.schema = schema
        self.answer = answer
        self.requests: list[Any] = []
        self.properties: list[dict[str, str]] = []
        self._seen = asyncio.Event()

    async def start(self) -> Responder:
        self._out = await self.pubsub.producer(self.response_topic)
        await self.pubsub.consumer(self.request_topic, f"stand-in-{uuid.uuid4().hex[:8]}", self.schema,
                                   handler=self._on, concurrency=16, own=True)
        return self

    async def _on(self, msg: Any) -> None:
        self.requests.append(msg.value)
        self.properties.append(dict(msg.properties))
        self._seen.set()
        result = self.answer(msg.value)
        if hasattr(result, "__aiter__"):
            async for resp in result:
                await self._send(resp, msg.id)
            return
        if asyncio.iscoroutine(result):
            result = await result
        for resp in result:
            await self._send(resp, msg.id)

    async def _send(self, resp: Any, rid: str) -> None:
        """One response: a record, or ``(record, properties)`` to send properties beside the id."""
        if isinstance(resp, tuple):
            record, props = resp
            await self._out.send(record, {**props, "id": rid})
        else:
            await self._out.send(resp, {"id": rid})

    async def wait_for_requests(self, n: int, timeout: float = 10.0) -> list[Any]:
        """The requests once ``n`` have arrived."""
        async with asyncio.timeout(timeout):
            while len(self.requests) < n:
                self._seen.clear()
                await self._seen.wait()
        return self.requests


Reply = str | Error | Callable[[dict[str, Any]], "str | Error"]


@dataclass
class ScriptedPrompt:
    """Answers ``agent-react`` by iteration: ``replies[len(history)]`` (the last one repeats).

    A reply may be a function of the decoded terms.  Other template ids are
    answered by ``templates[id](terms)``.  ``calls`` records the decoded
    terms of every request; ``silent`` answers nothing (a prompt service
    that does not answer).  Streaming replies go out in chunks of ``chunk``
    characters, as a streaming LLM would send them.  ``scores[i]`` (when
    given) are the choice scores the last message of iteration i carries, as
    an LLM service that reads the model's token probabilities would send them
    (``trustgraph.base.formats.decision_schema.SCORES_PROPERTY``).  A reply
    that is an :class:`~trustgraph.schema.Error` (or a function's that returns
    one) is the prompt service's failure of that request.
    """

    replies: list[Reply] = field(default_factory=list)
    templates: dict[str, Callable[[dict[str, Any]], str]] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)
    silent: bool = False
    chunk: int = 4
    scores: list[dict[str, float] | None] = field(default_factory=list)

    def __call__(self, req: PromptRequest) -> list[PromptResponse]:
        terms = {k: json.loads(v) for k, v in req.terms.items()}
        self.calls.append({"id": req.id, "streaming": req.streaming, **terms})
        if self.silent:
            return []
        if req.id != "agent-react":
            return [PromptResponse(text=self.templates[req.id](terms), object=None, end_of_stream=True)]
        step = len(terms["history"])
        reply = self.replies[min(step, len(self.replies) - 1)]
        text = reply(terms) if callable(reply) else reply
        if isinstance(text, Error):
            return [PromptResponse(text=None, object=None, error=text, end_of_stream=True)]
        scores = self.scores[min(step, len(self.scores) - 1)] if self.scores else None
        props = {SCORES_PROPERTY: json.dumps(scores)} if scores else None

        def last(record: PromptResponse) -> Any:
            return (record, props) if props else record

        if not req.streaming:
            return [last(PromptResponse(text=text, object=None, end_of_stream=True))]
        parts = [text[i:i + self.chunk] for i in range(0, len(text), self.chunk)]
        return ([PromptResponse(text=p, object=None, end_of_stream=False) for p in parts]
                + [last(PromptResponse(text="", object=None, end_of_stream=True))])


def action(tool: str, **args: Any) -> str:
    """A ReAct reply that calls ``tool`` with ``args``."""
    return f"Thought: I will use {tool}\nAction: {tool}\nArgs: {json.dumps(args)}"


def final_answer(text: str | Callable[[dict[str, Any]], str]) -> Reply:
    """A ReAct reply that answers ``text`` (or a function of the terms)."""
    if callable(text):
        return lambda terms: f"Thought: I know now\nFinal Answer: {text(terms)}"
    return f"Thought: I know now\nFinal Answer: {text}"
