"""The stages of one agent step, each a function of typed values, so each is read and tested alone.

One iteration of a dialog (``AgentManager.react``) is a pipeline:

1. :func:`admit`: whether the step may run at all (its caller gone, too many steps, no time);
2. :func:`prepare` (rank): the request's tools nearest the question first (a tool taking the
   kind of value the question says, :func:`by_kind`; among tools as near, the one that takes
   more of what it says, :func:`by_coverage`), as many as one prompt holds, how near each is,
   what the dialog has said that arguments may be;
   then, for a question that makes several requests, :func:`next_request`: once a result is in,
   the next request's tool (called with what that request says, :func:`request_arguments`), or, each
   request served, the results as the answer;
3. decide: the model's next step (``prompting.decide``: a final answer, a tool call, or an
   unreadable reply), with its choice scores;
4. judge: :func:`judge_answer` (a final answer that is no answer is refused back to the model),
   or :func:`settle` (a call's optional arguments that are guesses are left out, a looping free
   text said once) then
   :func:`judge_call` (a call the model is not sure of, or whose values it made up, or an amount
   said in another currency than its argument's, or of a tool that acts for a question that
   asks for no action, ends by
   asking back or saying no tool fits; the ranker's clear first tool is called instead, unless
   the question names an argument of the model's tool and none of the ranker's: :func:`named_over`;
   where the ranker cannot tell them apart, a tool whose argument the question names is called
   instead of one whose it does not: :func:`named_instead`);
5. approve: :func:`needs_approval`, whether the judged call waits for a person
   (``tool-policy/approval``: the dialog ends ``approval-required``, its token the paused
   dialog, ``approval.py``), and :func:`refused_before` (the same call the user refused);
6. act: the call (``catalog.calling``), its outcome a :class:`~.calls.ToolCall` with its
   failure kind (on a resumed dialog: the approved call, or the refusal as the step's
   observation);
7. record: :func:`after_call`, whether that failure ends the dialog, and how; otherwise the
   step goes into the history and the dialog goes on.

The failure kind of each earlier step travels with the dialog (the ``step-failures`` message
property, :func:`carried_failures`), so no stage reads an observation's words to learn what
happened; a dialog from an upstream peer, without the property, counts an ``Error:``
observation as a failed call.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trustgraph.catalog import embedding
from trustgraph.catalog.policy import APPROVAL_DEFAULT, ApprovalPolicy
from trustgraph.catalog.ranking import MAX_PROMPT_TOOLS, Ranked, fit, rank
from trustgraph.catalog.relevance import content_words
from trustgraph.schema import AgentRequest, AgentStep
from trustgraph.schema.services.agent import (
    OUTCOME_ANSWER,
    OUTCOME_ASKED,
    OUTCOME_NO_TOOL,
    OUTCOME_TOOL,
    OUTCOME_UNAVAILABLE,
)

from . import coverage, intent
from .calls import FAILURE_FAILED, FAILURE_LOST, FAILURE_REFUSED, FAILURE_UNAVAILABLE, ToolCall
from .decisions import (
    Abstain,
    Confidence,
    Switch,
    answer_problem,
    clear_first,
    from_result,
    judge,
    own_answer_prefix,
)
from .grounding import (
    Said,
    code_prefixes,
    grounded,
    named_arguments,
    names_in,
    optional_guesses,
    own_words,
    plain,
    said_kinds,
    said_list,
    said_once,
    said_values,
    stem,
    takes_kind,
    takes_prefix,
    unsaid_arguments,
)
from .registry import Registry, Tool, filter_tools
from .vocabulary import Action, Failed, Final

logger = logging.getLogger(__name__)

#: The message property carrying the failure kind of each failed step of the history so far:
#: ``{"<step index>": "<kind>"}`` (ours; upstream's agents neither set nor read it).
FAILURES_PROPERTY = "step-failures"
#: A step needs at least this long (a prompt call and a tool call); with less left of the
#: dialog's time it ends, in its own words, before its caller's deadline.
MIN_STEP_SECONDS = 1.0


def carried_failures(raw: str | None, history: Sequence[AgentStep]) -> dict[int, str]:
    """The failure kind of each failed step of ``history``: from the ``step-failures`` property
    when the dialog carries it (``raw``), else (an upstream peer's dialog) every step whose
    observation starts ``Error:`` counts as a failed call."""
    try:
        value = json.loads(raw) if raw else None
    except ValueError:
        value = None
    if isinstance(value, dict):
        out = {}
        for key, kind in value.items():
            if isinstance(kind, str) and str(key).isdigit() and int(key) < len(history):
                out[int(key)] = kind
        return out
    return {i: FAILURE_FAILED for i, h in enumerate(history) if (h.observation or "").startswith("Error:")}


def failures_property(failures: Mapping[int, str]) -> str:
    return json.dumps({str(i): kind for i, kind in sorted(failures.items())})


def last_error(history: Sequence[AgentStep], failures: Mapping[int, str]) -> str:
    """What the last failed step of ``history`` said, without its ``Error:`` (empty: none failed)."""
    if not failures:
        return ""
    observation = history[max(failures)].observation or ""
    return observation[len("Error:"):].strip() if observation.startswith("Error:") else observation


# -- 1. admit ---------------------------------------------------------------------------------


def admit(history: Sequence[AgentStep], failures: Mapping[int, str], max_iterations: int,
          deadline: float | None, abandoned: Callable[[], str | None] | None) -> Failed | None:
    """Why this step must not run (the dialog ends with that error), or None."""
    if abandoned is not None and (why := abandoned()):
        return Failed(why)
    last = last_error(history, failures)
    if len(history) >= max_iterations:
        return Failed(f"Too many agent iterations: the dialog reached the limit of {max_iterations} "
                      "steps without an answer (agent-manager-react --max-iterations; "
                      "tg-launch --max-iterations)" + (f"; the last step's error: {last}" if last else ""))
    if deadline is not None and deadline - time.time() < MIN_STEP_SECONDS:
        return Failed(f"The dialog ran out of time after {len(history)} step(s) without an answer"
                      + (f"; the last step's error: {last}" if last else ""))
    return None


# -- 2. prepare (rank) ------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """What one step works with: the request, its tools ranked, and what the dialog holds."""

    request: AgentRequest
    tools: list[Tool]
    meaning: dict[str, float]                  # each tool's similarity to the question (the ranker's)
    failures: dict[int, str]                   # step index -> failure kind, for the history's failed steps
    said: Said                                 # what arguments may be (grounding)
    context: str = ""
    results: list[tuple[str, str]] = field(default_factory=list)   # (tool, result) of the succeeded calls
    approval: ApprovalPolicy = APPROVAL_DEFAULT  # which calls wait for a person (tool-policy/approval)
    asked: str = ""                            # the question as it is read (``grounding.plain``)

    @property
    def question(self) -> str:
        """The question as the ranker, the argument check and the model read it: its chat shorthand
        written out ("tmrw" is tomorrow); the request keeps it as the user wrote it."""
        return self.asked or self.request.question

    @property
    def history(self) -> list[AgentStep]:
        return list(self.request.history or [])

    @property
    def own(self) -> str:
        """The mark before a final answer: none when a tool's result is in the dialog."""
        return "" if self.results else own_answer_prefix(self.history)

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)


