"""Structured decisions: the model's next step as one JSON object, constrained by a schema.

A small model asked for ReAct text often names a tool that does not exist or
fills its arguments wrongly.  Asked instead for one JSON object, with its
output constrained by a JSON Schema (llama.cpp's grammar, a server's
structured output), it can only name a real tool and fill that tool's
arguments in their declared types.  The agent builds the schema per request
from the tools available to it (:func:`decision_schema`: one alternative per
tool, its name and its argument schema from the catalog, and one for the
final answer) and sends it with the prompt request as the message property
``decision-schema`` (our extension, defined in ``trustgraph.base.decision_schema``:
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
from collections.abc import Sequence
from typing import Any

from trustgraph.base import limits
from trustgraph.base.decision_schema import FINAL_ACTION, PROPERTY
from trustgraph.base.decision_schema import decision_schema as shared_schema
from trustgraph.base.text import strip_fences

from .types import Action, Final, ReactParseError

FORMAT_HINT = ('Reply with one JSON object: {"action": "<tool name>", "args": {<its arguments>}} to use '
               f'a tool, or {{"action": "{FINAL_ACTION}", "answer": "<your answer>"}}.')


def decision_schema(tools: Sequence[Any]) -> dict[str, Any]:
    """The JSON Schema of the next step: a call of one of ``tools`` (catalog tools, each with
    its own argument schema), or the final answer (``trustgraph.base.decision_schema``)."""
    return shared_schema((t.name, t.schema) for t in tools)


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


def answer_problem(answer: str, question: str, tool_names: Sequence[str]) -> str | None:
    """Why ``answer`` is not a real final answer, or None when it is one.

    Each case is a mistake of the model, fed back to it as an observation,
    never an answer a user gets with success: nothing at all; the question
    said back; an announcement of a tool call instead of the call.
    """
    text = answer.strip()
    if not text:
        return "the final answer is empty: give the answer itself"
    if _restates(_words(text), _words(question)):
        return ("the final answer only restates the question: answer it, using a tool if one fits, "
                "or say what you do not know")
    if _ANNOUNCES.match(text) and any(name.lower() in text.lower() for name in tool_names):
        return ("the final answer announces a tool call instead of making it: call the tool with an "
                "action and its args, then answer from its result")
    return None


# Words that say nothing about which tool fits.
_COMMON = frozenset("""a about an and are as at be by can do for from give given how i in is it me my of on
or please tell that the this to what when where which who with you your""".split())


def _content_words(text: str) -> set[str]:
    return {w for w in _words(text.replace("-", " ").replace("_", " ")) if w not in _COMMON}


def by_relevance(question: str, tools: Sequence[Any]) -> list[Any]:
    """``tools`` with those sharing most words with ``question`` first (ties: the more specific tool).

    Measured with the embedded 135M model (make bench, agent quality):
    between similar tools it mostly picks the one listed first, so two
    joke tools were told apart about half the time in config order and
    every time in this order.  A stable sort: tools that share no word
    with the question keep their order, after the others.
    """
    asked = _content_words(question)

    def key(tool: Any) -> tuple[int, int]:
        text = " ".join([tool.name, tool.description or "",
                         *(f"{a.name} {a.description or ''}" for a in tool.arguments)])
        shared = len(asked & _content_words(text))
        return (-shared, len(_content_words(f"{tool.name} {tool.description or ''}")) if shared else 0)

    return sorted(tools, key=key)


class AnswerGate:
    """Holds a streamed answer back only until it is clearly not one :func:`answer_problem` refuses.

    A refused answer must never reach the user, yet a real one should
    stream: the text is released once it has a word the question lacks and
    no longer can start an announcement; from then on chunks pass at once.
    An answer that never gets there is judged whole, at the end.
    """

    def __init__(self, question: str) -> None:
        self._asked = _words(question)
        self._held = ""
        self.released = False

    def feed(self, chunk: str) -> str:
        """What may be sent now of the answer so far."""
        if self.released:
            return chunk
        self._held += chunk
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
