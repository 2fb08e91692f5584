"""The agent-quality table's question sets: what each holds, the checks made when one is loaded, and
the script of the stand-in LLM that knows every right answer.

Three sets, asked on one stack one after the other:

* set 1 (``bench/agent/quality_questions.json``): 30 questions over five tools
  (the bootstrap's two joke tools, ``weather``, ``count-words``,
  ``convert-currency``), many of them using the tools' own words;
* set 2 (``bench/agent/quality_questions_paraphrased.json``): paraphrased
  questions over those five and three more (``define-word``, ``local-time``,
  ``convert-units``), whose services start only after set 1 is done, so set
  1 is asked of five tools as before.  In set 2 no question shares a word or
  a word's stem with its right tool's name, description, argument names and
  argument descriptions (stop words aside).  That rule is what makes the set
  a test of paraphrase, and a set edited until a model passes would quietly
  break it, so it is checked here on every load (:func:`check_paraphrased`)
  and a question that breaks it stops the bench, naming the word;
* set 3 (``bench/agent/quality_questions_set3.json``): paraphrased questions
  under set 2's rule over those eight tools and eight more whose five
  services (``bench/agent/quality_services_set3.py``) start only after set 2
  is done: sixteen tools of twelve services, many of them easy to confuse
  (``forecast`` and ``weather``, ``convert-temperature`` and ``weather`` or
  ``convert-units``, ``sunrise-sunset`` and ``time-difference`` and
  ``local-time``, ``count-letters`` and ``count-words`` or ``spell-word``,
  ``translate-word`` and ``find-synonyms`` and ``define-word``).  It is asked
  in structured mode only (``QuestionSet.modes``).

A question is ``{"question", "tool", ...}``: ``tool`` is the tool that should
come first, or null when no tool fits (then the right ending is to ask back
or to say no tool fits; ``answer`` is what a model that knows would say).
Joke questions carry ``topic`` (a word, or stem, the topic argument must
contain); the others carry ``args``, the values the tool should get.

:func:`scripted_llm` writes the rules file of ``text-completion-scripted``
(``tg-launch --llm scripted --llm-script FILE``): for each question the
decision JSON a right model gives in structured mode (the right tool with the
right arguments, or for a no-tool question a final answer), and, should the
agent ask again after the tool's result, a final answer carrying that result.
Those rows show what the framework does with a model that is never wrong.
"""

from __future__ import annotations

import json
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
AGENT_DIR = BENCH / "agent"
if str(AGENT_DIR) not in sys.path:
    sys.path.insert(0, str(AGENT_DIR))

import quality_services as qs  # noqa: E402
import quality_services_set3 as qs3  # noqa: E402

BOOTSTRAP = REPO / "config-examples" / "bootstrap.json"
JOKE_TOOLS = ("tell-joke", "tell-dad-joke")
#: Tools whose services quality_services.py runs, by the ``--service`` name that starts each.
SERVICE_OF_TOOL = {"weather": "weather", "count-words": "count", "convert-currency": "convert",
                   "define-word": "define", "local-time": "time", "convert-units": "units",
                   "forecast": "sky", "sunrise-sunset": "sky", "convert-temperature": "temperature",
                   "spell-word": "letters", "count-letters": "letters", "translate-word": "lexicon",
                   "find-synonyms": "lexicon", "time-difference": "zones"}
#: The arguments a question of each tool must give (``args``); a joke question gives ``topic``.
NEEDED_ARGS = {"weather": ("city",), "count-words": ("text",), "convert-currency": ("amount", "to"),
               "define-word": ("word",), "local-time": ("city",), "convert-units": ("value", "from", "to"),
               "forecast": ("city",), "sunrise-sunset": ("city",), "convert-temperature": ("value", "from", "to"),
               "spell-word": ("word",), "count-letters": ("word",), "translate-word": ("word", "language"),
               "find-synonyms": ("word",), "time-difference": ("city", "other_city")}
#: The user the bench asks as (the joke service greets it in its result).
USER = "bench"


class QuestionSetError(ValueError):
    """A question set cannot be used as it stands; the message names the file, the question and why."""


@dataclass(frozen=True)
class QuestionSet:
    """One set: its file, the tools it is asked of, and the services that must start for it."""

    label: str
    path: Path
    tools: tuple[str, ...]
    services: tuple[str, ...]    # quality_services.py services started before this set
    paraphrased: bool            # every question shares no word with its right tool
    modes: tuple[str, ...] = ("structured", "text")   # the model's rows (the scripted one: structured)


SET1 = QuestionSet("set 1", AGENT_DIR / "quality_questions.json",
                   ("tell-joke", "tell-dad-joke", "weather", "count-words", "convert-currency"),
                   ("weather", "count", "convert"), paraphrased=False)