def prepare(request: AgentRequest, registry: Registry, failures: Mapping[int, str],
            policy: Confidence | None = None) -> Step:
    """The request's tools (group and state) ranked by the ranker, and by the kinds of value the
    question says (:func:`by_kind`, :func:`by_coverage`), as many as a prompt holds.

    With ``policy``, a first step of a question that makes several requests (``intent.requests_of``)
    ranks them for the first request, when that one plainly asks for a tool (``clear_first``): the
    requests are served in turn (:func:`next_request`), and the whole question can be as near two
    tools ("How many days until 25 December 2026, and what day of the week is that?" asked back)."""
    tools = filter_tools(registry.tools.values(), request.group, request.state)
    history = list(request.history or [])
    results = [(h.action, h.observation or "") for i, h in enumerate(history) if h.action and i not in failures]
    question = plain(request.question)
    said = said_values(question, [r for _, r in results])
    ranked = ordered(question, tools)
    if policy is not None and not request.history and len(parts := intent.requests_of(question)) > 1:
        first = ordered(parts[0], tools)
        meaning = {r.tool.name: r.meaning for r in first if r.meaning is not None}
        if (asked := clear_first(meaning, list(meaning), policy)) is not None:
            ranked = first
            # And its values are that request's own: "Roll two dice and then pick a random number
            # between 1 and 50" had rolled dice of 1 side, the next request's bound.
            said = _request_said(next(r.tool for r in first if r.tool.name == asked), parts[0], said)
    ranked = fit(ranked)
    return Step(request=request, tools=[r.tool for r in ranked],
                meaning={r.tool.name: r.meaning for r in ranked if r.meaning is not None},
                failures=dict(failures), said=said, context=registry.context, results=results,
                approval=registry.catalog.approval, asked=question)


def ordered(question: str, tools: Sequence[Any]) -> list[Ranked]:
    """``tools`` ranked for ``question``, then by the kinds of value it says (:func:`by_kind`,
    :func:`by_coverage`), by the verb a request says (:func:`by_verb`) and by what a request to act
    can be done with (:func:`by_needs`)."""
    return by_needs(by_verb(by_coverage(by_kind(rank(question, tools), question), question), question), question)


def by_needs(ranked: list[Ranked], question: str) -> list[Ranked]:
    """``ranked`` with the nearest tool that acts, that shares a word with the question and that
    the question gives every required argument a value for put first, its similarity raised until
    it leads the rest by ``lead``, when the question asks for an action
    (``intent.asks_for_action``), the ranker's first cannot be called with what it says (a
    ticket's number, none said), and that tool is within :data:`COVERAGE_LEADS` of it and at least
    ``unrelated`` near.  "The printer on the third floor is jamming again, please raise a ticket
    for it" put ticket-status 0.06 ahead of create-ticket, and asked back for a ticket number.
    Over the bench's 145 questions and the held-out probes' 175, this changed two first tools,
    both to the right one; without the shared word, a third to a wrong one, a ticket made of "Find
    me some articles about remote work burnout" (bench/notes.md)."""
    calibration = embedding.calibration()
    if calibration is None or len(ranked) < 2 or ranked[0].meaning is None or not intent.asks_for_action(question):
        return ranked
    said = said_values(question, [])
    first = ranked[0]
    if _callable(first.tool, said):
        return ranked
    for r in ranked[1:MAX_PROMPT_TOOLS]:
        if r.meaning is None:
            continue
        if first.meaning - r.meaning >= COVERAGE_LEADS * calibration.lead:
            break
        if r.meaning >= calibration.unrelated and r.words > 0 and intent.acts(r.tool) and _callable(r.tool, said):
            logger.debug("Needs: %s cannot be called with what the request says; %s can", first.tool.name,
                         r.tool.name)
            return _leading(ranked, r, calibration)
    return ranked


