"""The ReAct loop: one iteration of a dialog per agent message.

One agent message is one iteration (as upstream 2.1.4's agent): ask the prompt
service's ``agent-react`` template what to do, then either answer or call a
tool and hand the dialog on, with the new step in its history, as a new
message on ``next``.  :meth:`AgentManager.react` is an async generator of
the events in ``types.py``; the service turns them into wire messages, so
streaming and non-streaming share this code.

Each prompt request carries the JSON Schema of the next step (property
``decision-schema``, ``decisions.py``); the model's reply is a structured
JSON decision when the template asked for one, else ReAct text
(``parser.py``).  Tools are listed most relevant to the question first.
Asking the prompt service and reading its reply is ``prompting.py``; what a
tool call gave, in the model's terms, ``calls.py``.

The model's mistakes go back to the model, only our bugs abort: an unreadable reply,
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
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

from trustgraph.base.formats.text import as_text
from trustgraph.catalog.calling import call_tool
from trustgraph.schema import AgentRequest, AgentStep
from trustgraph.schema.services.agent import (
    OUTCOME_ANSWER,
    OUTCOME_ASKED,
    OUTCOME_ERROR,
    OUTCOME_NO_TOOL,
    OUTCOME_TOOL,
    OUTCOME_UNAVAILABLE,
)

from .calls import (
    FAILURE_LOST,
    FAILURE_MISTAKE,
    FAILURE_UNAVAILABLE,
    FAILURES,
    ToolCall,
    last_error,
    observation,
    said,
    same_call,
)
from .decisions import (
    NO_TOOL_ANSWER_LIMIT,
    NO_TOOL_PREFIX,
    SCHEMA_PROPERTY,
    Abstain,
    AnswerGate,
    Confidence,
    answer_problem,
    ask_back,
    decision_schema,
    for_prompt,
    from_result,
    judge,
    own_answer_prefix,
)
from .grounding import unsaid_arguments
from .parser import FORMAT_HINT
from .prompting import PromptFailed, complete, decide, parse_reply, prompt_terms
from .registry import Registry, Tool, filter_tools
from .types import Act, Action, Answer, Continue, Event, Failed, Final, Observation, ReactParseError

logger = logging.getLogger(__name__)

MAX_SCHEMA_CHARS = 256 * 1024
#: A step needs at least this long (a prompt call and a tool call); with less left of the
#: dialog's time it ends, in its own words, before its caller's deadline.
MIN_STEP_SECONDS = 1.0


# -- the loop ----------------------------------------------------------------------------


class AgentManager:
    """Runs one iteration of a dialog per call of :meth:`react`."""

    def __init__(self, *, max_iterations: int = 10, tool_timeout: float = 60.0,
                 prompt_timeout: float = 120.0, confidence: Confidence | None = None,
                 stopped_service_of: Callable[[str], str | None] | None = None) -> None:
        """``stopped_service_of(tool)``: the service of a tool that is gone because its service
        stopped (the announcements say so), so the model is told that, not "no such tool"."""
        self.confidence = confidence or Confidence()
        self.stopped_service_of = stopped_service_of
        self.max_iterations = max_iterations
        self.tool_timeout = tool_timeout
        self.prompt_timeout = prompt_timeout
        self._schema_warned = False

    async def react(self, request: AgentRequest, registry: Registry, flow: Any,
                    deadline: float | None = None,
                    abandoned: Callable[[], str | None] | None = None) -> AsyncIterator[Event]:
        """Yield the events of one iteration; the last is Answer(end), Continue or Failed.

        ``deadline`` is when the dialog's caller stops waiting (absolute UNIX
        time, None when it did not say): every prompt and tool call of the
        iteration ends by then.  ``abandoned()`` says why the dialog's caller
        has been told it failed (the broker connection went), or None; it is
        asked before the model's step, before a tool call and after one, and
        a reason ends the dialog there with it: a tool is not called again
        for a dialog nobody waits for.
        """
        if abandoned is not None and (why := abandoned()):
            yield Failed(why)
            return
        history = list(request.history or [])
        if len(history) >= self.max_iterations:
            last = last_error(history)
            yield Failed(f"Too many agent iterations: the dialog reached the limit of {self.max_iterations} "
                         "steps without an answer (agent-manager-react --max-iterations; "
                         "tg-launch --max-iterations)" + (f"; the last step's error: {last}" if last else ""))
            return
        if deadline is not None and deadline - time.time() < MIN_STEP_SECONDS:
            last = last_error(history)
            yield Failed(f"The dialog ran out of time after {len(history)} step(s) without an answer"
                         + (f"; the last step's error: {last}" if last else ""))
            return
        tools = for_prompt(request.question, filter_tools(registry.tools.values(), request.group, request.state))
        terms = prompt_terms(request, tools, registry.context)
        props = self._schema_property(tools)
        logger.debug("Iteration %d, tools %s", len(history) + 1, [t.name for t in tools])
        outcome: list[Any] = []
        scores: list[Any] = []
        gate = AnswerGate(request.question)
        results = [h.observation or "" for h in history if h.action and not
                   (h.observation or "").startswith("Error:")]
        # With no tool result in the dialog, a final answer can only be the model's own: marked so.
        own = "" if results else own_answer_prefix(history)
        sent = False   # any of the answer streamed yet (the mark goes before its first chunk)
        try:
            async with aclosing(decide(flow, terms, props, self.prompt_timeout, deadline, request.streaming,
                                        outcome, scores)) as events:
                async for event in events:
                    if isinstance(event, Answer):  # streamed: only once it cannot be refused
                        if text := gate.feed(event.content):
                            yield Answer(text if sent else own + text, end=False)
                            sent = True
                        continue
                    yield event
        except PromptFailed as e:   # a lost connection ends the prompt call too: say that, not its symptom
            yield Failed((abandoned() if abandoned is not None else None) or str(e))
            return
        result = outcome[0]
        if abandoned is not None and not isinstance(result, Final) and (why := abandoned()):
            yield Failed(why)
            return

        state = request.state or "undefined"
        if isinstance(result, Final):
            # A released answer has been judged already (and is out).
            problem = None if gate.released else answer_problem(result.answer, request.question,
                                                                 [t.name for t in tools], results)
            if problem is None:
                source = from_result(result.answer, results)
                if source is not None:
                    used = [h.action for h in history if h.action and not
                            (h.observation or "").startswith("Error:")][source]
                    outcome, candidates = OUTCOME_TOOL, (used,)
                elif own:
                    outcome, candidates = OUTCOME_NO_TOOL, ()
                else:
                    outcome, candidates = OUTCOME_ANSWER, ()
                if not request.streaming:
                    yield Answer(own + result.answer, end=True, outcome=outcome, candidates=candidates)
                    return
                if rest := gate.finish():
                    yield Answer(rest if sent else own + rest, end=False)
                yield Answer("", end=True, outcome=outcome, candidates=candidates)
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
            chosen = next((t for t in tools if t.name == result.name), None)
            unsaid = unsaid_arguments(result.arguments, chosen.arguments if chosen else (),
                                      said(request.question, history)) if self.confidence.check_arguments else []
            abstain = judge(result.name, scores[0] if scores else None, [t.name for t in tools], self.confidence,
                            unsaid)
            logger.debug("Decision %s %s, scores %s, unsaid %s", result.name, result.arguments,
                         scores[0] if scores else None, unsaid)
            if abstain is not None:
                logger.info("Model's choice of %s is a guess (share %.2f%s): %s", result.name, abstain.share,
                            f", arguments not said: {', '.join(abstain.unsaid)}" if abstain.unsaid else "",
                            abstain.outcome)
                async with aclosing(self._abstain(abstain, tools, request, flow, terms, deadline)) as ending:
                    async for event in ending:
                        yield event
                return
            yield Act(result.name, result.arguments)
            async with aclosing(self._observe(result, tools, request, flow, deadline, outcome)) as parts:
                async for part in parts:
                    yield part
            if abandoned is not None and (why := abandoned()):
                yield Failed(why)
                return
            call: ToolCall = outcome[1]
            arguments = {k: as_text(v) for k, v in result.arguments.items()}
            unavailable_before = call.failure == FAILURE_UNAVAILABLE and any(
                h.action == result.name and "cannot be used now" in (h.observation or "") for h in history)
            if call.failure is not None and (unavailable_before or
                                             any(same_call(h, result.name, arguments) for h in history)):
                # The model asked for the same failing call again: it will not fix itself.
                why = call.observation[len("Error:"):].strip()
                yield Failed(f"The same call of tool '{result.name}' failed twice: {why}",
                             outcome=OUTCOME_UNAVAILABLE if call.failure in (FAILURE_UNAVAILABLE, FAILURE_LOST)
                             else OUTCOME_ERROR)
                return
            if call.tool is not None and call.tool.state:
                state = call.tool.state
            step = AgentStep(thought=result.thought, action=result.name, arguments=arguments,
                             observation=call.observation)
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

    async def _abstain(self, abstain: Abstain, tools: list[Tool], request: AgentRequest, flow: Any,
                       terms: dict[str, str], deadline: float | None) -> AsyncIterator[Event]:
        """End the dialog honestly: ask which tool was meant, or answer without one, marked so."""
        if abstain.outcome == OUTCOME_ASKED:
            named = {t.name: t for t in tools}
            text = ask_back([named[n] for n in abstain.candidates if n in named], abstain.tool, abstain.unsaid)
            outcome, candidates = OUTCOME_ASKED, abstain.candidates
        else:
            answer = ""
            try:   # the model's own answer: a step whose schema holds only the answer
                only_answer = decision_schema([])
                only_answer["anyOf"][0]["properties"]["answer"]["maxLength"] = NO_TOOL_ANSWER_LIMIT
                reply = await complete(flow, terms, {SCHEMA_PROPERTY: json.dumps(only_answer)}, self.prompt_timeout,
                                       deadline)
                decided = parse_reply(reply)
                if isinstance(decided, Final):
                    answer = decided.answer
            except PromptFailed as e:
                logger.info("No answer of the model's own: %s", e)
            text = (NO_TOOL_PREFIX + answer) if answer else \
                "No tool fits this question, and the model has no answer of its own."
            outcome, candidates = OUTCOME_NO_TOOL, ()
        if request.streaming:
            yield Answer(text, end=False)
            yield Answer("", end=True, outcome=outcome, candidates=candidates)
        else:
            yield Answer(text, end=True, outcome=outcome, candidates=candidates)

    async def _observe(self, action: Action, tools: list[Tool], request: AgentRequest, flow: Any,
                       deadline: float | None, outcome: list[Any]) -> AsyncIterator[Observation]:
        """:meth:`_act`, and the observation events it makes; ``outcome`` gets the :class:`ToolCall`.

        Not streaming: one ``Observation`` with the whole result.  Streaming:
        ``Observation(chunk, end=False)`` for each chunk of the tool's output
        as it arrives, then one closing ``Observation`` with what was not
        streamed (all of it when the tool did not stream, the error when it
        failed midway).
        """
        if not request.streaming:
            call = await self._act(action, tools, request, flow, deadline)
            outcome.append(call)
            yield Observation(call.observation)
            return
        chunks: asyncio.Queue[str | None] = asyncio.Queue()
        call = asyncio.ensure_future(self._act(action, tools, request, flow, deadline, chunks.put_nowait))
        call.add_done_callback(lambda _: chunks.put_nowait(None))
        streamed = ""
        try:
            while (chunk := await chunks.get()) is not None:
                streamed += chunk
                yield Observation(chunk, end=False)
            result = call.result()
        finally:
            if not call.done():
                call.cancel()
                with contextlib.suppress(BaseException):
                    await call
        outcome.append(result)
        observation = result.observation
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
                   on_chunk: Callable[[str], Any] | None = None) -> ToolCall:
        """Call the tool: its result, or an ``Error:`` observation saying what happened."""
        tool = next((t for t in tools if t.name == action.name), None)
        stopped = self.stopped_service_of(action.name) if tool is None and self.stopped_service_of else None
        if stopped is not None:
            return ToolCall(f"Error: tool '{action.name}' cannot be used now: tool service '{stopped}' is not "
                            "running (it stopped, and no replica of it is live). Use another tool, or give a "
                            "Final Answer with what you know.", failure=FAILURE_UNAVAILABLE)
        if tool is None:
            names = ", ".join(t.name for t in tools) or "none"
            return ToolCall(f"Error: No action for '{action.name}': there is no tool of that name. "
                            f"The tools you can use are: {names}. Use one of them exactly as named, "
                            "or give a Final Answer.", failure=FAILURE_MISTAKE)
        result = await call_tool(tool, action.arguments, user=request.user, flow=flow,
                                 timeout=self.tool_timeout, deadline=deadline, on_chunk=on_chunk)
        return ToolCall(observation(tool.name, result), tool if result.answered else None,
                        FAILURES.get(result.outcome))
