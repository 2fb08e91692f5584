"""The ReAct loop: one iteration of a dialog per agent message.

One agent message is one iteration (WIRE.md section 6): ask the prompt
service's ``agent-react`` template what to do, then either answer or call a
tool and hand the dialog on, with the new step in its history, as a new
message on ``next``.  :meth:`AgentManager.react` is an async generator of
the events in ``types.py``; the service turns them into wire messages, so
streaming and non-streaming share this code (STYLE.md 9).

Each prompt request carries the JSON Schema of the next step (property
``decision-schema``, ``decisions.py``); the model's reply is a structured
JSON decision when the template asked for one, else ReAct text
(``parser.py``).  Tools are listed most relevant to the question first.

The model's mistakes go back to the model (STYLE.md 5): an unreadable reply,
an unknown tool, wrong arguments, a tool that fails or does not answer in
time, a final answer that is no answer (empty, the question said back, a
tool call announced instead of made) each become an observation starting
``Error:`` that says what to do next, and the loop goes on, bounded by
``max_iterations``.  Only our own failures (the prompt service failing or
not answering in time, too many iterations) end the dialog with an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

from trustgraph.base import deadlines
from trustgraph.base.pubsub import PubSubError
from trustgraph.base.request_response import Unserved
from trustgraph.base.text import as_text, strip_fences
from trustgraph.base.tool_service_client import ServiceUnavailable
from trustgraph.catalog import ArgumentError
from trustgraph.schema import AgentRequest, AgentStep, PromptRequest

from .decisions import (
    SCHEMA_PROPERTY,
    AnswerGate,
    answer_problem,
    by_relevance,
    decision_schema,
    parse_decision,
)
from .parser import FORMAT_HINT, StreamParser, parse_react
from .registry import Registry, Tool, filter_tools
from .types import (
    Act,
    Action,
    Answer,
    CallContext,
    Continue,
    Event,
    Failed,
    Final,
    Observation,
    ReactParseError,
    Thought,
)

logger = logging.getLogger(__name__)

TEMPLATE = "agent-react"
MAX_SCHEMA_CHARS = 256 * 1024


# -- the loop ----------------------------------------------------------------------------


class PromptFailed(Exception):
    """The prompt service answered with an error, or not in time: our failure, not the model's."""


def prompt_terms(request: AgentRequest, tools: list[Tool], context: str) -> dict[str, str]:
    """The ``agent-react`` variables, each JSON-encoded as PromptRequest.terms requires."""
    history = [{"thought": h.thought, "action": h.action, "arguments": h.arguments,
                "observation": h.observation} for h in request.history or []]
    return {
        "question": json.dumps(request.question),
        "tools": json.dumps([t.describe() for t in tools]),
        "context": json.dumps(context),
        "tool_names": json.dumps(", ".join(t.name for t in tools)),
        "history": json.dumps(history),
    }