def _callable(tool: Any, said: Said) -> bool:
    """Whether ``said`` offers every required argument of ``tool`` a value (its grounded schema
    narrows each to some; a list, or the model's own words, need none)."""
    schema = getattr(tool, "schema", None)
    if not isinstance(schema, dict):
        return True
    properties = grounded(schema, getattr(tool, "arguments", None) or (), said,
                          own_words(tool.name, getattr(tool, "description", "") or "")).get("properties") or {}
    declared = {getattr(a, "name", None): a for a in getattr(tool, "arguments", None) or ()}
    return all(isinstance(p := properties.get(name), dict) and ("enum" in p or p.get("type") == "array"
                                                                or getattr(declared.get(name), "free_text", False))
               for name in schema.get("required") or ())


def by_kind(ranked: list[Ranked], question: str) -> list[Ranked]:
    """``ranked`` with the tools whose arguments take a kind of value the question says (an email or
    web address, a file: ``grounding.said_kinds``, ``grounding.takes_kind``) first, in the ranker's order, and their
    similarities raised alike until the first of them is plainly what the question asks: at least
    the embedding model's ``clear``, and nearer than every other tool by half as much again as its
    ``lead`` (a margin no rounding undoes).  A question that names a file is about a tool that
    reads files however near a contact lookup's words are: "Show me what's in /etc/hosts" had
    looked up the contact "/etc/hosts", and "What's inside ~/.bashrc?" (the file tool first, but
    under ``unrelated``) was answered by the model alone.  So is a code whose prefix an argument's
    example writes ("has EXP-2304 been approved yet??" of a report number "e.g. EXP-2291", not a
    ferry booking's "FX-20931").  Unchanged when no tool, or every tool, has such evidence: among
    the tools that have it, meaning decides."""
    kinds, prefixes = said_kinds(question), code_prefixes(question)
    if not kinds and not prefixes:
        return ranked
    evidenced = [takes_kind(arguments := getattr(r.tool, "arguments", None) or (), kinds)
                 or takes_prefix(arguments, prefixes) for r in ranked]
    if not any(evidenced) or all(evidenced):
        return ranked
    first = [r for r, e in zip(ranked, evidenced, strict=True) if e]
    rest = [r for r, e in zip(ranked, evidenced, strict=True) if not e]
    best = max((r.meaning for r in first if r.meaning is not None), default=None)
    others = max((r.meaning for r in rest if r.meaning is not None), default=None)
    if best is not None and others is not None:
        calibration = embedding.calibration() or embedding.WORDLLAMA_CALIBRATION
        raise_by = max(0.0, others + 1.5 * calibration.lead - best, calibration.clear - best)
        first = [r._replace(meaning=r.meaning + raise_by, score=r.score + raise_by) if r.meaning is not None else r
                 for r in first]
    return first + rest


#: How far behind the ranker's first, in its ``lead``s, a tool's coverage of the question may put it
#: first: "Please record that I took 200 mg of ibuprofen at 07:45" put dosage-info 0.08 (two leads)
#: ahead of log-dose, which takes its dose in mg and its time.  Over the bench's 145 questions and
#: the held-out probes' 139 (47 tools), twice the lead changed that first tool alone; two and a
#: half times put a converter of currency first for "23 kg; what is that in pounds?".
COVERAGE_LEADS = 2.0


def by_coverage(ranked: list[Ranked], question: str) -> list[Ranked]:
    """``ranked`` with the one tool, among those the ranker can hardly tell from its first (within
    :data:`COVERAGE_LEADS` of its ``lead``), whose arguments surely take more of what the question
    says than each other one's could (``coverage.most_covered``: two places, a language, a unit of
    measure, a time, a quoted text...) put first, its similarity raised until it leads the rest by
    ``lead``.  "If it's noon in New York, what hour is it in Paris?" put local-time 0.013 ahead of
    time-difference, and the 135M model's choice between such tools is noise: the dialog asked back.

    Evidence between tools that are all about the question, never for one that is not: the tool
    must be at least the embedding model's ``unrelated`` near.  Unchanged without the embedding
    model, when the ranker's first leads, and when no tool, or more than one, covers most."""
    calibration = embedding.calibration()
    meanings = [r.meaning for r in ranked if r.meaning is not None]
    if calibration is None or len(meanings) < 2:
        return ranked
    top = max(meanings)   # the ranker's order also weighs shared words: the nearest may be second
    # At most as many as a prompt lists: a catalog of near copies ties by the thousand.
    tied = [r for r in ranked if r.meaning is not None
            and top - r.meaning < COVERAGE_LEADS * calibration.lead][:MAX_PROMPT_TOOLS]
    if len(tied) < 2:
        return ranked
    found = coverage.most_covered([r.tool for r in tied], question)
    if found is None:
        return ranked
    winner, best = tied[found[0]], found[1]
    if winner.meaning < calibration.unrelated:
        return ranked
    logger.debug("Coverage: %s takes %d of the question's values, the tools as near fewer", winner.tool.name, best)
    return _leading(ranked, winner, calibration)


