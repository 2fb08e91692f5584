"""How much of what a question says a tool's arguments take: evidence between tools the ranker
cannot tell apart.

A 22M-parameter sentence encoder puts tools that do similar things side by side: "If it's noon in
New York, what hour is it in Paris?" is as near the local time of one city as the time
difference between two, and "My suitcase weighs 23 kg; what is that in pounds?" as near a
currency converter as a converter of units.  The 135M model's choice between them is noise, so
the agent asked back.  What the question says settles it: it names two places, and only one tool
takes two; it says a mass and a unit, and the currency converter takes an amount of dollars.

So a question's values of a closed kind are read (a language, a currency, a unit of measure, a
place after "in"/"at"/"from"/"to", a quoted text, a number and what it counts), each argument's
kind from its name or description (or, for an argument that says nothing, from its tool's
description: "Convert a quantity between units of measure" takes units), and each tool scored by
how many of those values its arguments would take, one value an argument.  A string argument of no
known kind ("topic", "item") is no evidence for its tool, but may hold a quoted text or a place: a tool
wins only when its arguments surely take more than any other's could.  ``steps.by_coverage`` uses the score
only among the tools the ranker puts within its lead of the first.

"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .grounding import (
    _DATE,
    _EXPRESSION_WORDS,
    _KIND_OF,
    _QUOTED,
    _TIME,
    _UNIT_AFTER,
    MAX_SAID_CHARS,
    PLACE_LEAD,
    PLACE_WORDS,
    _argument_kind,
    _moment_kind,
    _name_words,
    _number_kinds,
    _said_in,
    _words,
    _written_numbers,
    arithmetic,
    signs_at,
)
from .wordlists import CURRENCIES, CURRENCY_CODES, LANGUAGES, NOT_PLACES

#: Units of measure said anywhere: those of mass, length, volume and speed longer than a letter
#: (not the kinds' nouns, "weight", "distance"; not the durations, "hours" is said of the clock),
#: temperature scales, and "pound"/"pounds", which are a currency too.
_NOUNS = frozenset("weight mass height length distance width depth speed velocity volume duration".split())
UNITS = frozenset(w for w, kind in _KIND_OF.items() if kind != "duration" and len(w) > 1 and w not in _NOUNS) \
    | frozenset("celsius fahrenheit kelvin centigrade pound pounds".split())
#: A currency's name that is a unit of mass too.
_POUND = frozenset({"pound", "pounds"})
#: A place: a capitalised name (of one or more words) after "in", "at", "near", "from", "to" or
#: "between", and "the" ("from Riverside Park to the Old Town").
_PLACE = re.compile(rf"{PLACE_LEAD}(?:the[ \t]+)?([A-Z][\w'-]*(?:[ \t]+[A-Z][\w'-]*)*)")

LANGUAGE, CURRENCY, UNIT, PLACE, TEXT, WORD, NUMBER = "language", "currency", "unit", "place", "text", "word", "number"
DAY, TIME, EXPRESSION = "day", "time", "expression"
#: What an argument's name or description says when it takes a value of a kind, in the order read.
_KIND_WORDS = (
    (LANGUAGE, frozenset({"language", "languages", "lang", "locale"})),
    (CURRENCY, frozenset({"currency", "currencies", "money"})),
    (UNIT, frozenset({"unit", "units", "measure", "scale"})),
    (PLACE, PLACE_WORDS),
    (TEXT, frozenset({"text", "phrase", "sentence", "passage", "paragraph", "message", "quote"})),
    (WORD, frozenset({"word", "term", "headword"})),
)
#: The kinds an argument that says nothing takes from its tool's description, when it says one.
_INHERITED = (LANGUAGE, CURRENCY, UNIT)
#: What a number argument says when it is an amount of money (not "pounds": "The weight in pounds").
_MONEY_WORDS = frozenset({"currency", "money", "price", "cost"}) | (CURRENCIES - _POUND)


#: At most this many values are read off a question: one that says more (a column of numbers
#: pasted in) is settled by no count of them, and each tool's count costs their number.
MAX_VALUES = 64


@dataclass(frozen=True)
class Value:
    """One value a question says, and the kinds of argument that may take it (a number's kinds:
    ``number`` and what it counts, ``money`` or a kind of quantity, if it says)."""

    text: str
    kinds: frozenset[str]


def said(question: str) -> list[Value]:
    """The values of a closed kind ``question`` says, each once, at most :data:`MAX_VALUES`."""
    text = question[:MAX_SAID_CHARS]
    out: dict[str, set[str]] = {}

    def add(value: str, kind: str) -> None:
        out.setdefault(value, set()).add(kind)

    quoted = [m.group(2).strip() for m in _QUOTED.finditer(text)]
    for q in quoted:
        add(f"'{q}'", WORD if len(q.split()) == 1 else TEXT)
    bare = _QUOTED.sub(" ", text)   # a quoted text's words are that text's, not the question's
    for word in re.findall(r"[^\W\d_]+(?:/[^\W\d_]+)?", bare):
        low = word.lower()
        if low in LANGUAGES:
            add(low, LANGUAGE)
        if low in CURRENCIES or word in CURRENCY_CODES:
            add(low, CURRENCY)
        if low in UNITS:
            add(low, UNIT)
    for m in _PLACE.finditer(bare):
        name = m.group(1)
        if not _words(name) & NOT_PLACES and name not in CURRENCY_CODES and name != "I":
            add(name, PLACE)
    for kind, moment in ((DAY, _DATE), (TIME, _TIME)):
        for m in moment.finditer(bare):
            add(m.group(0), kind)
    # A day's or a time's numbers are its own ("8" of "at 8pm" is no party's size), and so are an
    # arithmetic expression's ("250 divided by 5" is no bill and its people): cut out, the rest
    # where it was.
    bare = _DATE.sub(lambda m: " " * len(m.group(0)), _TIME.sub(lambda m: " " * len(m.group(0)), bare))
    for start, expression in arithmetic(bare):
        add(expression, EXPRESSION)
        bare = bare[:start] + " " * len(expression) + bare[start + len(expression):]
    quantities = _number_kinds(bare)
    signed_before, signed_after = signs_at(bare)
    for start, number, end in _written_numbers(bare):
        after = _UNIT_AFTER.match(bare, end)
        words = {w for w in (after.groups() if after else ()) if w}
        kind = quantities.get(number)
        if start in signed_before or end in signed_after or {w.lower() for w in words} & (CURRENCIES - _POUND) \
                or words & CURRENCY_CODES:
            kind = "money"
        elif kind is None and {w.lower() for w in words} & UNITS:
            kind = "measure"   # "3 pounds" (a mass or money: neither's argument refuses it)
        add(f"#{number:g}@{start}", NUMBER)
        if kind is not None:
            add(f"#{number:g}@{start}", kind)
        for w in words:   # a unit said only after a number ("5 m", "2 l", "30 min")
            if w.lower() in _KIND_OF and w.lower() not in _NOUNS:
                add(w.lower(), UNIT)
    return [Value(v, frozenset(k)) for v, k in out.items()][:MAX_VALUES]


def argument_kind(argument: Any, tool_description: str = "") -> str | None:
    """The kind of value a declared argument takes (the ``*`` constants; for a number, ``money``,
    a kind of quantity, or ``number``), or None when its name and description say none."""
    name = str(getattr(argument, "name", "") or "")
    description = str(getattr(argument, "description", "") or "")
    if getattr(argument, "type", None) in ("number", "integer"):
        if _words(f"{name} {description}") & _MONEY_WORDS:
            return "money"
        return _argument_kind(name, description) or NUMBER
    moment = _moment_kind(argument)
    if moment is not None:
        return DAY if moment is _DATE else TIME
    if _words(f"{_name_words(argument)} {description}") & _EXPRESSION_WORDS:
        return EXPRESSION
    for text in (_name_words(argument), description):
        words = _words(text)
        kind = next((kind for kind, says in _KIND_WORDS if words & says), None)
        if kind is not None:
            return kind
    if description:
        return None
    words = _words(tool_description)
    inherited = [kind for kind, says in _KIND_WORDS if kind in _INHERITED and words & says]
    return inherited[0] if len(inherited) == 1 else None


def _takes(kind: str | None, value: Value, declared: Sequence[Any] = ()) -> bool:
    if declared and kind is None:
        # An argument of declared values and no kind takes one of them only: a library's branch
        # "riverside" is no place "Riverside Park" (one of a kind, a unit's, takes its kind's).
        return any(isinstance(d, str) and d.lower() == value.text.strip("'").lower() for d in declared)
    if kind is None:
        # A string argument of no known kind ("item", "topic") may hold a text or a name: a tool
        # whose reminder "text" takes "'call the plumber'" is no likelier than a list's "item".
        return bool(value.kinds & {TEXT, WORD, PLACE})
    if kind == TEXT:
        return bool(value.kinds & {TEXT, WORD})
    if kind == NUMBER:
        return NUMBER in value.kinds
    if kind == "money" or kind in ("mass", "length", "speed", "duration", "volume"):
        # A number of this kind, or of none said; "3 pounds" is money or a mass.
        counts = value.kinds - {NUMBER}
        return NUMBER in value.kinds and (not counts or kind in counts or
                                          (counts == {"measure"} and kind in ("money", "mass")))
    return kind in value.kinds


#: A declared value is evidence when it is at least this many letters: "on", "off" and "up" are
#: said of anything ("Turn off the TV" is no light's).
MIN_DECLARED_LETTERS = 4


def says_declared(argument: Any, words: frozenset[str]) -> bool:
    """Whether the question (its ``words``, lower case) says one of an argument's declared
    (``enum``) values of :data:`MIN_DECLARED_LETTERS` letters or more, in any regular form
    ("boil" of a cooking ``method``, "drive" of a travel ``mode`` "driving")."""
    values = getattr(argument, "enum", None) or ()
    return any(isinstance(v, str) and sum(c.isalpha() for c in v) >= MIN_DECLARED_LETTERS and _said_in(v, words)
               for v in values)


def covered(arguments: Sequence[Any], tool_description: str, values: Sequence[Value],
            surely: bool = True, words: frozenset[str] = frozenset()) -> int:
    """How many of ``values`` a tool's ``arguments`` take, one value each: those of a known kind
    (``surely``), or those and its string arguments of none as well (at most: what the tool could
    take).  The arguments that can take fewest values choose first, so a general one does not
    take what only a specific one can.  An argument of no known kind that declares a value the
    question (its ``words``) says takes that value, its own: "How long do I boil eggs for?" says
    a cooking method, which a nutrition lookup as near has no argument for."""
    read = [(argument_kind(a, tool_description), getattr(a, "type", None), a) for a in arguments]
    declared = [kind is None and bool(words) and says_declared(a, words) for kind, _, a in read]
    kinds = [(kind, tuple(getattr(a, "enum", None) or ())) for (kind, type_, a), own in zip(read, declared, strict=True)
             if not own and (kind is not None or not surely and type_ in (None, "string"))]
    takers = sorted(kinds, key=lambda k: sum(_takes(*k[:1], v, k[1]) for v in values))
    free = list(values)
    count = sum(declared)
    for kind, enum in takers:
        taken = next((v for v in free if _takes(kind, v, enum)), None)
        if taken is not None:
            free.remove(taken)
            count += 1
    return count


def most_covered(tools: Sequence[Any], question: str) -> tuple[int, int] | None:
    """The index in ``tools`` (in the ranker's order) of the one whose arguments surely take more
    of what ``question`` says than any other's could, each ranked before it taking some of it
    (:func:`covered`), and how many;
    None when no tool does, or that tool's required arguments do not all surely take a value
    ("Write me a poem about Lisbon in Portuguese" says a language, and no word to translate)."""
    values = said(question)
    # A quoted text's words are that text's ("Spell 'boil'" says no cooking method), and so are the
    # words of a place's name of several ("from Riverside Park" says no library branch "riverside").
    names = {w for v in values if PLACE in v.kinds and " " in v.text for w in _words(v.text)}
    words = frozenset(_words(_QUOTED.sub(" ", question[:MAX_SAID_CHARS]))) - names
    if len(tools) < 2:
        return None
    sure = [covered(getattr(t, "arguments", None) or (), getattr(t, "description", "") or "", values, words=words)
            for t in tools]
    best = max(sure)
    if best == 0:
        return None
    at = sure.index(best)
    # The question gives that tool all it needs: each required argument of a kind a value of it
    # (one of no kind, an event's "title", may take any words: no evidence either way).
    description = getattr(tools[at], "description", "") or ""
    needed = [a for a in getattr(tools[at], "arguments", None) or ()
              if getattr(a, "required", True) and argument_kind(a, description) is not None]
    if covered(needed, description, values) < len(needed):
        return None
    could = {i: covered(getattr(t, "arguments", None) or (), getattr(t, "description", "") or "", values,
                        surely=False, words=words)
             for i, t in enumerate(tools) if i != at}
    # Each tool ranked before it takes something of it too, only less: one that takes nothing may
    # be what the question is about all the same, asked with values it does not say ("How long is
    # the flight from Madrid to Berlin?" of a travel time by distance and speed, before a time
    # difference).  One ranked after it, and taking less, is behind it by both counts.
    return (at, best) if all(c < best and (c > 0 or i > at) for i, c in could.items()) else None
