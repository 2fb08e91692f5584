"""Asking the prompt service for the model's next step, and reading its reply.

The agent's side of the ``agent-react`` template: the variables it is rendered with (the
question, the tools, a history whose observations are cut so a step does not get slower as
the dialog grows), the request (streamed or whole, within the dialog's deadline, with the
choice scores the LLM service reports), and the reply read as a structured JSON decision when
it is one, else as ReAct text.  A prompt service that fails or does not answer is
:class:`PromptFailed`: our failure, which ends the dialog; the model's mistakes are returned as
:class:`~.vocabulary.ReactParseError` for the loop to feed back.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from trustgraph.base.formats.decision_schema import FINAL_ACTION, SCORES_PROPERTY, parse_scores
from trustgraph.base.formats.text import strip_fences
from trustgraph.base.messaging import tracing
from trustgraph.base.messaging.pubsub import PubSubError
from trustgraph.schema import AgentRequest, PromptRequest

from .decisions import parse_decision
from .parser import StreamParser, parse_react
from .registry import Tool
from .vocabulary import Action, Answer, Event, Final, ReactParseError, RunawayAnswer, Thought

logger = logging.getLogger(__name__)

TEMPLATE = "agent-react"
#: What the prompt shows of a dialog's history: every step, its observation cut (the last
#: steps' less), so a step does not get slower and slower as the dialog grows (the whole
#: history still travels with the request).
HISTORY_RECENT_STEPS = 2
HISTORY_OBSERVATION_CHARS = 1_000
HISTORY_OLD_OBSERVATION_CHARS = 200



class PromptFailed(Exception):
    """The prompt service answered with an error, or not in time: our failure, not the model's."""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" ... ({len(text) - limit:,} characters left out)"


def prompt_terms(request: AgentRequest, tools: list[Tool], context: str, question: str | None = None) -> dict[str, str]:
    """The ``agent-react`` variables, each JSON-encoded as PromptRequest.terms requires.  ``question``:
    the question as the agent reads it (its chat shorthand written out), else the request's.

    Each step's observation in the history is cut: the last
    :data:`HISTORY_RECENT_STEPS` to :data:`HISTORY_OBSERVATION_CHARS`
    characters, older ones to :data:`HISTORY_OLD_OBSERVATION_CHARS`.
    """
    steps = list(request.history or [])
    recent = len(steps) - HISTORY_RECENT_STEPS
    history = [{"thought": h.thought, "action": h.action, "arguments": h.arguments,
                "observation": _cut(h.observation or "", HISTORY_OBSERVATION_CHARS if i >= recent
                                    else HISTORY_OLD_OBSERVATION_CHARS)}
               for i, h in enumerate(steps)]
    return {
        "question": json.dumps(request.question if question is None else question),
        "tools": json.dumps([t.describe() for t in tools]),
        "context": json.dumps(context),
        "tool_names": json.dumps(", ".join(t.name for t in tools)),
        "history": json.dumps(history),
    }


@dataclass
class ModelStep:
    """What one step of the model gave, filled in by :func:`decide` as the reply is read (an
    async generator that yields events cannot also return its result).

    ``decision``: the call or answer, or the model's mistake (None until the reply is read);
    ``scores``: the model's choice scores, when the LLM service reported them; ``structured``:
    whether the reply was a JSON decision (False: ReAct text, which no schema narrows).
    """

    decision: Action | Final | ReactParseError | None = None
    scores: Mapping[str, float] | None = None
    structured: bool = False


async def decide(flow: Any, terms: dict[str, str], props: dict[str, str], timeout: float,
                 deadline: float | None, streaming: bool, step: ModelStep) -> AsyncIterator[Event]:
    """Ask the model; yield its thought (and answer) events; ``step`` gets what the reply was.

    The reply is a structured JSON decision when it starts with ``{``
    (the template asked for one), else ReAct text.  A streamed ReAct
    reply is classified as it grows (thought, then answer chunks); a
    JSON decision is read whole, and its answer sent in one piece.
    """
    scores: list[Any] = []
    if not streaming:
        text = await complete(flow, terms, props, timeout, deadline, scores)
        logger.debug("Model reply: %.500r", text)
        result = parse_reply(text)
        step.decision, step.structured, step.scores = result, bool(is_json(text)), _first_of(scores)
        if result.thought:   # a structured decision has none: an empty message would reach
            yield Thought(result.thought)   # upstream's client as an empty chunk
        return
    parser = StreamParser()
    text = ""                        # the reply so far, until its format is known, and a JSON one
    structured: bool | None = None   # None: not known yet
    async with aclosing(stream(flow, terms, props, timeout, deadline, scores)) as chunks:
        async for chunk in chunks:
            if structured is None:
                text += chunk
                structured = is_json(text)
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
    step.structured, step.scores = structured, _first_of(scores)
    if structured:
        logger.debug("Model reply: %.500r", text)
        result = parse_reply(text)
        step.decision = result
        if result.thought:
            yield Thought(result.thought, end=True)
        if isinstance(result, Final) and result.answer:
            yield Answer(result.answer, end=False)
        return
    tail, result = parser.finish()
    logger.debug("Model reply: %.500r", parser.text)
    step.decision = result
    for event in tail:
        yield event


def _first_of(scores: list[Any]) -> Mapping[str, float] | None:
    return scores[0] if scores else None

def _request(terms: dict[str, str], streaming: bool) -> PromptRequest:
    return PromptRequest(id=TEMPLATE, terms=terms, streaming=streaming)