SET2 = QuestionSet("set 2", AGENT_DIR / "quality_questions_paraphrased.json",
                   (*SET1.tools, "define-word", "local-time", "convert-units"),
                   ("define", "time", "units"), paraphrased=True)
SET3 = QuestionSet("set 3", AGENT_DIR / "quality_questions_set3.json",
                   (*SET2.tools, "forecast", "sunrise-sunset", "convert-temperature", "spell-word",
                    "count-letters", "translate-word", "find-synonyms", "time-difference"),
                   ("sky", "temperature", "letters", "lexicon", "zones"), paraphrased=True,
                   modes=("structured",))
SETS = (SET1, SET2, SET3)


def services_for(qset: QuestionSet) -> tuple[str, ...]:
    """Every quality_services.py service ``qset`` is asked with: its own and the earlier sets'
    (each set's tools are the earlier sets' and its own)."""
    out: list[str] = []
    for s in SETS[:SETS.index(qset) + 1]:
        out += [name for name in s.services if name not in out]
    return tuple(out)


# -- the tools' descriptors ---------------------------------------------------------------
def tool_descriptors() -> dict[str, dict[str, Any]]:
    """Every tool of the table, by name, as its descriptor is written: the joke tools from the
    bootstrap's files, the others as their services in quality_services.py announce them."""
    boot = json.loads(BOOTSTRAP.read_text())
    out: dict[str, dict[str, Any]] = {}
    for key, name in boot.get("files", {}).items():
        if key.startswith("tool/"):
            d = json.loads((BOOTSTRAP.parent / name).read_text())
            out[d["name"]] = d
    for _ident, cls in qs.SERVICES.values():
        for d in cls.tools:
            out[str(d["name"])] = dict(d)
    return out


# -- the no-shared-word rule --------------------------------------------------------------
#: Words that carry no meaning of their own: articles, pronouns, prepositions, conjunctions,
#: auxiliaries, question words and their contractions.  Single letters are stop words too.
STOP_WORDS = frozenset("""
a an the and or but nor if then so than too very of at by for with about against between into through
during before after above below to from up down in out on off over under again further once here there
when where why how all any both each few more most other some such no not only own same can will just
should now is am are was were be been being have has had having do does did doing would could shall may
might must i me my myself we our ours us you your yours he him his she her hers it its they them their
theirs what which who whom whose this that these those what's it's i'm i'd i'll i've you're don't isn't
how's that's there's let's
""".split())

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def content_words(text: str) -> list[str]:
    """The words of ``text`` that the rule compares: lower case, stop words and single letters left out
    (a hyphenated word is two words: ``groan-worthy``, ``count-words``)."""
    words = _TOKEN.findall(text.lower().replace("\u2019", "'"))
    return [w for w in words if len(w) > 1 and w not in STOP_WORDS]


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if re.search(r"(?:ch|sh|s|x|z)es$", word):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def same_stem(a: str, b: str) -> bool:
    """Whether two words share a stem, judged strictly (a false alarm only costs a rephrasing).

    Plurals first become singular; then the words share a stem when they are
    equal, or when they begin with the same four letters or more and differ in
    at most their last two letters beyond that: ``mean``/``meaning``,
    ``define``/``definition``, ``convert``/``conversion``, ``city``/``cities``;
    not ``word``/``world``.
    """
    a, b = _singular(a), _singular(b)
    if a == b:
        return True
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return common >= 4 and common >= min(len(a), len(b)) - 2


def tool_text(descriptor: dict[str, Any]) -> list[tuple[str, str]]:
    """What the model is told about a tool, part by part: ``(where, text)``."""
    parts = [("name", str(descriptor.get("name", ""))), ("description", str(descriptor.get("description", "")))]
    for arg in descriptor.get("arguments") or []:
        parts.append(("argument name", str(arg.get("name", ""))))
        if arg.get("description"):
            parts.append((f"description of argument {arg.get('name')!r}", str(arg["description"])))
    return parts