def by_verb(ranked: list[Ranked], question: str) -> list[Ranked]:
    """``ranked`` with the one tool, among those the ranker cannot tell from its first (within its
    ``lead``), whose description starts with the verb a request of the question says
    (``intent.requested_verbs``, ``intent.said_verb``) put first, its similarity raised until it
    leads the rest by ``lead``.  "Our lights have all gone off at 27 Mill Lane, please report it"
    put reporting a power cut 0.003 from the known cuts in an area, and "Play episode 212 of
    Radiolab" playing a podcast 0.027 from listing its episodes: both asked back.  Unchanged
    without the embedding model, for a question that asks to know, when no tool, or more than
    one, starts with that verb ("Tell me a joke" among two joke tools), and when another of them
    shares a word with the question that the verb's tool does not (over the bench's and the
    probes' 414 questions this rule raised three right first tools' leads and changed no first tool).

    Further behind, the one tool that does what the request says (at least ``unrelated`` near, among
    those a prompt lists) is put first when the ranker's first does something else: "cant make spin
    on thursday anymore, cancel it" had booked the class (0.21 ahead of cancelling it), "Please drop
    my Saturday yoga booking" listed the timetable, "so scrap repair RR-30990" showed its status;
    of several tools that do it, the nearest when it leads the next by ``lead``.  Over the bench's
    and the probes' 612 questions this changed seven first tools, each to the right one; unchanged
    when the first says something of the question that the verb's tool does not."""
    calibration = embedding.calibration()
    meanings = [r.meaning for r in ranked if r.meaning is not None]
    if calibration is None or len(meanings) < 2:
        return ranked
    top = max(meanings)
    tied = [r for r in ranked if r.meaning is not None and top - r.meaning < calibration.lead][:MAX_PROMPT_TOOLS]
    # The verb of the request a first step serves: "What's happening with ticket 3307? Also, assign
    # ticket 3310 to Marco Rossi" had assigned ticket 3307 (the second request's verb, the first's number).
    first_request = (intent.requests_of(question) or [question])[0]
    if not (verbs := intent.requested_verbs(first_request)):
        return ranked
    asked = {stem(w) for w in content_words(question)}

    def shared(tool: Any) -> set[str]:
        return asked & {stem(w) for w in content_words(f"{getattr(tool, 'name', '')} "
                                                       f"{getattr(tool, 'description', '') or ''}")}

    leader = next(r for r in ranked if r.meaning == top)
    if not intent.said_verb(leader.tool, verbs):
        doers = sorted((r for r in ranked[:MAX_PROMPT_TOOLS] if r.meaning is not None
                        and r.meaning >= calibration.unrelated and intent.acts(r.tool) and intent.said_verb(r.tool, verbs)),
                       key=lambda r: -r.meaning)
        # (Of several that do it, the nearest when it leads the next: "scrap booking CW-5602" cancels a
        # desk booking, not a print job.)
        if len(doers) > 1 and doers[0].meaning - doers[1].meaning >= calibration.lead:
            doers = doers[:1]
        if len(doers) == 1 and top - doers[0].meaning >= calibration.lead \
                and shared(leader.tool) <= shared(doers[0].tool):
            logger.debug("Verb: %s does what the request says (%s), not %s", doers[0].tool.name,
                         ", ".join(sorted(verbs)), leader.tool.name)
            return _leading(ranked, doers[0], calibration)
    doing = [r for r in tied if intent.said_verb(r.tool, verbs)]
    if len(tied) < 2 or len(doing) != 1 or doing[0].meaning < calibration.unrelated:
        return ranked
    winner = doing[0]
    # Nor when another of them says something of the question the verb's tool does not: "Can you
    # log a ticket saying the VPN drops every hour?" asks for a ticket, which logging a workout is not.
    if any(not shared(r.tool) <= shared(winner.tool) for r in tied):
        return ranked
    logger.debug("Verb: %s does what the request says (%s)", winner.tool.name, ", ".join(sorted(verbs)))
    return _leading(ranked, winner, calibration)


def _leading(ranked: list[Ranked], winner: Ranked, calibration: Any) -> list[Ranked]:
    """``ranked`` with ``winner`` first, its similarity (and score) raised until it leads every
    other tool by a quarter more than the embedding model's ``lead`` (a margin no rounding undoes):
    what each stage that finds evidence for one of the tools the ranker cannot tell apart does."""
    others = max(r.meaning for r in ranked if r is not winner and r.meaning is not None)
    raise_by = max(0.0, others + 1.25 * calibration.lead - winner.meaning)
    raised = winner._replace(meaning=winner.meaning + raise_by, score=winner.score + raise_by)
    return [raised, *(r for r in ranked if r is not winner)]


def gone_nearer(step: Step, stopped: Sequence[tuple[str, Mapping[str, Any]]],
                unavailable: Callable[[str], str | None] = lambda name: None) -> Failed | None:
    """The dialog's end when the question is about a tool that cannot be used now: one whose service
    stopped (``stopped``: ``(service id, its descriptor as last announced)``), or one still listed
    whose service is known to be down (``unavailable(name)``: why, or None: a configured descriptor
    that nothing serves stays in the catalog, and a question about its tool went to the model, whose
    call then failed, or asked back offering only the usable tools, however far). That
    tool nearer the question than every usable tool by the ranker's clear lead, near enough to be
    about anything, and no usable tool ``near`` the question (a live tool that fits is used, however
    near an old one: a service replaced by another is remembered as stopped; a live tool barely
    related is no fit: the stopped timetable 0.92 near, the bike dock 0.21).

    A stopped service's tools left the catalog with its lease, so without this the model answers
    alone and the dialog ends as if no tool fitted (``no-tool``), where the truth is that the tool it
    needs cannot be used now."""
    if step.history:
        return None
    down = {t.name: why for t in step.tools if (why := unavailable(t.name)) is not None}
    if not stopped and not down:
        return None
    calibration = embedding.calibration()
    if calibration is None:
        return None
    offered = [dict(tool) for _, tool in stopped]
    ranked = rank(step.question, [*step.tools, *offered])

    def gone(r: Ranked) -> bool:
        return isinstance(r.tool, dict) or r.tool.name in down

    first = ranked[0]
    if not gone(first) or first.meaning is None or first.meaning < calibration.unrelated:
        return None
    live = max((r.meaning for r in ranked if not gone(r) and r.meaning is not None), default=-1.0)
    if live >= calibration.near or first.meaning - live < calibration.lead:
        return None
    if not isinstance(first.tool, dict):
        return Failed(f"Tool '{first.tool.name}' cannot be used now: {down[first.tool.name]}",
                      outcome=OUTCOME_UNAVAILABLE)
    name = first.tool["name"]
    service = next(sid for sid, tool in stopped if tool.get("name") == name)
    return Failed(f"Tool '{name}' cannot be used now: tool service '{service}' is not running (it stopped, "
                  "and no replica of it is live)", outcome=OUTCOME_UNAVAILABLE)


