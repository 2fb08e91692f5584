"""Arguments taken from the dialog: the values a call may have, and whether a call's were said.

By construction first (:func:`said_values`, :func:`grounded`): each step's
decision schema lets a string argument take only a span of the dialog (a
run of the question's words, a quoted text, a clause, the question itself,
or such a part of an earlier tool result) and a number only a number the
dialog holds, so "Tell me a joke about cats" can only call ``tell-joke``
with a topic the question said, and the model's part is to pick the span
(the grammar of the LLM service enforces it).  An argument that declares
``"free-text": true``, or has an ``enum``, is left to the model; so is one
when the dialog holds nothing of its kind (no number said).  Three rules of
how a request is said narrow the values further, never to none: the unit
written with a number is the unit that number is in, so a conversion's
argument named ``from`` (``source``...) takes it among its declared values
and one named ``to`` (``target``...) never takes it (:func:`quantity_units`;
"101 °F in °C" is out of F, whatever order the question says them in; what
it asks how many of is converted into, a proper adjective with its noun:
:func:`_by_quantity`); an argument that is a request's topic takes a part of the question after
"about" when it has one (:func:`_by_topic`); one that is a text the tool
works on takes the quoted text, or what follows the colon
(:func:`_by_text`).  Then the check below, for what still gets through (a
model whose service ignores the schema, a text-mode template).

The decision grammar lets a model name only real tools and fill their
arguments in the declared types, and the confidence share (``decisions.judge``)
tells when its choice of tool is a guess.  Neither sees the arguments.  With
the embedded 135M model most of the wrong calls that the share let through
carried a value nobody had said: ``weather {"city": "New York"}`` for a
word-count question, ``count-words`` of a text the model wrote itself,
``weather {"city": "Barcelona"}`` for Buenos Aires (bench, agent quality,
set 1).  A right call's values are words of the question, or of a tool result
earlier in the dialog.  So a call whose value was never said is treated as a
guess too: the dialog asks back instead of answering with that call's result.

What counts as said is deliberately loose, because a false "not said" turns a
right answer into a question back:

- a text value needs half of its content words in the dialog (case and
  plural or other endings ignored: ``train`` for "trains", ``dino`` for
  "dinosaurs"); a value with no content word is not judged;
- a value of three letters or fewer (``EUR``, ``km``) is a code the model is
  expected to translate to, and is not judged;
- a number needs to appear as a number (``12.5`` for "12.5 dollars", ``1000``
  for "1,000"; a number written in words, "twenty", is not read);
- values from an ``enum``, booleans, arrays and objects are not judged.

A bigger model that infers a value ("the city with the Eiffel Tower" ->
``Paris``) would be asked back here: the agent's ``--no-argument-check``
turns the check off.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from trustgraph.catalog.relevance import COMMON_WORDS, content_words

__all__ = ["Said", "grounded", "own_words", "quantity_units", "said_values", "unsaid_arguments"]

_LETTERS = re.compile(r"[^\W\d_]+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
#: A value this short (letters only) is a code the model translates to, not a quotation.
CODE_LENGTH = 3
#: The share of a text value's content words that must have been said.
SAID_SHARE = 0.5
#: Words at least this long match a said word that starts with them, or that they start with.
STEM_LENGTH = 3
#: The dialog text looked at (the question and tool results): enough for any question.
MAX_SAID_CHARS = 20_000


def _words(text: str) -> set[str]:
    return {w.lower() for w in _LETTERS.findall(text)}


def _numbers(text: str) -> set[float]:
    # "1,000" and "1.000" may be a thousand or one; "3,5" three and a half: every reading counts.
    out = set()
    for n in _NUMBER.findall(text):
        for reading in (n.replace(",", ""), n.replace(",", "."), n.replace(".", "").replace(",", ".")):
            try:
                out.add(float(reading))
            except ValueError:   # "1.2.3" read with its dots kept
                continue
    return out


class _Said:
    """The words and numbers of the dialog so far."""

    def __init__(self, texts: Iterable[str]) -> None:
        text = " ".join(texts)[:MAX_SAID_CHARS]
        self.words = _words(text)
        self.numbers = _numbers(text)
        self._stems = sorted(w for w in self.words if len(w) >= STEM_LENGTH)

    def has_word(self, word: str) -> bool:
        if word in self.words:
            return True
        if len(word) < STEM_LENGTH:
            return False
        return any(s.startswith(word) or word.startswith(s) for s in self._stems)

    def has_number(self, value: float) -> bool:
        return any(math.isclose(value, n, rel_tol=1e-9, abs_tol=1e-9) for n in self.numbers)


def _text_said(value: str, said: _Said) -> bool:
    letters = _LETTERS.findall(value)
    if len(letters) == 1 and len(letters[0]) <= CODE_LENGTH and not _NUMBER.search(value):
        return True
    numbers = _numbers(value)
    if numbers and not all(said.has_number(n) for n in numbers):
        return False
    content = _words(value) - COMMON_WORDS
    if not content:
        return True
    return sum(said.has_word(w) for w in content) >= max(1.0, SAID_SHARE * len(content))


def _argument(arguments: Sequence[Any], name: str) -> Any:
    return next((a for a in arguments if getattr(a, "name", None) == name), None)


def unsaid_arguments(values: Mapping[str, Any], arguments: Sequence[Any], said: Iterable[str]) -> list[str]:
    """The names of the call's arguments whose value nobody said in the dialog (``said``: the
    question and the tool results so far); ``arguments`` are the tool's declared ones (with
    ``type`` and ``enum``).  Empty when every value was said or cannot be judged."""
    heard = _Said(said)
    out = []
    for name, value in values.items():
        declared = _argument(arguments, name)
        if declared is not None and getattr(declared, "enum", None) is not None:
            continue
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float):
            try:
                number = float(value)
            except OverflowError:   # an integer past any float was not said either
                number = math.nan
            if not heard.has_number(number):
                out.append(name)
        elif isinstance(value, str):
            if value.strip() and not _text_said(value, heard):
                out.append(name)
    return out


# -- values by construction ---------------------------------------------------------------

#: The longest run of words offered as one value (a city, a topic, a currency's name).
MAX_SPAN_WORDS = 6
#: At most this many texts are offered per argument (the grammar grows with them).
MAX_SPANS = 200
#: The characters of each earlier tool result whose parts are offered too.
RESULT_CHARS = 400
_TOKEN = re.compile(r"\w+(?:[.,'’-]\w+)*")
#: Where a clause ends: punctuation, but not the point or comma inside a number (12.5, 1,000).
_CLAUSE_END = re.compile(r"(?<!\d)[.,]|[.,](?!\d)|[;:!?()\[\]\n\"“”]")
_OFFERED_NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?(?![\w])")
#: Words a value does not start or end with (besides the common ones): question and filler words.
_EDGE_WORDS = COMMON_WORDS | frozenset("""all also am any been could did does get got had has have he her here him his
into is it's its just know like many more most much need no not now our out over she should so some than
them then there they too us very was want we were what's whats will would yes
today tonight tomorrow yesterday currently moment right thanks if one ones something anything thing kind sort
their theirs yours mine ours hers you'd i'd i'm i've you're we're they're these those whose whom
itself myself yourself themselves ourselves someone anyone everyone people""".split())
#: Verbs a request starts with ("Say something witty about the ocean", "Exchange 15 bucks for
#: pounds"): a value does not start with one (the 135M model took "Say" for the joke's topic and
#: "Exchange" for the currency), though one may end with it ("stock exchange").
_REQUEST_VERBS = frozenset("""say tell give let get put make express explain define spell translate convert
exchange tally calculate compute find look share suggest recommend amuse hit crack turn help""".split())
_QUOTED = re.compile(r"(?:(?<=\s)|(?<=^)|(?<=:))([\"'“‘])(.+?)([\"'”’])(?=[\s?.!,;:)]|$)")


#: Where a description names example values, not what the tool does: "e.g. kilometres to miles",
#: "such as EUR": to the end of the clause ("like" is left alone: it is a verb as often).
_EXAMPLES = re.compile(r"\b(?:e\.\s?g\.|(?:eg|for example|for instance|such as)\b)[^.;:()]*", re.IGNORECASE)


def own_words(name: str, description: str) -> set[str]:
    """A tool's own words: the content words of its name and description, but not of the
    examples its description gives ("Convert a quantity between units of measure, e.g.
    kilometres to miles": "miles" is a value the converter takes, not a word about it)."""
    return content_words(f"{name} {_EXAMPLES.sub(' ', description or '')}")


class Said:
    """What the dialog offers a call's arguments: texts (spans) and numbers; ``kept`` the texts
    offered whatever the tool (quoted texts); ``question`` the question itself, offered only to an
    argument that is a question (:func:`asks_whole`).  Read off the question once per step, for
    every tool's schema: ``units`` (:func:`quantity_units`), ``counted`` (where what it asks how
    many of starts), ``words`` (its words, lower case) and ``apart`` (the texts it sets apart: its
    quoted ones, else what follows its colon)."""

    def __init__(self, texts: list[str], numbers: list[float], kept: frozenset[str] = frozenset(),
                 question: str = "") -> None:
        self.texts = texts
        self.numbers = numbers
        self.kept = kept
        self.question = question
        self.units = quantity_units(question)
        self.counted = _counted(question)
        self.words = _words(question)
        colon = None if kept else _after_colon(question)
        self.apart = kept if colon is None else frozenset({colon})
        self._with_noun: dict[str, str | None] = {}

    def with_noun(self, value: str) -> str | None:
        """``value`` with its noun when it is a proper adjective without it (:func:`_noun_after`):
        each value read once per step, however many tools' conversions offer it."""
        if value not in self._with_noun:
            self._with_noun[value] = _noun_after(value, self.question)
        return self._with_noun[value]

    def for_tool(self, tool_words: set[str]) -> list[str]:
        """The texts a value of a tool's argument may be: not a run that starts with one of the
        tool's own words (:func:`own_words`) or is made of them (``tell-dad-joke`` gets
        ``coffee``, not ``joke`` nor ``dad joke`` nor ``joke about coffee``, for "Tell me a dad
        joke about coffee"; a currency converter of "US dollars" gets ``Canadian dollars``),
        unless kept."""
        if not tool_words:
            return self.texts

        def own(word: str) -> bool:
            word = word.lower()
            return any(word == w or len(w) >= STEM_LENGTH and word.startswith(w) for w in tool_words)

        out = []
        # A question that is one run of words ("Greet Ada") is no span of its own (the whole
        # question is offered apart), but what follows the tool's words in it is.
        whole = [] if self.texts or not self.question else [self.question]
        for text in self.texts or whole:
            tokens = _TOKEN.findall(text)
            if text not in whole and (text in self.kept or not tokens
                                      or not (own(tokens[0]) or all(map(own, tokens)))):
                out.append(text)
            elif tokens and own(tokens[0]) and not all(map(own, tokens)):
                # A run that starts with the tool's own words offers what follows them: "Greet
                # Ada" (a name to the span rule, capitalised as a sentence starts) is "Ada" to
                # the greeter.
                rest = next(m for m in _TOKEN.finditer(text) if not own(m.group(0)))
                out.append(text[rest.start():])
        return list(dict.fromkeys(out)) or self.texts


#: Words that make an argument one the whole question may fill (a knowledge query's ``question``).
_WHOLE = frozenset({"question", "query", "prompt", "request", "ask"})


def asks_whole(argument: Any) -> bool:
    """Whether ``argument`` (a declared one) may be the whole question: its name or description
    says it is a question or a query.  Any other argument gets the question's parts only: a
    small model offered the whole question writes it as a joke's topic."""
    words = _words(f"{getattr(argument, 'name', '')} {getattr(argument, 'description', '')}")
    return bool(words & _WHOLE)


def _spans(text: str) -> list[str]:
    """What of ``text`` a value may be: its quoted parts, what follows a colon, and every run of up
    to :data:`MAX_SPAN_WORDS` content words (no filler word inside: a value rarely spans "about"
    or "in") that neither starts nor ends inside a name (a run of capitalised words: not
    ``Buenos`` nor ``Aires`` of ``Buenos Aires``).

    That last rule is for greedy decoding: a model that has written ``Buenos`` may close the
    string there when the grammar lets it (the 135M model did, for "Buenos Aires"); a name is
    written whole or not at all.  A whole clause is no value ("My father loves corny puns" was
    the 135M model's topic of a joke) unless it follows a colon ("Count the words in: ...").  Nor
    does a value start with a verb a request starts with (:data:`_REQUEST_VERBS`)."""
    out = [m.group(2).strip() for m in _QUOTED.finditer(text)]
    unquoted = _QUOTED.sub(" | ", text)
    if (colon := _after_colon(unquoted)) is not None:
        out.append(colon)
    for part in _CLAUSE_END.split(unquoted):
        for piece in part.split("|"):
            tokens = [t.group(0) for t in _TOKEN.finditer(piece)]
            spans = list(_TOKEN.finditer(piece))
            content = [t.lower() not in _EDGE_WORDS for t in tokens]
            named = [t[:1].isupper() and content[i] for i, t in enumerate(tokens)]
            starts = [c and not (named[i] and i > 0 and named[i - 1]) and tokens[i].lower() not in _REQUEST_VERBS
                      for i, c in enumerate(content)]
            ends = [c and not (named[j] and j + 1 < len(tokens) and named[j + 1]) for j, c in enumerate(content)]
            for i in range(len(tokens)):
                if not starts[i]:
                    continue
                for j in range(i, min(i + MAX_SPAN_WORDS, len(tokens))):
                    if not content[j]:
                        break
                    if ends[j]:
                        out.append(piece[spans[i].start():spans[j].end()])
    return out


#: What a question asks the count of starts after these words: "How many cups are in 2 litres?".
_HOW_MANY = re.compile(r"\bhow\s+many\s+(?=\w)", re.IGNORECASE)


def _counted(question: str) -> int | None:
    """Where in ``question`` what it asks how many of starts ("cups" of "How many cups are in 2
    litres?"), or None."""
    m = _HOW_MANY.search(question[:MAX_SAID_CHARS])
    return None if m is None else m.end()


def _after_colon(unquoted: str) -> str | None:
    """What follows the first colon of ``unquoted`` (a text whose quotes are cut out, as ``|``), up
    to the first of them: "Count the words in: ..." gives the text counted; None without a colon."""
    if ":" not in unquoted:
        return None
    return unquoted.split(":", 1)[1].split("|")[0].strip().rstrip("?!.")


def _offered_numbers(text: str) -> list[float]:
    """The numbers as written (``1,000`` is a thousand, ``12.5`` twelve and a half), each once."""
    out = []
    for m in _OFFERED_NUMBER.finditer(text):
        value = float(m.group(0).replace(",", ""))
        if math.isfinite(value) and value not in out:
            out.append(value)
    return out


def said_values(question: str, results: Sequence[str]) -> Said:
    """The spans and numbers of the question and of the earlier tool ``results`` (each cut at
    :data:`RESULT_CHARS`), the question's first, each once; the whole question apart."""
    whole = question.strip().rstrip("?!. ")
    texts: list[str] = _spans(question)
    for result in results:
        texts += _spans(result[:RESULT_CHARS])
    offered = [t for t in dict.fromkeys(texts) if t and t != whole and (_LETTERS.search(t) or _NUMBER.fullmatch(t))]
    numbers = _offered_numbers(" ".join([question, *(r[:RESULT_CHARS] for r in results)]))
    quoted = {m.group(2).strip() for m in _QUOTED.finditer(question)}
    return Said(offered[:MAX_SPANS], numbers, frozenset(quoted), whole)


_DIGIT = re.compile(r"\d")

#: How an argument is named when it is what a quantity is converted into, or out of: its name's
#: parts (``to``, ``to_unit``, ``target_currency``; ``from``, ``source``, ``base``).
_INTO = frozenset({"to", "into", "target", "destination", "dest"})
_OUT_OF = frozenset({"from", "source", "src", "base"})
#: A number and the one or two words written right after it ("23 kg", "101 °F", "300 US dollars").
_QUANTITY = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?[ \t]*°?[ \t]*([^\W\d_]+)(?:[ \t]+([^\W\d_]+))?")
#: Letters after a number that are no unit: ordinals and decades ("3rd", "1990s").
_NOT_UNITS = frozenset({"st", "nd", "rd", "th", "s"})


def quantity_units(question: str) -> set[str]:
    """The words of what ``question``'s numbers count, lower case: the word (or two) written right
    after a number ("23 kg" -> kg, "101 °F" -> f, "300 US dollars" -> us, dollars), filler words
    ("50 in yen") aside."""
    out: set[str] = set()
    for m in _QUANTITY.finditer(question[:MAX_SAID_CHARS]):
        for written in m.groups():
            word = (written or "").lower()
            # An abbreviation in capitals is a unit even when its letters spell a filler ("US").
            if not word or word in _NOT_UNITS or word in _EDGE_WORDS and not (len(written) > 1 and written.isupper()):
                break
            out.add(word)
    return out


def _direction(name: str) -> str | None:
    """"into" or "out of" when an argument's name says it is what a quantity is converted into or
    out of, else None."""
    parts = set(re.split(r"[\W_]+", name.lower()))
    return "out of" if parts & _OUT_OF else "into" if parts & _INTO else None


def _noun_after(value: Any, question: str) -> str | None:
    """``value`` with the word that follows it in ``question`` when it ends in a capitalised word
    the question follows with a lower-case one ("Swiss" of "how many Swiss francs": "Swiss
    francs"), else None.  A capitalised word before a lower-case one is a proper adjective with its
    noun, written whole or not at all, as a name is (:func:`_spans`).  Not a code in capitals
    ("USD"), nor before a filler word or an adverb ("to USD exactly")."""
    tokens = _TOKEN.findall(value) if isinstance(value, str) else []
    if not tokens or len(tokens[-1]) < 2 or not tokens[-1].istitle():
        return None
    for m in re.finditer(rf"(?<!\w){re.escape(value)}[ \t]+([^\W\d_]+)", question[:MAX_SAID_CHARS]):
        noun = m.group(1).lower()
        if m.group(1)[:1].islower() and noun not in _EDGE_WORDS and not noun.endswith("ly"):
            return question[m.start():m.end()]
    return None


def _by_quantity(prop: dict[str, Any], name: str, units: set[str], declared_enum: bool, said: Said) -> dict[str, Any]:
    """``prop`` with its values narrowed by what the question's quantity is in (``units``).

    The unit written with a number is the unit that number is in: "23 kg in pounds" converts
    out of kg, "101 °F in °C" out of F, whatever order the question says them in (the 135M model
    wrote ``{"from": "C", "to": "F"}`` for the latter).  So an argument converted into takes no
    value that is that unit, and (among a tool's own declared values, which name its units)
    prefers one the question says; one converted out of takes a declared value that is that
    unit.  A declared value is the unit when it is those words, else when it is the longest
    start of one ("F" for "Fahrenheit", "mi" rather than "m" for "miles").  Spans are not
    narrowed to the unit (a number's next word may be "pm" of a time, not what a city argument
    converts out of), except that a span converted out of is not what the question asks how many
    of ("How many cups are in 2 litres?" converts into cups: the 135M model wrote cups for both),
    and a span converted into is no proper adjective without its noun (:func:`_noun_after`: the
    135M model wrote "Swiss" of "how many Swiss francs" and "Canadian" of "how many Canadian
    dollars", greedy decoding closing the shorter value, which the converter refused).  Nothing
    is narrowed to nothing."""
    values = prop.get("enum")
    direction = _direction(name)
    if not units or direction is None or not isinstance(values, list):
        return prop
    words = [_words(v) if isinstance(v, str) else set() for v in values]
    unit = [i for i, w in enumerate(words) if w and w <= units]
    if not unit and declared_enum:
        # A tool's own code for a unit written out in full: the longest that starts a unit word.
        starts = {i: len(next(iter(w))) for i, w in enumerate(words)
                  if len(w) == 1 and any(u.startswith(next(iter(w))) for u in units)}
        unit = [i for i, n in starts.items() if n == max(starts.values())] if starts else []
    if direction == "into":
        kept = [v for i, v in enumerate(values) if i not in unit]
        if declared_enum:
            kept = [v for v in kept if isinstance(v, str) and _words(v) and _words(v) <= said.words] or kept
        else:
            whole = set(kept)
            kept = [v for v in kept if not (isinstance(v, str) and said.with_noun(v) in whole)] or kept
    elif declared_enum:
        kept = [values[i] for i in unit]
    elif said.counted is not None:
        # What the question asks how many of is what it converts into, never out of.
        kept = [v for v in values if not (isinstance(v, str) and said.question.startswith(v, said.counted))]
    else:
        return prop
    return {**prop, "enum": kept} if kept and kept != values else prop


def _says(argument: Any, words: frozenset[str]) -> bool:
    """Whether a declared argument's name or description has one of ``words``."""
    return bool(_words(f"{getattr(argument, 'name', '')} {getattr(argument, 'description', '') or ''}") & words)


#: An argument is what a request is about when its name or description says so.
_TOPIC_WORDS = frozenset({"topic", "subject", "theme"})
#: Where a request says what it is about: "a joke about cats", "news regarding Mars".
_ABOUT = re.compile(r"\b(?:about|regarding|concerning)\b", re.IGNORECASE)


def _by_topic(prop: dict[str, Any], argument: Any, question: str) -> dict[str, Any]:
    """``prop`` of an argument that is what a request is about (its name or description says
    "topic", "subject" or "theme"), narrowed to the parts of the question after the word that
    says what it is about, when it has one: "My father loves corny puns; share one about
    lawnmowers" is about lawnmowers, not "father" (the 135M model's pick, and "witty" for "Say
    something witty about the ocean").  A question without such a word keeps every part."""
    values = prop.get("enum")
    if not isinstance(values, list) or not question or not _says(argument, _TOPIC_WORDS):
        return prop
    marker = _ABOUT.search(question)
    if marker is None:
        return prop
    kept = [v for v in values if isinstance(v, str) and v and question.find(v, marker.end()) >= 0]
    return {**prop, "enum": kept} if kept and kept != values else prop


#: An argument is a text the tool works on when its name or description says so.
_TEXT_WORDS = frozenset({"text", "sentence", "phrase", "passage"})


def _by_text(prop: dict[str, Any], argument: Any, apart: frozenset[str]) -> dict[str, Any]:
    """``prop`` of an argument that is a text the tool works on (its name or description says
    "text", "sentence", "phrase" or "passage"), narrowed to what the question sets apart as one
    (``apart``, ``Said.apart``: its quoted texts, else what follows its colon; "Count the words
    in: the quick brown fox jumps over the lazy dog" counts all of it, where the 135M model
    picked "quick brown fox jumps").  A question that sets nothing apart keeps every part, and so does an argument that is a
    question (:func:`asks_whole`: "the question text" to a search takes the whole question)."""
    values = prop.get("enum")
    if not isinstance(values, list) or not apart or not _says(argument, _TEXT_WORDS) or asks_whole(argument):
        return prop
    kept = [v for v in values if v in apart]
    return {**prop, "enum": kept} if kept and kept != values else prop


def _takes_number(properties: Mapping[str, Any], arguments: Sequence[Any]) -> bool:
    """Whether a tool has a number argument the dialog's numbers are offered to."""
    return any(isinstance(prop, dict) and prop.get("type") in ("number", "integer") and "enum" not in prop
               and not getattr(_argument(arguments, name), "free_text", None)
               for name, prop in properties.items())


def grounded(schema: dict[str, Any], arguments: Sequence[Any], said: Said,
             tool_words: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
    """A tool's argument ``schema`` with each string argument limited to the texts ``said`` offers
    it (:meth:`Said.for_tool`, given the tool's own ``tool_words``) and each number to
    ``said.numbers`` (unless it is free text, has an enum, or nothing of its kind was said): a
    copy; ``schema`` itself when it has no properties."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    texts = said.for_tool(set(tool_words))
    if said.numbers and _takes_number(properties, arguments):
        # The numbers said go to the tool's number argument: its text arguments get no run with a
        # number in it ("40" or "15 American" as the currency converted to), unless quoted.
        texts = [t for t in texts if t in said.kept or not _DIGIT.search(t)] or texts
    # What the question's numbers count, for a tool that takes a number: its conversion's units.
    units = said.units if _takes_number(properties, arguments) else set()
    out = {}
    for name, prop in properties.items():
        declared = _argument(arguments, name)
        kind = prop.get("type") if isinstance(prop, dict) else None
        if declared is None or getattr(declared, "free_text", None):
            out[name] = prop
        elif "enum" in prop:
            out[name] = _by_quantity(prop, name, units, True, said)
        elif kind == "string" and (texts or said.question):
            whole = [said.question] if said.question and (asks_whole(declared) or not texts) else []
            offered = _by_quantity({**prop, "enum": list(dict.fromkeys(whole + texts))}, name, units, False, said)
            out[name] = _by_text(_by_topic(offered, declared, said.question), declared, said.apart)
        elif kind == "number" and said.numbers:
            out[name] = {**prop, "enum": [int(n) if n.is_integer() else n for n in said.numbers]}
        elif kind == "integer" and (integers := [int(n) for n in said.numbers if n.is_integer()]):
            out[name] = {**prop, "enum": integers}
        else:
            out[name] = prop
    return {**schema, "properties": out}