def shared_words(question: str, descriptor: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Each word of ``question`` that shares a stem with the tool's text: ``(question word, tool word,
    where in the tool)``; empty when the question is a paraphrase."""
    out = []
    for qword in dict.fromkeys(content_words(question)):
        for where, text in tool_text(descriptor):
            hit = next((t for t in content_words(text) if same_stem(qword, t)), None)
            if hit is not None:
                out.append((qword, hit, where))
                break
    return out


def check_paraphrased(questions: list[dict[str, Any]], descriptors: dict[str, dict[str, Any]],
                      source: str) -> None:
    """Raise :class:`QuestionSetError` naming the first question that shares a word with its right tool."""
    for q in questions:
        tool = q["tool"]
        if tool is None:
            continue
        found = shared_words(q["question"], descriptors[tool])
        if found:
            qword, tword, where = found[0]
            raise QuestionSetError(
                f"{source}: question {q['question']!r} shares the word {qword!r} with its tool `{tool}` "
                f"({tword!r} in its {where}); this set's questions must share no word or stem with their "
                "tool: rephrase the question (never the tool)")


# -- loading ------------------------------------------------------------------------------
def _check_question(q: Any, qset: QuestionSet, where: str) -> None:
    if not isinstance(q, dict) or not isinstance(q.get("question"), str) or not q["question"].strip():
        raise QuestionSetError(f"{where}: needs a non-empty string 'question'")
    tool = q.get("tool")
    if tool is None:
        if not isinstance(q.get("answer", ""), str):
            raise QuestionSetError(f"{where}: 'answer' must be a string")
        return
    if tool not in qset.tools:
        raise QuestionSetError(f"{where}: question {q['question']!r} expects {tool!r}, not one of this "
                               f"set's tools ({', '.join(qset.tools)})")
    if tool in JOKE_TOOLS:
        if not isinstance(q.get("topic"), str) or not q["topic"].strip():
            raise QuestionSetError(f"{where}: a {tool} question needs 'topic' (the word its topic must contain)")
        return
    args = q.get("args")
    needed = NEEDED_ARGS[tool]
    if not isinstance(args, dict) or any(k not in args for k in needed):
        raise QuestionSetError(f"{where}: a {tool} question needs 'args' with {', '.join(needed)}")


def load_set(qset: QuestionSet, descriptors: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The questions of ``qset``, checked: shape, known tools, no repeated question, and for a
    paraphrased set the no-shared-word rule against the tools' descriptors."""
    try:
        data = json.loads(qset.path.read_text())
    except (OSError, ValueError) as e:
        raise QuestionSetError(f"{qset.path}: cannot be read as JSON: {e}") from None
    questions = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(questions, list) or not questions:
        raise QuestionSetError(f"{qset.path}: needs a non-empty list 'questions'")
    seen: set[str] = set()
    for n, q in enumerate(questions, 1):
        _check_question(q, qset, f"{qset.path} question {n}")
        q.setdefault("tool", None)
        if q["question"] in seen:
            raise QuestionSetError(f"{qset.path}: question {q['question']!r} is there twice")
        seen.add(q["question"])
    if qset.paraphrased:
        check_paraphrased(questions, descriptors if descriptors is not None else tool_descriptors(),
                          str(qset.path))
    return questions


# -- the stand-in LLM that knows the answers ----------------------------------------------
def right_args(q: dict[str, Any]) -> dict[str, Any]:
    """The arguments a right model gives the question's tool."""
    return {"topic": q["topic"]} if q["tool"] in JOKE_TOOLS else dict(q["args"])


