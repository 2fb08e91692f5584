"""The ReAct loop: one iteration of a dialog per agent message.

One agent message is one iteration (as upstream 2.1.4's agent): ask the prompt
service's ``agent-react`` template what to do, then either answer or call a
tool and hand the dialog on, with the new step in its history, as a new
message on ``next``.  :meth:`AgentManager.react` is an async generator of
the events in ``vocabulary.py``; the service turns them into wire messages, so
streaming and non-streaming share this code.

The step is the pipeline of ``steps.py``: admit, rank (``prepare``), decide,
judge, act, record; this class runs it, and holds what talks to other
services (the prompt service, the tools).  Each prompt request carries the
JSON Schema of the next step (property ``decision-schema``,
``decisions.py``), whose arguments take only values the dialog holds
(``grounding.py``); the model's reply is a structured JSON decision when the
template asked for one, else ReAct text (``parser.py``).  Asking the prompt
service and reading its reply is ``prompting.py``; what a tool call gave, in
the model's terms, ``calls.py``.

The model's mistakes go back to the model, only our bugs abort: an unreadable reply,
an unknown tool, wrong arguments, a tool that fails or does not answer in
time, a final answer that is no answer (empty, the question said back, a
tool call announced instead of made) each become an observation starting
``Error:`` that says what to do next, and the loop goes on, bounded by
``max_iterations``.  Only our own failures (the prompt service failing or
not answering in time, too many iterations) end the dialog with an error; a
tool that cannot be used now ends it as ``tool-unavailable``, naming it.

A call of a tool that needs a person's approval (``tool-policy/approval``) is
not made: the dialog ends as ``approval-required`` with the call and a token
that is the paused dialog (``approval.py``).  The caller's answer resumes it
from that step (:meth:`AgentManager.react`'s ``resume``): approved, the call
is made with exactly those arguments and no model step; refused, the step's
observation says so and the model decides what next.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import aclosing
from typing import Any

from trustgraph.base.formats import decision_schema as decision_schema_module
from trustgraph.base.formats.text import as_text
from trustgraph.catalog.calling import call_tool
from trustgraph.schema import AgentRequest, AgentStep
from trustgraph.schema.services.agent import OUTCOME_APPROVAL, OUTCOME_ASKED, OUTCOME_NO_TOOL, OUTCOME_TOOL

from .approval import Approvals, Resume
from .calls import (
    FAILURE_MISTAKE,
    FAILURE_REFUSED,
    FAILURE_UNAVAILABLE,
    FAILURES,
    ToolCall,
    observation,
    reason,
)
from .decisions import (
    NO_RESULT_LEAD,
    NO_TOOL_ANSWER_LIMIT,
    NO_TOOL_LEAD,
    OWN_ANSWER,
    SCHEMA_PROPERTY,
    Abstain,
    AnswerGate,
    Confidence,
    Switch,
    ask_back,
    decision_schema,
)
from .grounding import Said
from .parser import FORMAT_HINT
from .prompting import OUT_OF_TIME, ModelStep, PromptFailed, complete, decide, parse_reply, prompt_terms
from .registry import Registry, Tool, filter_tools
from .steps import (
    Accepted,
    NoResult,
    Pending,
    Served,
    Step,
    admit,
    after_call,
    gone_nearer,
    judge_answer,
    judge_call,
    needs_approval,
    next_request,
    plainly_asked,
    prepare,
    refused_before,
    request_arguments,
    settle,
)
from .vocabulary import (
    Act,
    Action,
    Answer,
    Continue,
    Event,
    Failed,
    Final,
    Observation,
    ReactParseError,
    RunawayAnswer,
)

logger = logging.getLogger(__name__)

MAX_SCHEMA_CHARS = 256 * 1024
#: How an ending says the model has no answer of its own either.
NO_OWN_ANSWER = ", and the model has no answer of its own."


def approval_text(tool: str, arguments: Mapping[str, Any]) -> str:
    """The answer of a dialog paused for approval: a normal answer to upstream's clients, saying so."""
    return f"Approval needed to run {tool} with {json.dumps(arguments, default=str)}: approve or refuse it to go on."