async def complete(flow: Any, terms: dict[str, str], props: dict[str, str], timeout: float,
                   deadline: float | None = None, scores: list[Any] | None = None) -> str:
    """The whole reply; ``scores`` gets the model's choice scores, when the reply carries them."""
    with tracing.span("model decision", client=True, trustgraph_streaming=False) as span:
        responses = flow("prompt-request").stream(_request(terms, False), final=_first,
                                                  properties=props, timeout=timeout,
                                                  deadline=deadline, messages=True)
        try:
            message = await responses.__anext__()
        except (TimeoutError, PubSubError) as e:
            tracing.failed(span, str(e))
            raise _prompt_failed(e, deadline) from None
        finally:
            responses.close()
    resp = message.value
    if resp.error is not None:
        raise _prompt_error(resp.error, deadline)
    if scores is not None:
        scores.append(parse_scores(message.properties.get(SCORES_PROPERTY)))
    return resp.text if resp.text is not None else (resp.object or "")

async def stream(flow: Any, terms: dict[str, str], props: dict[str, str], timeout: float,
                 deadline: float | None = None, scores: list[Any] | None = None) -> AsyncIterator[str]:
    """The prompt service's text chunks as they arrive (one deadline for the whole reply)."""
    # Not current (a generator: the agent's own code runs between its yields); the request carries it.
    with tracing.span("model decision", client=True, current=False, trustgraph_streaming=True) as span:
        responses = flow("prompt-request").stream(_request(terms, True), final=_end_of_stream,
                                                  properties=tracing.outgoing(dict(props), span), timeout=timeout,
                                                  deadline=deadline, messages=True)
        try:
            async for message in responses:
                resp = message.value
                if resp.error is not None:
                    raise _prompt_error(resp.error, deadline)
                if scores is not None and resp.end_of_stream:
                    scores.append(parse_scores(message.properties.get(SCORES_PROPERTY)))
                if resp.text:
                    yield resp.text
        except (TimeoutError, PubSubError) as e:
            tracing.failed(span, str(e))
            raise _prompt_failed(e, deadline) from None
        finally:
            responses.close()



OUT_OF_TIME = "The dialog ran out of time: the model did not decide the next step before the dialog's deadline"
# The prompt service's own call of the LLM carries the same deadline, so its error may come a
# little before the agent's clock says the deadline passed.
_DEADLINE_SLACK = 0.5


def _prompt_failed(e: Exception, deadline: float | None) -> PromptFailed:
    if deadline is not None and time.time() >= deadline - 0.1:
        return PromptFailed(OUT_OF_TIME)
    return PromptFailed(f"The prompt service did not answer: {e}")


def _prompt_error(error: Any, deadline: float | None) -> PromptFailed:
    """The prompt service's error reply: when the dialog's deadline ended the LLM's step, say so
    (not "text-completion did not answer ... within 89.9s")."""
    if deadline is not None and time.time() >= deadline - _DEADLINE_SLACK:
        return PromptFailed(OUT_OF_TIME)
    return PromptFailed(f"The prompt service failed: {error.message or error.type}")


def _first(message: Any) -> bool:
    return True


def _end_of_stream(message: Any) -> bool:
    return bool(message.value.end_of_stream)


def is_json(start: str) -> bool | None:
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


def parse_reply(text: str) -> Action | Final | ReactParseError:
    """A whole reply: a structured JSON decision, else ReAct text; a mistake is returned, not raised
    (a JSON final answer cut off, or closed by its length limit, while it repeated itself:
    :class:`~.vocabulary.RunawayAnswer`)."""
    try:
        decided = parse_decision(text)
        if decided is None:
            return parse_react(text)
        if isinstance(decided, Final) and runs_on(decided.answer):
            # Closed by the schema's length limit rather than cut by the token limit: "thanks!" was
            # answered "The answer is: The answer is: ..." for 400 characters.
            return RunawayAnswer("the answer ran on, repeating itself, until its length limit closed it")
        return decided
    except ReactParseError as e:
        if is_json(text) and _FINAL_START.search(text[:200]) and runs_on(text):
            return RunawayAnswer(f"the answer ran on, repeating itself, until it was cut off ({e.reason})")
        return e


#: A JSON decision that starts as a final answer.
_FINAL_START = re.compile(rf'"action"\s*:\s*"{re.escape(FINAL_ACTION)}"')
#: A reply whose last this-many characters (or more) repeat one stretch of at most
#: :data:`RUN_PERIOD` characters at least :data:`RUN_TIMES` times runs on.
RUN_CHARS = 60
RUN_PERIOD = 40
RUN_TIMES = 5


def runs_on(text: str) -> bool:
    """Whether ``text`` ends repeating itself: the last stretch of some length up to
    :data:`RUN_PERIOD` said at least :data:`RUN_TIMES` times in a row over at least
    :data:`RUN_CHARS` characters ("8,976,231,836,789,600,000,000,000,..." of "How tall is Mount
    Everest?", the 135M model's answer until its 512 tokens ran out, twice, then the deadline)."""
    text = text.rstrip()
    for period in range(1, min(RUN_PERIOD, len(text) // RUN_TIMES) + 1):
        last, end = text[-period:], len(text)
        while end >= period and text[end - period:end] == last:
            end -= period
        repeated = len(text) - end
        if repeated >= RUN_CHARS and repeated >= RUN_TIMES * period:
            return True
    return False
