"""The ReAct loop and the parser of the model's replies.

One agent message is one iteration (WIRE.md section 6): ask the prompt
service's ``agent-react`` template what to do, then either answer or call a
tool and hand the dialog on, with the new step in its history, as a new
message on ``next``.  :meth:`AgentManager.react` is an async generator of
the events in ``types.py``; the service turns them into wire messages, so
streaming and non-streaming share this code (STYLE.md 9).

The model's mistakes go back to the model (STYLE.md 5): an unreadable reply,
an unknown tool, wrong arguments, a tool that fails or does not answer in
time each become an observation starting ``Error:`` that says what to do
next, and the loop goes on, bounded by ``max_iterations``.  Only our own
failures (the prompt service failing or not answering in time, too many
iterations) end the dialog with an error.

The reply format (upstream's, parsed more forgivingly): optional
``Thought:``; then ``Action: <tool>`` with ``Args: {json}``, or
``Final Answer: <text>``.  A marker counts at the start of a line (any case,
after list or markdown marks) or, written exactly, after a space on the same
line, because small models put everything on one line.  ``Args`` is read
with a real JSON decoder, so braces inside strings work; surrounding code
fences and quotes around the tool name are dropped.  Unlike upstream, a
multi-line final answer keeps its line breaks.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from trustgraph.base import deadlines
from trustgraph.base.pubsub import PubSubError
from trustgraph.base.text import as_text, strip_fences
from trustgraph.base.tool_service_client import ServiceUnavailable
from trustgraph.catalog import ArgumentError
from trustgraph.schema import AgentRequest, AgentStep, PromptRequest

from .registry import Registry, Tool, filter_tools
from .types import (
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
FORMAT_HINT = ("Reply with 'Thought: <your reasoning>' followed by either 'Action: <tool name>' and "
               "'Args: <JSON object>', or 'Final Answer: <your answer>'.")

# -- parsing ---------------------------------------------------------------------------

_MARKER = re.compile(
    r"(?:(?:^|(?<=\n))[ \t>*_#-]*(?P<line>(?i:thought|action|args|final[ \t]+answer))"
    r"|(?<=[ \t])(?P<inline>Thought|Action|Args|Final Answer))[ \t*_]*:")
_DECODER = json.JSONDecoder(strict=False)  # tolerate raw newlines inside strings
_LINE_FORMS = ("thought:", "thought :", "action:", "action :", "final answer:", "final answer :")
_INLINE_FORMS = ("Action:", "Action :", "Final Answer:", "Final Answer :")


@dataclass(frozen=True)
class _Marker:
    name: str   # thought, action, args or "final answer"
    start: int  # where the marker's line (or word) begins
    end: int    # just after the colon


def _markers(body: str) -> list[_Marker]:
    return [_Marker(" ".join((m["line"] or m["inline"]).lower().split()), m.start(), m.end())
            for m in _MARKER.finditer(body)]


def _skip_bold(body: str, i: int) -> int:
    while i < len(body) and body[i] in "*_":
        i += 1
    return i


def _split(body: str) -> tuple[int, _Marker | None, list[_Marker]]:
    """Where the thought starts, and the first Action/Final Answer marker after it."""
    ms = _markers(body)
    start = 0
    for m in ms:  # "Thought:", or a repeated "Thought: Thought:" (a prefix the model echoed)
        if m.name != "thought" or body[start:m.start].strip():
            break
        start = _skip_bold(body, m.end)
    decisive = next((m for m in ms if m.name in ("action", "final answer") and m.start >= start), None)
    return start, decisive, ms


def _parse_args(body: str, i: int, marked: bool, thought: str) -> dict[str, Any]:
    while i < len(body) and body[i].isspace():
        i += 1
    if body.startswith("```", i):  # Args: ```json { ... } ```
        nl = body.find("\n", i)
        i = len(body) if nl < 0 else nl + 1
        while i < len(body) and body[i].isspace():
            i += 1
    if i >= len(body) or body[i] != "{":
        if not marked or i >= len(body) or body.startswith("```", i):
            return {}  # no Args (or an empty one): a tool without arguments
        raise ReactParseError("'Args:' must be followed by a JSON object such as {\"name\": \"value\"}",
                              thought)
    try:
        value, _ = _DECODER.raw_decode(body, i)
    except json.JSONDecodeError as e:
        raise ReactParseError(f"the Args are not valid JSON ({e.msg}); write them as one JSON object "
                              "with double-quoted names and strings", thought) from None
    return value


def parse_react(text: str) -> Action | Final:
    """Parse one whole reply; raise :class:`ReactParseError` saying what is wrong."""
    body = strip_fences(text)
    if not body:
        raise ReactParseError("the reply is empty")
    start, decisive, ms = _split(body)
    if decisive is None:
        raise ReactParseError("the reply has neither an 'Action:' nor a 'Final Answer:' line",
                              body[start:].strip())
    thought = body[start:decisive.start].strip()
    content = _skip_bold(body, decisive.end)
    if decisive.name == "final answer":
        answer = body[content:].strip()
        if not answer:
            raise ReactParseError("the Final Answer is empty", thought)
        return Final(thought, answer)
    line_end = body.find("\n", content)
    line_end = len(body) if line_end < 0 else line_end
    args = next((m for m in ms if m.name == "args" and m.start >= content), None)
    name_end = args.start if args is not None and args.start < line_end else line_end
    name = body[content:name_end].strip().strip("\"'`*").strip()
    if not name:
        raise ReactParseError("the 'Action:' line names no tool", thought)
    at = _skip_bold(body, args.end) if args is not None else line_end
    return Action(thought, name, _parse_args(body, at, args is not None, thought))


def _prefix_of(text: str, forms: tuple[str, ...]) -> bool:
    return any(f.startswith(text) for f in forms)


def _safe_end(text: str, fenced: bool) -> int:
    """How much of a growing thought or answer can be sent: not trailing space, nor a tail
    that may yet become a marker (or the closing fence)."""
    end = len(text.rstrip())
    line = text.rfind("\n", 0, end) + 1
    head = text[line:end].lstrip(" \t>*_#-")
    norm = " ".join(head.replace("*", "").replace("_", "").lower().split())
    if _prefix_of(norm, _LINE_FORMS) or (fenced and "```".startswith(head.strip())):
        return len(text[:line].rstrip())
    for i in range(max(line, end - 16), end):
        if i > 0 and text[i - 1] in " \t" and _prefix_of(text[i:end], _INLINE_FORMS):
            return len(text[:i].rstrip())
    return end


class StreamParser:
    """Classifies a streamed reply as it grows: thought chunks, then answer chunks.

    Each :meth:`feed` returns the events the new text makes certain.
    :meth:`finish` runs :func:`parse_react` on the whole text, so both modes
    decide the same way; the streamed chunks join to the parsed thought and
    answer.  The last thought chunk has ``end`` set (it may be empty).
    """

    def __init__(self) -> None:
        self.text = ""
        self._fenced = False
        self._thought = ""
        self._thought_done = False
        self._answer = ""

    def feed(self, chunk: str) -> list[Thought | Answer]:
        self.text += chunk
        return self._advance(None)

    def finish(self) -> tuple[list[Thought | Answer], Action | Final | ReactParseError]:
        try:
            result: Action | Final | ReactParseError = parse_react(self.text)
        except ReactParseError as e:
            result = e
        return self._advance(result), result

    def _body(self) -> str | None:
        t = self.text.lstrip()
        if t.startswith("```"):
            nl = t.find("\n")
            if nl < 0:
                return None
            self._fenced = True
            return t[nl + 1:]
        return None if t and "```".startswith(t) else t

    def _advance(self, result: Action | Final | ReactParseError | None) -> list[Thought | Answer]:
        done = result is not None
        body = strip_fences(self.text) if done else self._body()
        if body is None:
            return []
        start, decisive, _ = _split(body)
        events: list[Thought | Answer] = []
        if not self._thought_done:
            if decisive is not None or done:
                full = body[start:decisive.start if decisive else len(body)].strip()
                events.append(Thought(full[len(self._thought):] if full.startswith(self._thought) else "",
                                      end=True))
                self._thought_done = True
                if not self._thought and not full:
                    events.pop()  # no thought at all: nothing to close
            else:
                text = body[start:].lstrip()
                safe = text[:_safe_end(text, self._fenced)]
                if len(safe) > len(self._thought):
                    events.append(Thought(safe[len(self._thought):], end=False))
                    self._thought = safe
        if decisive is not None and decisive.name == "final answer":
            if done:
                full = result.answer if isinstance(result, Final) else self._answer
            else:
                text = body[_skip_bold(body, decisive.end):].lstrip()
                full = text[:_safe_end(text, self._fenced)]
            if len(full) > len(self._answer) and full.startswith(self._answer):
                events.append(Answer(full[len(self._answer):], end=False))
                self._answer = full
        return events


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

    async def react(self, request: AgentRequest, registry: Registry, flow: Any,
                    deadline: float | None = None) -> AsyncIterator[Event]:
        """Yield the events of one iteration; the last is Answer(end), Continue or Failed.

        ``deadline`` is when the dialog's caller stops waiting (absolute UNIX
        time, None when it did not say): every prompt and tool call of the
        iteration ends by then.
        """
        history = list(request.history or [])
        if len(history) >= self.max_iterations:
            yield Failed("Too many agent iterations")
            return
        tools = filter_tools(registry.tools.values(), request.group, request.state)
        terms = prompt_terms(request, tools, registry.context)
        logger.debug("Iteration %d, tools %s", len(history) + 1, [t.name for t in tools])
        try:
            if request.streaming:
                parser = StreamParser()
                async with aclosing(self._stream(flow, terms, deadline)) as chunks:
                    async for chunk in chunks:
                        for event in parser.feed(chunk):
                            yield event
                tail, result = parser.finish()
                logger.debug("Model reply: %.500r", parser.text)
                for event in tail:
                    yield event
            else:
                text = await self._complete(flow, terms, deadline)
                logger.debug("Model reply: %.500r", text)
                try:
                    result = parse_react(text)
                except ReactParseError as e:
                    result = e
                yield Thought(result.thought)
        except PromptFailed as e:
            yield Failed(str(e))
            return

        if isinstance(result, Final):
            yield Answer("", end=True) if request.streaming else Answer(result.answer, end=True)
            return
        state = request.state or "undefined"
        if isinstance(result, ReactParseError):
            logger.debug("Unparseable reply: %s", result.reason)
            step = AgentStep(thought=result.thought, observation=f"Error: {result.reason}. {FORMAT_HINT}")
            yield Observation(step.observation)
        else:
            outcome: list[Any] = []
            async with aclosing(self._observe(result, tools, request, flow, deadline, outcome)) as parts:
                async for part in parts:
                    yield part
            observation, tool = outcome
            if tool is not None and tool.state:
                state = tool.state
            step = AgentStep(thought=result.thought, action=result.name,
                             arguments={k: as_text(v) for k, v in result.arguments.items()},
                             observation=observation)
        yield Continue(AgentRequest(question=request.question, state=state, group=request.group,
                                    history=[*history, step], user=request.user,
                                    streaming=request.streaming))

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

    async def _complete(self, flow: Any, terms: dict[str, str], deadline: float | None = None) -> str:
        try:
            resp = await flow("prompt-request").request(self._request(terms, False),
                                                        timeout=self.prompt_timeout, deadline=deadline)
        except (TimeoutError, PubSubError) as e:
            raise PromptFailed(f"The prompt service did not answer: {e}") from None
        if resp.error is not None:
            raise PromptFailed(f"The prompt service failed: {resp.error.message or resp.error.type}")
        return resp.text if resp.text is not None else (resp.object or "")

    async def _stream(self, flow: Any, terms: dict[str, str], deadline: float | None = None
                      ) -> AsyncIterator[str]:
        """The prompt service's text chunks as they arrive (one deadline for the whole reply)."""
        responses = flow("prompt-request").stream(self._request(terms, True), final=_end_of_stream,
                                                  timeout=self.prompt_timeout, deadline=deadline)
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