# -- 4. judge ---------------------------------------------------------------------------------


def plainly_asked(step: Step, policy: Confidence, usable: Callable[[str], bool] = lambda name: True) -> str | None:
    """The tool a first step calls even when the model would answer alone: the ranker's clear
    first (``decisions.clear_first``), when it can be used now; None otherwise, and on later
    steps (a tool's result is in the dialog, or the model was told of a mistake)."""
    if step.history:
        return None
    tool = clear_first(step.meaning, [t.name for t in step.tools], policy)
    return tool if tool is not None and usable(tool) else None


@dataclass(frozen=True)
class Served:
    """Every request of a question that makes several has had its tool's result (:func:`next_request`):
    the dialog's answer is those results, in the order they came."""

    text: str
    tools: tuple[str, ...]


@dataclass(frozen=True)
class Pending:
    """The next request of a question that makes several, and the tool to call for it."""

    tool: str
    request: str
    #: Each tool's similarity to this request alone (the ranker's): what its call is judged by.
    meaning: dict[str, float] = field(default_factory=dict, compare=False)


def next_request(step: Step, policy: Confidence, usable: Callable[[str], bool] = lambda name: True
                 ) -> Pending | Served | None:
    """For a question that makes several requests (``intent.requests_of``: "What day of the week is
    31 October 2026 and how many days away is it?"), once a tool's result is in the dialog: the
    tool of the first request no call has served, or :class:`Served` when each has been; None
    for a question of one request, or while a step of the dialog failed (the model reads why).

    A request is served when the tool nearest it alone has been called; one that is not is served
    next by its clear first tool among those not called yet (``decisions.clear_first``: the tools
    already called are what the earlier requests asked, "how many days away is it?" being as near
    the day of the week it follows).  The 135M model answered with the first result alone: the
    second request went unanswered."""
    if not step.results or step.failures or len(step.history) != len(step.results) or not step.meaning:
        return None   # (without the embedding model no request is nearer one tool than another)
    parts = intent.requests_of(step.question)
    if len(parts) < 2:
        return None
    called = {name for name, _ in step.results}
    served = True
    for part in parts:
        ranked = ordered(part, step.tools)
        meaning = {r.tool.name: r.meaning for r in ranked if r.meaning is not None}
        if not ranked or ranked[0].tool.name in called:
            continue
        served = False
        rest = [r.tool.name for r in ranked if r.tool.name not in called and r.tool.name in meaning]
        first = clear_first(meaning, rest, policy, lone=True)
        if first is not None and usable(first):
            return Pending(first, part, meaning)
    if not served or len(called) < 2:
        return None
    return Served("\n".join(result for _, result in step.results), tuple(dict.fromkeys(n for n, _ in step.results)))


def request_arguments(step: Step, pending: Pending) -> dict[str, Any] | None:
    """The argument schema of the next request's call (None when its tool is gone): what that
    request says ("..., and what's the local time in Tokyo?" had been Lisbon's, said first), each
    required argument it says nothing of its own for taking what the whole dialog offers (a request
    that says "there", "it" or "him" takes it from the one before it).  Argument by argument: "When
    are Rex's vaccinations due? Then book him in at the vet on 3 June at 9am" takes Rex from the
    question and 3 June from its request, where the first result's "due 18 June" had been booked."""
    tool = step.tool(pending.tool)
    if tool is None:
        return None
    own = said_values(pending.request, [])
    words = own_words(tool.name, tool.description or "")
    whole = grounded(tool.schema, tool.arguments, step.said, words)
    mine = grounded(tool.schema, tool.arguments, own, words)
    properties = dict(mine.get("properties") or {})
    for name in tool.schema.get("required") or ():
        if _not_its_own(name, properties, whole.get("properties") or {}, own):
            properties[name] = whole["properties"][name]
    return {**mine, "properties": properties} if "properties" in mine else mine


def _request_said(tool: Tool, request: str, said: Said) -> Said:
    """What ``tool``'s call for one ``request`` of a question takes its values from: that request's
    own words when they give each required argument of the tool values as the whole question
    (``said``) does, else the whole question's."""
    own = said_values(request, [])
    words = own_words(tool.name, tool.description or "")
    whole = grounded(tool.schema, tool.arguments, said, words).get("properties") or {}
    mine = grounded(tool.schema, tool.arguments, own, words).get("properties") or {}
    return said if any(_not_its_own(name, mine, whole, own) for name in tool.schema.get("required") or ()) else own