class AgentManager:
    """Runs one iteration of a dialog per call of :meth:`react`."""

    def __init__(self, *, max_iterations: int = 10, tool_timeout: float = 60.0,
                 prompt_timeout: float = 120.0) -> None:
        self.max_iterations = max_iterations
        self.tool_timeout = tool_timeout
        self.prompt_timeout = prompt_timeout
        self._schema_warned = False

    async def react(self, request: AgentRequest, registry: Registry, flow: Any,
                    deadline: float | None = None) -> AsyncIterator[Event]:
        """Yield the events of one iteration; the last is Answer(end), Continue or Failed.

        ``deadline`` is when the dialog's caller stops waiting (absolute UNIX
        time, None when it did not say): every prompt and tool call of the
        iteration ends by then.
        """
        history = list(request.history or [])
        if len(history) >= self.max_iterations:
            yield Failed(f"Too many agent iterations: the dialog reached the limit of {self.max_iterations} "
                         "steps without an answer (agent-manager-react --max-iterations; "
                         "tg-launch --max-iterations)")
            return
        tools = by_relevance(request.question, filter_tools(registry.tools.values(), request.group, request.state))
        terms = prompt_terms(request, tools, registry.context)
        props = self._schema_property(tools)
        logger.debug("Iteration %d, tools %s", len(history) + 1, [t.name for t in tools])
        outcome: list[Any] = []
        gate = AnswerGate(request.question)
        try:
            async with aclosing(self._decide(flow, terms, props, deadline, request.streaming, outcome)) as events:
                async for event in events:
                    if isinstance(event, Answer):  # streamed: only once it cannot be refused
                        if text := gate.feed(event.content):
                            yield Answer(text, end=False)
                        continue
                    yield event
        except PromptFailed as e:
            yield Failed(str(e))
            return
        result = outcome[0]

        state = request.state or "undefined"
        if isinstance(result, Final):
            # A released answer has been judged already (and is out).
            problem = None if gate.released else answer_problem(result.answer, request.question,
                                                                 [t.name for t in tools])
            if problem is None:
                if not request.streaming:
                    yield Answer(result.answer, end=True)
                    return
                if rest := gate.finish():
                    yield Answer(rest, end=False)
                yield Answer("", end=True)
                return
            logger.debug("Final answer refused: %s", problem)
            step = AgentStep(thought=result.thought, observation=f"Error: {problem}.")
            yield Observation(step.observation)
        elif isinstance(result, ReactParseError):
            logger.debug("Unparseable reply: %s", result.reason)
            hint = "" if "Reply with" in result.reason else f" {FORMAT_HINT}"
            step = AgentStep(thought=result.thought, observation=f"Error: {result.reason}.{hint}")
            yield Observation(step.observation)
        else:
            yield Act(result.name, result.arguments)
            async with aclosing(self._observe(result, tools, request, flow, deadline, outcome)) as parts:
                async for part in parts:
                    yield part
            observation, tool = outcome[1:]
            if tool is not None and tool.state:
                state = tool.state
            step = AgentStep(thought=result.thought, action=result.name,
                             arguments={k: as_text(v) for k, v in result.arguments.items()},
                             observation=observation)
        yield Continue(AgentRequest(question=request.question, state=state, group=request.group,
                                    history=[*history, step], user=request.user,
                                    streaming=request.streaming))

    def _schema_property(self, tools: list[Tool]) -> dict[str, str]:
        """The schema of the next step, for a template that asks for a structured decision.

        A message property: with thousands of tools it would outgrow what a
        broker takes in a message's metadata, and no model's context holds
        such a prompt anyway; then none is sent (the model is unconstrained).
        """
        schema = json.dumps(decision_schema(tools))
        if len(schema) <= MAX_SCHEMA_CHARS:
            return {SCHEMA_PROPERTY: schema}
        if not self._schema_warned:
            self._schema_warned = True
            logger.warning("The decision schema of %d tools is %d characters, over %d: steps go without "
                           "it (unconstrained); fewer tools per request (groups) would keep it",
                           len(tools), len(schema), MAX_SCHEMA_CHARS)
        return {}

    async def _decide(self, flow: Any, terms: dict[str, str], props: dict[str, str],
                      deadline: float | None, streaming: bool, outcome: list[Any]) -> AsyncIterator[Event]:
        """Ask the model; yield its thought (and answer) events; ``outcome`` gets the decision.

        The reply is a structured JSON decision when it starts with ``{``
        (the template asked for one), else ReAct text.  A streamed ReAct
        reply is classified as it grows (thought, then answer chunks); a
        JSON decision is read whole, and its answer sent in one piece.
        """
        if not streaming:
            text = await self._complete(flow, terms, props, deadline)
            logger.debug("Model reply: %.500r", text)
            result = _parse(text)
            outcome.append(result)
            yield Thought(result.thought)
            return
        parser = StreamParser()
        text = ""                        # the reply so far, until its format is known, and a JSON one
        structured: bool | None = None   # None: not known yet
        async with aclosing(self._stream(flow, terms, props, deadline)) as chunks:
            async for chunk in chunks:
                if structured is None:
                    text += chunk
                    structured = _is_json(text)
                    if structured is not False:
                        continue
                    chunk = text  # ReAct: what was held back goes to the parser now
                elif structured:
                    text += chunk
                    continue
                for event in parser.feed(chunk):
                    yield event
        if structured is None:           # the reply ended before its format showed
            structured = bool(strip_fences(text).startswith("{"))
            if not structured:
                for event in parser.feed(text):
                    yield event
        if structured:
            logger.debug("Model reply: %.500r", text)
            result = _parse(text)
            outcome.append(result)
            if result.thought:
                yield Thought(result.thought, end=True)
            if isinstance(result, Final) and result.answer:
                yield Answer(result.answer, end=False)
            return
        tail, result = parser.finish()
        logger.debug("Model reply: %.500r", parser.text)
        outcome.append(result)
        for event in tail:
            yield event

    async def _observe(self, action: Action, tools: list[Tool], request: AgentRequest, flow: Any,
                       deadline: float | None, outcome: list[Any]) -> AsyncIterator[Observation]:
        """:meth:`_act`, and the observation events it makes; ``outcome`` gets ``[observation, tool]``.

        Not streaming: one ``Observation`` with the whole result.  Streaming:
        ``Observation(chunk, end=False)`` for each chunk of the tool's output
        as it arrives, then one closing ``Observation`` with what was not
        streamed (all of it when the tool did not stream, the error when it
        failed midway).
        """
        if not request.streaming:
            observation, tool = await self._act(action, tools, request, flow, deadline)
            outcome.extend((observation, tool))
            yield Observation(observation)
            return
        chunks: asyncio.Queue[str | None] = asyncio.Queue()
        call = asyncio.ensure_future(self._act(action, tools, request, flow, deadline, chunks.put_nowait))
        call.add_done_callback(lambda _: chunks.put_nowait(None))
        streamed = ""
        try:
            while (chunk := await chunks.get()) is not None:
                streamed += chunk
                yield Observation(chunk, end=False)
            observation, tool = call.result()
        finally:
            if not call.done():
                call.cancel()
                with contextlib.suppress(BaseException):
                    await call
        outcome.extend((observation, tool))
        if not streamed:
            tail = observation
        elif observation == streamed.strip():
            tail = ""
        elif observation.startswith(streamed):
            tail = observation[len(streamed):]
        else:
            tail = "\n" + observation  # the tool failed after streaming part of its answer
        yield Observation(tail, end=True)

    async def _act(self, action: Action, tools: list[Tool], request: AgentRequest, flow: Any,
                   deadline: float | None = None,
                   on_chunk: Callable[[str], Any] | None = None) -> tuple[str, Tool | None]:
        """Call the tool; return the observation, and the tool when the call succeeded."""
        tool = next((t for t in tools if t.name == action.name), None)
        if tool is None:
            names = ", ".join(t.name for t in tools) or "none"
            return (f"Error: No action for '{action.name}': there is no tool of that name. "
                    f"The tools you can use are: {names}. Use one of them exactly as named, "
                    "or give a Final Answer."), None
        try:
            arguments = tool.check_arguments(action.arguments)
        except ArgumentError as e:
            return f"Error: {e}", None
        timeout = deadlines.left(deadline, tool.timeout or self.tool_timeout)
        ctx = CallContext(user=request.user, flow=flow, timeout=timeout, on_chunk=on_chunk)
        logger.debug("Calling tool %s (%s)", tool.name, tool.type)
        try:
            async with asyncio.timeout(timeout):
                result = await tool.impl.invoke(ctx, arguments)
        except Unserved as e:  # before TimeoutError, which it is: nothing would have answered
            logger.info("Tool %s: %s", tool.name, e)
            return (f"Error: tool '{tool.name}' cannot be used now: {e}. Use another tool, "
                    "or give a Final Answer with what you know."), None
        except TimeoutError:
            logger.info("Tool %s did not answer within %.3gs", tool.name, timeout)
            return (f"Error: tool '{tool.name}' did not answer within {max(timeout, 0):.3g} seconds; it may "
                    "be busy or not running. Try again, use another tool, or give a Final Answer "
                    "with what you know."), None
        except ServiceUnavailable as e:
            logger.info("Tool %s: %s", tool.name, e.message)
            return (f"Error: tool '{tool.name}' cannot be used now: {e.message}. Use another tool, "
                    "or give a Final Answer with what you know."), None
        except Exception as e:
            logger.info("Tool %s failed: %s", tool.name, e)
            return (f"Error: tool '{tool.name}' failed: {e}. Check the arguments and try again, "
                    "use another tool, or give a Final Answer."), None
        return as_text(result).strip(), tool

    def _request(self, terms: dict[str, str], streaming: bool) -> PromptRequest:
        return PromptRequest(id=TEMPLATE, terms=terms, streaming=streaming)

    async def _complete(self, flow: Any, terms: dict[str, str], props: dict[str, str],
                        deadline: float | None = None) -> str:
        try:
            resp = await flow("prompt-request").request(self._request(terms, False), properties=props,
                                                        timeout=self.prompt_timeout, deadline=deadline)
        except (TimeoutError, PubSubError) as e:
            raise PromptFailed(f"The prompt service did not answer: {e}") from None
        if resp.error is not None:
            raise PromptFailed(f"The prompt service failed: {resp.error.message or resp.error.type}")
        return resp.text if resp.text is not None else (resp.object or "")

    async def _stream(self, flow: Any, terms: dict[str, str], props: dict[str, str],
                      deadline: float | None = None) -> AsyncIterator[str]:
        """The prompt service's text chunks as they arrive (one deadline for the whole reply)."""
        responses = flow("prompt-request").stream(self._request(terms, True), final=_end_of_stream,
                                                  properties=props, timeout=self.prompt_timeout,
                                                  deadline=deadline)
        try:
            async for resp in responses:
                if resp.error is not None:
                    raise PromptFailed(f"The prompt service failed: {resp.error.message or resp.error.type}")
                if resp.text:
                    yield resp.text
        except (TimeoutError, PubSubError) as e:
            raise PromptFailed(f"The prompt service did not answer: {e}") from None
        finally:
            responses.close()


def _end_of_stream(resp: Any) -> bool:
    return bool(resp.end_of_stream)


def _is_json(start: str) -> bool | None:
    """Whether a reply starting with ``start`` is a JSON decision; None while it cannot be told."""
    body = start.lstrip()
    if body.startswith("```"):        # a fence: look at what its first line opens
        newline = body.find("\n")
        if newline < 0:
            return None
        body = body[newline + 1:].lstrip()
    elif "```".startswith(body):      # nothing yet, or the start of a fence
        return None
    return body.startswith("{") if body else None


def _parse(text: str) -> Action | Final | ReactParseError:
    """A whole reply: a structured JSON decision, else ReAct text; a mistake is returned, not raised."""
    try:
        decided = parse_decision(text)
        return decided if decided is not None else parse_react(text)
    except ReactParseError as e:
        return e