def refusal_observation(tool: str) -> str:
    """What the model reads of a call the user refused."""
    return (f"Error: the user refused this call of tool '{tool}', so it was not made. Do not call it again with "
            "these arguments: use another tool, or give a Final Answer with what you know.")


class AgentManager:
    """Runs one iteration of a dialog per call of :meth:`react`."""

    def __init__(self, *, max_iterations: int = 10, tool_timeout: float = 60.0,
                 prompt_timeout: float = 120.0, confidence: Confidence | None = None,
                 stopped_service_of: Callable[[str], str | None] | None = None,
                 stopped_tools: Callable[[], list[tuple[str, dict[str, Any]]]] | None = None,
                 unavailable: Callable[[Tool], str | None] | None = None,
                 approvals: Approvals | None = None) -> None:
        """``stopped_service_of(tool)``: the service of a tool that is gone because its service
        stopped (the announcements say so), so the model is told that, not "no such tool";
        ``stopped_tools()``: each such tool, ``(service, descriptor)``, so a question about one
        ends as tool-unavailable (``steps.gone_nearer``); ``unavailable(tool)``: why a listed tool
        cannot be used now, or None (an ask-back offers no such tool, and a question about one ends
        as tool-unavailable); ``approvals``: what signs the token of a dialog
        paused for approval (a key of its own when not given)."""
        self.approvals = approvals if approvals is not None else Approvals()
        self.confidence = confidence or Confidence()
        self.stopped_service_of = stopped_service_of
        self.stopped_tools = stopped_tools
        self.unavailable = unavailable
        self.max_iterations = max_iterations
        self.tool_timeout = tool_timeout
        self.prompt_timeout = prompt_timeout
        self._schema_warned = False

    async def react(self, request: AgentRequest, registry: Registry, flow: Any,
                    deadline: float | None = None,
                    abandoned: Callable[[], str | None] | None = None,
                    failures: Mapping[int, str] | None = None,
                    resume: Resume | None = None) -> AsyncIterator[Event]:
        """Yield the events of one iteration; the last is Answer(end), Continue or Failed.

        ``deadline`` is when the dialog's caller stops waiting (absolute UNIX
        time, None when it did not say): every prompt and tool call of the
        iteration ends by then.  ``abandoned()`` says why the dialog's caller
        has been told it failed (the broker connection went), or None; it is
        asked before the model's step, before a tool call and after one, and
        a reason ends the dialog there with it: a tool is not called again
        for a dialog nobody waits for.  ``failures``: the failure kind of each
        failed step of the history (``steps.carried_failures``).  ``resume``: the
        caller's checked answer to a call this dialog paused before (``request``
        and ``failures`` are then the paused dialog's): the step is that call,
        made or refused, with no model step.
        """
        history = list(request.history or [])
        failures = dict(failures) if failures is not None else {}
        if (ended := admit(history, failures, self.max_iterations, deadline, abandoned)) is not None:
            yield ended
            return
        step = prepare(request, registry, failures, self.confidence)
        logger.debug("Iteration %d, tools %s", len(history) + 1, [t.name for t in step.tools])
        if resume is not None:
            async with aclosing(self._resume(step, registry, resume, flow, deadline, abandoned)) as parts:
                async for part in parts:
                    yield part
            return
        stopped = self.stopped_tools() if self.stopped_tools is not None else []
        if (gone := gone_nearer(step, stopped, self._unavailable_name(step))) is not None:
            yield gone
            return
        terms = prompt_terms(request, step.tools, step.context, step.question)
        upcoming = next_request(step, self.confidence, self._usable_name(step))
        if isinstance(upcoming, Served):
            logger.debug("Each request of the question has its tool's result: %s", ", ".join(upcoming.tools))
            for event in _ending(request, upcoming.text, OUTCOME_TOOL, upcoming.tools):
                yield event
            return
        if upcoming is not None:
            made = False   # the call's events end the step; none, and the model decides it
            async with aclosing(self._next_request(step, upcoming, flow, deadline, abandoned, terms)) as parts:
                async for part in parts:
                    made = True
                    yield part
            if made:
                return
        decided = ModelStep()
        asked_for = plainly_asked(step, self.confidence, self._usable_name(step))
        gate = AnswerGate(request.question, hold=asked_for is not None)
        sent = False   # any of the answer streamed yet (the mark goes before its first chunk)
        try:
            async with aclosing(decide(flow, terms, self._schema_property(step.tools, step.said),
                                        self.prompt_timeout, deadline, request.streaming, decided)) as events:
                async for event in events:
                    if isinstance(event, Answer):  # streamed: only once it cannot be refused
                        if text := gate.feed(event.content):
                            yield Answer(text if sent else step.own + text, end=False)
                            sent = True
                        continue
                    yield event
        except PromptFailed as e:   # a lost connection ends the prompt call too: say that, not its symptom
            yield Failed((abandoned() if abandoned is not None else None) or str(e))
            return
        result = decided.decision
        # A reply in ReAct text: the template does not narrow the schema, so asking the same prompt
        # again for one tool's arguments would get this very reply back (greedy decoding).
        narrowable = decided.structured
        if abandoned is not None and not isinstance(result, Final) and (why := abandoned()):
            yield Failed(why)
            return
        if isinstance(result, Final) and asked_for is not None:
            async with aclosing(self._instead_of_answer(step, asked_for, flow, deadline, abandoned, terms,
                                                        narrowable)) as parts:
                async for part in parts:
                    yield part
            return
        if isinstance(result, Final):
            judged = judge_answer(step, result, gate.released)
            if isinstance(judged, Accepted):
                async with aclosing(self._answer(step, result, judged, gate, sent)) as parts:
                    async for part in parts:
                        yield part
                return
            logger.debug("Final answer refused: %s", judged)
            refused = AgentStep(thought=result.thought, observation=f"Error: {judged}.")
        elif isinstance(result, RunawayAnswer):
            logger.info("The model's answer ran on until it was cut off: the dialog ends without one")
            for event in _ending(step.request, NO_TOOL_LEAD + NO_OWN_ANSWER, OUTCOME_NO_TOOL, ()):
                yield event
            return
        elif isinstance(result, ReactParseError):
            logger.debug("Unparseable reply: %s", result.reason)
            hint = "" if "Reply with" in result.reason else f" {FORMAT_HINT}"
            refused = AgentStep(thought=result.thought, observation=f"Error: {result.reason}.{hint}")
        else:
            async with aclosing(self._call(step, result, decided.scores, flow, deadline,
                                           abandoned, terms, narrowable)) as parts:
                async for part in parts:
                    yield part
            return
        # The model's reply was no answer and no call: it sees why, and the dialog goes on.
        yield Observation(refused.observation)
        yield record(step, refused, FAILURE_MISTAKE, step.request.state or "undefined")

    async def _answer(self, step: Step, final: Final, accepted: Accepted, gate: AnswerGate,
                      sent: bool) -> AsyncIterator[Answer]:
        """The accepted answer: whole, or what was held back of a streamed one, then its end."""
        if not step.request.streaming:
            yield Answer(step.own + final.answer, end=True, outcome=accepted.outcome, candidates=accepted.candidates)
            return
        if rest := gate.finish():
            yield Answer(rest if sent else step.own + rest, end=False)
        yield Answer("", end=True, outcome=accepted.outcome, candidates=accepted.candidates)

    async def _call(self, step: Step, action: Action, scores: Mapping[str, float] | None, flow: Any,
                    deadline: float | None, abandoned: Callable[[], str | None] | None,
                    terms: dict[str, str], narrowable: bool = True) -> AsyncIterator[Event]:
        """Judge the model's call, then make it and record it (or end the dialog instead).
        ``narrowable``: the model may be asked for another tool's arguments (its decision was JSON)."""
        usable = self._usable_name(step)
        action = settle(step, action, self.confidence)
        abstain = judge_call(step, action, scores, self.confidence, usable)
        logger.debug("Decision %s", json.dumps({
            "question": step.request.question[:200], "step": len(step.history) + 1, "tool": action.name,
            "arguments": action.arguments, "scores": scores,
            "meaning": {k: round(v, 3) for k, v in step.meaning.items()},
            "verdict": abstain.tool if isinstance(abstain, Switch) else abstain.outcome if abstain else "call"},
            default=str))
        if isinstance(abstain, Switch):
            try:
                switched = await self._arguments_for(step, abstain.tool, flow, terms, deadline) if narrowable else None
            except PromptFailed as e:
                yield Failed((abandoned() if abandoned is not None else None) or str(e))
                return
            if switched is None:
                offered = tuple(n for n in (abstain.tool, action.name) if usable(n))
                abstain = Abstain(OUTCOME_ASKED, offered, abstain.share) if offered else \
                    Abstain(OUTCOME_NO_TOOL, (), abstain.share)
            else:
                logger.debug("The ranker's %s taken for the model's %s, with %s", switched.name, action.name,
                             json.dumps(switched.arguments, default=str))
                action = settle(step, switched, self.confidence)
                abstain = judge_call(step, action, None, self.confidence, usable)   # its arguments
        if abstain is not None:
            logger.info("Model's choice of %s is a guess (share %.2f%s): %s", action.name, abstain.share,
                        f", arguments not said: {', '.join(abstain.unsaid)}" if abstain.unsaid else "",
                        abstain.outcome)
            async with aclosing(self._abstain(abstain, step, flow, terms, deadline)) as ending:
                async for event in ending:
                    yield event
            return
        arguments = {k: as_text(v) for k, v in action.arguments.items()}
        if refused_before(step, action, arguments):
            logger.info("The model called %s again as the user refused it: the dialog ends", action.name)
            async with aclosing(self._own_answer(step, flow, terms, deadline, f"{NO_RESULT_LEAD} (the user refused "
                                                 f"the call of tool '{action.name}')")) as ending:
                async for event in ending:
                    yield event
            return
        if (why := needs_approval(step, action)) is not None:
            logger.info("Call of %s waits for approval: %s", action.name, why)
            yield self._pause(step, action)
            return
        async with aclosing(self._make(step, action, flow, deadline, abandoned, terms)) as parts:
            async for part in parts:
                yield part

    def _pause(self, step: Step, action: Action) -> Answer:
        """The end of a dialog paused before ``action``: the call, and the token that resumes it."""
        approval = self.approvals.issue(step.request, step.failures, action.name, action.arguments, action.thought,
                                        step.approval.expires)
        return Answer(approval_text(action.name, action.arguments), end=True, outcome=OUTCOME_APPROVAL,
                      candidates=(action.name,), approval=approval)

    async def _resume(self, step: Step, registry: Registry, resume: Resume, flow: Any, deadline: float | None,
                      abandoned: Callable[[], str | None] | None) -> AsyncIterator[Event]:
        """The step of a paused call, as the caller decided: approved, the call with exactly the
        approved arguments (no model step); refused, an observation saying so, and the dialog
        goes on for the model to decide what next."""
        paused = resume.paused
        action = Action(paused.thought, paused.tool, dict(paused.arguments))
        arguments = {k: as_text(v) for k, v in action.arguments.items()}
        if not resume.approved:
            logger.info("Call of %s refused by the user", action.name)
            refused = refusal_observation(action.name)
            yield Observation(refused)
            yield record(step, AgentStep(thought=action.thought, action=action.name, arguments=arguments,
                                         observation=refused), FAILURE_REFUSED, step.request.state or "undefined")
            return
        if step.tool(action.name) is None:   # ranked out of this step's prompt: still the request's tool
            tool = next((t for t in filter_tools(registry.tools.values(), step.request.group, step.request.state)
                         if t.name == action.name), None)
            if tool is not None:
                step = dataclasses.replace(step, tools=[*step.tools, tool])
        logger.info("Call of %s approved by the user", action.name)
        terms = prompt_terms(step.request, step.tools, step.context, step.question)
        async with aclosing(self._make(step, action, flow, deadline, abandoned, terms)) as parts:
            async for part in parts:
                yield part

    async def _make(self, step: Step, action: Action, flow: Any, deadline: float | None,
                    abandoned: Callable[[], str | None] | None, terms: dict[str, str]) -> AsyncIterator[Event]:
        """Make the call and record it (or end the dialog, when its failure ends it)."""
        yield Act(action.name, action.arguments)
        outcome: list[ToolCall] = []
        async with aclosing(self._observe(action, step, flow, deadline, outcome)) as parts:
            async for part in parts:
                yield part
        if abandoned is not None and (why := abandoned()):
            yield Failed(why)
            return
        call = outcome[0]
        arguments = {k: as_text(v) for k, v in action.arguments.items()}
        ended = after_call(step, action, arguments, call)
        if isinstance(ended, Failed):
            yield ended
            return
        if isinstance(ended, NoResult):
            logger.info("No tool answered: %s", ended.why)
            async with aclosing(self._own_answer(step, flow, terms, deadline,
                                                 f"{NO_RESULT_LEAD} ({ended.why})")) as ending:
                async for event in ending:
                    yield event
            return
        state = call.tool.state if call.tool is not None and call.tool.state else (step.request.state or "undefined")
        yield record(step, AgentStep(thought=action.thought, action=action.name, arguments=arguments,
                                     observation=call.observation), call.failure, state)

    async def _instead_of_answer(self, step: Step, name: str, flow: Any, deadline: float | None,
                                 abandoned: Callable[[], str | None] | None,
                                 terms: dict[str, str], narrowable: bool = True) -> AsyncIterator[Event]:
        """The model would answer alone a question the ranker says plainly asks for tool ``name``
        (``steps.plainly_asked``): that tool is called, with the arguments the model gives it (a
        step whose schema allows that tool alone), judged as any call; without arguments the
        dialog asks back naming it."""
        if abandoned is not None and (why := abandoned()):
            yield Failed(why)
            return
        try:
            action = await self._arguments_for(step, name, flow, terms, deadline) if narrowable else None
        except PromptFailed as e:
            yield Failed((abandoned() if abandoned is not None else None) or str(e))
            return
        if action is None:
            async with aclosing(self._abstain(Abstain(OUTCOME_ASKED, (name,), 1.0), step, flow, terms,
                                              deadline)) as ending:
                async for event in ending:
                    yield event
            return
        logger.debug("The ranker's %s taken for the model's own answer", name)
        async with aclosing(self._call(step, action, None, flow, deadline, abandoned, terms)) as parts:
            async for part in parts:
                yield part

    async def _next_request(self, step: Step, pending: Pending, flow: Any, deadline: float | None,
                            abandoned: Callable[[], str | None] | None,
                            terms: dict[str, str]) -> AsyncIterator[Event]:
        """The call of the next request's tool (``steps.next_request``), with the arguments the
        model gives it from what that request says (``steps.request_arguments``), when the judge takes it
        as it takes any call; nothing when the model gives none the dialog says, and the model
        decides the step as usual.  The call is judged by what that request says (a call of no
        values by its tool's nearness to the request, not to the whole question)."""
        name = pending.tool
        step = dataclasses.replace(step, meaning=pending.meaning or step.meaning)
        try:
            action = await self._arguments_for(step, name, flow, terms, deadline, request_arguments(step, pending))
        except PromptFailed as e:
            yield Failed((abandoned() if abandoned is not None else None) or str(e))
            return
        if action is not None:
            action = settle(step, action, self.confidence)
            if judge_call(step, action, None, self.confidence, self._usable_name(step)) is None:
                logger.debug("The question's next request: %s", name)
                async with aclosing(self._call(step, action, None, flow, deadline, abandoned, terms)) as parts:
                    async for part in parts:
                        yield part
                return
        logger.debug("No call of %s for the question's next request: the model decides the step", name)

    def _schema_property(self, tools: list[Tool], said: Said) -> dict[str, str]:
        """The schema of the next step, for a template that asks for a structured decision.

        A message property: with thousands of tools it would outgrow what a
        broker takes in a message's metadata, and no model's context holds
        such a prompt anyway; then none is sent (the model is unconstrained).
        """
        schema = json.dumps(decision_schema(tools, said))
        if len(schema) <= MAX_SCHEMA_CHARS:
            return {SCHEMA_PROPERTY: schema}
        if not self._schema_warned:
            self._schema_warned = True
            logger.warning("The decision schema of %d tools is %d characters, over %d: steps go without "
                           "it (unconstrained); fewer tools per request (groups) would keep it",
                           len(tools), len(schema), MAX_SCHEMA_CHARS)
        return {}

    async def _arguments_for(self, step: Step, name: str, flow: Any, terms: dict[str, str],
                             deadline: float | None, arguments: dict[str, Any] | None = None) -> Action | None:
        """The model's call of tool ``name`` (a step whose schema allows that tool alone: its
        ``arguments`` schema, else the one the step's dialog grounds), or None when it gives none.
        Raises :class:`PromptFailed` when the prompt service fails or the dialog runs out of time:
        the dialog ends saying that, as a failed decision does (it had asked back, as though no
        tool were clearly meant)."""
        tool = step.tool(name)
        if tool is None:
            return None
        schema = decision_schema([tool], step.said) if arguments is None else \
            decision_schema_module.decision_schema([(name, arguments)])
        only = decision_schema_module.narrow(schema, answer=False)
        reply = await complete(flow, terms, {SCHEMA_PROPERTY: json.dumps(only)}, self.prompt_timeout, deadline)
        logger.debug("Model reply for %s's arguments: %.500r", name, reply)
        decided = parse_reply(reply)
        return decided if isinstance(decided, Action) and decided.name == name else None

    def _unavailable_name(self, step: Step) -> Callable[[str], str | None]:
        """Why the step's tool of a name cannot be used now, or None (a name the step has no tool of
        is no tool this says anything of)."""
        check = self.unavailable
        if check is None:
            return lambda name: None

        def unavailable(name: str) -> str | None:
            tool = step.tool(name)
            return None if tool is None else check(tool)
        return unavailable

    def _usable_name(self, step: Step) -> Callable[[str], bool]:
        """Whether the step has a tool of a name that can be used now (any name, with no check)."""
        if self.unavailable is None:
            return lambda name: True
        unavailable = self._unavailable_name(step)
        return lambda name: step.tool(name) is not None and unavailable(name) is None

    async def _abstain(self, abstain: Abstain, step: Step, flow: Any, terms: dict[str, str],
                       deadline: float | None) -> AsyncIterator[Event]:
        """End the dialog honestly: ask which tool was meant, or answer without one, marked so."""
        if abstain.outcome != OUTCOME_ASKED:
            async with aclosing(self._own_answer(step, flow, terms, deadline, NO_TOOL_LEAD)) as ending:
                async for event in ending:
                    yield event
            return
        named = {t.name: t for t in step.tools}
        text = ask_back([named[n] for n in abstain.candidates if n in named], abstain.tool, abstain.unsaid)
        for event in _ending(step.request, text, OUTCOME_ASKED, abstain.candidates):
            yield event

    async def _own_answer(self, step: Step, flow: Any, terms: dict[str, str], deadline: float | None,
                          lead: str) -> AsyncIterator[Answer]:
        """End the dialog with the model's own answer, marked: ``lead`` (no tool fits, or none
        answered), then that it is the model's own; a step whose schema holds only the answer."""
        answer = ""
        why = ""
        try:
            only_answer = decision_schema([])
            only_answer["anyOf"][0]["properties"]["answer"]["maxLength"] = NO_TOOL_ANSWER_LIMIT
            reply = await complete(flow, terms, {SCHEMA_PROPERTY: json.dumps(only_answer)}, self.prompt_timeout,
                                   deadline)
            decided = parse_reply(reply)
            if isinstance(decided, Final):
                answer = decided.answer
        except PromptFailed as e:
            logger.info("No answer of the model's own: %s", e)
            why = str(e)
        if answer:
            text = lead + OWN_ANSWER + answer
        elif why == OUT_OF_TIME:
            text = lead + ", and the dialog ran out of time before the model could answer it itself."
        else:
            text = lead + NO_OWN_ANSWER
        for event in _ending(step.request, text, OUTCOME_NO_TOOL, ()):
            yield event

    async def _observe(self, action: Action, step: Step, flow: Any, deadline: float | None,
                       outcome: list[ToolCall]) -> AsyncIterator[Observation]:
        """:meth:`_act`, and the observation events it makes; ``outcome`` gets the :class:`ToolCall`.

        Not streaming: one ``Observation`` with the whole result.  Streaming:
        ``Observation(chunk, end=False)`` for each chunk of the tool's output
        as it arrives, then one closing ``Observation`` with what was not
        streamed (all of it when the tool did not stream, the error when it
        failed midway).
        """
        if not step.request.streaming:
            call = await self._act(action, step, flow, deadline)
            outcome.append(call)
            yield Observation(call.observation)
            return
        chunks: asyncio.Queue[str | None] = asyncio.Queue()
        call = asyncio.ensure_future(self._act(action, step, flow, deadline, chunks.put_nowait))
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
        observed = result.observation
        if not streamed:
            tail = observed
        elif observed == streamed.strip():
            tail = ""
        elif observed.startswith(streamed):
            tail = observed[len(streamed):]
        else:
            tail = "\n" + observed  # the tool failed after streaming part of its answer
        yield Observation(tail, end=True)

    async def _act(self, action: Action, step: Step, flow: Any, deadline: float | None = None,
                   on_chunk: Callable[[str], Any] | None = None) -> ToolCall:
        """Call the tool: its result, or an ``Error:`` observation saying what happened."""
        tool = step.tool(action.name)
        stopped = self.stopped_service_of(action.name) if tool is None and self.stopped_service_of else None
        if stopped is not None:
            why = (f"tool '{action.name}' cannot be used now: tool service '{stopped}' is not running (it "
                   "stopped, and no replica of it is live)")
            return ToolCall(f"Error: {why}. Use another tool, or give a Final Answer with what you know.",
                            failure=FAILURE_UNAVAILABLE, reason=why)
        if tool is None:
            names = ", ".join(t.name for t in step.tools) or "none"
            return ToolCall(f"Error: No action for '{action.name}': there is no tool of that name. "
                            f"The tools you can use are: {names}. Use one of them exactly as named, "
                            "or give a Final Answer.", failure=FAILURE_MISTAKE,
                            reason=f"the model named a tool that does not exist, '{action.name}'")
        result = await call_tool(tool, action.arguments, user=step.request.user, flow=flow,
                                 timeout=self.tool_timeout, deadline=deadline, on_chunk=on_chunk)
        return ToolCall(observation(tool.name, result), tool if result.answered else None,
                        FAILURES.get(result.outcome), reason(tool.name, result))


def record(step: Step, done: AgentStep, failure: str | None, state: str) -> Continue:
    """The dialog goes on: ``done`` added to its history (its failure kind, if any, carried)."""
    request = step.request
    failures = dict(step.failures)
    if failure is not None:
        failures[len(step.history)] = failure
    return Continue(AgentRequest(question=request.question, state=state, group=request.group,
                                 history=[*step.history, done], user=request.user, streaming=request.streaming),
                    failures)


def _ending(request: AgentRequest, text: str, outcome: str, candidates: tuple[str, ...]) -> list[Answer]:
    """The last message(s) of a dialog whose answer is ``text``: whole, or one chunk and the end."""
    if request.streaming:
        return [Answer(text, end=False), Answer("", end=True, outcome=outcome, candidates=candidates)]
    return [Answer(text, end=True, outcome=outcome, candidates=candidates)]