def _not_its_own(name: str, mine: Mapping[str, Any], whole: Mapping[str, Any], own: Said) -> bool:
    """Whether a request (``own``: what it says; ``mine``: its grounded properties) says no value of
    its own for argument ``name`` that the whole dialog (``whole``) offers one for: it offers none,
    or only the request itself, as written or up to a time another argument takes ("book him in at
    the vet on 3 June" of "... at 9am"; "..., and how has it moved over the past month?" had priced
    the ticker "past")."""
    if "enum" not in (whole.get(name) or {}):
        return False
    offered = (mine.get(name) or {}).get("enum")
    return offered is None or (len(offered) == 1 and isinstance(offered[0], str) and offered[0] not in own.texts
                               and own.question.startswith(offered[0]))


@dataclass(frozen=True)
class Accepted:
    """A final answer the user gets: how the dialog ended and the tools behind it."""

    outcome: str
    candidates: tuple[str, ...] = ()


def judge_answer(step: Step, final: Final, judged: bool = False) -> Accepted | str:
    """The ending of a final answer, or why it is no answer (an observation for the model).

    ``judged``: it was streamed and released already (``decisions.AnswerGate``).
    """
    observations = [r for _, r in step.results]
    problem = None if judged else answer_problem(final.answer, step.question,
                                                 [t.name for t in step.tools], observations)
    if problem is not None:
        return problem
    source = from_result(final.answer, observations)
    if source is not None:
        return Accepted(OUTCOME_TOOL, (step.results[source][0],))
    return Accepted(OUTCOME_NO_TOOL if step.own else OUTCOME_ANSWER)


def settle(step: Step, action: Action, policy: Confidence) -> Action:
    """The model's call as it is made: without the optional arguments it guessed
    (``grounding.optional_guesses``: a value nobody said, or another argument's text), so a guess
    at what the tool can do without neither reaches the tool nor turns the call into a question
    back; and a free-text value that repeats one phrase over and over said once
    (``grounding.said_once``), unless the dialog says it so, and a list that repeats a member as
    the list the question says (``grounding.said_list``).  The guesses stay with the argument check off
    (``--no-argument-check``: the model's values are taken as they are)."""
    chosen = step.tool(action.name)
    if chosen is None:
        return action
    values = dict(action.arguments)
    heard = [step.question, *(result for _, result in step.results)]
    for argument in chosen.arguments:
        value = values.get(argument.name)
        if getattr(argument, "free_text", None) and isinstance(value, str) and (once := said_once(value)) != value \
                and not any(value.lower() in text.lower() for text in heard):   # not as the dialog said it
            logger.debug("The free text %s of %s said once (the model repeated it)", argument.name, action.name)
            values[argument.name] = once
        if isinstance(value, list) and (whole := said_list(value, step.said.lists)) is not None:
            logger.debug("The list %s of %s as the question says it (the model repeated a member)",
                         argument.name, action.name)
            values[argument.name] = whole
    if policy.check_arguments:
        guessed = optional_guesses(values, chosen.arguments, heard)
        if guessed:
            logger.debug("Optional arguments of %s left out as guesses: %s", action.name, ", ".join(guessed))
            values = {k: v for k, v in values.items() if k not in guessed}
    return action if values == action.arguments else Action(action.thought, action.name, values)


def named_over(step: Step, chosen: Tool, first: str, policy: Confidence) -> bool:
    """Whether the model's choice ``chosen`` stands against the ranker's ``first`` tool, which
    leads it: the question names one of ``chosen``'s arguments with a value beside it
    (``grounding.named_arguments``: "add them to my hardware list" names an ``add-to-list``'s list)
    and none of ``first``'s, and ``chosen`` is near the question.  The encoder had put a lights
    switch first for "Remember to buy batteries: add them to my hardware list" (0.42 against
    add-to-list's 0.32), over the model's right call."""
    other = step.tool(first)
    near = policy.calibrated(embedding.calibration()).near
    return (other is not None and near is not None and step.meaning.get(chosen.name, -1.0) >= near
            and bool(named_arguments(chosen.arguments, step.said, other.arguments))
            and not named_arguments(other.arguments, step.said, chosen.arguments))


def named_instead(step: Step, chosen: Tool, scores: Mapping[str, float] | None, policy: Confidence) -> str | None:
    """The tool to call instead of the model's choice ``chosen`` when the ranker cannot tell them
    apart: the one tool, near the question and within ``lead`` of the ranker's first, whose
    argument the question names with a value beside it (``grounding.named_arguments``) where it
    names none of ``chosen``'s, and which the model itself found likelier.  Over 42 tools the 135M
    model wrote ``call-contact {"name": "call the plumber"}`` for "Add 'call the plumber' to my
    todo list" (call-contact 0.331, add-to-list 0.322), its own scores favouring add-to-list."""
    if not scores or named_arguments(chosen.arguments, step.said):
        return None
    calibrated = policy.calibrated(embedding.calibration())
    if not step.meaning or not calibrated.lead or calibrated.lead <= 0 or calibrated.near is None:
        return None   # the ranker's part off (``--ranker-lead 0``): the model's share alone decides
    floor = max(calibrated.near, max(step.meaning.values()) - calibrated.lead)
    rivals = [t.name for t in step.tools if t.name != chosen.name and step.meaning.get(t.name, -1.0) >= floor
              and scores.get(t.name, 0.0) > scores.get(chosen.name, 0.0) and named_arguments(t.arguments, step.said)]
    return rivals[0] if len(rivals) == 1 else None