def said_args(q: dict[str, Any], descriptors: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """:func:`right_args` as a right model can write them where the agent lets a value be only
    what the dialog said (``agent/react/grounding.py``): each value the question does not offer
    that tool is replaced by the shortest text it offers that the table scores as right (the
    currency's name for its code, a whole word for its stem); a value no offered text can stand
    for is kept, and the row shows what that costs."""
    from quality_args import args_right
    from trustgraph.agent.react.grounding import own_words, said_values

    args = right_args(q)
    d = descriptors[q["tool"]]
    said = said_values(q["question"], [])
    texts = said.for_tool(own_words(d["name"], d.get("description") or ""))
    declared = {a["name"]: a for a in d.get("arguments") or []}
    out = dict(args)
    for name, value in args.items():
        arg = declared.get(name, {})
        if arg.get("enum") is not None or arg.get("free-text") or not isinstance(value, str) or value in texts:
            continue
        fitting = [t for t in texts if args_right(q, {**out, name: t})]
        if fitting:
            out[name] = min(fitting, key=len)
    return out


def expected_result(q: dict[str, Any], descriptors: dict[str, dict[str, Any]]) -> str:
    """What the question's tool answers to :func:`right_args` (the services' own functions; a joke
    as the joke service picks it for that style and topic, its greeting left out)."""
    tool, args = q["tool"], right_args(q)
    if tool in JOKE_TOOLS:
        from trustgraph.tool_service.joke.jokes import pick_joke
        style = descriptors[tool].get("style") or "pun"
        topic = args["topic"]
        return pick_joke(topic, style, random.Random(f"{style}/{topic.strip().lower()}"))[1]
    if tool == "weather":
        return qs.weather_report(args["city"])
    if tool == "count-words":
        return qs.count_report(args["text"])
    if tool == "convert-currency":
        return qs.convert_report(float(args["amount"]), args["to"])
    if tool == "define-word":
        return qs.define_report(args["word"])
    if tool == "local-time":
        return qs.local_time_report(args["city"])
    if tool == "convert-units":
        return qs.convert_units_report(float(args["value"]), args["from"], args["to"])
    if tool in SET3_RESULTS:
        return SET3_RESULTS[tool](args)
    raise QuestionSetError(f"no result rule for tool {tool!r}")


#: What each of set 3's tools answers to its arguments (quality_services_set3.py's functions).
SET3_RESULTS = {
    "forecast": lambda a: qs3.forecast_report(a["city"]),
    "sunrise-sunset": lambda a: qs3.sun_report(a["city"]),
    "convert-temperature": lambda a: qs3.convert_temperature_report(float(a["value"]), a["from"], a["to"]),
    "spell-word": lambda a: qs3.spell_report(a["word"]),
    "count-letters": lambda a: qs3.count_letters_report(a["word"]),
    "translate-word": lambda a: qs3.translate_report(a["word"], a["language"]),
    "find-synonyms": lambda a: qs3.synonyms_report(a["word"]),
    "time-difference": lambda a: qs3.time_difference_report(a["city"], a["other_city"]),
}


def grounded_arguments(descriptor: dict[str, Any], question: str) -> dict[str, Any]:
    """The argument schema the agent offers the model for ``descriptor``'s tool on the first step
    of ``question``: each value limited to what the question says (``grounding.grounded``, the
    agent's own rule)."""
    from types import SimpleNamespace

    from trustgraph.agent.react.grounding import grounded, own_words, said_values

    declared = descriptor.get("arguments") or []
    schema = {"type": "object", "required": [a["name"] for a in declared], "properties": {
        a["name"]: {"type": a.get("type", "string"), **({"enum": a["enum"]} if a.get("enum") else {})}
        for a in declared}}
    arguments = [SimpleNamespace(name=a["name"], description=a.get("description") or "",
                                 free_text=a.get("free-text")) for a in declared]
    return grounded(schema, arguments, said_values(question, []),
                    own_words(descriptor["name"], descriptor.get("description") or ""))


def placeholder_args(descriptor: dict[str, Any], question: str = "") -> dict[str, Any]:
    """Arguments of the declared types for a call made only because the schema forces one: the
    first value :func:`grounded_arguments` offers each (a reply a grammar-bound model could
    write), else a filler of the type."""
    out: dict[str, Any] = {}
    for name, prop in grounded_arguments(descriptor, question)["properties"].items():
        if prop.get("enum"):
            out[name] = prop["enum"][0]
        else:
            out[name] = {"string": "", "number": 0, "integer": 0, "boolean": False, "array": [],
                         "object": {}}.get(prop["type"], "")
    return out


def _final(answer: str) -> str:
    from trustgraph.base.formats.decision_schema import final
    return final(answer)


def scripted_llm(question_sets: list[list[dict[str, Any]]], descriptors: dict[str, dict[str, Any]],
                 extra: list[dict[str, Any]] = ()) -> dict[str, Any]:
    """The rules file of ``text-completion-scripted`` for these questions (and ``extra`` ones, e.g.
    the warm-up).  A prompt is matched by its ``Question: <text>`` line; a prompt that also holds the
    right tool's result (a later step) gets a final answer with that result.  No default: a prompt
    the script does not know is an ``llm-error``, seen in the table rather than hidden."""
    from trustgraph.base.formats.decision_schema import FINAL_ACTION
    rules = []
    for q in [*extra, *(q for qs_ in question_sets for q in qs_)]:
        asked = r"Question: " + re.escape(q["question"]) + r"[ \t]*(?:\n|\Z)"
        if q["tool"] is None:
            # The first step must call a tool (the bootstrap template's policy), so a right model
            # names one, forced, while its scores say it would rather answer; asked for its own
            # answer next (the agent's no-tool step), it gives it.
            forced = next(iter(sorted(descriptors)))
            rules.append({"match": asked, "scores": {FINAL_ACTION: 0.999},
                          "replies": [json.dumps({"action": forced, "args": placeholder_args(descriptors[forced], q["question"])}),
                                      _final(q.get("answer") or "No tool fits; I do not know.")]})
            continue
        result = expected_result(q, descriptors)
        rules.append({"match": asked + r".*" + re.escape(result.splitlines()[-1].strip()),
                      "reply": _final(result)})
        rules.append({"match": asked, "scores": {q["tool"]: 0.95, FINAL_ACTION: 0.05},
                      "reply": json.dumps({"action": q["tool"], "args": said_args(q, descriptors)},
                                          ensure_ascii=False)})
    return {"_comment": "Written by bench/quality_sets.py for the agent-quality table's scripted rows: "
                        "the right decision for each question; do not edit.", "rules": rules}
