"""Structured decisions: the model's next step as one JSON object, constrained by a schema.

A small model asked for ReAct text often names a tool that does not exist or
fills its arguments wrongly.  Asked instead for one JSON object, with its
output constrained by a JSON Schema (llama.cpp's grammar, a server's
structured output), it can only name a real tool and fill that tool's
arguments in their declared types.  The agent builds the schema per request
from the tools available to it (:func:`decision_schema`: one alternative per
tool, its name and its argument schema from the catalog, and one for the
final answer) and sends it with the prompt request as the message property
``decision-schema`` (our extension, defined in ``trustgraph.base.formats.decision_schema``:
upstream's prompt service ignores it).
A template that asks for a structured decision (``"decision"`` in its
config, see prompt-template) passes the schema on to the LLM service; one
that does not gets ReAct text back, which the agent still reads.

The decision::

    {"action": "<tool name>", "args": {...}}
    {"action": "final-answer", "answer": "..."}

Also here: whether a final answer is a real one (:func:`answer_problem`),
for both formats: a dialog must not end "successfully" with a thought, an
empty answer, or the question said back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from trustgraph.base.formats.decision_schema import FINAL_ACTION, PROPERTY
from trustgraph.base.formats.decision_schema import decision_schema as shared_schema
from trustgraph.base.formats.text import strip_fences
from trustgraph.base.safety import limits
from trustgraph.catalog.embedding import WORDLLAMA_CALIBRATION, Calibration, calibration
from trustgraph.schema.services.agent import OUTCOME_ASKED, OUTCOME_NO_TOOL

__all__ = ["FORMAT_HINT", "NO_TOOL_PREFIX", "SCHEMA_PROPERTY", "Abstain", "AnswerGate", "Confidence",
           "Switch", "answer_problem", "ask_back", "clear_first", "decision_schema", "from_result", "judge",
           "parse_decision"]

from .grounding import Said, grounded, own_words
from .vocabulary import Action, Final, ReactParseError

FORMAT_HINT = ('Reply with one JSON object: {"action": "<tool name>", "args": {<its arguments>}} to use '
               f'a tool, or {{"action": "{FINAL_ACTION}", "answer": "<your answer>"}}.')


def decision_schema(tools: Sequence[Any], said: Said | None = None) -> dict[str, Any]:
    """The JSON Schema of the next step: a call of one of ``tools`` (catalog tools, each with
    its own argument schema), or the final answer (``trustgraph.base.formats.decision_schema``).
    With ``said``, each tool's arguments take only values the dialog holds (``grounding``)."""
    return shared_schema((t.name, t.schema if said is None else
                          grounded(t.schema, t.arguments, said, own_words(t.name, t.description or "")))
                         for t in tools)


def parse_decision(text: str) -> Action | Final | None:
    """The decision in ``text``; None when it is not a JSON decision (then it is ReAct text).

    A JSON object that is not a decision raises :class:`ReactParseError`
    saying what is wrong, so the model can correct itself.
    """
    body = strip_fences(text, first_block=True)
    if not body.startswith("{"):
        return None
    try:
        value, _ = limits.raw_decode(body, strict=False)
    except ValueError as e:
        raise ReactParseError(f"the reply is not valid JSON ({e}). {FORMAT_HINT}") from None
    if not isinstance(value, dict):
        return None
    action = value.get("action")
    thought = value.get("thought") if isinstance(value.get("thought"), str) else ""
    if action == FINAL_ACTION:
        answer = value.get("answer")
        if not isinstance(answer, str):
            raise ReactParseError(f"a final answer needs \"answer\" (a string). {FORMAT_HINT}", thought)
        return Final(thought, answer.strip())
    if not isinstance(action, str) or not action.strip():
        raise ReactParseError(f"the reply names no \"action\". {FORMAT_HINT}", thought)
    args = value.get("args", {})
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ReactParseError(f"\"args\" must be a JSON object. {FORMAT_HINT}", thought)
    return Action(thought, action.strip(), args)


_WORD = re.compile(r"\w+")
# How an announced call starts ("I will use the weather tool to ..."): a thought
# given as the answer, the failure measured with the 135M model.
_ANNOUNCES = re.compile(r"\s*(?:(?:ok|okay|sure|so|first)\W+)?(?:i will|i'll|i am going to|i'm going to|let me|"
                        r"i need to|i should|i can) (?:use|call|try|run|ask)\b", re.IGNORECASE)