def judge_call(step: Step, action: Action, scores: Mapping[str, float] | None, policy: Confidence,
               usable: Callable[[str], bool] = lambda name: True) -> Abstain | Switch | None:
    """None when the call is made, a :class:`~.decisions.Switch` when the ranker's tool is
    called instead, else how the dialog ends (``decisions.judge``: the model's scores and the
    ranker's similarities; ``grounding``: values nobody said; :func:`unasked`: a tool that acts,
    for a question that asks for no action).  An ask-back never offers a tool that cannot be
    used now (``usable``)."""
    verdict = _judge_call(step, action, scores, policy, usable)
    name = verdict.tool if isinstance(verdict, Switch) else action.name if verdict is None else None
    if name is not None and policy.check_arguments and intent.asks_how_or_why_in_general(step.question):
        logger.debug("The question asks how or why, in general: the model answers it, not %s", name)
        return Abstain(OUTCOME_NO_TOOL, (), verdict.share if isinstance(verdict, Switch) else 1.0)
    if verdict is None and (other := named_elsewhere(step, action, policy)) is not None and usable(other):
        logger.debug("%s would be called with no value, and %s takes what the question names", action.name, other)
        return Abstain(OUTCOME_ASKED, (action.name, other), 1.0)
    if verdict is None and unconfirmed(step, action, policy):
        near = policy.calibrated(embedding.calibration()).near
        logger.debug("%s would be called with no value the question gives, and is not near enough to be "
                     "plainly what it asks (%.2f)", action.name, step.meaning.get(action.name, -1.0))
        if near is not None and step.meaning.get(action.name, -1.0) >= near and usable(action.name):
            return Abstain(OUTCOME_ASKED, (action.name,), 1.0)
        return Abstain(OUTCOME_NO_TOOL, (), 1.0)
    if name is not None and policy.check_arguments and unasked(step, name):
        logger.debug("%s acts, and the question asks for no action: asked back", name)
        share = verdict.share if isinstance(verdict, Switch) else 1.0
        offered = tuple(n for n in (name, *_readers_near(step, policy)) if usable(n))[:max(1, policy.candidates)]
        return Abstain(OUTCOME_ASKED, offered, share) if offered else Abstain(OUTCOME_NO_TOOL, (), share)
    return verdict


def unconfirmed(step: Step, action: Action, policy: Confidence) -> bool:
    """Whether the call ``action`` carries no value at all (its tool takes none, or only optional ones
    the question gives none of) and its tool is under the embedding model's ``alone`` similarity to
    the question.  The argument check confirms a call by the values the dialog says; with none, only
    the ranker can, and a weak lead is no confirmation: "thanks, that's all for now!" was nearest
    now-playing (0.32, 0.1 ahead) and "What's a typical mortgage interest rate these days?" the bank
    balance (0.44), both called (bench/notes.md, twenty-second session).  Off with the argument
    check, without the embedding model, or with the ranker's part off (``lead`` 0)."""
    if not policy.check_arguments or any(_valued(v) for v in action.arguments.values()):
        return False
    calibration = embedding.calibration()
    if calibration is None or not calibration.alone or action.name not in step.meaning:
        return False
    lead = policy.calibrated(calibration).lead
    return bool(lead and lead > 0) and step.meaning[action.name] < calibration.alone


def named_elsewhere(step: Step, action: Action, policy: Confidence) -> str | None:
    """The tool, near the question as the call's (within :data:`COVERAGE_LEADS` of its ``lead``),
    that takes as a required argument a name the question writes (:func:`grounding.names_in`), when
    the call ``action`` carries no value at all and the question is one request: the call would
    leave what the question names unasked.  "does the library have anything by Matt Haig?" had
    listed the loans (0.57, no arguments), the library search (0.51) taking the author.  None
    otherwise, and with the argument check off or without the embedding model."""
    calibration = embedding.calibration()
    if not policy.check_arguments or calibration is None or any(_valued(v) for v in action.arguments.values()) \
            or action.name not in step.meaning or len(intent.requests_of(step.question)) > 1:
        return None
    names = set(names_in(step.said))
    if not names:
        return None
    mine = step.meaning[action.name]
    for tool in step.tools:
        near = step.meaning.get(tool.name)
        if tool.name == action.name or near is None or near < calibration.unrelated \
                or mine - near >= COVERAGE_LEADS * calibration.lead:
            continue
        properties = grounded(tool.schema, tool.arguments, step.said,
                              own_words(tool.name, tool.description or "")).get("properties") or {}
        if any(names & set((properties.get(name) or {}).get("enum") or ()) for name in tool.schema.get("required") or ()):
            return tool.name
    return None


def _valued(value: Any) -> bool:
    """Whether an argument's value says anything (a flag left false says nothing either)."""
    return value is not None and value is not False and value not in ("", [], {})


def _readers_near(step: Step, policy: Confidence) -> list[str]:
    """The tools near the question (at least the ranker's ``near``) that do not act, nearest
    first: what a question that asks to know may be about when the tool first for it acts
    ("What's my dentist's phone number?" is nearest a tool that phones, then one that looks a
    number up: both are offered)."""
    near = policy.calibrated(embedding.calibration()).near
    if near is None:
        return []
    return [t.name for t in sorted(step.tools, key=lambda t: -step.meaning.get(t.name, -1.0))
            if step.meaning.get(t.name, -1.0) >= near and not intent.acts(t)]


def _related(step: Step, name: str, policy: Confidence) -> list[str]:
    """The ranker's next tools after ``name`` that the question is about (at least the embedding
    model's ``unrelated``), nearest first, as many as an ask-back names beside it: what an
    ask-back for a call with no choice scores offers after it (the ranker's local-time, taken for
    "is LH 400 delayed", its city unsaid, had been offered alone, flight-status third)."""
    calibration = embedding.calibration()
    if calibration is None:
        return []
    near = sorted((t for t in step.tools if t.name != name), key=lambda t: -step.meaning.get(t.name, -1.0))
    return [t.name for t in near if step.meaning.get(t.name, -1.0) >= calibration.unrelated][:max(0, policy.candidates - 1)]