# Longer than any start _ANNOUNCES matches, so a text this long that does not
# start with one never will.
_ANNOUNCE_SPAN = 40


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _restates(words: set[str], asked: set[str]) -> bool:
    # Only the question's own words, and most of them: said back, not answered
    # (a one-word answer taken from the question, "Paris", is an answer).
    return bool(words) and words <= asked and len(words) >= max(3, len(asked) * 2 // 3)


def _normal(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def from_result(answer: str, observations: Sequence[str]) -> int | None:
    """The index of the tool result ``answer`` is (or is taken from), or None.

    A tool that echoes or reformats its input (``Shout 'fire drill'`` ->
    ``FIRE DRILL``) gives a result made of the question's own words; an
    answer that is that result is a real answer, not the question said back.
    """
    said = _normal(answer)
    if not said:
        return None
    for i in range(len(observations) - 1, -1, -1):
        seen = _normal(observations[i])
        if seen and (said in seen or seen in said):
            return i
    return None


def answer_problem(answer: str, question: str, tool_names: Sequence[str],
                   results: Sequence[str] = ()) -> str | None:
    """Why ``answer`` is not a real final answer, or None when it is one.

    Each case is a mistake of the model, fed back to it as an observation,
    never an answer a user gets with success: nothing at all; the question
    said back (unless the answer is one of the tools' ``results``); an
    announcement of a tool call instead of the call.
    """
    text = answer.strip()
    if not text:
        return "the final answer is empty: give the answer itself"
    if _restates(_words(text), _words(question)) and from_result(text, results) is None:
        return ("the final answer only restates the question: answer it, using a tool if one fits, "
                "or say what you do not know")
    if _ANNOUNCES.match(text) and any(name.lower() in text.lower() for name in tool_names):
        return ("the final answer announces a tool call instead of making it: call the tool with an "
                "action and its args, then answer from its result")
    return None


class AnswerGate:
    """Holds a streamed answer back only until it is clearly not one :func:`answer_problem` refuses.

    A refused answer must never reach the user, yet a real one should
    stream: the text is released once it has a word the question lacks and
    no longer can start an announcement; from then on chunks pass at once.
    An answer that never gets there is judged whole, at the end.  ``hold``:
    nothing is released before the end (the answer may yet give way to a
    tool call: ``clear_first``).
    """

    def __init__(self, question: str, hold: bool = False) -> None:
        self._asked = _words(question)
        self._held = ""
        self._hold = hold
        self.released = False

    def feed(self, chunk: str) -> str:
        """What may be sent now of the answer so far."""
        if self.released:
            return chunk
        self._held += chunk
        if self._hold:
            return ""
        text = self._held.lstrip()
        if len(text) < _ANNOUNCE_SPAN or _ANNOUNCES.match(text) or _words(text) <= self._asked:
            return ""
        self.released = True
        out, self._held = self._held, ""
        return out

    def finish(self) -> str:
        """The rest, once the whole answer has been accepted."""
        out, self._held = self._held, ""
        return out


#: The prompt request's property carrying the schema of the next step.
SCHEMA_PROPERTY = PROPERTY


# -- how sure the model was ---------------------------------------------------------------


#: ``Confidence.tie``'s default (agent flag ``--tie-ratio``).
TIE_DEFAULT = 0.8


@dataclass(frozen=True)
class Confidence:
    """When the agent takes the model's choice of tool, and what it does otherwise.

    The LLM service scores every offered action (``choice-scores``: each
    tool's whole name as the model saw it, before the grammar made it pick
    one).  The chosen tool's share of the tools' total is its confidence:
    at ``accept`` or more the call is made; below, the dialog ends honestly,
    asking back with the tools whose share is at least ``offer`` (at most
    ``candidates``, most likely first), or, when even the likeliest tool is
    below ``no_tool`` and the model gave its own answer ``no_tool_ratio``
    times the tools' probability, saying that no tool fits.  ``accept`` 0 takes every choice (as before).
    A call whose argument values the dialog never said asks back too
    (``check_arguments``, see ``grounding``).  Measured on the agent-quality
    bench (BENCHMARKS.md); agent flags ``--min-confidence``, ``--tie-ratio``
    and ``--no-argument-check``.
    """

    # Set 1 of the agent-quality bench, embedded 135M model, with the argument check on: 0.5 made
    # 8 right calls and no wrong one in 30, 0.2 made 11 right and 2 wrong, 0 made 12 and 4
    # (bench/notes.md); 0.2 is the most right calls that keeps wrong ones under 10%.
    accept: float = 0.2
    offer: float = 0.1
    candidates: int = 3
    # "No tool fits" only when the model hardly considered any tool: a small model would
    # rather answer itself almost always (most of its probability goes to the answer even for
    # questions a tool fits), so that alone says nothing.
    no_tool: float = 0.001
    no_tool_ratio: float = 20.0
    # A toss-up: when the chosen tool is the likeliest and the next one has at least ``tie``
    # times its probability, no tool is clearly the best (the 135M model calls ``count-words``
    # for a currency question with ``weather`` a few percent behind); 0 turns this off.  On
    # both bench sets' first decisions (54 with scores), 0.8 cut the wrong calls from 5 to 1
    # and the right ones from 21 to 18 (bench/notes.md).
    tie: float = TIE_DEFAULT
    # A call whose argument values the dialog never said is a guess too (``grounding``).
    check_arguments: bool = True
    # With the ranker (``judge``'s ``meaning``): the model's choice stands when its share is at
    # least ``sure``; otherwise the ranker's first tool is taken when it leads the second by at
    # least ``lead`` in cosine similarity (or the model chose it too), and the dialog asks back
    # when neither is clear.  Replayed on the embedded model's first decisions of the three
    # bench sets (108, argument check aside, bench/notes.md): the model's share alone made 26
    # right calls and 36 wrong; this rule 59 right and 12 wrong; ``lead`` 0.1, 50 and 7.
    # ``lead`` 0 turns the ranker's part off (the model's share alone).
    sure: float = 0.7
    # The ranker's cosine similarities are read on its model's own scale: each embedding model
    # comes with a ``Calibration`` (``catalog.embedding``); these three, when set (flags), take
    # its place.  ``lead``: how much nearer the ranker's first tool must be than its second (0
    # turns the ranker's part off: the model's share alone).  ``no_tool_meaning``: "no tool
    # fits" when even the nearest tool is under it and the model would rather answer itself
    # (its answer likelier than all the tools together).  ``near``: a tool this near the
    # question is never "no tool fits" because the model hardly considered it (the 135M model
    # gives "Make me laugh about databases" almost all its probability to answering itself), and
    # a model's unsure choice of the ranker's first tool, not leading, is a toss-up under it.
    lead: float | None = None
    no_tool_meaning: float | None = None
    near: float | None = None
    # A tool this far from the question (under it) is not what it asks, however sure the model:
    # taken over by the ranker's first when that clearly leads.
    far: float | None = None
    # The ranker's first tool at least this near, leading by ``lead``, is called when the model
    # would answer the question alone (``clear_first``).
    clear: float | None = None

    def calibrated(self, calibration: Calibration | None) -> Confidence:
        """These settings with the ranker's three filled from ``calibration`` where not set (similarities
        of no known model are read on the static model's scale)."""
        if None not in (self.lead, self.no_tool_meaning, self.near, self.far, self.clear):
            return self
        calibration = calibration or WORDLLAMA_CALIBRATION
        return replace(self,
                       lead=calibration.lead if self.lead is None else self.lead,
                       no_tool_meaning=calibration.unrelated if self.no_tool_meaning is None else self.no_tool_meaning,
                       near=calibration.near if self.near is None else self.near,
                       far=calibration.far if self.far is None else self.far,
                       clear=calibration.clear if self.clear is None else self.clear)


@dataclass(frozen=True)
class Abstain:
    """The model's choice is a guess: end the dialog asking back, or with the model's own answer."""

    outcome: str                       # OUTCOME_ASKED or OUTCOME_NO_TOOL
    candidates: tuple[str, ...]
    share: float                       # the chosen tool's share (1.0 when nothing scored it)
    tool: str = ""                     # the chosen tool, when its arguments were not said
    unsaid: tuple[str, ...] = ()       # which of its arguments the dialog never said


def _shares(scores: Mapping[str, float] | None, tool_names: Sequence[str]) -> tuple[dict[str, float], float] | None:
    if scores is None or len(tool_names) < 2:
        return None
    raw = {name: max(0.0, float(scores.get(name, 0.0))) for name in tool_names}
    return raw, sum(raw.values())


@dataclass(frozen=True)
class Switch:
    """Call ``tool`` instead of the model's choice: the ranker is clear and the model was not."""

    tool: str
    share: float          # the model's share of its own choice


def judge(chosen: str, scores: Mapping[str, float] | None, tool_names: Sequence[str],
          policy: Confidence, unsaid: Sequence[str] = (),
          meaning: Mapping[str, float] | None = None) -> Abstain | Switch | None:
    """None when the model's choice of ``chosen`` is taken, a :class:`Switch` when the ranker's
    tool is taken instead, else how the dialog ends.

    Without scores (an LLM service that cannot tell, or an upstream one) or
    with a single tool, the choice is the model's: there is nothing to weigh
    it by (a service that cannot report scores may serve a model far better
    than the ranker).  ``unsaid``: the call's arguments whose value the dialog
    never said (``grounding.unsaid_arguments``); with
    ``policy.check_arguments`` such a call is a guess however sure the model
    was of the tool.  ``meaning``: each tool's similarity to the question (the
    ranker's, ``catalog.ranking``): with it and the scores, the model's
    choice stands when it is sure, the ranker's first tool is taken when it
    clearly leads, and otherwise the dialog asks back.
    """
    if chosen not in tool_names:
        return None
    if meaning is not None:
        policy = policy.calibrated(calibration())
    weighed = _shares(scores, tool_names)
    ranked: list[str] = [chosen]
    share: dict[str, float] = {chosen: 1.0}
    if weighed is not None:
        raw, total = weighed
        if total <= 0:
            return Abstain(OUTCOME_NO_TOOL, (), 0.0) if policy.accept > 0 else None
        share = {name: p / total for name, p in raw.items()}
        ranked = sorted(tool_names, key=lambda name: -share[name])
        if policy.accept > 0:
            if (ending := _no_tool(raw, total, scores or {}, meaning, tool_names, policy, share[chosen])) is not None:
                return ending
            if meaning is not None and policy.lead > 0 and all(n in meaning for n in tool_names):
                verdict = _with_ranker(chosen, share, meaning, tool_names, policy)
                if verdict is not None:
                    return verdict
            elif (ending := _by_share(chosen, share, ranked, tool_names, policy)) is not None:
                return ending
    if unsaid and policy.check_arguments:
        # The tool whose arguments were not said is offered first: the ask-back names it ("the
        # likeliest tool, `play-music`, needs its artist"), then asks whether it was meant.
        offered = tuple(dict.fromkeys([chosen, *_offered(ranked, share, policy)]))[:max(1, policy.candidates)] \
            if weighed else (chosen,)
        return Abstain(OUTCOME_ASKED, offered, share[chosen], tool=chosen, unsaid=tuple(unsaid))
    return None


def clear_first(meaning: Mapping[str, float], tool_names: Sequence[str], policy: Confidence,
                lone: bool = False) -> str | None:
    """The ranker's first tool when the question plainly asks for it: at least ``clear`` near and
    nearer than the second by ``lead``; None otherwise (with the ranker's part off, ``lead`` 0).
    A single tool leads nothing: None, unless ``lone`` says what is left is one tool (the requests
    of a question the others have served, :func:`steps.next_request`), which is then the first
    when it is ``clear`` near.

    A small model would answer most questions itself (the 135M model gave its own answer to
    "How many grams are there in 8 ounces?" with convert-units first); a question that clearly
    fits a tool gets that tool's answer.  On the ranker's question sets this rule picked the right
    tool for 83 of 132 fitting questions, a wrong one for 3, and none of the 13 that no tool fits
    (bench/notes.md, "The ranker's clear first tool")."""
    if not tool_names or (len(tool_names) < 2 and not lone) or any(name not in meaning for name in tool_names):
        return None   # a lone tool leads nothing: the model's choice, as in ``judge``
    policy = policy.calibrated(calibration())
    if not policy.lead or policy.lead <= 0 or policy.clear is None:
        return None
    near = sorted(tool_names, key=lambda n: -meaning[n])
    first = near[0]
    lead = meaning[first] - meaning[near[1]] if len(near) > 1 else policy.lead
    return first if meaning[first] >= policy.clear and lead >= policy.lead else None


def _no_tool(raw: Mapping[str, float], total: float, scores: Mapping[str, float],
             meaning: Mapping[str, float] | None, tool_names: Sequence[str], policy: Confidence,
             chosen_share: float) -> Abstain | None:
    """"No tool fits": the model hardly considered any tool (unless the ranker sees one near), or
    no tool is near the question and the model would rather answer itself, or every tool is
    ``far`` from it, however sure the model (the 135M model was sure of the weather, then of a
    joke, for "Who wrote Hamlet?", every tool under 0.06; no question of the ranker's sets, fitting
    or not, had its nearest tool under 0.1)."""
    answer = scores.get(FINAL_ACTION, 0.0)
    nearest = max(meaning.get(n, -1.0) for n in tool_names) if meaning else None
    if nearest is not None and policy.far is not None and nearest < policy.far:
        return Abstain(OUTCOME_NO_TOOL, (), chosen_share)
    if max(raw.values()) < policy.no_tool and answer > policy.no_tool_ratio * total \
            and (nearest is None or nearest < policy.near):
        return Abstain(OUTCOME_NO_TOOL, (), chosen_share)
    if nearest is not None and nearest < policy.no_tool_meaning and answer > total:
        return Abstain(OUTCOME_NO_TOOL, (), chosen_share)
    return None


#: An ask-back names, beside the ranker's first tool (and the model's choice), the tools less than
#: this many ``lead`` behind it: those the ranker could not tell from it.  A tool further behind is
#: not what the question is unsure between ("Got anything funny about giraffes?" had offered
#: translate-word, 0.14, beside the two joke tools at 0.34 and 0.33).
OFFERED_LEADS = 2.0


def _with_ranker(chosen: str, share: Mapping[str, float], meaning: Mapping[str, float],
                 tool_names: Sequence[str], policy: Confidence) -> Abstain | Switch | None:
    """The model's sure choice, or the ranker's clear first tool, or the model's choice of the
    ranker's first tool when that is near the question or leads, or the model's choice where the
    ranker cannot tell it from its first (within ``lead``), the model can (the first has less
    than ``tie`` times its probability: "How many terms are in the phrase '...'?" put define-word
    0.036 ahead of count-words, which the model preferred 1.6 to 1; replayed on a run's 110 first
    decisions, 2 more right calls and no more wrong ones), and it is ``near`` the question, or
    asking back.

    A sure choice of a tool the question is not about at all (under the model's ``far``
    similarity) while another clearly leads is not sure enough: the 135M model was sure of
    ``weather`` for "How long, in words, is the phrase ...?" (0.0 from the question; count-words
    0.24).  No fitting question of the bench sets had its right tool under 0.16 while another led
    (bench/notes.md).
    """
    near = sorted(tool_names, key=lambda n: -meaning[n])
    first = near[0]
    if share[chosen] >= policy.sure:
        unrelated = meaning[chosen] < policy.far and meaning[first] - meaning[chosen] >= policy.lead
        if unrelated and policy.no_tool_meaning is not None and meaning[first] < policy.no_tool_meaning:
            # Nor is the ranker's first about it: no tool is ("Do I need a visa to visit Canada
            # on a UK passport?": the model sure of expand-acronym for "UK", public-holidays 0.14
            # first, had been called for Canada).
            return Abstain(OUTCOME_NO_TOOL, (), share[chosen])
        return Switch(first, share[chosen]) if unrelated else None
    lead = meaning[first] - meaning[near[1]]
    # What an ask-back offers of the ranker's other tools: those it can hardly tell from its first.
    contenders = [n for n in near[1:] if meaning[first] - meaning[n] < OFFERED_LEADS * policy.lead]
    if chosen == first:
        # The tools are listed to the model in the ranker's order, which a small model mostly
        # follows: its choice of the first says little unless that tool is ``near`` the question
        # or leads.  Neither, it is a toss-up the list's order decided: the 135M model called
        # tell-joke (0.235, the dad joke's tool 0.011 behind) for a dad joke, spell-word (0.29)
        # for "What rhymes with 'orange'?" and local-time (0.2) for "How do you say 'good
        # morning' in Spanish?" (replayed on a run's 110 first decisions: those three wrong
        # calls asked back, one right call lost; bench/notes.md).
        if lead < policy.lead and meaning[first] < policy.near:
            return Abstain(OUTCOME_ASKED, (first, *contenders)[:max(1, policy.candidates)], share[chosen])
        return None
    if lead >= policy.lead:
        return Switch(first, share[chosen])
    if policy.tie > 0 and meaning[first] - meaning[chosen] < policy.lead and \
            share[first] < policy.tie * share[chosen] and (policy.near is None or meaning[chosen] >= policy.near):
        # The ranker cannot tell the two apart and the model clearly prefers its own, which is
        # near the question: the bar the model's choice of the first tool meets too.  Among tools
        # all far from it, the model's preference is no evidence: the 135M model called spell-word
        # (0.23) for "Write me a poem about Lisbon in Portuguese", with translate-word 0.27 first.
        return None
    # The model's choice is offered unless the question is not about it at all (under ``far``: the
    # 135M model chose find-synonyms for "What does the clock read in Buenos Aires?"); the ranker's
    # next tool takes its place.
    own = [chosen] if meaning[chosen] >= policy.far else []
    offered = list(dict.fromkeys([first, *own, *contenders]))[:max(1, policy.candidates)]
    return Abstain(OUTCOME_ASKED, tuple(offered), share[chosen])


def _by_share(chosen: str, share: Mapping[str, float], ranked: Sequence[str], tool_names: Sequence[str],
              policy: Confidence) -> Abstain | None:
    """The model's share alone (no ranker): too low, or a toss-up, asks back."""
    if share[chosen] < policy.accept:
        return Abstain(OUTCOME_ASKED, _offered(ranked, share, policy), share[chosen])
    # A toss-up: the model's likeliest tool, with another close behind it.  (A choice the
    # grammar made of a tool that is not the likeliest is judged by its share alone: on
    # the bench such calls were right as often as not, and a tie rule cost them all.)
    runner_up = max((share[name] for name in tool_names if name != chosen), default=0.0)
    if policy.tie > 0 and policy.tie * share[chosen] <= runner_up <= share[chosen]:
        return Abstain(OUTCOME_ASKED, _offered(ranked, share, policy), share[chosen])
    return None


def _offered(ranked: Sequence[str], share: Mapping[str, float], policy: Confidence) -> tuple[str, ...]:
    offered = [name for name in ranked if share[name] >= policy.offer][:max(1, policy.candidates)]
    return tuple(offered or ranked[:1])


def ask_back(candidates: Sequence[Any], tool: str = "", unsaid: Sequence[str] = ()) -> str:
    """The answer of a dialog that asks which tool was meant (``candidates``: catalog tools;
    ``tool`` and ``unsaid``: the likeliest tool and the arguments the question did not give it)."""
    described = [f"`{t.name}` ({(t.description or '').rstrip('.')})" if t.description else f"`{t.name}`"
                 for t in candidates]
    if len(described) == 1:
        which = f"Did you mean {described[0]}?"
    else:
        which = f"Did you mean {', '.join(described[:-1])} or {described[-1]}?"
    if tool and unsaid:
        chosen = next((t for t in candidates if getattr(t, "name", None) == tool), None)
        needs = " and ".join(_needed(chosen, name) for name in unsaid)
        return (f"I am not sure how to answer: the likeliest tool, `{tool}`, needs {needs}, and your "
                f"question does not say {'it' if len(unsaid) == 1 else 'them'}. {which} "
                "Ask again naming what you need, or in other words.")
    return (f"I am not sure which tool fits your question. {which} "
            "Ask again naming what you need, or in other words.")


def _needed(tool: Any, name: str) -> str:
    """An argument the question did not give, for the user: its name, and its description when that
    says more ("its to (the recipient's email address)", but "its city" for "The city")."""
    argument = next((a for a in getattr(tool, "arguments", None) or () if getattr(a, "name", None) == name), None)
    described = str(getattr(argument, "description", "") or "").strip().rstrip(".")
    if not described or described.lower() in (name.lower(), f"the {name.lower()}"):
        return f"its {name}"
    return f"its {name} ({described[:1].lower()}{described[1:]})"


#: The longest answer of the model's own (a small model goes on repeating itself to any limit).
NO_TOOL_ANSWER_LIMIT = 400

#: How an answer of the model's own starts: no tool fits, or (a dialog whose calls all failed) none
#: answered; then :data:`OWN_ANSWER`.
NO_TOOL_LEAD = "No tool fits this question"
NO_RESULT_LEAD = "No tool answered this question"
OWN_ANSWER = ", so this answer is the model's own, not checked by any tool: "
NO_TOOL_PREFIX = NO_TOOL_LEAD + OWN_ANSWER
NO_RESULT_PREFIX = NO_RESULT_LEAD + OWN_ANSWER


def own_answer_prefix(history: Sequence[Any]) -> str:
    """The mark before a final answer given with no tool result in the dialog (``history``: its steps).

    Such an answer can only come from the model itself, whatever the
    template let it do, so the user is told: it is a no-tool ending, never
    a successful tool answer.
    """
    tried = any(getattr(step, "action", "") for step in history)
    return NO_RESULT_PREFIX if tried else NO_TOOL_PREFIX