def unasked(step: Step, name: str) -> bool:
    """Whether tool ``name`` acts on the world (``intent.acts``: it orders, books, sends, sets...)
    and the question asks for no action (``intent.asks_for_action``): "Is coffee bad for your
    heart?" had ordered a coffee called "bad", "Why are taxis yellow in New York?" booked a taxi."""
    tool = step.tool(name)
    return tool is not None and intent.acts(tool) and not intent.asks_for_action(step.question)


def _judge_call(step: Step, action: Action, scores: Mapping[str, float] | None, policy: Confidence,
                usable: Callable[[str], bool]) -> Abstain | Switch | None:
    chosen = step.tool(action.name)
    heard = [step.question, *(result for _, result in step.results)]
    unsaid = unsaid_arguments(action.arguments, chosen.arguments if chosen else (), heard) \
        if policy.check_arguments else []
    abstain = judge(action.name, scores, [t.name for t in step.tools], policy, unsaid, step.meaning)
    if isinstance(abstain, Abstain) and abstain.unsaid and abstain.tool == action.name \
            and (first := plainly_asked(step, policy, usable)) not in (None, action.name):
        # A call that cannot be made as the model wrote it (values nobody said), another tool
        # plainly what the question asks: that tool, its arguments asked for and checked in turn.
        # The 135M model was sure of local-time in "Berlin" for "How do you say 'apple' in
        # German?", translate-word first by far.
        logger.debug("The ranker's clear first %s taken for the model's %s, whose %s nobody said", first,
                     action.name, ", ".join(abstain.unsaid))
        return Switch(first, abstain.share)
    if isinstance(abstain, Switch) and chosen is not None and named_over(step, chosen, abstain.tool, policy):
        logger.debug("The model's %s kept over the ranker's %s: the question names its %s", action.name,
                     abstain.tool, ", ".join(named_arguments(chosen.arguments, step.said)))
        abstain = Abstain(OUTCOME_ASKED, (action.name, abstain.tool), abstain.share, tool=action.name,
                          unsaid=tuple(unsaid)) if unsaid else None
    if chosen is not None and (abstain is None or isinstance(abstain, Abstain) and abstain.outcome == OUTCOME_ASKED) \
            and (instead := named_instead(step, chosen, scores, policy)) is not None and usable(instead):
        logger.debug("%s called instead of the model's %s: the question names its %s", instead, action.name,
                     ", ".join(named_arguments(step.tool(instead).arguments, step.said)))
        total = sum(scores.get(t.name, 0.0) for t in step.tools) if scores else 0.0
        return Switch(instead, scores.get(action.name, 0.0) / total if total else 0.0)
    if not isinstance(abstain, Abstain) or not abstain.candidates:
        return abstain
    if not scores and abstain.unsaid and abstain.candidates == (action.name,):
        abstain = Abstain(abstain.outcome, (action.name, *_related(step, action.name, policy)), abstain.share,
                          abstain.tool, abstain.unsaid)
    offered = tuple(name for name in abstain.candidates if usable(name))
    return Abstain(abstain.outcome, offered, abstain.share, abstain.tool, abstain.unsaid) if offered else \
        Abstain(OUTCOME_NO_TOOL, (), abstain.share)


# -- 5. approve -------------------------------------------------------------------------------


def needs_approval(step: Step, action: Action) -> str | None:
    """Why the call ``action`` waits for a person's approval before it is made
    (``tool-policy/approval``: the tool is named, or it says it is destructive), or None.  A tool
    the step does not have is never asked about: the call fails as any call of an unknown tool."""
    tool = step.tool(action.name)
    return None if tool is None else step.approval.reason(tool.name, tool.annotations)


def refused_before(step: Step, action: Action, arguments: Mapping[str, str]) -> bool:
    """Whether the user refused this very call (the tool, ``arguments`` as text) earlier in the
    dialog: it is not asked about again (``--refuse`` would otherwise meet it at every step)."""
    return any(h.action == action.name and dict(h.arguments or {}) == dict(arguments)
               and step.failures.get(i) == FAILURE_REFUSED for i, h in enumerate(step.history))


# -- 7. record --------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoResult:
    """The dialog ends with the model's own answer, marked: its tool calls gave nothing."""

    why: str


def after_call(step: Step, action: Action, arguments: Mapping[str, str], call: ToolCall) -> Failed | NoResult | None:
    """Whether a failed call ends the dialog, and how; None when it goes on.

    A tool that cannot be used now (its service is not running, it went
    mid-call twice) ends it as ``tool-unavailable``, naming the tool and
    why: the model calling it again or guessing instead helps nobody.  The
    same failing call made again (the model will not fix it) ends it with
    the model's own answer, marked as such (``no-tool``).
    """
    if call.failure is None:
        return None
    history = step.history
    repeated = any(h.action == action.name and dict(h.arguments or {}) == dict(arguments) and i in step.failures
                   for i, h in enumerate(history))
    lost_before = any(h.action == action.name and step.failures.get(i) == FAILURE_LOST for i, h in enumerate(history))
    if call.failure == FAILURE_UNAVAILABLE or (call.failure == FAILURE_LOST and (repeated or lost_before)):
        why = call.reason.removeprefix(f"tool '{action.name}' cannot be used now: ")
        return Failed(f"Tool '{action.name}' cannot be used now: {why}", outcome=OUTCOME_UNAVAILABLE)
    if repeated:
        return NoResult(f"the same call of tool '{action.name}' failed twice: {call.reason}")
    return None
