"""Arguments taken from the dialog: the values a call may have, and whether a call's were said.

By construction first (:func:`said_values`, :func:`grounded`): each step's
decision schema lets a string argument take only a span of the dialog (a
run of the question's words, a quoted text, a clause, the question itself,
or such a part of an earlier tool result) and a number only a number the
dialog holds, so "Tell me a joke about cats" can only call ``tell-joke``
with a topic the question said, and the model's part is to pick the span
(the grammar of the LLM service enforces it).  An argument that declares
``"free-text": true``, or has an ``enum``, is left to the model; so is one
when the dialog holds nothing of its kind (no number said).  Rules of
how a request is said narrow the values further, never to none: an argument
whose name the question says takes the value beside it (:func:`_by_name`:
"my shopping list", "flight BA117"); the unit
written with a number is the unit that number is in, so a conversion's
argument named ``from`` (``source``...) takes it among its declared values
and one named ``to`` (``target``...) never takes it (:func:`quantity_units`;
"101 °F in °C" is out of F, whatever order the question says them in; what
it asks how many of, or names after the quantity's last "in" or "to", is
converted into; a proper adjective with its noun:
:func:`_by_quantity`); an argument that is a request's topic takes a part of the question after
"about" when it has one (:func:`_by_topic`); one that is a text the tool
works on or a message it carries takes the quoted text, or what follows the
colon, or what follows "saying" (:func:`_by_text`); one that is a query takes
the whole question, or what it says to look for (:func:`_by_query`).  Addresses (email, web),
files' paths and, for a tool that takes no
number, arithmetic expressions are offered whole, never in parts (greedy
decoding closes the string at the shortest value the grammar allows:
"17" of "17 times 23"), a function of a number with it ("square root of 81",
"12 squared"), and an argument that says it is an expression or a formula
takes only those; an argument that says it is an address takes only
addresses of its kind (:func:`address_kind`), and no other argument of its
tool takes those (a message is not its recipient), and one named a day or a
time of day only the days or times said (``_moment_kind``), and an identifier
written with digits (a flight's or a parcel's number: :func:`_numbered`) only
a value with digits; with none said such an argument is left to the model,
and the check asks back.
Then the check below, for what still gets through (a model whose service
ignores the schema, a text-mode template).

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
  for "1,000"; one written in words counts too, "twenty-five" or "for two",
  but not a lone "one", a pronoun as often; and 1 for a count that the dialog says with an
  article, "a large pizza" of "How many pizzas": :func:`says_one`); a number after a minus is
  negative, and only so (:func:`_sign_at`: "-40 F" is no 40);
- an identifier written with digits (:func:`_numbered`) needs a digit: "blue" is no flight;
- an amount for a number argument that declares its currency ("How many US dollars") is not one
  the dialog says only in another currency ("40 euros": :func:`other_currency`);
- a declared (``enum``) value that is a word (:func:`_worded`: "large", "on") needs to be said;
- a list's texts each count as a text value; its numbers, an ``enum``'s codes and units ("C",
  "km"), values of an argument declared ``"free-text": true`` (a message's body, a summary: the
  model's own words by design), booleans and objects are not judged.

A bigger model that infers a value ("the city with the Eiffel Tower" ->
``Paris``) would be asked back here: the agent's ``--no-argument-check``
turns the check off.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from trustgraph.catalog.relevance import COMMON_WORDS, content_words

from .wordlists import (
    CALENDAR,
    COUNTRY_CODES,
    CURRENCIES,
    CURRENCY_CODES,
    CURRENCY_NAMES,
    LIGHT_VERBS,
    NOT_PLACES,
    SHORTHAND,
)

__all__ = ["Said", "address_kind", "argument_currency", "arithmetic", "code_prefixes", "grounded", "money_said",
           "named_arguments", "names_in", "optional_guesses", "other_currency", "own_words", "plain", "quantity_units",
           "said_kinds", "said_once", "said_values", "said_list", "says_one", "signs_at", "takes_kind", "takes_place",
           "takes_prefix", "unsaid_arguments"]

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


_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = {w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)}
_WORD_VALUES = {**{w: i for i, w in enumerate(_UNITS)}, **_TENS, "dozen": 12, "hundred": 100, "thousand": 1000}
#: A number written in words: a run of them, joined by spaces or hyphens, or by "and" after a
#: hundred or a thousand ("twenty-five", "two hundred and fifty", "a dozen"; "five and six" is two).
_NUMBER_WORDS = re.compile(rf"\b(?:{'|'.join(_WORD_VALUES)})(?:(?:[\s-]+|(?<=hundred)\s+and\s+|(?<=thousand)\s+and\s+)"
                           rf"(?:{'|'.join(_WORD_VALUES)}))*\b", re.IGNORECASE)


#: A minus sign, or the word, right before a number ("-40 F", "minus 10 celsius"): not a hyphen
#: inside a code, a range or a date ("555-0142", "10-20", "2027-05-03").
_MINUS = re.compile(r"(?:(?<![\w.,])[-\u2212]|\b(?:minus|negative)\s+)$", re.IGNORECASE)
#: A number right before such a sign: then it is a subtraction ("10 - 3", "ten minus three").
_NUMBER_BEFORE = re.compile(rf"(?:\d|\b(?:{'|'.join(_WORD_VALUES)}))[\s)]*$", re.IGNORECASE)


def _sign_at(text: str, start: int) -> int | None:
    """Where the minus of the number starting at ``start`` in ``text`` starts, when it is negative;
    None otherwise.  "Convert minus 10 celsius to fahrenheit" had converted 10 °C, and "What is
    -40 F in C?" 40 °F: the sign was never read."""
    sign = _MINUS.search(text, max(0, start - 10), start)
    if sign is None or _NUMBER_BEFORE.search(text, max(0, sign.start() - 24), sign.start()):
        return None
    return sign.start()


def _word_numbers(text: str) -> list[tuple[int, float, int]]:
    """The numbers ``text`` writes in words, each with where it starts and ends: "for two" 2, "twenty-five"
    25, "two hundred and fifty" 250, "a dozen" 12.  A lone "one" or "zero" is left out: "one" is a
    pronoun as often ("a funny one", "one c or two"); so is a word of a quoted text ("'a stitch in
    time saves nine'" is a text, not a number).  Words that make no one number are several ("two
    twelve-sided dice" is 2 and 12, where it had been 14)."""
    out = []
    for m in _NUMBER_WORDS.finditer(_QUOTED.sub(lambda q: " " * len(q.group(0)), text)):
        words = [(w.start(), w.group(0).lower(), w.end()) for w in re.finditer(r"[^\W\d_]+", m.group(0))
                 if w.group(0).lower() != "and"]
        for run in _one_number_each(words):
            if len(run) == 1 and run[0][1] in ("one", "zero"):
                continue
            total, part = 0, 0
            for _, w, _ in run:
                value = _WORD_VALUES[w]
                if w in ("dozen", "hundred", "thousand"):   # "two dozen" is 24, "a hundred" 100
                    part = (part or 1) * value
                    if value == 1000:
                        total, part = total + part, 0
                else:
                    part += value
            start, end = m.start() + run[0][0], m.start() + run[-1][2]
            sign = _sign_at(text, start)
            value = float(total + part)
            out.append((start, value, end) if sign is None else (sign, -value, end))
    return out


def _one_number_each(words: list[tuple[int, str, int]]) -> list[list[tuple[int, str, int]]]:
    """A run of number words cut where the next word cannot go on the number before it: it may
    after a ten when it is a unit ("twenty five"), after "hundred" or "thousand", or be one of
    those or "dozen" itself; "two twelve" and "five six" are two numbers."""
    runs: list[list[tuple[int, str, int]]] = []
    for word in words:
        w = word[1]
        if runs:
            before = runs[-1][-1][1]
            goes_on = (w in ("dozen", "hundred", "thousand") or before in ("hundred", "thousand")
                       or before in _TENS and 0 < _WORD_VALUES[w] < 10)
            if goes_on:
                runs[-1].append(word)
                continue
        runs.append([word])
    return runs


def _digit_readings(text: str) -> list[set[float]]:
    """Each number ``text`` writes in digits, as every value it may be: "1,000" and "1.000" a
    thousand or one, "3,5" three and a half; negative after a minus (:func:`_sign_at`)."""
    out = []
    for m in _NUMBER.finditer(text):
        n, readings = m.group(0), set()
        for reading in (n.replace(",", ""), n.replace(",", "."), n.replace(".", "").replace(",", ".")):
            try:
                readings.add(float(reading))
            except ValueError:   # "1.2.3" read with its dots kept
                continue
        out.append(readings if _sign_at(text, m.start()) is None else {-r for r in readings})
    return out


def _numbers(text: str) -> set[float]:
    return set().union(*_digit_readings(text))


class _Said:
    """The words and numbers of the dialog so far."""

    def __init__(self, texts: Iterable[str]) -> None:
        text = " ".join(texts)[:MAX_SAID_CHARS]
        self.words = _words(text)
        # Numbers in words too ("for two"), for a number argument's value; a text value's own
        # numbers are read in digits only (:func:`_text_said`: "saves nine" is words).
        self.numbers = _numbers(text) | {n for _, n, _ in _word_numbers(text)}
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


def _times_said(number: float, texts: Sequence[str]) -> int:
    """How many times ``texts`` say ``number``, in digits or in words."""
    text = " ".join(texts)[:MAX_SAID_CHARS]
    digits = sum(1 for readings in _digit_readings(text) if number in readings)
    return digits + sum(1 for _, n, _ in _word_numbers(text) if n == number)


def _times_text_said(words: str, dialog: str) -> int:
    """How many times ``dialog`` (lower case) says the text of ``words`` (lower case, one space
    between), each word whole."""
    pattern = r"[\W_]+".join(re.escape(w) for w in words.split())
    return len(re.findall(rf"(?<!\w){pattern}(?!\w)", dialog)) if pattern else 0


def _argument(arguments: Sequence[Any], name: str) -> Any:
    return next((a for a in arguments if getattr(a, "name", None) == name), None)


#: Temperature scales by name, which a request writes as a letter or a sign as often ("°F").
_SCALES = frozenset("celsius fahrenheit kelvin centigrade".split())
_WORDED = re.compile(r"[a-z]{2,}(?: [a-z]+)*")


def _worded(argument: Any) -> bool:
    """Whether a declared argument's ``enum`` values are words a request says as they are
    ("small", "large"; "on", "off"; "English", "maths"): each letters in any case but all capitals,
    and none a unit of measure, a temperature scale or a currency (said as "km", "°F", "$" as
    often), of an argument that is no unit or currency.  Such a value nobody said is a guess
    (:func:`unsaid_arguments`); a code ("C", "EUR", "UPS") or a unit is the model's to translate
    to, and not judged.  (A subject list with "English" and "French" had let the 135M model list
    the `science` homework for "what homework have I got?".)"""
    values = getattr(argument, "enum", None)
    if not values or _says(argument, _UNIT_NAMES):
        return False
    if not all(isinstance(v, str) and not v.isupper() and _WORDED.fullmatch(v.lower()) for v in values):
        return False
    # Units when half of them are: a division "premier", "first" or "second" is no duration.
    units = sum(any(w in _KIND_OF or w in _SCALES or w in CURRENCIES or w.upper() in CURRENCY_CODES
                    for w in v.lower().split()) for v in values)
    return 2 * units < len(values)


def unsaid_arguments(values: Mapping[str, Any], arguments: Sequence[Any], said: Iterable[str]) -> list[str]:
    """The names of the call's arguments whose value nobody said in the dialog (``said``: the
    question and the tool results so far); ``arguments`` are the tool's declared ones (with
    ``type`` and ``enum``).  Empty when every value was said or cannot be judged."""
    said = list(said)
    heard = _Said(said)
    dialog_cased = " ".join(said)[:MAX_SAID_CHARS]
    dialog = dialog_cased.lower()
    taken = _taken_kinds(arguments)
    # A number said only inside an address or a time the tool takes ("8" of "at 8:30") is that
    # argument's, never a number argument's.
    texts = [_cut(text, taken) for text in said] if taken else said
    counted = _Said(texts) if taken else heard
    dated = _date_numbers(dialog_cased)   # a date's parts are a number argument's only if it takes one
    out = []
    used: dict[float, int] = {}   # how many number arguments took each number so far
    texts_used: dict[str, int] = {}   # and text arguments each text (its words, lower case)
    for name, value in values.items():
        declared = _argument(arguments, name)
        if declared is not None and getattr(declared, "enum", None) is not None:
            if _worded(declared) and isinstance(value, str) and not all(heard.has_word(w) for w in value.lower().split()):
                # A declared word nobody said is a guess: the 135M model ordered a "large" pizza for
                # "Reserve a spot for 4 at Luigi's" and turned the lights "on" for "Explain how a rainbow forms".
                out.append(name)
            continue   # a declared code or unit is the model's to translate to
        if declared is not None and getattr(declared, "free_text", None):
            continue   # a value the model writes in its own words
        if declared is not None and (kind := address_kind(declared)) is not None and isinstance(value, str) \
                and (kind is not _STREET or _STREET.search(dialog_cased)):
            # An address is said whole, as an address, or not at all ("Hi" is no email address); a
            # street where the dialog says one.
            if not (kind.fullmatch(value.strip()) and value.strip().lower() in dialog):
                out.append(name)
            continue
        if declared is not None and isinstance(value, str) and _numbered(declared) and not _DIGIT.search(value):
            out.append(name)   # a flight's number is said with its digits: "blue" is none
            continue
        if declared is not None and isinstance(value, str) and _numbered(declared) and said \
                and _counted_apart(value, declared, arguments, counted_nouns(said[0])) \
                and not any(re.search(rf"(?<![\w.,]){re.escape(value.strip())}(?![\w.,])", r) for r in said[1:]):
            out.append(name)   # "2" of "get me 2 bottles" is how many, no wine's code
            continue
        if declared is not None and isinstance(value, str) and value.strip() and takes_place(declared) \
                and not _named_place(value, said):
            out.append(name)   # a place is said as one: "blue" of "Why is the sky blue?" is no city
            continue
        own = declared is not None and _moment_kind(declared)
        if declared is not None and isinstance(value, str) and any(k.fullmatch(value.strip()) for k in taken
                                                                   if k is not own):
            out.append(name)   # the recipient's address as the message, the time as the text: a guess
            continue
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float):
            try:
                number = float(value)
            except OverflowError:   # an integer past any float was not said either
                number = math.nan
            used[number] = used.get(number, 0) + 1
            if number == 1 and says_one(declared, texts):
                continue   # "a large pizza" is one pizza
            if not counted.has_number(number) or used[number] > _times_said(number, texts) \
                    or number in dated and not _says(declared, _DATE_PART_WORDS):
                # Also a number said once and given to two arguments: "What's the square root of
                # 81?" gave a tip's amount and its percent 81, and one of them is a guess.
                out.append(name)
        elif isinstance(value, str):
            key = " ".join(_TOKEN.findall(value.lower()))
            texts_used[key] = texts_used.get(key, 0) + 1
            if value.strip() and not _text_said(value, heard):
                out.append(name)
            elif texts_used[key] > 1 and (len(key) > CODE_LENGTH or not value.isupper()) \
                    and texts_used[key] > _times_text_said(key, dialog):
                # A text said once and given to two arguments: "Play some jazz" gave the song and
                # its artist "jazz" ("What's a good tip for learning the piano?" both "tip"), and
                # one of them is a guess.  (A code, "USD", may be the model's own for both.)
                out.append(name)
        elif isinstance(value, list) and any(isinstance(m, str) and m.strip() and not _text_said(m, heard)
                                             for m in value):
            out.append(name)   # a list of texts: each member said ("spinnad" of "spinach" was not)
    # An amount said in another currency than the one its argument takes is none of its.
    out += [n for n in other_currency(values, arguments, said) if n not in out]
    return out


def optional_guesses(values: Mapping[str, Any], arguments: Sequence[Any], said: Iterable[str]) -> list[str]:
    """The names of the call's optional arguments that are guesses: a value nobody said
    (:func:`unsaid_arguments`), a text (or a list of them) another argument of the call has too
    ("Showtimes for Oppenheimer" gave the film and its city ``Oppenheimer``), or an argument's
    name (a claim's free-text details were "policy_number").  Left out of the call rather than
    asked back for: the tool declared it could do without them."""
    optional = {a.name for a in arguments if getattr(a, "required", True) is False} & values.keys()
    if not optional:
        return []
    unsaid = set(unsaid_arguments(values, arguments, said))
    names = {" ".join(_TOKEN.findall(str(getattr(a, "name", "") or "").replace("_", " ").lower())) for a in arguments}

    def repeats(name: str) -> bool:
        value = values[name]
        if isinstance(value, str) and (" ".join(_TOKEN.findall(value.replace("_", " ").lower())) in names or any(
                n != name and isinstance(other, str | int | float) and not isinstance(other, bool)
                and value.strip().lower() == str(other).strip().lower() for n, other in values.items())):
            # An argument's name ("details": "policy_number"), or another's value whole ("2026-02-03"
            # again): the model filling the slot, in its own words or not.
            return True
        # (A list's members too: create-ticket's optional labels had been its title again.)
        texts = [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)] \
            if isinstance(value, list) else []
        mine = set().union(*map(_words, texts)) if texts else set()
        return bool(mine) and any(isinstance(other, str) and mine <= _words(other)
                                  for n, other in values.items() if n != name)

    return [name for name in values if name in optional and (name in unsaid or repeats(name))]


#: A text that is one phrase said three times or more, with only punctuation or spaces between
#: ("Happy birthday! Happy birthday!" may be meant; a phrase said five times over is a loop).
_REPEATED = re.compile(r"\s*(.{3,}?)(?:[\s,;.!]+\1){2,}[\s,;.!]*", re.DOTALL)
#: The longest free text looked at for a repeated phrase (the pattern is quadratic in it).
MAX_REPEATED_CHARS = 2000


#: A loop's phrase is at least this many characters: "ha ha ha" and "go go go" are said so.
MIN_LOOP_CHARS = 8
#: Where a looped phrase is joined to itself or the text cut: what is trimmed off its end.
_LOOP_JOINS = " \t\n-,;.!"


def said_once(text: str) -> str:
    """``text`` with a phrase the model wrote again and again kept once: greedy decoding of a
    free-text message can loop ("I'm running late, I'm running late, ..." five times over, the
    135M model's text message of "Text 555-0199 that I'm running late"), after words of its own
    and on to where the value is cut, mid-phrase (a cancellation's reason
    "Dentist-cancellation-by-doctor-appointment-dont-be-doctor-cancellation-by-..." for 300 characters)."""
    if len(text) > MAX_REPEATED_CHARS:
        return text
    m = _REPEATED.fullmatch(text)
    if m:
        return m.group(1)
    return _loop_cut(text) or text


def _loop_cut(text: str) -> str | None:
    """``text`` up to the end of the first round of the phrase it repeats at least three times over
    to its end (:data:`MIN_LOOP_CHARS` or longer), or None when it does not end so."""
    n = len(text)
    for period in range(MIN_LOOP_CHARS, n // 3 + 1):
        start = n - period   # the text from ``start`` on repeats every ``period`` characters
        while start > 0 and text[start - 1] == text[start - 1 + period]:
            start -= 1
        if n - start >= 3 * period:
            return text[:start + period].rstrip(_LOOP_JOINS) or None
    return None


# -- values by construction ---------------------------------------------------------------

#: The longest run of words offered as one value (a city, a topic, a currency's name).
MAX_SPAN_WORDS = 6
#: At most this many texts are offered per argument (the grammar grows with them).
MAX_SPANS = 200
#: The characters of each earlier tool result whose parts are offered too.
RESULT_CHARS = 400
_TOKEN = re.compile(r"\w+(?:[.,'’-]\w+)*")
#: A point that ends a clause: not one inside a number (12.5), nor one after a title that starts a
#: name ("Dr. Smith", "St. Louis", "Mt. Everest" are names whole, not "Smith" or "Louis").
_POINT = (r"(?<!\b(?:Dr|Mr|Ms|St|Mt|Ft|Jr|Sr))(?<!\b(?:Mrs|Rev|Gen|Col|Sgt))(?<!\bProf)(?<!\bCapt)"
          r"(?:(?<!\d)\.|\.(?!\d))")
#: Punctuation that ends a clause, parentheses aside (:data:`_CLAUSE_END`, :data:`_EXPRESSION_END`).
_ENDS = rf"{_POINT}|(?<!\d)[,:]|[,:](?!\d)|[;!?\[\]\n\"“”]"
#: Where a clause ends: punctuation, but not the point or comma inside a number (12.5, 1,000).
_CLAUSE_END = re.compile(rf"{_ENDS}|[()]")
#: A colon that sets apart what follows it: not one inside a time of day ("15:30").
_COLON = re.compile(r"(?<!\d):|:(?!\d)")
#: Words a value does not start or end with (besides the common ones): question and filler words.
_EDGE_WORDS = COMMON_WORDS | frozenset("""all also am any been could did does get got had has have he her here him his
into is it's its just know like many more most much need no not now our out over she should so some than done doing
them then there they too us very was want we were what's whats will would yes
today tonight tomorrow yesterday currently moment right thanks if one ones something anything thing kind sort
their theirs yours mine ours hers you'd i'd i'm i've you're we're they're these those whose whom
itself myself yourself themselves ourselves someone anyone everyone people whether another
called named titled why how's who's where's when's why's that's there's here's he's she's let's
instead again anyway else either neither still already yet though""".split())
#: A greeting a question may open with: no value ("Good morning!" had asked the sun in the city "Good").
_GREETING = re.compile(r"^\s*(?:(?:good\s+(?:morning|afternoon|evening|night|day)|hello|hi|hey|howdy|greetings)"
                       r"\b[\s,!.]*)+", re.IGNORECASE)
#: Verbs a request starts with ("Say something witty about the ocean", "Exchange 15 bucks for
#: pounds"): a value does not start with one (the 135M model took "Say" for the joke's topic and
#: "Exchange" for the currency), though one may end with it ("stock exchange").
_REQUEST_VERBS = frozenset("""say tell give let get put make express explain define spell translate convert
exchange tally calculate compute find look share suggest recommend amuse hit crack turn help remind
show display open play check add change send schedule pay transfer ring remember wake set start create
buy""".split())
_QUOTED = re.compile(r"(?:(?<=\s)|(?<=^)|(?<=:))([\"'“‘])(.+?)([\"'”’])(?=[\s?.!,;:)]|$)")
#: A word of chat shorthand (:data:`~.wordlists.SHORTHAND`) as a word of its own: not part of a name, a
#: code or an abbreviation ("U2", "r/cooking", "the u.s.").
_SHORTHAND = re.compile(r"(?<![\w'’/.-])(?:" + "|".join(sorted(map(re.escape, SHORTHAND), key=len, reverse=True))
                        + r")(?![\w'’/-]|\.\w)", re.IGNORECASE)


def plain(question: str) -> str:
    """``question`` with its chat shorthand written out (:data:`~.wordlists.SHORTHAND`), outside its
    quoted texts, in lower case or with a capital (not in capitals: "RN" is a nurse): what the
    ranker, the argument check and the model read.  "r there any e-bikes at hyde park corner rn"
    had looked for the docking station `rn`, and "any boxing tmrw morning?" asked back between the
    timetable and booking a class, 0.004 apart."""
    quoted = [m.span() for m in _QUOTED.finditer(question)]

    def written(m: re.Match[str]) -> str:
        word = m.group(0)
        if any(start <= m.start() < end for start, end in quoted) or not (
                word.islower() or len(word) > 1 and word[0].isupper() and word[1:].islower()):
            return word
        out = SHORTHAND[word.lower()]
        return out[0].upper() + out[1:] if word[0].isupper() else out

    return _SHORTHAND.sub(written, question)


#: An email address, and a web address (with its scheme, from "www.", or a lower-case domain).
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")   # starts a word: linear in the text
_WEB = re.compile(r"(?:\bhttps?://|\bwww\.)[^\s\"'<>]+|(?<![@\w.-])(?:[a-z0-9-]+\.)+[a-z]{2,6}\b(?:/[^\s\"'<>]*)?")
#: A file's path: one that starts at the root, the home or the current folder ("/etc/hosts",
#: "~/notes", "./run.sh"), or folders and a file with its extension ("notes/todo.txt"); not a
#: fraction, a date or a unit ("3/5", "km/h", "and/or").
_PATH = re.compile(r"(?<![\w./~-])(?:(?:~|\.{1,2})?/[\w.~-]*\w(?:/[\w.~-]*\w)*/?"
                   r"|[\w.-]+(?:/[\w.-]+)*/[\w-]+\.[^\W\d_]\w{0,5})(?![\w/])")
#: A file: its path (:data:`_PATH`), or its name with its extension ("README.md", "config.yaml"; not
#: "St.Louis": an extension is in one case).
_FILE = re.compile(rf"{_PATH.pattern}|(?<![\w./@-])[\w-]+\.(?:[a-z][a-z0-9]{{0,4}}|[A-Z][A-Z0-9]{{0,4}})(?![\w/@.-])")
#: A bank account's IBAN: its country's two capitals and two check digits, then groups of capitals
#: and digits, written in fours or not ("GB29 NWBK 6016 1331 9268 19", "DE44500105175407324931").
_IBAN = re.compile(r"(?<![\w-])[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,3})?(?![\w-])")
#: An IP address: four numbers of one to three digits joined by dots ("185.60.216.35"), or an IPv6
#: one (eight groups of hex digits, or fewer with "::": "2001:db8::1"; no time: "12:30:45").
_IP = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w.]?\d)"
                 r"|(?<![\w:])(?:(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}"
                 r"|(?:[0-9a-fA-F]{1,4}:){0,6}[0-9a-fA-F]{0,4}::(?:[0-9a-fA-F]{1,4}:){0,6}[0-9a-fA-F]{0,4})(?![\w:])")
#: An address is offered whole and never in parts (its dots, slashes and colon end no clause, its
#: "@" splits no word: "notes/todo.txt" is no "notes", "README.md" no "md"); an argument that says
#: it is an email or a web address takes only an address of its kind.  So is an IBAN (whose digits
#: are no amount: "Send 150 euros to account GB29 NWBK 6016 1331 9268 19" had paid "1331").
_ADDRESS = re.compile(f"{_EMAIL.pattern}|{_WEB.pattern}|{_FILE.pattern}|{_IBAN.pattern}|{_IP.pattern}")
#: A host: a domain name ("github.com", as :data:`_WEB` reads one) or an IP address.
_HOST = re.compile(f"{_IP.pattern}|{_WEB.pattern}")
#: A street address: a house number, up to three words of its street's name and the kind of
#: street ("42 Harbour Street", "7 mill lane", "221b Baker St"), or, with no number, a name written
#: capitalised ("Mill Lane"), read whole: "from 7 Mill Lane" had collected 7 parcels from the
#: example's "12 Elm Road", the street left to the model.
_STREET_KINDS = ("street|st|road|rd|lane|ln|avenue|ave|close|way|drive|dr|place|court|ct|crescent|terrace|gardens|"
                 "square|sq|boulevard|blvd|hill|row|grove|parade|mews|walk|highway")
#: (No street's name is a month or a small word: "on 3 July at Oak Road" is "Oak Road".)
_NOT_STREET_NAME = rf"(?!(?i:{'|'.join(sorted(CALENDAR))}|at|on|in|to|for|from|by|and|or|of|the|a|an|my)\b)"
_STREET = re.compile(
    # A number, its street's name capitalised, and its kind in any case ("42 Harbour Street", "7 Mill lane")
    rf"(?<![\w.,])\d{{1,5}}[A-Za-z]?,?[ \t]+(?:{_NOT_STREET_NAME}[A-Z][\w'’-]*[ \t]+){{1,3}}(?i:{_STREET_KINDS})\b\.?"
    # or typed small, with a kind no other word is ("7 mill lane"; not "a 350 km drive")
    rf"|(?<![\w.,])\d{{1,5}}[A-Za-z]?,?[ \t]+(?:{_NOT_STREET_NAME}[a-z][\w'’-]*[ \t]+){{1,2}}"
    rf"(?:street|road|lane|avenue|st|rd|ave)\b\.?"
    # or, with no number, its name and kind capitalised ("Mill Lane")
    rf"|(?<![\w.,])(?:{_NOT_STREET_NAME}[A-Z][\w'’-]*[ \t]+){{1,3}}"
    rf"(?:{'|'.join(kind.capitalize() for kind in _STREET_KINDS.split('|'))})\b")
#: What an argument's name or description says when its value is an address of that kind.
_ADDRESS_KINDS = ((_EMAIL, frozenset({"email", "emails"})),
                  (_WEB, frozenset({"url", "urls", "uri", "link", "website", "webpage", "homepage"})),
                  (_IP, frozenset({"ip", "ipv4", "ipv6"})),
                  # (After the others: "The recipient's email address" is an email's; not "street" or
                  # "postcode" alone: "The town, street or place", "the code on the street sign".)
                  (_STREET, frozenset({"address", "addresses"})))
#: How a host argument is named ("host", "domain", "hostname"), or described ("The domain name"):
#: no "domain" alone in a description ("the domain of knowledge").
_HOST_NAMES = frozenset({"host", "hostname", "domain", "fqdn"})
_HOST_SAID = re.compile(r"\b(?:host\s*name|domain\s+name|fqdn)s?\b", re.IGNORECASE)
#: What an arithmetic expression is made of: numbers, words, operators and parentheses.
_EXPRESSION_PART = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+|[-+*/×÷^%=()]")
#: Where an expression ends: where a clause does (:data:`_CLAUSE_END`), but not at a parenthesis,
#: which groups arithmetic as often ("(3 + 4) * 12").
_EXPRESSION_END = re.compile(_ENDS)
#: At most this many words or operators between two numbers of one expression ("divided by"; an
#: article is not counted: "2 to the power of 10").
EXPRESSION_GAP = 3
_ARTICLES = frozenset({"the", "a", "an"})
#: What an argument's name or description says when its value is an arithmetic expression.
_EXPRESSION_WORDS = frozenset({"expression", "expressions", "formula", "equation", "calculation", "arithmetic"})
#: A function of one number written before it ("the square root of 81", "log of 100") or after it
#: ("12 squared", "5 factorial"): part of the expression, which a lone number then is too.
_FUNCTION_BEFORE = re.compile(r"\b(?:(?:square|cube)\s+root|log(?:arithm)?|ln|sine?|cos(?:ine)?|tan(?:gent)?"
                              r"|factorial|absolute\s+value|square|cube)\s+of\s+$", re.IGNORECASE)
_FUNCTION_AFTER = re.compile(r"[ \t]+(?:squared|cubed|factorial)\b", re.IGNORECASE)
#: An operation said in words before two numbers or more ("multiply 48 by 365", "add 5 and 7", "the
#: sum of 3 and 4"): part of their expression, which "48 by 365" alone would not say.
_OPERATION_BEFORE = re.compile(r"\b(?:multiply|divide|add|subtract|(?:sum|product|average|mean|quotient)\s+of"
                               r"|difference\s+between)\s+$", re.IGNORECASE)
#: How far before a number such a function is looked for ("absolute value of " is 18 characters).
FUNCTION_REACH = 40


#: Where a description names example values, not what the tool does: "e.g. kilometres to miles",
#: "such as EUR": to the end of the clause ("like" is left alone: it is a verb as often).
_EXAMPLE_LEAD = re.compile(r"e\.\s?g\.|(?:eg|for example|for instance|such as)\b", re.IGNORECASE)
_EXAMPLES = re.compile(rf"\b(?:{_EXAMPLE_LEAD.pattern})[^.;:()]*", re.IGNORECASE)


def own_words(name: str, description: str) -> set[str]:
    """A tool's own words: the content words of its name and description, but not of the
    examples its description gives ("Convert a quantity between units of measure, e.g.
    kilometres to miles": "miles" is a value the converter takes, not a word about it)."""
    return content_words(f"{name} {_EXAMPLES.sub(' ', description or '')}")


class _Taken(NamedTuple):
    """What a dialog says of the kinds of value a tool's arguments take (:meth:`Said.taken`)."""

    values: tuple[str, ...]     # each address or time said
    rest: tuple[str, ...]       # the dialog's texts with those cut out
    numbers: list[float]        # the numbers the rest says


class Said:
    """What the dialog offers a call's arguments: texts (spans) and numbers; ``kept`` the texts
    offered whatever the tool (quoted texts); ``expressions`` its arithmetic ones (:func:`_expressions`);
    ``dialog`` the texts they were read from (the question, then each result's start); ``question`` the question itself, offered only to an
    argument that is a question (:func:`asks_whole`).  Read off the question once per step, for
    every tool's schema: ``units`` (:func:`quantity_units`), ``into`` (where what it converts
    into may start: :func:`_converted_into`), ``words`` (its words, lower case) and ``apart`` (the texts it sets apart: its
    quoted ones, else what follows its colon, else the words it says a message carries: :func:`_message_words`)."""

    def __init__(self, texts: list[str], numbers: list[float], kept: frozenset[str] = frozenset(),
                 question: str = "", expressions: frozenset[str] = frozenset(),
                 dialog: tuple[str, ...] = ()) -> None:
        self.texts = texts
        self.expressions = expressions
        self.dialog = dialog
        # What values are read from: the dialog's texts, or the question alone when none are given.
        self.heard = dialog or (question,)
        self.numbers = numbers
        self.kept = kept
        self.question = question
        self.units = quantity_units(question)
        self.signs = frozenset(currency_codes(question))
        self.lists = _lists(question, set(texts))
        self.into = _converted_into(question)
        self.words = _words(question)
        self.percents = _percents(question)
        self.number_units = _units_written(question)
        self.number_kinds = {value: kind for value, (kind, _) in self.number_units.items()}
        self.counted = counted_nouns(question)
        self.clock = _clock_numbers(question)
        self.dated = _date_numbers(question)
        self.date_parts = _date_parts(texts, question)
        # Typed all in capitals (or every word capitalised), its capitals tell no code from a word.
        self.caseless = title_cased(question)
        self.money = frozenset(money_said(question))
        self.streets = tuple(dict.fromkeys(m.group(0) for text in self.heard for m in _STREET.finditer(text)))
        self.numbered_names = _numbered_names(question)
        self.currencies = said_currencies(question)
        colon = None if kept else _after_colon(question)
        message = None if kept or colon is not None else _message_words(_cut(question, (_ADDRESS,)))
        self.apart = kept if colon is None and message is None else frozenset({colon or message})
        self._with_noun: dict[str, str | None] = {}
        self._taken: dict[tuple[re.Pattern[str], ...], _Taken] = {}
        self._places: dict[str, bool] = {}
        self._where: dict[str, bool] = {}
        self._after: dict[tuple[str, ...], bool] = {}   # :meth:`said_after`, :meth:`said_before`
        self._names: list[str] | None = None   # :func:`_names_in`
        # A question of one run of words ("Greet Ada", "Paris") is offered whole where nothing else
        # is; one of filler words only is no value ("thanks, that's all for now" had been the name
        # of a contact to phone).
        self.says_something = any(t.lower() not in _EDGE_WORDS for t in _TOKEN.findall(question[:MAX_SAID_CHARS]))

    def is_place(self, text: str) -> bool:
        """Whether the dialog says ``text`` as a place (:func:`_named_place`): each text read once
        per step, however many tools offer it (a tool's own texts too: "Paris" of "Weather Paris")."""
        if text not in self._places:
            self._places[text] = _named_place(text, self.heard)
        return self._places[text]

    def said_where(self, text: str) -> bool:
        """Whether the question says ``text`` as where something is: a place (:meth:`is_place`)
        right after "in", "at" or "near" ("Where can I watch Oppenheimer in Chicago?")."""
        if text not in self._where:
            self._where[text] = bool(re.search(rf"{_AFTER_PLACE.pattern}(?:the\s+)?{re.escape(text)}(?!\w)",
                                               self.question[:MAX_SAID_CHARS], re.IGNORECASE)) and self.is_place(text)
        return self._where[text]

    def said_after(self, word: str, text: str) -> bool:
        """Whether the question says ``text`` right after ``word`` (and "the", or whose it is): who made
        a work after "by" ("Play Up by Olly Murs"), where a ride starts after "from" ("a cab from the
        Hilton"), the account money leaves "out of my savings"."""
        key = (word, text)
        if key not in self._after:
            said = r"\s+".join(map(re.escape, word.split()))
            self._after[key] = bool(re.search(rf"\b{said}\s+(?:(?:the|my|our|your|his|her|their)\s+)?"
                                              rf"{re.escape(text)}(?!\w)", self.question[:MAX_SAID_CHARS],
                                              re.IGNORECASE))
        return self._after[key]

    def said_before(self, word: str, text: str) -> bool:
        """Whether the question says ``text`` right before ``word`` and something after it: where a
        trip starts, before "to" ("Piraeus to Santorini")."""
        key = (word, text, "before")
        if key not in self._after:
            self._after[key] = re.search(rf"(?<!\w){re.escape(text)}\s+{re.escape(word)}\s+\w",
                                         self.question[:MAX_SAID_CHARS], re.IGNORECASE) is not None
        return self._after[key]

    def with_noun(self, value: str) -> str | None:
        """``value`` with its noun when it is a proper adjective without it (:func:`_noun_after`):
        each value read once per step, however many tools' conversions offer it."""
        if value not in self._with_noun:
            self._with_noun[value] = _noun_after(value, self.question)
        return self._with_noun[value]

    def taken(self, kinds: tuple[re.Pattern[str], ...]) -> _Taken:
        """What the dialog says of ``kinds`` (the addresses and times a tool's arguments take:
        :func:`_taken_kinds`) and what it says apart from them: read once per step, however many
        tools take the same kinds."""
        if kinds not in self._taken:
            values = tuple(m.group(0) for k in kinds for text in self.dialog for m in k.finditer(text))
            rest = tuple(_cut(text, kinds) for text in self.dialog)
            self._taken[kinds] = _Taken(values, rest, _numbers_of(rest))
        return self._taken[kinds]

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
            if text not in whole and (text in self.kept or _ADDRESS.fullmatch(text) or not tokens
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


#: Where ``unquoted`` text (:func:`_spans`) splits into clauses: where a clause ends, and where a
#: quoted part or an address was cut out (a ``|``); and where it splits for expressions.
_PIECE_END = re.compile(rf"{_CLAUSE_END.pattern}|\|")
_EXPRESSION_PIECE_END = re.compile(rf"{_EXPRESSION_END.pattern}|\|")


def _pieces(text: str, ends: re.Pattern[str] = _PIECE_END) -> list[tuple[int, str]]:
    """The pieces of ``text`` between the matches of ``ends``, each with where it starts."""
    out, start = [], 0
    for m in ends.finditer(text):
        out.append((start, text[start:m.start()]))
        start = m.end()
    out.append((start, text[start:]))
    return out


_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
           "jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec")
#: A day, as a request says one: "tomorrow", "next Friday", "last night", "3 May", "May 3rd, 2027", "2027-05-03",
#: "3/5" (a month's name only with its day: "may" alone is a verb as often).
_DATE = re.compile(rf"\b(?:(?:last|this)\s+(?:night|morning|afternoon|evening)|"
                   rf"today|tonight|tomorrow|yesterday|(?:next|this|last)\s+(?:week|weekend|month|year|"
                   rf"{_WEEKDAYS})|(?:{_WEEKDAYS})|\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?|"
                   rf"\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})(?:\s+\d{{4}})?|"
                   rf"(?:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?)\b", re.IGNORECASE)
#: A time of day: "3pm", "10:30 am", "8.50pm" (a point before its minutes, with am or pm), "15:30", "noon",
#: "midnight".
_HOUR = r"(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
#: ... and in words: "half past seven", "quarter to 8", "seven o'clock".
_TIME = re.compile(rf"\b(?:\d{{1,2}}(?:[:.]\d{{2}})?\s*(?:am|pm|a\.m\.|p\.m\.)|\d{{1,2}}:\d{{2}}|noon|midnight|"
                   rf"(?:half|quarter)\s+(?:past|to)\s+{_HOUR}(?:\s*(?:am|pm))?|{_HOUR}\s+o['’]clock)(?!\w)",
                   re.IGNORECASE)
#: The last part of an argument's name that says its value is a day, or a time of day ("date",
#: "start_date", "dueDate", "when"; "time", "meeting_time"): its name only, since a description
#: speaks of a time as often when the value is a city ("The city whose local time to give").
_DAY_NAMES = frozenset({"date", "day", "when", "deadline"})
_TIME_NAMES = frozenset({"time", "hour", "clock"})


#: The words of an argument's name that say it starts or ends a range, and the words a question
#: says its value after.
_RANGE_NAMES = {"start": frozenset({"start", "from", "begin", "begins", "first", "since"}),
                "end": frozenset({"end", "to", "until", "till", "last", "ends"})}
_RANGE_WORDS = {"start": ("from", "since", "starting", "beginning", "out of"),
                "end": ("to", "until", "till", "through", "into")}


#: The small words that lead into a time or an address said after a run ("after 6pm", "at 8:30").
_LEADS_IN = frozenset("after before at by on from until till around about for in to of".split())


def _named_text(argument: Any) -> bool:
    """Whether a declared argument's name says it is a text (``message``, ``body``, ``text``): its
    description may say "body" of anything ("The person's body weight")."""
    return bool(set(_name_words(argument).split()) & _TEXT_WORDS)


def _outside(texts: Sequence[str], apart: Iterable[str], question: str) -> list[str]:
    """Of ``texts``, those the question says somewhere outside the texts it sets apart (``apart``:
    what a message carries), and none of those itself."""
    spans = [(m.start(), m.end()) for a in apart if a for m in re.finditer(re.escape(a), question)]
    if not spans:
        return list(texts)

    def outside(text: str) -> bool:
        found = [(m.start(), m.end()) for m in re.finditer(rf"(?<!\w){re.escape(text)}(?!\w)", question)]
        return not found or any(all(end <= s or start >= e for s, e in spans) for start, end in found)
    return [t for t in texts if t not in apart and outside(t)]


def _cuts_across(text: str, values: Sequence[str], dialog: Sequence[str]) -> bool:
    """Whether wherever the dialog says ``text`` it starts or ends inside one of ``values`` (the
    times and addresses a tool's arguments take) without holding it whole: a run read across a
    time's edge ("3 June at 9" of "on 3 June at 9am") is no value, of the time's argument or
    another's."""
    places = [(m.start(), m.end(), said) for said in dialog
              for m in re.finditer(re.escape(text), said)]
    if not places or not values:
        return False
    edges = {said: [(m.start(), m.end()) for v in values for m in re.finditer(re.escape(v), said)]
             for said in dict.fromkeys(said for _, _, said in places)}

    def across(start: int, end: int, said: str) -> bool:
        return any(a < start < b < end or start < a < end < b for a, b in edges[said])
    return all(across(start, end, said) for start, end, said in places)


def _before_times(prop: dict[str, Any], values: Sequence[str]) -> dict[str, Any]:
    """A text argument's offered values, each without the one of ``values`` (the times and addresses
    the tool's other arguments take) it ends with after other words: "to liverpool lime street after
    6pm" had been the station "liverpool lime street after 6pm", the time then left out as a repeat
    of it, and "Remind me to call mom at 5pm" is the text "call mom" at 5pm."""
    offered = prop.get("enum")
    if not values or not isinstance(offered, list):
        return prop
    cut = [v for v in dict.fromkeys(_before_taken(t, values) if isinstance(t, str) else t for t in offered) if v != ""]
    return {**prop, "enum": cut} if cut and cut != offered else prop


def _before_taken(text: str, values: Sequence[str]) -> str:
    """``text`` without the one of ``values`` (what the dialog says of the kinds a tool's arguments
    take) it ends with after other words, nor the small words leading into it ("liverpool lime
    street after 6pm" is "liverpool lime street"); ``text`` itself when it ends with none ("The
    Midnight Library" keeps its "Midnight"; empty when only small words come before it)."""
    starts = [m.start() for v in values if v and v != text
              for m in [re.search(rf"(?<!\w){re.escape(v)}[\s.,;:!?]*$", text)] if m is not None and m.start() > 0]
    if not starts:
        return text
    tokens = list(_TOKEN.finditer(text[:min(starts)]))
    while tokens and tokens[-1].group(0).lower() in _LEADS_IN:
        tokens.pop()
    return text[:tokens[-1].end()] if tokens else ""


def _range_edge(argument: Any) -> str | None:
    """"start" or "end" when a declared argument's name says it starts or ends a range
    (``start_date``, ``end_time``, ``from_date``), else None."""
    words = set(_name_words(argument).split())
    edges = [edge for edge, names in _RANGE_NAMES.items() if words & names]
    return edges[0] if len(edges) == 1 else None


def _by_edge(prop: dict[str, Any], argument: Any, said: Said) -> dict[str, Any]:
    """``prop`` of a declared-values argument that starts or ends a range (:func:`_range_edge`:
    ``from_account``, ``to_account``), narrowed to the values the question says after the words
    that start or end one, when it says any: "shift £120 out of savings into checking" had moved
    the money from checking to savings (both accounts offered to both arguments)."""
    values = prop.get("enum")
    if not isinstance(values, list) or len(values) < 2 or (edge := _range_edge(argument)) is None:
        return prop
    after = _at_edge(values, edge, said)
    return {**prop, "enum": after} if after else prop


def _at_edge(values: Sequence[Any], edge: str, said: Said) -> list[Any]:
    """Of ``values``, those the question says after the words that start (``edge`` "start":
    "from", "out of"...) or end ("end": "to", "into"...) a range; else those it says right before
    an arrow, for a start, or right after one, for an end ("OX2 6HX -> BS8 1TH")."""
    words = [v for v in values if isinstance(v, str) and any(said.said_after(w, v) for w in _RANGE_WORDS[edge])]
    if words or not _ARROW.search(said.question[:MAX_SAID_CHARS]):
        return words
    pattern = r"(?<!\w){}\s*(?:->|→|=>)" if edge == "start" else r"(?:->|→|=>)\s*{}(?!\w)"
    return [v for v in values if isinstance(v, str)
            and re.search(pattern.format(re.escape(v)), said.question[:MAX_SAID_CHARS]) is not None]


#: An arrow written between where something starts and where it ends.
_ARROW = re.compile(r"->|→|=>")


def _moment_kind(argument: Any) -> re.Pattern[str] | None:
    """``_DATE`` or ``_TIME`` when a declared argument's name says its value is one, else None."""
    # The name's last part: a "due_date" is a day, a "time_zone" or a "date_format" is not.
    last = _last_name_word(argument)
    return _DATE if last in _DAY_NAMES else _TIME if last in _TIME_NAMES else None


#: The last part of a string argument's name that says its value is written with digits.
_NUMBER_NAMES = frozenset({"number", "num", "no", "nr"})
#: An example that is one identifier of letters and digits ("BA117", "1Z999AA1", "A-12"; in two groups
#: of capitals and digits, "LS6 2AB", a postcode), or of digits alone that another example of letters
#: and digits follows ("e.g. 73 or N8": a bus line), then the example's end, a comma or an "or".
_NUMBERED_EXAMPLE = re.compile(r"\s*(?:(?=[\w-]*\d)(?=[\w-]*[^\W\d_])[\w-]+(?:[ \t]+(?=[A-Z]*\d)[A-Z\d]{2,4}\b)?"
                               r"|\d+(?=\s*(?:,|or\b)\s*(?=[\w-]*\d)(?=[\w-]*[^\W\d_])[\w-]+))\s*(?:$|,|or\b)")


#: What an identifier's name or description says when it is a phone number, and a phone number
#: as written: digits with spaces, dots, dashes or parentheses between them, a "+" before.
_PHONE_WORDS = frozenset({"phone", "telephone", "mobile", "cell", "tel", "sms"})
_PHONE = re.compile(r"(?<![\w+])\+?\(?\d[\d \t().-]{4,}\d(?![\w.,]\d)")


def _numbered(argument: Any) -> bool:
    """Whether a declared string argument is an identifier written with digits: its name ends in
    "number" ("flight_number", "tracking_number", "phone_number"), or the example its description
    gives is one token of letters and digits ("The flight, e.g. BA117"; not "e.g. 2 * (3 + 4)")."""
    if getattr(argument, "type", None) not in (None, "string"):
        return False
    if _last_name_word(argument) in _NUMBER_NAMES:
        return True
    examples = _EXAMPLES.finditer(str(getattr(argument, "description", "") or ""))
    return any(_NUMBERED_EXAMPLE.match(m.group(0), _EXAMPLE_LEAD.match(m.group(0)).end()) for m in examples)


#: An example that is one code in capitals ("e.g. AAPL").
_CODE_EXAMPLE = re.compile(r"\s*[A-Z]{2,6}\s*(?:$|,|or\b)")
#: A code in capitals said: 2 to 6 of them, a word of its own.
_CODE_SAID = re.compile(r"(?<![\w'’./-])[A-Z]{2,6}(?![\w'’-]|\.\w)")
#: Words often written in capitals that are no code: "OK", "9 AM".
_NOT_CODES = frozenset({"OK", "AM", "PM", "ASAP", "FYI", "BTW", "PS", "TV"})
#: What an argument says when its codes are of a kind read apart (a currency's, a unit's, a language's).
_KINDS_APART = frozenset({"currency", "currencies", "money", "unit", "units", "language", "languages", "locale"})


def _coded(argument: Any) -> bool:
    """Whether a declared string argument is a code in capitals: the example its description gives
    is one ("The stock ticker symbol, e.g. AAPL"), and it is no currency, unit or language (those
    are read by their names too: "yen", "miles")."""
    if getattr(argument, "type", None) not in (None, "string") or _says(argument, _KINDS_APART):
        return False
    examples = _EXAMPLES.finditer(str(getattr(argument, "description", "") or ""))
    return any(_CODE_EXAMPLE.match(m.group(0), _EXAMPLE_LEAD.match(m.group(0)).end()) for m in examples)


def address_kind(argument: Any) -> re.Pattern[str] | None:
    """The pattern of the address a declared argument is (its name or description says "email",
    or "url", "link", "website"...), or None when it is no address: also when it says it is a text
    the tool carries or what the text is about (a ``message`` "What the email says", a ``subject``
    "The email's subject line", a ``link_text``: the probe's message took only addresses)."""
    words = _words(f"{getattr(argument, 'name', '')} {getattr(argument, 'description', '') or ''}")
    if words & _NOT_ADDRESS:
        return None
    if {"e", "mail"} <= words:
        words = words | {"email"}
    if _last_name_word(argument) in _HOST_NAMES or _HOST_SAID.search(str(getattr(argument, "description", "") or "")):
        return _HOST   # a domain name or an IP address ("The host name or IP address to ping")
    kind, names = next(((pattern, says) for pattern, says in _ADDRESS_KINDS if words & says), (None, frozenset()))
    if kind is None or _words(str(getattr(argument, "name", "") or "").replace("_", " ")) & names:
        return kind
    # Only its description names the kind: an example of something else says where the word came from
    # ("The booking reference from the confirmation email, e.g. CS-20931" took only email addresses).
    description = str(getattr(argument, "description", "") or "")
    examples = [re.split(r"[;()]", description[m.end():], maxsplit=1)[0] for m in _EXAMPLE_LEAD.finditer(description)]
    return kind if not examples or any(kind.search(example) for example in examples) else None


#: What an argument's name or description says when its value is a file's (or a folder's) path.
_PATH_WORDS = frozenset({"path", "paths", "file", "files", "filename", "folder", "directory", "dir"})


#: A phone number as a request writes one: digits in groups ("+1 415 555 0199", "07700 900123",
#: "(212) 555-0100", "555-0142"), seven to fifteen of them (E.164's most), and no date
#: ("2027-05-03"); a run of digits alone is a parcel's number as often, and an IBAN's groups are
#: more ("DE44 5001 0517 5407 3249 31").
_PHONE_SAID = re.compile(r"(?<![\w+.,])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?)?\d{2,5}(?:[ .-]\d{2,6}){1,3}(?![\w.,]?\d)")
MIN_PHONE_DIGITS, MAX_PHONE_DIGITS = 7, 15


#: Groups of capitals and digits written right before a number's, the first of them both ("GB29
#: NWBK "): the number is the rest of a code, an IBAN's, no phone number.
_CODE_GROUPS_BEFORE = re.compile(r"\b(?=[A-Z0-9]*[A-Z])(?=[A-Z0-9]*\d)[A-Z0-9]{2,6}[ \t]+(?:[A-Z0-9]{2,6}[ \t]+)*$")


def _says_phone(text: str) -> bool:
    """Whether ``text`` says a phone number (:data:`_PHONE_SAID`, 7 to 15 digits): not a date, nor
    the digits of a longer code ("Send 150 euros to account GB29 NWBK 6016 1331 9268 19" had
    texted them)."""
    return any(MIN_PHONE_DIGITS <= len(_DIGIT.findall(m.group(0))) <= MAX_PHONE_DIGITS
               and not _DATE.fullmatch(m.group(0)) and not _CODE_GROUPS_BEFORE.search(text, max(0, m.start() - 40),
                                                                                    m.start())
               for m in _PHONE_SAID.finditer(text))


_NUMERAL = r"\d+(?:[.,]\d+)?"
#: A sum said: two numbers with an operation between them ("17 times 23", "7 x 8"; "10 - 3" and
#: "144 / 12" with spaces), a number squared or cubed, a root of one.  Not numbers a
#: word apart ("2 apples and 3 pears"), nor a range, a date or a phone number ("3-4pm", "12/05",
#: "555-1234"), nor a percentage.
_SUM_SAID = re.compile(
    rf"(?<![\w.,/-]){_NUMERAL}(?:\s*[+*×÷^]\s*|\s+(?:-|/|x|times|plus|minus|multiplied\s+by|divided\s+by|"
    rf"over|to\s+the\s+power\s+of)\s+){_NUMERAL}(?![\w.,/-]?\d)|(?<![\w.,])\d+(?:\.\d+)?\s+(?:squared|cubed)\b|"
    rf"\b(?:square|cube)\s+root\s+of\s+\d", re.IGNORECASE)


#: A British postcode ("LS1 4AP", "M14 5RQ", "SW1A 1AA"): an outward code of one or two letters
#: and a digit or two (or a digit and a letter), a space, and a digit and two letters.
_POSTCODE = re.compile(r"(?<![\w-])[A-Z]{1,2}\d[A-Z\d]?[ \t]\d[A-Z]{2}(?![\w-])")
#: What an argument's name or description says when it takes a postcode.
_POSTCODE_WORDS = frozenset({"postcode", "postcodes", "zip", "zipcode", "postal"})


def said_kinds(question: str) -> tuple[re.Pattern[str], ...]:
    """The kinds of value that hardly any tool but one taking them would be asked with, that
    ``question`` says: an email address, a web address, a file (its path or its name), a phone
    number, a sum (:data:`_SUM_SAID`), a host or an IP address, a postcode.  Read once per step, before any tool's arguments (most
    questions say none, and then none are read: :func:`takes_kind`)."""
    text = question[:MAX_SAID_CHARS]
    kinds = tuple(kind for kind in (_EMAIL, _WEB, _FILE, _SUM_SAID, _IP, _POSTCODE) if kind.search(text))
    if _WEB in kinds or _IP in kinds:
        kinds = (*kinds, _HOST)   # a web address or an IP address is a host (:data:`_HOST`): not searched again
    if _says_message(text):
        kinds = (*kinds, _MESSAGE_SAID)
    return (*kinds, _PHONE_SAID) if _says_phone(text) else kinds


def takes_kind(arguments: Sequence[Any], kinds: tuple[re.Pattern[str], ...]) -> bool:
    """Whether one of a tool's ``arguments`` takes a value of one of ``kinds`` (:func:`said_kinds`):
    an address (:func:`address_kind`), or a file for an argument that says "path", "file",
    "folder"...  Evidence of the tool beside its meaning: the 22M encoder put a contact lookup
    first for "Show me what's in /etc/hosts" ("hosts" near "contacts"), and the 135M model took
    it (``steps.by_kind``)."""
    return any(_kind_taken(str(getattr(a, "name", "") or ""), str(getattr(a, "description", "") or "")) in kinds
               for a in arguments)


#: A code written with a prefix of capitals and a hyphen ("EXP-2304", "RX-448812"): the prefix says
#: what the code identifies.
_PREFIXED_CODE = re.compile(r"(?<![\w-])([A-Z]{1,5})-\d{2,}(?![\w-])")


def code_prefixes(text: str) -> frozenset[str]:
    """The prefixes of the codes ``text`` writes with one (:data:`_PREFIXED_CODE`)."""
    return frozenset(m.group(1) for m in _PREFIXED_CODE.finditer(text[:MAX_SAID_CHARS]))


def takes_prefix(arguments: Sequence[Any], prefixes: frozenset[str]) -> bool:
    """Whether one of a tool's ``arguments`` gives as its example a code with one of ``prefixes``
    ("The expense report number, e.g. EXP-2291" for "has EXP-2304 been approved yet??", which the
    encoder had put nearer a ferry's check-in, whose booking references are "FX-...")."""
    return bool(prefixes) and any(
        bool(code_prefixes(m.group(0)) & prefixes)
        for a in arguments for m in _EXAMPLES.finditer(str(getattr(a, "description", "") or "")))


class _Named(NamedTuple):
    """An argument's name and description, as :func:`address_kind` and :func:`_says` read them."""

    name: str
    description: str


@functools.lru_cache(maxsize=4096)
def _kind_taken(name: str, description: str) -> re.Pattern[str] | None:
    """The kind of value (:func:`said_kinds`) an argument of this name and description takes, if
    any: read once per argument, not once per step for each of a thousand tools."""
    argument = _Named(name, description)
    kind = address_kind(argument)
    if kind is None and _says(argument, _PATH_WORDS) and not _says(argument, _NOT_ADDRESS):
        kind = _FILE
    if kind is None and _says(argument, _PHONE_WORDS) and _says(argument, _NUMBER_NAMES):
        kind = _PHONE_SAID   # "Text +1 415 555 0199: running late" had started a 10-minute timer
    if kind is None and _says(argument, _EXPRESSION_WORDS):
        kind = _SUM_SAID     # "Work out 17 times 23" had asked back with a BMI calculator first
    if kind is None and _says(argument, _CARRIED):
        kind = _MESSAGE_SAID
    if kind is None and _says(argument, _POSTCODE_WORDS):
        kind = _POSTCODE     # "wher can i juice up my leaf around LS1 4AP?" had offered wine
    return kind


def _taken_kinds(arguments: Sequence[Any]) -> list[re.Pattern[str]]:
    """The kinds of value a tool's arguments take by kind: addresses (:func:`address_kind`), days
    and times of day (:func:`_moment_kind`).  A value of one of them is that argument's, never
    another's: a message is not its recipient, and a reminder's text is not its time ("Remind me
    to call mom at 5pm" reminded of "5pm")."""
    strings = [a for a in arguments if getattr(a, "type", None) in (None, "string")]   # an "hour" may be a number
    return [k for k in (address_kind(a) or _moment_kind(a) for a in strings) if k is not None]


def _cut(text: str, kinds: Iterable[re.Pattern[str]]) -> str:
    """``text`` with each match of ``kinds`` cut out, as a ``|`` (what is left is read apart)."""
    for kind in kinds:
        text = kind.sub(" | ", text)
    return text


def _addresses(text: str) -> list[str]:
    """The web and email addresses in ``text``, without the punctuation that ends a sentence."""
    return [m.group(0).rstrip(".,;:!?)") for m in _ADDRESS.finditer(text)]


#: What comes right before a number inside a code: a letter that is no "x" of a product ("M14", "LS6"; not "3x4").
_IN_CODE_BEFORE = re.compile(r"(?:(?<![\d\s])[xX]|[^\W\dxX_])$")
#: What comes right after a number inside a code: two capitals ("5RQ", "2AB"; not "10km", "180C").
_IN_CODE_AFTER = re.compile(r"[A-Z]{2}")


def _in_code(text: str, start: int, end: int) -> bool:
    """Whether the number at ``text[start:end]`` is written inside a code, glued to its letters."""
    # (The character right before it, read from there: a search from the text's start would read the
    # whole text again for each of its numbers.)
    return bool(_IN_CODE_BEFORE.search(text, max(0, start - 1), start)) or bool(_IN_CODE_AFTER.match(text, end))


def _expressions(piece: str) -> list[tuple[int, str]]:
    """The arithmetic expressions of one ``piece`` of text (cut at :data:`_EXPRESSION_END`): runs
    from a number to a later one with at most :data:`EXPRESSION_GAP` words or operators between
    each two ("17 times 23", "1024 divided by 8", "2+2"), with the parentheses that balance them
    ("(3 + 4) * 12"; where none can, a parenthesis ends the run as it ends a clause), each with
    where it starts.  A calculator's expression is all of one, never its first number alone
    (:meth:`Said.for_tool`)."""
    parts = list(_EXPRESSION_PART.finditer(piece))
    words = [p.group(0) for p in parts]
    # A number written inside a code is none of an expression's: "M14 5RQ" (a postcode) is no "14 5".
    numeric = [w[0].isdigit() and not _in_code(piece, p.start(), p.end()) for p, w in zip(parts, words, strict=True)]
    out = []
    i = 0
    while i < len(parts):
        if not numeric[i]:
            i += 1
            continue
        last, gap = i, 0
        for j in range(i + 1, len(parts)):
            if numeric[j]:
                last, gap = j, 0
            elif words[j] not in "()" and words[j].lower() not in _ARTICLES:
                gap += 1
                if gap > EXPRESSION_GAP:
                    break
        first, depth = i, words[i:last + 1].count("(") - words[i:last + 1].count(")")
        while depth < 0 and first > 0 and words[first - 1] == "(":
            first, depth = first - 1, depth + 1
        end = last
        while depth > 0 and end + 1 < len(parts) and words[end + 1] == ")":
            end, depth = end + 1, depth - 1
        start, stop = parts[first].start(), parts[end].end()
        before = _FUNCTION_BEFORE.search(piece, max(0, start - FUNCTION_REACH), start)
        if before is None and last > i:
            before = _OPERATION_BEFORE.search(piece, max(0, start - FUNCTION_REACH), start)
        after = _FUNCTION_AFTER.match(piece, stop)
        if not depth:
            start = before.start() if before is not None else start
            stop = after.end() if after is not None else stop
        run = piece[start:stop]
        if depth:
            out += [(start + m.start() + at, e) for m in re.finditer(r"[^()]+", run)
                    for at, e in _expressions(m.group(0))]
        elif last > i or before is not None or after is not None:
            out.append((start, run))
        i = end + 1
    return out


#: An arithmetic operation, as a sign or a word: what tells "250 divided by 5" from "120 between 4".
_OPERATION = re.compile(r"[-+*/×÷^%=]|\b(?:times|plus|minus|divided|multiplied|over|squared|cubed|root|power|"
                        r"log|factorial|sum|product|difference|average|mean|quotient|multiply|divide|add|"
                        r"subtract)\b", re.IGNORECASE)


def arithmetic(text: str) -> list[tuple[int, str]]:
    """The arithmetic expressions ``text`` says that name an operation (:data:`_OPERATION`; "17
    times 23", "square root of 81", "(3 + 4) * 12", not "120 between 4"), each with where it
    starts."""
    text = text[:MAX_SAID_CHARS]
    return [(at + start, e) for at, piece in _pieces(text, _EXPRESSION_PIECE_END)
            for start, e in _expressions(piece) if _OPERATION.search(_RATE.sub(" ", e))]


#: A unit's "/" (a letter before it, no space): a rate, no division ("5.8 l/100km" is no sum).
_RATE = re.compile(r"(?<=[^\W\d_])/")


#: The marks a quoted text opens with (:data:`_QUOTED`).
_QUOTES = "\"'“‘"
#: A possessive's ending ("Jane Doe's", "Apple’s"): a value ends at its owner, without the ending,
#: when what it owns is said next.
_POSSESSIVE = re.compile(r"(?<=\w)['’]s$", re.IGNORECASE)


#: Small words that join the capitalised words of one name ("Kind of Blue", "Lord of the Rings",
#: "Leonardo da Vinci"); not "and" ("Paris and London" are two).
_JOINS = frozenset({"of", "the", "de", "del", "da", "di", "du", "la", "le", "van", "von", "y"})


def _name_joins(tokens: list[str], named: list[bool]) -> list[int]:
    """Where in ``tokens`` a run of at most two of :data:`_JOINS` joins two capitalised words into
    one name (the joins and the words beside them): the greedy 135M model played "Blue" of "Put
    on Kind of Blue", the title cut at "of".  Not after a clause's first word, capitalised as a
    sentence starts ("Map of Rome" offers "Rome")."""

    def capital(i: int) -> bool:   # a word of a title may be a filler's ("Kind of Blue")
        return named[i] or len(tokens[i]) > 1 and tokens[i][:1].isupper() and tokens[i].lower() not in _REQUEST_VERBS

    out = []
    k = 0
    while k < len(tokens):
        j = k
        while j < len(tokens) and j - k < 2 and tokens[j].lower() in _JOINS:
            j += 1
        if j > k and k > 1 and capital(k - 1) and j < len(tokens) and capital(j):
            out += range(k - 1, j + 1)
        k = max(j, k + 1)
    return out


#: The pronoun "I", capitalised wherever it is said.
_I = frozenset({"i", "i'm", "i’m", "i'll", "i’ll", "i'd", "i’d", "i've", "i’ve"})


def _capital_small_words(tokens: list[str]) -> list[int]:
    """Where in ``tokens`` a small word (:data:`_EDGE_WORDS`) is capitalised past a clause's
    first word: a title's word ("Put on It's My Life by Bon Jovi" had offered "Life"; "Tell me
    about The Beatles"), part of the name beside it.  Not "I", nor one in capitals ("US"), nor a
    request verb's particle ("Put On Kind of Blue")."""
    return [i for i, t in enumerate(tokens) if i > 0 and t[:1].isupper() and not t[1:2].isupper()
            and t.lower() in _EDGE_WORDS and t.lower() not in _I and tokens[i - 1].lower() not in _REQUEST_VERBS]


#: A modal or an auxiliary and who it is said of: the word after them is a verb ("What should I
#: cook tonight?", "Can you spell...", "How do I say..."), no value.
_MODALS = frozenset("can could should would will shall may might must do does did".split())
_SUBJECTS = frozenset("i we you they he she it u".split())


#: Verbs whose "to" is followed by another verb: "I'd like to hear", "want to watch".
_WANTING = frozenset("like love want wants wanted need needs wanna".split())


#: A verb's particle, said right after a request's verb: part of the verb, no value ("Set up a 1 hour
#: budget sync" had offered the meeting's title "up").
_PARTICLES = frozenset("up down off back away".split())


#: Question words whose "to" is followed by a verb: "no idea how to keep it alive" (the 135M model had
#: asked the care of the plant "keep"), "what to cook", "when to water".
_HOW_TO = frozenset("how what when where whether which".split())
#: And words that say what one must or means to do: "which pills am I meant to take" takes no pill "take".
_BOUND_TO = frozenset("meant supposed have has had got gotta going ought used trying try able remember forget".split())
#: A word written small after "which" or "what" and before one of :data:`_ASKED_AFTER` is what the
#: question asks for, not a value: "which pills am I meant to take today?" had listed the reminders
#: of the medication "pills", "which episodes of Serial" names no podcast "episodes".
_WHICH = frozenset("which what whichever whatever".split())
_ASKED_AFTER = frozenset("""am is are was were be been do does did have has had can could should would will shall
may might must of i we you they he she it there""".split())


#: Verbs that say how something is, and the word after them what it is like: no values ("The basil
#: looks thirsty").
_LINKING = frozenset("looks look seems seem appears appear feels feel sounds smells tastes".split())
#: Who does something, said before what they do: a common verb after one (:data:`LIGHT_VERBS`) is no
#: value ("I took 200 mg", "how has it moved": the 135M model had logged the drug "took"; "I cycled"
#: is an exercise).  Not "you", which is said as often after a verb ("a joke for you").
_DOERS = frozenset("i we they he she it".split())
#: Words that place a period in time, said before it: no values ("over the past month" had priced
#: the ticker "past").
_WHICH_PERIOD = frozenset("past last next previous coming following".split())
_PERIODS = frozenset("""second seconds minute minutes hour hours day days night nights week weeks weekend
fortnight month months quarter year years decade season morning afternoon evening time monday tuesday
wednesday thursday friday saturday sunday""".split())


def _after_modal(tokens: list[str], i: int) -> bool:
    """Whether ``tokens[i]`` follows a modal and its subject ("should I", "can you"), or a wish's
    "to" ("like to", "need to"), or who does it (:data:`_DOERS`) or "please", and is written small
    (a verb: "like to Paris" names a place); or is a verb that says how something is, or the word
    that says it ("looks thirsty", "seems"); or places a period ("past" of "the past month")."""
    # (Capitalised inside a sentence, a title's word: "Play Feels by Calvin Harris".)
    if (tokens[i].islower() or i == 0) and tokens[i].lower() in _LINKING \
            or i >= 1 and tokens[i - 1].lower() in _LINKING and tokens[i].islower():
        return True
    if i + 1 < len(tokens) and tokens[i].lower() in _WHICH_PERIOD and tokens[i + 1].lower() in _PERIODS:
        return True    # "the past month", "next Friday"
    if i >= 1 and tokens[i].lower() in _PARTICLES and tokens[i].islower() and tokens[i - 1].lower() in _REQUEST_VERBS:
        return True    # "Set up a budget sync", "Turn off": the verb's (not "Play Up by Olly Murs", a title)
    if i >= 1 and tokens[i].islower() and (tokens[i - 1].lower() == "please"
                                           or tokens[i - 1].lower() in _DOERS and tokens[i] in LIGHT_VERBS):
        return True    # "Please record", "I took", "it moved" (not "I cycled": an activity)
    if tokens[i].islower() and tokens[i - 1].lower() in _WHICH and i + 1 < len(tokens) \
            and tokens[i + 1].lower() in _ASKED_AFTER:
        return True    # "which pills am I meant to take": what is asked for ("What Thai restaurants": said of it)
    if i < 2:
        return False
    if tokens[i - 1].lower() == "to" and (tokens[i - 2].lower() in _WANTING or tokens[i - 2].lower() in _HOW_TO
                                          or tokens[i - 2].lower() in _BOUND_TO):
        return tokens[i].islower()   # "like to hear", "how to keep it alive" (not "like to Paris")
    return tokens[i - 1].lower() in _SUBJECTS and tokens[i - 2].lower() in _MODALS


def title_cased(text: str) -> bool:
    """Whether ``text`` is typed with every word capitalised, its small words too ("Switch Off The
    Kitchen Lights", or all in capitals): its capitals name nothing, and it is read as one typed
    without them.  Quoted parts aside; a single small word written small ("Play Up by Olly
    Murs") keeps the capitals' names."""
    words = [w for w in _TOKEN.findall(_QUOTED.sub(" ", text[:MAX_SAID_CHARS])) if w[:1].isalpha()]
    return len(words) >= 3 and all(w[:1].isupper() for w in words) \
        and any(w.lower() in _EDGE_WORDS for w in words[1:])


def _spans(text: str) -> tuple[list[str], list[str]]:
    """What of ``text`` a value may be, and its arithmetic expressions (:func:`_expressions`, which
    are among the first), read in one pass: its quoted parts, its addresses, what follows a colon
    (else, with nothing quoted, the words it says a message carries: :func:`_message_words`),
    and every run of up
    to :data:`MAX_SPAN_WORDS` content words (no filler word inside: a value rarely spans "about"
    or "in") that neither starts nor ends inside a name (a run of capitalised words: not
    ``Buenos`` nor ``Aires`` of ``Buenos Aires``).

    That last rule is for greedy decoding: a model that has written ``Buenos`` may close the
    string there when the grammar lets it (the 135M model did, for "Buenos Aires"); a name is
    written whole or not at all.  A whole clause is no value ("My father loves corny puns" was
    the 135M model's topic of a joke) unless it follows a colon ("Count the words in: ...") or
    "saying".  Nor
    does a value start with a verb a request starts with (:data:`_REQUEST_VERBS`), nor go on
    past a possessive (:data:`_POSSESSIVE`: the 135M model took "Jane Doe's phone number" for a
    contact's name; "Jane Doe" is offered).  A text in title case (:func:`title_cased`) has no names
    by its capitals ("Switch Off The Kitchen Lights" had been one name, a room)."""
    out = [m.group(2).strip() for m in _QUOTED.finditer(text)]
    caseless = title_cased(text)
    quoted = bool(out)
    # Quoted parts and addresses are cut out (each a ``|``): what is left is read word by word.
    without_quotes = _QUOTED.sub(" | ", text)
    out += [a for a in _addresses(without_quotes) if a]
    unquoted = _ADDRESS.sub(" | ", without_quotes)
    if (colon := _after_colon(unquoted)) is not None:
        out.append(colon)
    elif not quoted and (message := _message_words(unquoted)) is not None:
        out.append(message)   # nothing quoted, no colon: the words "saying" sets apart
    # Each expression is offered before the spans of the clause it starts in.
    found = [(at + start, e) for at, piece in _pieces(unquoted, _EXPRESSION_PIECE_END)
             for start, e in _expressions(piece)]
    expressions = [e for _, e in found]
    told = 0   # how many of ``found`` (in the order they start) are offered so far
    for at, piece in _pieces(unquoted):
        while told < len(found) and found[told][0] <= at + len(piece):
            out.append(found[told][1])
            told += 1
        tokens = [t.group(0) for t in _TOKEN.finditer(piece)]
        spans = list(_TOKEN.finditer(piece))
        content = [t.lower() not in _EDGE_WORDS and not _after_modal(tokens, i) for i, t in enumerate(tokens)]
        # A request's verb is no part of a name, capitalised as a sentence starts ("Play Bohemian Rhapsody").
        named = [not caseless and t[:1].isupper() and content[i] and t.lower() not in _REQUEST_VERBS
                 for i, t in enumerate(tokens)]
        for k in [] if caseless else _name_joins(tokens, named):   # "Kind of Blue", "Bank of America": one name
            content[k] = named[k] = True
        for k in [] if caseless else _capital_small_words(tokens):   # "It's My Life", "The Beatles"
            content[k] = named[k] = True
        # An owner with what it owns said next ("Jane Doe's phone"), not a place named so ("at Luigi's").
        # ("It's", "Let's": no owners.)
        # ("King's Cross": a possessive inside a capitalised name is the name's.)
        owner = [c and _POSSESSIVE.search(tokens[i]) is not None and i + 1 < len(tokens) and content[i + 1]
                 and tokens[i].lower() not in _EDGE_WORDS and not (named[i] and named[i + 1])
                 for i, c in enumerate(content)]
        starts = [c and not (named[i] and i > 0 and named[i - 1] and not owner[i - 1])
                  and tokens[i].lower() not in _REQUEST_VERBS for i, c in enumerate(content)]
        ends = [c and (owner[j] or not (named[j] and j + 1 < len(tokens) and named[j + 1]))
                for j, c in enumerate(content)]
        for i in range(len(tokens)):
            if not starts[i]:
                continue
            for j in range(i, min(i + MAX_SPAN_WORDS, len(tokens))):
                if not content[j]:
                    break
                if owner[j]:
                    # "Jane Doe's phone number": the owner is one value and what it owns another.
                    out.append(piece[spans[i].start():spans[j].end() - len(_POSSESSIVE.search(tokens[j])[0])])
                    break
                if ends[j]:
                    out.append(piece[spans[i].start():spans[j].end()])
    return out, expressions


#: What a question asks the count of starts after these words: "How many cups are in 2 litres?".
_HOW_MANY = re.compile(r"\bhow\s+many\s+(?=\w)", re.IGNORECASE)
#: What a quantity is converted into starts after these words: "5 miles in kilometres", "20 USD to EUR".
_INTO_WORD = re.compile(r"\b(?:in|into|to)\s+(?:the\s+)?(?=[^\W\d_])", re.IGNORECASE)


def _converted_into(question: str) -> tuple[int, ...]:
    """Where in ``question`` what it converts into may start: after "how many" ("cups" of "How many
    cups are in 2 litres?"), and after the last "in", "into" or "to" that follows a quantity
    ("kilometres" of "Express 5 miles in kilometres"; the last, since "3 pm in London" is where,
    and "what time is it in Tokyo" what into)."""
    text = question[:MAX_SAID_CHARS]
    out = [m.end() for m in _HOW_MANY.finditer(text)][:1]
    quantities = _quantities(text)
    if quantities:
        targets = [m.end() for m in _INTO_WORD.finditer(text, quantities[0][0])]
        out += targets[-1:]
    return tuple(out)


def _after_colon(unquoted: str) -> str | None:
    """What follows the first colon of ``unquoted`` (a text whose quotes are cut out, as ``|``), up
    to the first of them: "Count the words in: ..." gives the text counted; None without a colon."""
    colon = _COLON.search(unquoted)
    if colon is None:
        return None
    return unquoted[colon.end():].split("|")[0].strip().rstrip("?!.")


#: Where a request says, unquoted, the words a message is to carry: "Send a note to Ann saying
#: see you at six", "a card that reads happy birthday", "Mail bob@example.com that the meeting
#: moved" (an address, cut out as ``|``, then "that"), "Tell Bob that lunch is ready" (a verb of
#: telling, a name, "that": "Tell me a joke that ..." is no message), "... and tell her the report
#: is done" (telling someone else, "that" or not), "Remind me tomorrow to water
#: the plants" (what a reminder is to say follows its "to").
#: Whom a message goes to, as a request says it: an address (cut out, ``|``), a name, a phone number.
_TO_WHOM = r"(?:\|\s*|[A-Z]\w*\s+|\+?\(?\d[\d ().-]*\d\s+)"
_SAYING = re.compile(r"(?i:\b(?:saying|that says|which says|that reads|to say))\s+(?=\w)"
                     rf"|(?:\|\s*|(?i:\b(?:tell|remind|inform|ask|text|message))\s+{_TO_WHOM})(?i:that)\s+(?=\w)"
                     r"|(?i:\b(?:tell|inform)\s+(?:her|him|them)\s+(?:that\s+)?)(?=\w)"
                     r"|(?i:\bremind(?:er)?\b[^.;!?|\n]*?\bto)\s+(?=\w)")
#: Without those words, a request that starts by mailing someone (an address, cut out, or a name)
#: says what next: "Email ann@example.org the build is green" (not "about ...": what it is about).
_MAILED = re.compile(rf"\s*(?i:e-?mail|mail|text|message)\s+{_TO_WHOM}(?!(?i:that|about)\b)(?=\w)")
#: A message said to be passed on: "Tell Priya that the report is ready", "ping Marco saying I'll
#: be late", "Email ann@example.org the build is green" (:func:`_message_words`; not what a reminder
#: is to say, "Remind me to ...", which a reminder's own text takes).  A kind of value an argument
#: named for a message takes (:func:`_kind_taken`): "Tell Priya that the report is ready for review"
#: was as near a vet's booking (0.25) as a colleague's message (0.28), and asked back.
_MESSAGE_SAID = re.compile(rf"{_SAYING.pattern}|{_MAILED.pattern}")


def _says_message(text: str) -> bool:
    found = _message(_cut(text, (_ADDRESS,)))
    return found is not None and not found[0].lower().lstrip().startswith("remind")


#: Where those words end: the sentence's end, not a comma ("saying hi, see you soon" is one message).
_SENTENCE_END = re.compile(rf"{_POINT}|[;!?\n\"“”]")


def _to_sentence_end(rest: str) -> str:
    """``rest`` up to the end of its sentence (:data:`_SENTENCE_END`), without a comma at its end."""
    end = _SENTENCE_END.search(rest)
    return (rest if end is None else rest[:end.start()]).strip().rstrip(",")


def _message_words(unquoted: str) -> str | None:
    """The words ``unquoted`` (a text whose quotes and addresses are cut out, as ``|``) says a
    message is to carry: what follows its first "saying" ("that says", "to say"...), or else, in a
    request that starts by mailing someone, what follows them (:data:`_MAILED`), to the end of
    that sentence or the first cut; None without one.  Greedy decoding closes a string at the
    shortest value the grammar allows, so a message argument offered every run of the question's
    words took "thank" of "saying thank you very much" (the 135M model)."""
    found = _message(unquoted)
    return found[1] if found is not None else None


def _message(unquoted: str) -> tuple[str, str] | None:
    """What says a message is to be carried in ``unquoted`` (its "saying", "Tell X that", "Email X"),
    and the message's words (:func:`_message_words`); None without one, or with no words after it."""
    marker = _SAYING.search(unquoted) or _MAILED.match(unquoted)
    if marker is None:
        return None
    words = _to_sentence_end(unquoted[marker.end():].split("|")[0])
    return (marker.group(0), words) if words else None


#: What joins the members of a list a request says: "eggs, spinach and cheese", "tea or coffee".
_AND = re.compile(r"[ \t]*,[ \t]*(?:(?:and|or)[ \t]+)?|[ \t]+(?:and|or|&)[ \t]+", re.IGNORECASE)


#: What a list's member may start with before its words: "batteries and a phone charger".
_DETERMINER = re.compile(r"^(?:a|an|the|some|another)\s+(?=\w)", re.IGNORECASE)


def _edge_span(part: str, spans: set[str], at_end: bool) -> str | None:
    """The longest of ``spans`` that ends ``part`` (``at_end``) or starts it, a word whole."""
    def edge(span: str) -> bool:
        if len(span) > len(part) or not span:
            return False
        if at_end:
            return part.endswith(span) and (len(span) == len(part) or not part[-len(span) - 1].isalnum())
        return part.startswith(span) and (len(span) == len(part) or not part[len(span)].isalnum())

    fits = [span for span in spans if edge(span)]
    return max(fits, key=len, default=None)


#: Words that lead into a list's first member, none of its own: "a recipe with chicken and rice",
#: "ideas using mushrooms and rice", "made of flour and water".
_LIST_LEADS = frozenset({"with", "using", "of", "from", "including", "containing", "like", "for", "about"})


def _lists(question: str, spans: set[str]) -> list[list[str]]:
    """The lists ``question`` says, each of two or more of ``spans`` joined by commas, "and" or
    "or" within a sentence: "Find me a recipe with chicken and rice" says chicken and rice (the
    135M model, asked for a list of ingredients, wrote only the first)."""
    out = []
    for sentence in _SENTENCE_END.split(question[:MAX_SAID_CHARS]):
        run: list[str] = []
        for part in (_DETERMINER.sub("", p.strip(), count=1) for p in _AND.split(sentence or "")):
            if run and part in spans:
                run.append(part)   # a whole member: the list goes on
                continue
            if run and (first := _edge_span(part, spans, at_end=False)) is not None:
                run.append(first)  # the last member starts this part
            if len(run) > 1:
                out.append(run)
            # (Not over a word that leads into the list: "any dinner ideas using mushrooms and rice"
            # lists mushrooms, not "dinner ideas using mushrooms".)
            last = _edge_span(part, {s for s in spans if not set(_TOKEN.findall(s.lower())) & _LIST_LEADS}, at_end=True) \
                or _edge_span(part, spans, at_end=True)
            run = [last] if last is not None else []
        if len(run) > 1:
            out.append(run)
    return out


def said_list(value: Sequence[Any], lists: Sequence[Sequence[str]]) -> list[str] | None:
    """The list the question says (one of ``lists``, :attr:`Said.lists`) that a list value which
    repeats a member stands for: the only one as long as it, holding each of its members; None
    when the value repeats nothing or no one list is so.  The grammar asks for as many members as
    the question lists but cannot ask for them apart, and greedy decoding repeats the likeliest
    ("add batteries and a phone charger to my cart" filled it with two phone chargers)."""
    members = [m for m in value if isinstance(m, str)]
    if len(members) != len(value) or len(set(members)) == len(members):
        return None
    fits = [list(found) for found in lists if len(found) == len(members) and set(members) <= set(found)]
    return fits[0] if len(fits) == 1 else None


def _written_numbers(text: str) -> list[tuple[int, float, int]]:
    """The numbers ``text`` says as written (``1,000`` is a thousand, ``12.5`` twelve and a half; in
    words, "two" is 2: :func:`_word_numbers`), each with where it starts and ends, in order."""
    found = []
    for m in _OFFERED_NUMBER.finditer(text):
        value, sign = float(m.group(0).replace(",", "")), _sign_at(text, m.start())
        found.append((m.start(), value, m.end()) if sign is None else (sign, -value, m.end()))
    return sorted(found + _word_numbers(text), key=lambda at: at[0])


def _percents(question: str) -> frozenset[float]:
    """The numbers ``question`` says as percentages ("15%", "twenty percent")."""
    text = question[:MAX_SAID_CHARS]
    return frozenset(value for _, value, end in _written_numbers(text) if _PERCENT.match(text, end))


def _offered_numbers(text: str) -> list[float]:
    """The numbers ``text`` says as written (:func:`_written_numbers`), each once, in order."""
    out: list[float] = []
    for _, value, _ in _written_numbers(text):
        if math.isfinite(value) and value not in out:
            out.append(value)
    return out


def _numbers_of(texts: Iterable[str]) -> list[float]:
    """The numbers ``texts`` say (:func:`_offered_numbers`), an IBAN's digits aside."""
    return _offered_numbers(" ".join(_IBAN.sub(" ", text) for text in texts))


def said_values(question: str, results: Sequence[str]) -> Said:
    """The spans and numbers of the question and of the earlier tool ``results`` (each cut at
    :data:`RESULT_CHARS`), the question's first, each once; the whole question apart."""
    whole = question.strip().rstrip("?!. ")
    dialog = [question[:MAX_SAID_CHARS], *(r[:RESULT_CHARS] for r in results)]
    # The question's opening greeting is read as nothing (blanked, so what follows keeps its place).
    opened = _GREETING.sub(lambda m: " " * len(m.group(0)), dialog[0], count=1)
    read = [_spans(_unsigned(text)) for text in (opened, *dialog[1:])]
    texts = [t for spans, _ in read for t in spans]
    expressions = frozenset(e for _, found in read for e in found)
    offered = [t for t in dict.fromkeys(texts) if t and t != whole
               and (_LETTERS.search(t) or _NUMBER.fullmatch(t) or t in expressions)]
    numbers = _numbers_of(dialog)
    quoted = {m.group(2).strip() for m in _QUOTED.finditer(question)}
    # A currency written as its sign is offered as its code, after what the question writes.
    offered = offered[:MAX_SPANS - 2] + [c for c in currency_codes(question) if c not in offered][:2]
    return Said(offered[:MAX_SPANS], numbers, frozenset(quoted), whole, expressions, tuple(dialog))


_DIGIT = re.compile(r"\d")

#: How an argument is named when it is what a quantity is converted into, or out of: its name's
#: parts (``to``, ``to_unit``, ``target_currency``; ``from``, ``source``, ``base``).
_INTO = frozenset({"to", "into", "target", "destination", "dest"})
#: What an argument says when its value is a unit (a quantity's, a currency): it may take one.
_UNIT_NAMES = frozenset({"unit", "units", "currency", "currencies", "measure", "scale"})
_OUT_OF = frozenset({"from", "source", "src", "base"})
#: The one or two words written right after a number ("23 kg", "101 °F", "300 US dollars").
_UNIT_AFTER = re.compile(r"[ \t]*°?[ \t]*([^\W\d_]+)(?:[ \t]+([^\W\d_]+))?")
#: A number in digits and the words after it.
_QUANTITY = re.compile(rf"(?<![\w.])\d+(?:,\d{{3}})*(?:\.\d+)?{_UNIT_AFTER.pattern}")
#: Letters after a number that are no unit: ordinals and decades ("3rd", "1990s").
_NOT_UNITS = frozenset({"st", "nd", "rd", "th", "s"})


def _quantities(text: str) -> list[tuple[int, tuple[str | None, ...]]]:
    """Each number ``text`` says, in digits or in words (:func:`_word_numbers`: "two feet"; the
    135M model converted "How many inches are in two feet?" out of inches), where it starts and
    the words written right after it, in the order said."""
    found = [(m.start(), m.groups()) for m in _QUANTITY.finditer(text)]
    for start, _, end in _word_numbers(text):
        unit = _UNIT_AFTER.match(text, end)
        if unit is not None:
            found.append((start, unit.groups()))
    return sorted(found, key=lambda at: at[0])


#: A currency's sign and its ISO 4217 code: a sign written with an amount ("€50", "$20", "50 €")
#: is the currency that amount is in.  A bare "$" is the US dollar, as most requests mean it.
_SIGNS = {"$": "USD", "US$": "USD", "C$": "CAD", "CA$": "CAD", "A$": "AUD", "AU$": "AUD", "NZ$": "NZD",
          "HK$": "HKD", "S$": "SGD", "R$": "BRL", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "₩": "KRW",
          "₽": "RUB", "₺": "TRY", "₪": "ILS", "₫": "VND", "฿": "THB", "₴": "UAH", "₦": "NGN", "₱": "PHP"}
_SIGN = "|".join(re.escape(sign) for sign in sorted(_SIGNS, key=len, reverse=True))
_SIGNED = re.compile(rf"(?<![\w$])({_SIGN})[ \t]?\d|(?<=\d)[ \t]?({_SIGN})(?![\w$])")


#: Words an argument's name or description says when it is a currency (:func:`takes_currency`).
_CURRENCY_WORDS = frozenset({"currency", "currencies"})


def currency_codes(question: str) -> tuple[str, ...]:
    """The codes of the currencies whose sign ``question`` writes with an amount, in order, each
    once: "Convert €50 to dollars" is ``EUR``, "How many yen is $20?" ``USD`` (the 135M model,
    offered no value for a sign, converted out of "dollars" and out of "yen")."""
    found = (m.group(1) or m.group(2) for m in _SIGNED.finditer(question[:MAX_SAID_CHARS]))
    return tuple(dict.fromkeys(_SIGNS[sign] for sign in found))


def said_currencies(question: str) -> tuple[str, ...]:
    """The codes of the currencies ``question`` says, in the order it says them, each once: by a
    sign written with an amount ("€20"), a code in capitals ("12 GBP") or a name ("15 pounds",
    "30 Canadian dollars", "10 Euro"; not "Fijian dollars", whose adjective is not known here).
    What a currency argument the model would write in its own words is offered (:func:`grounded`):
    a top-up's free-text currency had been the model's `USD` for "add 15 pounds to my tram pass"."""
    text = question[:MAX_SAID_CHARS]
    found = [(m.start(), _SIGNS[m.group(1) or m.group(2)]) for m in _SIGNED.finditer(text)]
    tokens = [(m.start(), m.group(0)) for m in _LETTERS.finditer(text)]
    for i, (at, word) in enumerate(tokens):
        low = word.lower()
        if word in CURRENCY_CODES:
            found.append((at, word))
        elif low in CURRENCY_NAMES:
            # The words right before the name, a space apart: its adjective ("10 Euro" has none).
            before: list[str] = []
            for j in range(i - 1, max(-1, i - 3), -1):
                start, prior = tokens[j]
                if text[start + len(prior):(tokens[j + 1][0])].strip(" \t"):
                    break
                before.insert(0, prior)
            if before and before[-1].lower() in COUNTRY_CODES:
                found.append((at, COUNTRY_CODES[before[-1].lower()]))
            elif len(before) == 2 and before[0].lower() in COUNTRY_CODES and before[1][:1].isupper():
                found.append((at, COUNTRY_CODES[before[0].lower()]))   # "Hong Kong dollars"
            elif not (before and before[-1][:1].isupper() and before[-1].lower() not in _EDGE_WORDS):
                found.append((at, CURRENCY_NAMES[low]))
    return tuple(dict.fromkeys(code for _, code in sorted(found)))


def takes_currency(argument: Any) -> bool:
    """Whether a declared argument is a currency written freely (a string with no declared values
    whose name or description says "currency"): the model's to translate "pounds" into, so the
    codes the question says are offered it (:func:`said_currencies`)."""
    return getattr(argument, "type", None) == "string" and not getattr(argument, "enum", None) \
        and _says(argument, _CURRENCY_WORDS)


def _unsigned(text: str) -> str:
    """``text`` with each currency sign written with an amount blanked: the letters of "C$ 40"
    are no span ("Change C"); the sign is offered as its code (:func:`currency_codes`)."""
    def blank(m: re.Match[str]) -> str:
        group = 1 if m.group(1) else 2
        start, end = m.start(group) - m.start(), m.end(group) - m.start()
        whole = m.group(0)
        return whole[:start] + " " * (end - start) + whole[end:]
    return _SIGNED.sub(blank, text) if "$" in text or not text.isascii() else text


def signs_at(text: str) -> tuple[dict[int, str], dict[int, str]]:
    """The currency codes of the signs ``text`` writes with an amount: by where the amount starts
    ("€50") and by where it ends ("50 €")."""
    signs = list(_SIGNED.finditer(text))
    return ({m.end() - 1: _SIGNS[m.group(1)] for m in signs if m.group(1)},
            {m.start(): _SIGNS[m.group(2)] for m in signs if m.group(2)})


#: A currency's ISO code written right before an amount ("EUR 40").
_CODE_BEFORE = re.compile(r"\b([A-Z]{3})[ \t]*$")


def _currency(words: Sequence[str]) -> str | None:
    """The currency a number's next words say ("euros", "US dollars", "EUR"), or None (also for a
    name after an adjective not known here: "Fijian dollars")."""
    if not words:
        return None
    first, low = words[0], words[0].lower()
    if first in CURRENCY_CODES:
        return first
    if low in CURRENCY_NAMES:
        return CURRENCY_NAMES[low]
    if len(words) > 1 and words[1].lower() in CURRENCY_NAMES:
        # A country's adjective before the name: its code when known, else none ("Fijian dollars").
        return COUNTRY_CODES.get(low)
    return None


def money_said(text: str) -> dict[float, set[str]]:
    """Each number ``text`` says with a currency known here, and the codes of the currencies it is
    said in ("Fijian dollars" are none: such an amount is not judged)."""
    text = text[:MAX_SAID_CHARS]
    before, after = signs_at(text)
    out: dict[float, set[str]] = {}
    for start, number, end in _written_numbers(text):
        code = before.get(start) or after.get(end)
        if code is None:
            m = _UNIT_AFTER.match(text, end)
            words = [w for w in (m.groups() if m else ()) if w]
            code = _currency(words)
        if code is None and (m := _CODE_BEFORE.search(text, max(0, start - 8), start)) \
                and m.group(1) in CURRENCY_CODES:
            code = m.group(1)
        if code is not None:
            out.setdefault(number, set()).add(code)
    return out


def argument_currency(argument: Any) -> str | None:
    """The one currency a declared number argument says its amount is in ("How many US dollars",
    ``amount_eur``), or None."""
    name, description = str(getattr(argument, "name", "") or ""), str(getattr(argument, "description", "") or "")
    if getattr(argument, "type", None) not in ("number", "integer") or _argument_kind(name, description):
        return None   # "The weight in pounds" is a mass
    words = f"{_name_words(argument)} {description}".split()
    words = [w.strip(".,;:()'\"") for w in words]
    found: set[str] = set()
    for i, w in enumerate(words):
        low = w.lower()
        if w.upper() in CURRENCY_CODES and (w.isupper() or w.islower() and i < len(_name_words(argument).split())):
            found.add(w.upper())
        elif low in CURRENCY_NAMES:
            adjective = words[i - 1].lower() if i else ""
            found.add(COUNTRY_CODES.get(adjective, CURRENCY_NAMES[low]))
    return found.pop() if len(found) == 1 else None


def other_currency(values: Mapping[str, Any], arguments: Sequence[Any], said: Iterable[str]) -> list[str]:
    """The call's number arguments that declare a currency (:func:`argument_currency`) and were
    given an amount the dialog (``said``) says only in other currencies: "How much is 40 euros in
    dollars?" gave a converter of "How many US dollars" the amount 40, and the answer converted
    40 dollars.  Such a value is no value of that argument (:func:`unsaid_arguments`)."""
    declared = {getattr(a, "name", None): a for a in arguments}
    money: dict[float, set[str]] | None = None
    out = []
    for name, value in values.items():
        argument = declared.get(name)
        if argument is None or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        currency = argument_currency(argument)
        if currency is None:
            continue
        if money is None:
            money = {}
            for text in said:
                for number, codes in money_said(text).items():
                    money.setdefault(number, set()).update(codes)
        try:
            said_in = money.get(float(value))
        except OverflowError:   # an integer past any float: no amount said (the check asks back for it)
            continue
        if said_in and currency not in said_in:
            out.append(name)
    return out


def quantity_units(question: str) -> set[str]:
    """The words of what ``question``'s numbers count, lower case: the word (or two) written right
    after a number ("23 kg" -> kg, "101 °F" -> f, "300 US dollars" -> us, dollars), filler words
    ("50 in yen") aside, and the code of a currency sign written with one ("€50" -> eur)."""
    out: set[str] = set()
    for _, groups in _quantities(question[:MAX_SAID_CHARS]):
        for written in groups:
            word = (written or "").lower()
            # An abbreviation in capitals is a unit even when its letters spell a filler ("US").
            if not word or word in _NOT_UNITS or word in _EDGE_WORDS and not (len(written) > 1 and written.isupper()):
                break
            out.add(word)
    return out | {code.lower() for code in currency_codes(question)}


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


def _by_quantity(prop: dict[str, Any], name: str, units: set[str], declared_enum: bool, said: Said,
                 of_unit: bool = False) -> dict[str, Any]:
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
    of ("How many cups are in 2 litres?" converts into cups: the 135M model wrote cups for both)
    nor what follows the quantity's last "in", "into" or "to" ("Express 5 miles in kilometres":
    the 135M model wrote kilometres for both; :func:`_converted_into`), unless the argument says it
    is a unit or a currency (``of_unit``): then it takes the unit written with the number ("what's
    30 pounds in US dollars?" had converted dollars into dollars),
    and a span converted into is no proper adjective without its noun (:func:`_noun_after`: the
    135M model wrote "Swiss" of "how many Swiss francs" and "Canadian" of "how many Canadian
    dollars", greedy decoding closing the shorter value, which the converter refused).  Nothing
    is narrowed to nothing."""
    values = prop.get("enum")
    direction = _direction(name)
    if not units or direction is None or not isinstance(values, list):
        return prop
    words = [_words(v) if isinstance(v, str) else set() for v in values]
    unit = [i for i, v in enumerate(values) if isinstance(v, str) and _said_in(v, units, units=True)]
    if not unit and declared_enum:
        # A tool's own code for a unit written out in full: the longest that starts a unit word.
        starts = {i: len(next(iter(w))) for i, w in enumerate(words)
                  if len(w) == 1 and any(u.startswith(next(iter(w))) for u in units)}
        unit = [i for i, n in starts.items() if n == max(starts.values())] if starts else []
    if direction == "into":
        kept = [v for i, v in enumerate(values) if i not in unit]
        if declared_enum:
            kept = [v for v in kept if isinstance(v, str) and _said_in(v, said.words)] or kept
        else:
            whole = set(kept)
            kept = [v for v in kept if not (isinstance(v, str) and said.with_noun(v) in whole)] or kept
    elif declared_enum:
        kept = [values[i] for i in unit]
    elif signed := [v for v in values if v in said.signs]:
        kept = signed   # the currency whose sign is written with the amount ("€50") is converted out of
    elif of_unit and unit:
        kept = [values[i] for i in unit]
    elif said.into:
        # What the question asks how many of, or converts "in"/"to", is converted into, never out of.
        kept = [v for v in values if not (isinstance(v, str) and any(said.question.startswith(v, at)
                                                                      for at in said.into))]
    else:
        return prop
    return {**prop, "enum": kept} if kept and kept != values else prop


def _says(argument: Any, words: frozenset[str]) -> bool:
    """Whether a declared argument's name or description has one of ``words``, its examples aside:
    an example is a value, not what the argument is ("Only this club's games, e.g. Harbour Rovers"
    had taken a place, for its "Harbour")."""
    description = _EXAMPLES.sub(" ", str(getattr(argument, "description", "") or ""))
    return bool(_words(f"{getattr(argument, 'name', '')} {description}") & words)


#: An argument is what a request is about when its name or description says so.
_TOPIC_WORDS = frozenset({"topic", "subject", "theme"})
#: Where a request says what it is about: "a joke about cats", "news regarding Mars".
_ABOUT = re.compile(r"\b(?:about|regarding|concerning)\b", re.IGNORECASE)
#: Where a request without those says what it is about: "news on climate", "stories in technology".
_ON_OR_IN = re.compile(r"\b(?:on|in)\b", re.IGNORECASE)


def _by_topic(prop: dict[str, Any], argument: Any, question: str) -> dict[str, Any]:
    """``prop`` of an argument that is what a request is about (its name or description says
    "topic", "subject" or "theme"), narrowed to the parts of the question after the word that
    says what it is about, when it has one: "My father loves corny puns; share one about
    lawnmowers" is about lawnmowers, not "father" (the 135M model's pick, and "witty" for "Say
    something witty about the ocean").  The parts in that word's own clause come first: "A really
    lame pun about cheese, the kind my father tells" is about cheese, not "tells" (the 135M
    model's pick).  Without such a word, "on" or "in" says it ("the top 5 stories in technology"
    had been news on "top").  A question without any keeps every part."""
    values = prop.get("enum")
    if not isinstance(values, list) or not question or not _says(argument, _TOPIC_WORDS):
        return prop
    marker = _ABOUT.search(question) or _ON_OR_IN.search(question)
    if marker is None:
        return prop
    after = [(v, question.find(v, marker.end())) for v in values if isinstance(v, str) and v]
    after = [(v, at) for v, at in after if at >= 0]
    clause_end = _CLAUSE_END.search(question, marker.end())
    end = len(question) if clause_end is None else clause_end.start()
    kept = [v for v, at in after if at < end] or [v for v, _ in after]
    return {**prop, "enum": kept} if kept and kept != values else prop


def _name_words(argument: Any) -> str:
    """A declared argument's name as a request would say it: its parts, lower case, spaced
    ("tracking_number", "trackingNumber" -> "tracking number")."""
    parts = re.split(r"[\W_]+|(?<=[a-z])(?=[A-Z])", str(getattr(argument, "name", "") or ""))
    return " ".join(p.lower() for p in parts if p)


def _last_name_word(argument: Any) -> str:
    """The last part of a declared argument's name, lower case ("due_date" -> "date"), or ""."""
    return (_name_words(argument).split() or [""])[-1]


#: What may stand between an argument's name and its value: "for" or "of" before a quoted text
#: ("the word for 'apple'"), "called", "named" or "titled" before a name too (group 1).
_CALLED = re.compile(r"(?:(called|named|titled)|for|of)\s+", re.IGNORECASE)


def _mentions(name: str, text: str) -> Iterator[re.Match[str]]:
    """Where ``text`` says an argument's ``name`` (:func:`_name_words`), singular or plural."""
    return re.finditer(rf"\b{re.escape(name)}(?:e?s)?\b", text, re.IGNORECASE)


def _by_name(prop: dict[str, Any], argument: Any, said: Said) -> dict[str, Any]:
    """``prop`` of an argument whose name the question says, narrowed to the values said right
    after that name when one is a name, an identifier, an address or a quoted text (also after
    "for" or "of", for a quoted text, and after "called", "named" or "titled"), else to those said
    right before it: "Is flight BA117 on time?" names the flight ``BA117``, "Play the song
    Imagine" the song, "the German word for 'apple'" the word ``apple`` (not ``German``, which
    only describes it), "Add milk to my shopping list" the list ``shopping`` (the 135M model,
    offered every run of the question's words, gave the list "milk" and "batteries", the first
    it was offered).  Not a plain word after it: "the word count of ..." is no word ``count``.  A
    name made of filler words only ("to", "from") says nothing; a question that says the name
    with no value beside it keeps every value."""
    values = prop.get("enum")
    name = _name_words(argument)
    if not isinstance(values, list) or not said.question or not name or set(name.split()) <= _EDGE_WORDS:
        return prop
    text = said.question
    kept = []
    for m in _mentions(name, text):
        before, after = text[:m.start()], text[m.end():]
        b, a = before.rstrip(" \t"), after.lstrip(" \t")   # a value beside it, a space between
        if len(a) == len(after):
            a = ""
        elif (called := _CALLED.match(a)) is not None:
            a = a[called.end():]   # "the word for 'apple'", "a list called Weekend"
            if a[:1] not in _QUOTES and not (called.group(1) and a[:1].isupper()):
                a = ""
        if a[:1] in _QUOTES:
            a = a[1:]   # "the word 'big'": a quoted text is beside it too
        elif not (a[:1].isupper() or _DIGIT.match(a) or _ADDRESS.match(a)):
            a = ""      # "the word count of ...": a plain word after the name is no value of it
        after_values = [v for v in values if isinstance(v, str) and v and a.startswith(v)
                        and not a[len(v):len(v) + 1].isalnum()]
        # A value after the name is the one it names: what comes before only describes it then
        # ("the German word for 'apple'" is no word "German").
        kept += after_values or [v for v in values if isinstance(v, str) and v and len(b) < len(before)
                                 and b.endswith(v) and not b[:len(b) - len(v)][-1:].isalnum()]
    kept = list(dict.fromkeys(kept))
    return {**prop, "enum": kept} if kept and kept != values else prop


#: Where a request says what to look for: "Search the web for cheap flights to Rome", "Look up the
#: history of the Eiffel Tower", "facts about Ada Lovelace", "news on the election".
_LOOK_FOR = re.compile(r"\b(?:for|about|up|on|regarding)\s+(?=\w)", re.IGNORECASE)


def _by_query(prop: dict[str, Any], argument: Any, said: Said) -> dict[str, Any]:
    """``prop`` of an argument that is a question or a query (:func:`asks_whole`), narrowed to the
    whole question, what it says to look for (what follows its first "for", "about", "up", "on"
    or "regarding" that a content word follows, to the sentence's end) and its quoted texts: a
    search is asked in the user's words, and among single words greedy decoding takes the shortest
    ("Search the web for cheap flights to Rome" searched "Rome").  Nothing is narrowed to nothing."""
    values = prop.get("enum")
    if not isinstance(values, list) or not said.question or not asks_whole(argument):
        return prop
    sought = None
    for marker in _LOOK_FOR.finditer(said.question):
        sought = _to_sentence_end(said.question[marker.end():])
        if any(t.lower() not in _EDGE_WORDS for t in _TOKEN.findall(sought)):
            break   # not "for me"
        sought = None
    # A query that looks up titles or names takes the ones said first: "Is there an ebook version of
    # Project Hail Mary I could borrow?" had searched the catalog for the whole question (and
    # lost the format said in it, which the query then repeated).
    # (Then not the question whole: the 135M model, offered both, wrote the question.)
    named = _names_in(said) if _says(argument, _TITLE_WORDS) else []
    kept = list(dict.fromkeys([*named, *([sought] if sought else []),
                               *(v for v in values if (v == said.question and not named) or v in said.kept)]))
    return {**prop, "enum": kept} if kept and kept != values else prop


#: What a query argument says when it looks up titles or names (a catalog's, a directory's).
_TITLE_WORDS = frozenset({"title", "titles", "author", "authors", "name", "names"})


#: A name as a question writes one: capitalised words, joined by spaces, by an initial's point, or
#: by small words ("Pride and Prejudice", "The Lord of the Rings", "Ursula K. Le Guin").
_NAME_RUN = re.compile(r"[A-Z][\w'’-]*(?:(?:\.?[ \t]+|(?:[ \t]+(?:of|the|and|&|de|del|da|di|du|la|le|van|von|y)){1,2}[ \t]+)"
                       r"[A-Z][\w'’-]*)*")


def names_in(said: Said) -> list[str]:
    """The names the question writes (:func:`_names_in`): what a call that carries none of them
    leaves unasked (``steps.named_elsewhere``)."""
    return _names_in(said)


def _names_in(said: Said) -> list[str]:
    """The names the question writes (:data:`_NAME_RUN`), longest first: none where a sentence
    starts ("Do you have ..."), nor the pronoun "I", nor in a question typed all in capitals or
    title case (whose capitals name nothing).  Read once per step, however many tools ask."""
    if said._names is None:
        said._names = _read_names(said)
    return said._names


def _read_names(said: Said) -> list[str]:
    if said.caseless:
        return []
    text = said.question[:MAX_SAID_CHARS]
    out = []
    for m in _NAME_RUN.finditer(text):
        name = m.group(0)
        before = text[:m.start()]
        if not before.strip() or re.search(r"[.!?:;]\s*$", before):   # a sentence's first word: drop it
            name = name.split(None, 1)[1] if " " in name else ""
        name = re.sub(r"(?:[ \t]+I(?:['’]\w+)?)+$", "", name)          # "... Project Hail Mary I could borrow"
        name = _POSSESSIVE.sub("", re.sub(rf"^(?:(?:{'|'.join(_JOINS)}|and)[ \t]+)+", "", name))   # "the N8", "Apple's"
        if name and name.lower() not in _I and _TOKEN.search(name):
            out.append(name)
    return sorted(dict.fromkeys(out), key=len, reverse=True)


#: An argument is a text the tool works on, or carries, when its name or description says so.
_TEXT_WORDS = frozenset({"text", "sentence", "phrase", "passage", "message", "body"})


#: What an argument says when it is a text the tool carries to someone (never the whole request).
_CARRIED = frozenset({"message", "body"})
#: What an argument says when it is a text or a title, never an address, whatever else it says.
_NOT_ADDRESS = _TEXT_WORDS | _TOPIC_WORDS | frozenset({"title", "content", "contents"})


def _by_text(prop: dict[str, Any], argument: Any, apart: frozenset[str]) -> dict[str, Any]:
    """``prop`` of an argument that is a text the tool works on or carries (its name or description
    says "text", "sentence", "phrase", "passage", "message" or "body"), narrowed to what the
    question sets apart as one (``apart``, ``Said.apart``: its quoted texts, else what follows its
    colon, else what it says a message carries; "Count the words in: the quick brown fox jumps over
    the lazy dog" counts all of it, where the 135M model picked "quick brown fox jumps"; "Send a
    note to ann@example.org saying thank you very much" sends all of that, not "thank").  A
    question that sets nothing apart keeps every part, and so does an argument that is a question
    (:func:`asks_whole`: "the question text" to a search takes the whole question)."""
    values = prop.get("enum")
    if not isinstance(values, list) or not apart or not _says(argument, _TEXT_WORDS) or asks_whole(argument):
        return prop
    kept = [v for v in values if v in apart]
    return {**prop, "enum": kept} if kept and kept != values else prop


def _by_said(prop: dict[str, Any], said: Said) -> dict[str, Any]:
    """``prop`` of an argument with declared values, narrowed to those the question says when it
    says any: "Turn off the lights in the kitchen" is ``off`` (the 135M model chose ``on``, the
    first declared), "a small pizza" ``small``.  Nothing is narrowed to nothing."""
    values = prop.get("enum")
    if not isinstance(values, list):
        return prop
    kept = _declared_said(values, said)
    return {**prop, "enum": kept} if kept and kept != values else prop


def _declared_said(values: Iterable[Any], said: Said) -> list[Any]:
    """Those of an enum's declared ``values`` the question says (each of its words in any regular
    form, or a unit written short: "a tablespoon" and "3 tbsp" say ``tablespoons``; :func:`_said_in`)."""
    return [v for v in values if isinstance(v, str) and (_said_in(v, said.words) or _said_in(v, said.units, units=True))]


def _said_in(value: str, words: Iterable[str], units: bool = False) -> bool:
    """Whether ``words`` say each word of a declared ``value`` in any regular form (:func:`stem`:
    "a tablespoon" says ``tablespoons``, "drive" ``driving``), or, for a unit, its abbreviation
    ("tbsp", "ml"; one of a single letter, "g", only among ``units``, the words written after a
    number), a code in capitals as written ("UPS" is not "up")."""
    tokens = _LETTERS.findall(value)
    if not tokens:
        return False
    low = set(words)
    stems = _stems(frozenset(low), units)
    return all((t.lower() in low) if t.isupper() else stem(t.lower()) in stems for t in tokens)


#: Regular English endings, stripped longest first (:func:`stem`).
_ENDINGS = ("ing", "ed", "es", "s", "e")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """``word`` (lower case) without its regular endings, keeping at least three letters: the
    forms of one word meet ("driving", "drives", "drive" -> "driv"; "batteries", "battery";
    "running", "run"), and a short word is its own ("use", "bus", "red")."""
    if word.endswith("ies") and len(word) > 5:
        word = word[:-3] + "y"
    cut = False
    while True:
        for end in _ENDINGS:
            if word.endswith(end) and len(word) - len(end) >= 3:
                word, cut = word[:-len(end)], True
                break
        else:
            # A consonant doubled before the ending is one ("running", "swimming", "stopped"; not
            # "spelling", "dressing", "added"): "a 30 minute run" says the activity `running`.
            if cut and len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeioulsfz":
                word = word[:-1]
            return word


#: Units written short, and the words each stands for (their stems are compared, :func:`stem`).
_UNIT_LONG: dict[str, tuple[str, ...]] = {short: tuple(longs.split()) for shorts, longs in {
    "tbsp tbs tbl tbsps": "tablespoon", "tsp tsps": "teaspoon", "g gr gm gms gramme grammes": "gram",
    "kg kgs kilo kilos kilogramme kilogrammes": "kilogram",
    "mg": "milligram", "ml mls": "millilitre milliliter", "l ltr": "litre liter", "cl": "centilitre centiliter",
    "oz": "ounce", "lb lbs": "pound", "km kms": "kilometre kilometer", "m": "metre meter",
    "cm": "centimetre centimeter", "mm": "millimetre millimeter", "mi": "mile", "ft": "foot feet", "in": "inch",
    "yd": "yard", "h hr hrs": "hour", "min mins": "minute", "s sec secs": "second",
}.items() for short in shorts.split()}


@functools.lru_cache(maxsize=1024)
def _stems(words: frozenset[str], units: bool = False) -> frozenset[str]:
    """The stems of ``words``, and of the units they write short (those of one letter, or "in",
    only when ``units``: "I'm" is no metre)."""
    out = {stem(w) for w in words}
    for w in words:
        if w in _UNIT_LONG and (units or len(w) > 1 and w != "in"):
            out.update(stem(long) for long in _UNIT_LONG[w])
    return frozenset(out)


#: A number said as a percentage: "15%", "20 percent", "twenty per cent".
_PERCENT = re.compile(r"\s*(?:%|percent\b|per\s+cent\b)", re.IGNORECASE)
#: What an argument says when its value is a percentage.
_PERCENT_WORDS = frozenset({"percent", "percentage", "pct", "rate"})


#: Kinds of quantity, each with the units and the nouns that say it: a number said with a unit
#: ("82 kilos", "100 km/h") goes to an argument that says that kind ("weight_kg", "speed_kmh").
_QUANTITY_KINDS = {kind: frozenset(words.split()) for kind, words in {
    "mass": "kg kgs kilo kilos kilogram kilograms kilogramme kilogrammes g gram grams gramme grammes mg milligram "
            "milligrams lb lbs "
            "oz ounce ounces weight mass",
    "length": "mm millimetre millimetres millimeter millimeters cm centimetre centimetres centimeter centimeters "
              "m metre metres meter meters km kilometre kilometres kilometer kilometers mi mile miles ft foot "
              "feet inch inches yd yard yards height length distance width depth",
    "speed": "km/h kmh kph mph m/s speed velocity",
    # Days to years in the plural only: a "year" argument is a calendar's, and "a 7 year old" no span.
    "duration": "sec secs second seconds min mins minute minutes hr hrs hour hours days weeks months years yrs "
                "duration",
    "volume": "ml millilitre millilitres milliliter milliliters l litre litres liter liters cl dl gallon gallons "
              "volume",
}.items()}
_KIND_OF = {word: kind for kind, words in _QUANTITY_KINDS.items() for word in words}
#: The words of :data:`_QUANTITY_KINDS` that name a kind, not a unit of it.
_KIND_NAMES = frozenset("weight mass height length distance width depth speed velocity duration volume".split())
#: A unit written right after its number, with no space ("4kg", "200mg", "10km", "5.8l/100km"): one
#: of two letters or more, or a single one before "/" (a rate).  A single letter alone is not
#: read so ("5G" and "$5m" are no grams or metres); nor are other letters ("3rd", "5pm", "1Z99").
_GLUED_UNIT = "|".join(sorted({re.escape(u) for u in (*_UNIT_LONG, *_KIND_OF) if len(u) > 1 and u.isalpha()},
                              key=lambda u: (-len(u), u)))
#: A temperature's scale glued to a number of two digits or more, in capitals ("180C", "425F",
#: "37.5C"): the number is said ("The recipe says 180C" had asked back for the oven's temperature).
_GLUED_SCALE = r"(?:(?<=\d\d)|(?<=\.\d))(?-i:[CF])(?!\w)"
#: Grams glued to a number of two digits or more, in lower case ("a 350g portion": not "5G", "4g"
#: a network as often).
_GLUED_GRAMS = r"(?:(?<=\d\d)|(?<=\.\d))(?-i:g)(?!\w)"
#: A number as written, alone or with its unit glued on (:data:`_GLUED_UNIT`, :data:`_GLUED_SCALE`,
#: :data:`_GLUED_GRAMS`); not the digits of a code after its letters and hyphen ("CH-590412" had
#: kept a hire car 590412 more days):
#: never the "5" of "5.8l" (which had been offered as a number read up to its point).
_OFFERED_NUMBER = re.compile(rf"(?<![\w.])(?<![^\W\d_]-)\d+(?:,\d{{3}})*(?:\.\d+)?(?!\.\d)(?:(?!\w)|(?=(?:{_GLUED_UNIT})\b"
                             rf"|[^\W\d_]/|{_GLUED_SCALE}|{_GLUED_GRAMS}))", re.IGNORECASE)
#: A unit written after a number: a word, or two joined by "/" ("km/h"), or a word "per" a time.
_UNIT_WORD = re.compile(r"[ \t]*([^\W\d_]+(?:/[^\W\d_]+)?)(?:[ \t]+per[ \t]+(hour|second|minute)\b)?",
                        re.IGNORECASE)
_UNIT_TOKEN = re.compile(r"[^\W\d_]+/[^\W\d_]+|[^\W\d_]+")
#: What follows a unit that is a rate per a number of another: "/100km", " per 100 km".
_PER_NUMBER = re.compile(r"[ \t]*(?:/|per\b)[ \t]*\d", re.IGNORECASE)


def _units_written(question: str) -> dict[float, tuple[str, str]]:
    """Each number ``question`` says with a unit of a kind of quantity (:data:`_QUANTITY_KINDS`),
    and that kind and unit as written: "82 kilos and 180 cm" is 82 a mass in kilos, 180 a length
    in cm; "a 2-hour block" a duration in hours.  A number said with two units has none."""
    text = question[:MAX_SAID_CHARS]
    out: dict[float, tuple[str, str] | None] = {}
    for _, value, end in _written_numbers(text):
        m = _UNIT_WORD.match(text, end + 1 if text[end:end + 1] == "-" else end)
        if m is None or _PER_NUMBER.match(text, m.end()):
            continue   # a rate per so many of another unit ("5.8 l/100km" is no volume)
        unit = m.group(1).lower()
        kind = "speed" if m.group(2) else _KIND_OF.get(unit)
        if kind is not None:
            out[value] = (kind, unit) if out.get(value, (kind, unit)) == (kind, unit) else None
    return {value: said for value, said in out.items() if said is not None}


def _number_kinds(question: str) -> dict[float, str]:
    """The kind of quantity of each number ``question`` says with a unit (:func:`_units_written`)."""
    return {value: kind for value, (kind, _) in _units_written(question).items()}


@functools.lru_cache(maxsize=4096)
def _argument_kind(name: str, description: str) -> str | None:
    """The one kind of quantity a number argument's name says ("weight_kg", "speed_kmh"), else its
    description ("The distance in kilometres"), else None."""
    for text in (_name_words(_Named(name, description)), description):
        kinds = {_KIND_OF[w] for w in (t.lower() for t in _UNIT_TOKEN.findall(text)) if w in _KIND_OF}
        if "speed" in kinds:   # "The speed in km/h" also says a length and a duration
            kinds = {"speed"}
        if len(kinds) == 1:
            return next(iter(kinds))
    return None


def _by_unit(numbers: list[float], argument: Any, said: Said, strict: bool = False) -> list[float]:
    """The numbers a number argument of a kind of quantity takes: those said with a unit of its
    kind, when any is, else not those said with a unit of another kind ("BMI for 82 kilos and
    180 cm": the 135M model gave the height 82, and the check asked back).  Nothing is narrowed to
    nothing, unless ``strict`` (an optional argument, which the tool does without: "200 mg" is
    no patient's age in years)."""
    if not said.number_kinds:
        return numbers
    kind = _argument_kind(str(getattr(argument, "name", "") or ""), str(getattr(argument, "description", "") or ""))
    if kind is None:
        return numbers
    # A number said in another unit than the one the argument's name says is not its value: the
    # agent copies numbers, never converts them ("a 2-hour block" is no `duration_minutes` of 2;
    # with none left, the argument is asked for, or an optional one left out).
    own = [w for w in _name_words(argument).split() if w in _KIND_OF and w not in _KIND_NAMES]
    other_unit = [n for n in numbers if own and n in said.number_units and said.number_units[n][0] == kind
                  and not _one_unit(said.number_units[n][1], own)]
    numbers = [n for n in numbers if n not in other_unit]
    mine = [n for n in numbers if said.number_kinds.get(n) == kind]
    if not mine and other_unit:
        return []   # its quantity said, in another unit: no other number stands in for it
    return mine or [n for n in numbers if said.number_kinds.get(n, kind) == kind] or ([] if strict else numbers)


#: How a count argument's description starts: "How many people share it".
_COUNT_START = re.compile(r"\s*(?:how\s+many|the\s+number\s+of|number\s+of)\b", re.IGNORECASE)


def _by_money(numbers: list[float], argument: Any, said: Said) -> list[float]:
    """The numbers a count (its description says "how many") takes: not those said as money ("Split
    the $120 dinner four ways": the people had been offered 120 first; "hotel in Berlin, 318 EUR"
    had asked the per diem of a 318-day trip), even when no other is said."""
    if not _COUNT_START.match(str(getattr(argument, "description", "") or "")):
        return numbers
    money = said.money
    return [n for n in numbers if n not in money]


#: The noun a number counts: the word right after it ("3 nights", "8-sided", "12 character"),
#: past a number's own adjective ("three 8-sided dice", "two twelve-sided dice": dice).
_NOUN_AFTER = re.compile(rf"(?:[ \t]+(?:\d+(?:[.,]\d+)?|(?:{'|'.join(_WORD_VALUES)}))-[^\W\d_]+)?[ \t]*-?[ \t]*([^\W\d_]+)",
                         re.IGNORECASE)
#: Words of a number argument's name that say nothing of what it counts.
_GENERIC_COUNTS = frozenset("""number num count amount value total quantity size min max minimum maximum default
                               original new target desired wanted""".split())


def counted_nouns(question: str) -> dict[float, set[str]]:
    """What each number ``question`` says counts: the stems (:func:`stem`) of the nouns written
    right after it (:data:`_NOUN_AFTER`), no filler word ("2 of them")."""
    text = question[:MAX_SAID_CHARS]
    out: dict[float, set[str]] = {}
    for _, value, end in _written_numbers(text):
        m = _NOUN_AFTER.match(text, end)
        if m is not None and (noun := m.group(1).lower()) not in _EDGE_WORDS:
            out.setdefault(value, set()).add(stem(noun))
    return out


@functools.lru_cache(maxsize=4096)
def _counts_of(name: str, description: str) -> frozenset[str]:
    """What a number argument counts, as stems: its name's words ("sides", "party_size" -> party)
    and the noun its description's "how many" asks of ("How many dice to roll")."""
    words = {w for w in _name_words(_Named(name, description)).split() if w not in _GENERIC_COUNTS}
    if (noun := counted_by(description)) is not None:
        words.add(noun)
    return frozenset(stem(w) for w in words if w not in _EDGE_WORDS)


@functools.lru_cache(maxsize=4096)
def counted_by(description: str) -> str | None:
    """The noun a count argument's description opens by asking of (:data:`_COUNT_START`), lower
    case: "dice" of "How many dice to roll", "people" of "The number of people"; None when it
    asks no count."""
    start = _COUNT_START.match(description)
    if start is None or (m := _NOUN_AFTER.match(description, start.end())) is None:
        return None
    return m.group(1).lower()


def _by_noun(numbers: list[float], argument: Any, arguments: Sequence[Any], said: Said) -> list[float]:
    """The numbers a number argument takes by what they count (:func:`counted_nouns`): those said
    with the noun it counts, when any is ("Roll three 8-sided dice": 8 sides, three dice; the 135M
    model rolled one die of 3 sides), else not those said with a noun another number argument of
    the tool counts: none when each does ("roll 2 dice" says no number of sides; an optional
    argument is then left out, :func:`grounded`)."""
    if not said.counted:
        return numbers
    mine = _counts_of(str(getattr(argument, "name", "") or ""), str(getattr(argument, "description", "") or ""))
    taken = [n for n in numbers if said.counted.get(n, set()) & mine]
    if taken:
        return taken
    others = _others_count(argument, arguments)
    return [n for n in numbers if not said.counted.get(n, set()) & (others - mine)]


def _others_count(argument: Any, arguments: Sequence[Any]) -> frozenset[str]:
    """What the tool's number arguments other than ``argument`` count (:func:`_counts_of`), as stems."""
    return frozenset().union(*(_counts_of(str(getattr(a, "name", "") or ""), str(getattr(a, "description", "") or ""))
                               for a in arguments if a is not argument and getattr(a, "type", None) in ("number", "integer")))


#: Words of a boolean argument's name that say nothing of what it switches ("include_symbols").
_GENERIC_FLAGS = frozenset("include includes use enable enabled allow show with is has want add only flag".split())
#: A word that turns what follows off ("no symbols", "without numbers", "don't add emoji").
_NEGATION = frozenset("no not without never exclude excluding disable disabled skip dont don't nor".split())
#: How many words before the name a negation may stand ("with no special symbols").
NEGATION_REACH = 3


def said_flag(argument: Any, question: str) -> bool | None:
    """The value a boolean argument's question gives it: False where it names what the argument
    switches after a negation ("a password with no symbols"), True where it names it otherwise
    ("include symbols"), None where it does not name it (the 135M model wrote ``true`` for "Give
    me a password", a guess at what the tool does by default)."""
    words = {stem(w) for w in _name_words(argument).split() if w not in _GENERIC_FLAGS and len(w) > 2}
    if not words:
        return None
    tokens = [t.lower() for t in re.findall(r"[\w']+", question[:MAX_SAID_CHARS])]
    found = None
    for i, token in enumerate(tokens):
        if stem(token) in words:
            found = not any(t in _NEGATION or t.endswith("n't") for t in tokens[max(0, i - NEGATION_REACH):i])
            if not found:
                return False
    return found


def _by_percent(numbers: list[float], argument: Any, said: Said) -> list[float]:
    """The numbers an argument takes: for one that says it is a percentage, those said as one
    ("15%", "20 percent"), when any is; for any other, not those said only as one: "How much should
    I tip on $80 at 15%?" is a tip of 15 percent on 80 (the 135M model gave the amount 15).
    Nothing is narrowed to nothing."""
    if not said.percents:
        return numbers
    if _says(argument, _PERCENT_WORDS) or "%" in str(getattr(argument, "description", "") or ""):
        return [n for n in numbers if n in said.percents] or numbers
    return [n for n in numbers if n not in said.percents or _times_said(n, [said.question]) > 1] or numbers


#: Words that part "a" from what it counts: a number's ("a timer for fifteen minutes" is no
#: minute), and a preposition's or a conjunction's ("a table for two people").
_NOT_BETWEEN = (*sorted(_WORD_VALUES), "for", "of", "in", "on", "at", "to", "with", "about", "by", "from", "and", "or")
#: Up to three words between a count and what it counts ("large oat" of "Two large oat lattes"), none of
#: :data:`_NOT_BETWEEN`.
_WORDS_BETWEEN = rf"(?:(?!(?:{'|'.join(_NOT_BETWEEN)})\b)[^\W\d_]+\s+){{0,3}}?"


@functools.lru_cache(maxsize=1024)
def _one_of(description: str) -> re.Pattern[str] | None:
    """How a request says one of what a count argument counts (:func:`counted_by`, a noun of three
    letters or more): "a" or "an" (or "one") and, at most three words on, the thing itself ("a
    large pepperoni pizza" for "How many pizzas"); None for an argument that counts nothing it names."""
    noun = counted_by(description)
    if noun is None or len(noun) < 3:
        return None
    forms = {noun, noun[:-1] if noun.endswith("s") else noun, noun[:-2] if noun.endswith("es") else noun}
    return re.compile(rf"\b(?:a|an|one)\s+{_WORDS_BETWEEN}(?:{'|'.join(map(re.escape, sorted(forms)))})\b", re.IGNORECASE)


def says_one(argument: Any, texts: Iterable[str]) -> bool:
    """Whether the dialog says one of what number ``argument`` counts with an article: "get me a
    large pepperoni pizza" is a quantity of 1 of "How many pizzas" (the probe had asked back for it)."""
    if getattr(argument, "type", None) not in ("integer", "number"):
        return False
    pattern = _one_of(str(getattr(argument, "description", "") or ""))
    return pattern is not None and any(pattern.search(text[:MAX_SAID_CHARS]) for text in texts)


def _claims(properties: Mapping[str, Any], arguments: Sequence[Any], texts: list[str],
            said: Said) -> dict[str, tuple[list[str], str]]:
    """Each string argument's values said beside its name (:func:`_by_name`), with that name as a
    request says it, for the arguments whose name the question says with a value beside it."""
    out = {}
    for name, prop in properties.items():
        declared = _argument(arguments, name)
        if declared is None or getattr(declared, "free_text", None) or not isinstance(prop, dict) \
                or prop.get("type") != "string" or "enum" in prop:
            continue
        named = _by_name({"enum": texts}, declared, said)["enum"]
        if named != texts:
            out[name] = (named, _name_words(declared))
    return out


def _claimed(text: str, values: list[str], name: str) -> bool:
    """Whether ``text`` is another argument's value said beside its ``name`` (:func:`_claims`), or
    that value with the name ("shopping list" of the list ``shopping``): "Add 'call the plumber'
    to my todo list" gave the item "todo", the list's, which is no item."""
    return text in values or name in text.lower() and any(v in text for v in values)


#: An identifier written in groups of capitals and digits ("U2 4587", "LH 400", "9400 1118 9922"),
#: three digits at least (read in :func:`_whole_codes`).
_CODE_GROUPS = re.compile(r"(?<![\w-])[A-Z0-9]{1,6}(?:[ \t]+[A-Z0-9]{1,6})+(?![\w-])")


def _whole_codes(numbered: list[str], question: str) -> list[str]:
    """An identifier's offered texts without those that are part of one written in groups of
    capitals and digits in ``question`` ("U2 4587": not "U2", "4587", nor "2 4587", which starts
    inside a word) or hold one with other words, nor those it says only inside a word: "Is U2 4587
    on time?" had checked the flight "4587"; the texts themselves when that would leave none."""
    # (Not a number and the code of what it counts: "300 USD", "300 K".)
    # (Or fewer digits, each group of both: a postcode, "LS6 2AB".)
    groups = [m.group(0) for m in _CODE_GROUPS.finditer(question[:MAX_SAID_CHARS])
              if not m.group(0).split()[-1].isalpha() and (sum(c.isdigit() for c in m.group(0)) >= 3 or all(
                  any(c.isdigit() for c in g) and any(c.isalpha() for c in g) for g in m.group(0).split()))]
    whole = [t for t in numbered
             if re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", question) is not None
             and not any(t != g and re.search(rf"(?<!\w){re.escape(t)}(?!\w)", g) for g in groups)]
    # Nor the words around one said whole ("bei BS3 1AA der Müll" of a postcode in a German question),
    # nor a run that cuts one ("4 bedroom house OX2" of "OX2 6HX", "6HX -> BS8").
    whole = [t for t in whole if t in groups or not any(g in t for g in groups)] or whole
    whole = [t for t in whole if t in groups or not _cuts_code(t, groups, question)] or whole
    return whole or numbered


def _cuts_code(text: str, groups: Sequence[str], question: str) -> bool:
    """Whether ``text``, where ``question`` says it, holds a part of a code of ``groups`` and not all of it."""
    spans = [m.span() for g in groups for m in re.finditer(rf"(?<![\w-]){re.escape(g)}(?![\w-])", question)]
    for m in re.finditer(rf"(?<![\w-]){re.escape(text)}(?![\w-])", question):
        a, b = m.span()
        if any(a < e and s < b and not (a <= s and e <= b) for s, e in spans):
            return True
    return False


#: A word of capitals and digits both ("RR-58102", "M14"; not "6pm", "2kg").
_CAPITAL_CODE = re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Z])[\w-]+")
#: A word of letters and digits both ("CH-778201", "BA117", "2AB").
_MIXED_TOKEN = re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[^\W\d_])[\w-]+")


def _shaped(numbered: list[str], argument: Any, arguments: Sequence[Any], said: Said) -> list[str]:
    """An identifier's offered texts that have its example's shape: with a word of letters and
    digits when its example is one ("The rental agreement number, e.g. CH-778201" is no "car 3" of
    "keep the car 3 more days"), that word alone when its example is one word ("Police POL-90115"
    of a German question is the policy "POL-90115"), and none that holds another offered one with
    words of letters only around it ("hire agreement CH-590412"); the texts themselves when that
    would leave none.  Never a number the question says counts what another argument of the tool
    counts (:func:`_counted_apart`: "get me 2 bottles of it" had ordered the wine "2")."""
    numbered = [t for t in numbered if not _counted_apart(t, argument, arguments, said.counted)]
    examples = [m.group(0)[_EXAMPLE_LEAD.match(m.group(0)).end():]
                for m in _EXAMPLES.finditer(str(getattr(argument, "description", "") or ""))]
    lettered = any(_MIXED_TOKEN.search(e) for e in examples)
    kept = [t for t in numbered if _MIXED_TOKEN.search(t)] if lettered else numbered
    if lettered and all(_one_word(e) for e in examples):
        # (A text of more words with digits is a code in groups, kept whole: "U2 4587", "LS6 2AB".)
        kept = list(dict.fromkeys(_MIXED_TOKEN.search(t).group(0) if len(_MIXED_TOKEN.findall(t)) == 1
                                  and not _DIGIT.search(_MIXED_TOKEN.sub(" ", t)) else t for t in kept))
    kept = [t for t in kept if not any(u != t and re.search(rf"(?<!\S){re.escape(u)}(?!\S)", t)
                                       and not _DIGIT.search(t.replace(u, " ")) for u in kept)]
    return kept or numbered


def _one_word(example: str) -> bool:
    """Whether each value an example gives ("e.g. P-12 or G-01") is one word."""
    return all(len(value.split()) == 1 for value in re.split(r",|\bor\b", example) if value.strip())


def _counted_apart(text: str, argument: Any, arguments: Sequence[Any], counted: Mapping[float, set[str]]) -> bool:
    """Whether ``text`` is a number the question says (``counted``, :func:`counted_nouns`) with a noun
    another number argument of the tool counts: "2" of "get me 2 bottles" is the quantity's."""
    if not counted or not _NUMBER.fullmatch(text.strip()):
        return False
    try:
        nouns = counted.get(float(text.strip().replace(",", "")), set())
    except ValueError:
        return False
    return bool(nouns and nouns & _others_count(argument, arguments))


def _inside(text: str, expression: str) -> bool:
    """Whether ``text`` is one of the numbers of an arithmetic ``expression``."""
    return bool(_NUMBER.fullmatch(text)) and re.search(rf"(?<![\d.,]){re.escape(text)}(?![\d.,])",
                                                        expression) is not None


#: An optional argument whose name or description says it is a name takes what the request says
#: after "called", "named", "titled" or "labelled" ("Set an alarm for 7 am called gym").
_LABEL_WORDS = frozenset({"name", "label", "title", "tag", "nickname"})
_AFTER_CALLED = re.compile(r"\b(?:called|named|titled|label(?:l?ed)?)\s+", re.IGNORECASE)


#: What an argument's name or description says when its value is a place.
#: What an argument's name or description says when it takes who made a work (said after "by").
MAKER_WORDS = frozenset({"artist", "artists", "author", "authors", "band", "singer", "composer", "director",
                         "writer", "performer", "performs", "creator", "musician", "wrote", "sings", "painter"})


def takes_maker(argument: Any) -> bool:
    """Whether a declared string argument takes who made a work: its name or description says so
    (:data:`MAKER_WORDS`: "artist", "Who performs it")."""
    return getattr(argument, "type", None) in (None, "string") and not getattr(argument, "enum", None) \
        and _says(argument, MAKER_WORDS)


#: What a list argument's name or description says when its members are people: each is a name said
#: (capitalised) or an email address.
_PEOPLE_WORDS = frozenset({"attendee", "attendees", "participant", "participants", "invitee", "invitees",
                           "people", "persons", "guests", "members"})


def _takes_people(argument: Any) -> bool:
    """Whether a declared list argument's members are people: its name says so (``attendees``), or
    its description starts with them ("The people to invite", "The other people who must be free";
    not "The ingredients people have")."""
    if getattr(argument, "type", None) != "array":
        return False
    first = [w for w in _TOKEN.findall(str(getattr(argument, "description", "") or "").lower())[:4]
             if w not in ("the", "a", "an", "all", "other", "any")][:1]
    return bool(set(_name_words(argument).split()) & _PEOPLE_WORDS or set(first) & _PEOPLE_WORDS)


#: What a text argument's name says, or its description's first noun, when it is one person.
_PERSON_WORDS = frozenset({"person", "colleague", "coworker", "teammate", "contact", "recipient", "friend",
                           "employee", "attendee", "guest", "invitee", "participant", "member", "assignee"})


def _takes_person(argument: Any) -> bool:
    """Whether a declared string argument is a person (``colleague``, "The contact to call"), whom
    a question names: the values it is offered are the names the question writes, when it writes
    any (:func:`_names_in`)."""
    if getattr(argument, "type", None) not in (None, "string") or getattr(argument, "enum", None):
        return False
    first = [w for w in _TOKEN.findall(str(getattr(argument, "description", "") or "").lower())[:4]
             if w not in ("the", "a", "an", "which", "one")][:1]
    first = [w[:-2] if w.endswith("'s") else w for w in first]
    return bool(set(_name_words(argument).split()) & _PERSON_WORDS or set(first) & _PERSON_WORDS)


def _with_people(texts: Sequence[str], said: Said) -> list[str]:
    """Of ``texts``, the email addresses, and the people's names (:func:`_person`) said as a list's
    members or right after "with" or "and": whom a meeting is with ("a budget sync with
    maria@example.com and Tom"), not what it is called ("the Project Phoenix kickoff")."""
    listed = {m for found in said.lists for m in found}
    return [t for t in texts if _EMAIL.fullmatch(t) or _person(t) and (
        t in listed or said.said_after("with", t) or said.said_after("and", t))]


def _person(text: str) -> bool:
    """Whether a value said is a person's name as written: every word capitalised, none a day, a
    month or a small word ("Priya", "Mary Jane Watson"; not "Friday", "I")."""
    tokens = _TOKEN.findall(text)
    return bool(tokens) and all(t[:1].isupper() and t.lower() not in CALENDAR and t.lower() not in _EDGE_WORDS
                                for t in tokens)


#: What a place argument's name or description says when it is where a ride or a trip starts.
_START_WORDS = frozenset({"pickup", "picked", "origin", "departure", "departing", "start", "starting", "from"})


def starts_route(argument: Any) -> bool:
    """Whether a declared place argument (:func:`takes_place`) is where a ride or a trip starts:
    its name or description says so ("pickup", "Where to be picked up", "origin")."""
    return _says(argument, _START_WORDS)


PLACE_WORDS = frozenset({"city", "town", "place", "location", "where", "country", "region", "area", "destination",
                         "origin", "stop", "station", "airport", "port", "harbour", "harbor"})
#: The words a request says a place after: where something is ("in", "at", "near"), and where one
#: goes or comes from ("from", "to", "between"), its first letter either case.
PLACE_LEAD = r"\b(?:[Ii]n|[Aa]t|[Nn]ear|[Ff]rom|[Tt]o|[Bb]etween)\s+"
#: Where an optional place is pointed at: after where something is ("Book a hotel in Lisbon").
_AFTER_PLACE = re.compile(r"\b(?:in|at|near)\s+(?=[^\W\d_])", re.IGNORECASE)
#: Where an optional place a ride starts at is pointed at: after "from" ("a cab from the Hilton").
_AFTER_START = re.compile(r"\bfrom\s+(?:the\s+)?(?=[^\W\d_])", re.IGNORECASE)
#: A text ending with a place's lead ("in paris", "from the station"; "to" only with its article,
#: "to the airport", since "to" starts a verb as often: "need to call"): a place follows.
_BEFORE_PLACE = re.compile(r"\b(?:(?:[Ii]n|[Aa]t|[Nn]ear|[Ff]rom|[Bb]etween)\s+(?:the\s+)?|[Tt]o\s+the\s+)$")
#: The "to" of a route said from somewhere: a place follows it ("trains from leeds to york").
_ROUTE_TO = re.compile(r"\b[Ff]rom\s+(?!(?:my|your|our|his|her|their|its|this|that)\b)[^\s.?!,;][^.?!;]{0,80}?\s+to\s+$")


def _ends_run(text: str, end: int) -> bool:
    """Whether the words of ``text`` ending at ``end`` end a run: the text's end or a mark follows,
    or a small word leading into a time or an address (:data:`_LEADS_IN`), or a day or a time."""
    rest = text[end:]
    after = _TOKEN.search(rest)
    if after is None or re.match(r"\s*[.?!,;:)]", rest):
        return True
    word = after.group(0).lower()
    return word in _LEADS_IN or bool(_TIME.match(rest, after.start()) or _DATE.match(rest, after.start()))


#: Words that follow a request's verb, not a place's name ("Set an alarm", "Water the basil").
_OBJECT_WORDS = frozenset("a an the my your our his her their me us it them some this that these those".split())
#: Where a sentence starts: a capital there is grammar's, not a name's.
_SENTENCE_START = re.compile(r"(?:^|[.!?;:\"“(]|\n)\s*$")


def takes_place(argument: Any) -> bool:
    """Whether a declared string argument takes a place: its name or description says one
    (:data:`PLACE_WORDS`) and no other kind (an address, a day or a time, an identifier with
    digits, a unit or a currency)."""
    return (getattr(argument, "type", None) in (None, "string") and not getattr(argument, "enum", None)
            and _says(argument, PLACE_WORDS) and not _says(argument, _UNIT_NAMES)
            and address_kind(argument) in (None, _STREET) and _moment_kind(argument) is None and not _numbered(argument)
            and not _NUMBER_EXAMPLE.search(str(getattr(argument, "description", "") or "")))


#: A description's example that is a number ("The port to probe, e.g. 443"): no place.
_NUMBER_EXAMPLE = re.compile(rf"(?:{_EXAMPLE_LEAD.pattern})\s*\d+(?:\s*(?:$|[,.;)]|or\b))", re.IGNORECASE)


_WORD_CHAR = re.compile(r"[^\W_]")


def _named_place(value: str, texts: Iterable[str]) -> bool:
    """Whether ``value`` is said as a place somewhere in ``texts``: as a name (each of its words
    capitalised where it is said, "of" or "de" aside: not "Moscow ahead"; and not a sentence's first
    word that is a common or a request's word: "Why", "Show"), or after the words a place is said
    after ("in paris", "to the airport"); in a text typed without capitals, at its start or its end too
    ("paris weather"), and nowhere within quotes unless a place's lead comes before them.  The 135M model gave
    sunrise-sunset the city "blue" for "Why is the sky blue?"."""
    value = value.strip()
    low = value.lower()
    # (Nor a code: "RR-58102", "M14" are written with a word of capitals and digits; "Terminal 5" and
    # "after 6pm" are not.)
    if len(value) < 2 or low in NOT_PLACES or low in _KIND_OF or low in _WORD_VALUES or value in CURRENCY_CODES \
            or _CAPITAL_CODE.search(value) \
            or _TIME.fullmatch(value) or _DATE.fullmatch(value) or not _LETTERS.search(value):
        return False   # "in Portuguese", "in euros", "on Friday", "at 6pm", "70 F", "400" say no place
    texts = [text[:MAX_SAID_CHARS] for text in texts]
    if len(value) <= 3 and value.isupper() and any(re.search(rf"(?<![\w-]){re.escape(value)}[ \t]?\d", text)
                                                   for text in texts):
        return False   # the letters of a code with digits: "LH 400", "BA283"
    if low == value.upper():
        # A script without capitals ("北京"), and often without spaces: a name cannot be told by its
        # case, nor a word by its edges.
        return any(value in text for text in texts)
    pattern = re.compile(rf"(?<!\w){re.escape(value)}(?!\w)", re.IGNORECASE)
    for text in texts:
        # A quoted word is one spoken of, no place ("What's the meaning of 'ubiquitous'?" called
        # local-time for it), unless a place's lead comes before its quotes ("the time in 'Paris'").
        quoted = [(q.start(2), q.end(2)) for q in _QUOTED.finditer(text)
                  if not _BEFORE_PLACE.search(text, max(0, q.start() - 16), q.start())]
        # Typed without capitals, or with every word capitalised, its case tells nothing.
        caseless = text.islower() or title_cased(text)
        # Nor is a word of a day said ("weekend" of "next weekend") a place.
        dates = [d.span() for d in _DATE.finditer(text)]
        for m in pattern.finditer(text):
            at, words = m.start(), m.group(0).split()
            if any(start <= at and m.end() <= end for start, end in (*quoted, *dates)):
                continue
            if caseless and (not _WORD_CHAR.search(text, 0, at) or not _WORD_CHAR.search(text, m.end())):
                # Typed without capitals, its case tells nothing: a place starts or ends such a
                # request ("paris weather", "time in tokyo"; after a place's lead, below), where
                # any other word is one of its words ("the meaning of" is no city "meaning").
                return True
            # (A number may end such a name, one written as a name: "Heathrow Terminal 5", not "LH 400".)
            if not caseless and all(w[:1].isupper() or w.lower() in _JOINS or k and w.isdigit() and words[0][1:].islower()
                                    for k, w in enumerate(words)) and words[0][:1].isupper():
                first = words[0].lower().strip(".,'’")
                after = _TOKEN.search(text, m.end())
                # A sentence's first word is capitalised by grammar: a name unless it is a common
                # or a request's word, or a verb the request starts with ("Reserve a room", "Water
                # the basil": a word before an article or a pronoun).
                if not (_SENTENCE_START.search(text, max(0, at - 8), at)
                        and (first in _EDGE_WORDS or first in _REQUEST_VERBS or _GREETING.match(text, at)
                             or len(words) == 1 and after is not None and after.group(0).lower() in _OBJECT_WORDS)):
                    return True
            elif (caseless or m.group(0).islower()) and _BEFORE_PLACE.search(text, max(0, at - 16), at):
                return True   # typed in lower case: "weather in paris" (not "Oslo saying" of "in Oslo saying")
            elif (caseless or m.group(0).islower()) and _ROUTE_TO.search(text, 0, at) \
                    and words[-1].lower() not in _LEADS_IN and _ends_run(text, m.end()):
                # Where a route goes, all the words up to a time or the end: "from manchester
                # piccadilly to liverpool lime street after 6pm" (not "liverpool", nor "savings" of
                # "from my checking account to savings": from no place).
                return True
    return False


def _pointed(prop: dict[str, Any], argument: Any, said: Said) -> dict[str, Any] | None:
    """``prop`` of an optional string argument of a tool that has required ones, narrowed to the
    values the question points at for it: said beside its name (:func:`_by_name`), or, for a name
    or a label, after "called"; for a place, a capitalised name after "in", "at" or "near".  None
    when it points at none: the argument is then left out of the call.  Offered every span, the
    135M model filled such an argument with any word ("Wake me up at 6:30" labelled the alarm
    ``Wake``; "Book a hotel in Lisbon for 3 nights" arrived on ``Lisbon``), and a tool that
    declares an argument optional does without it."""
    values = prop.get("enum")
    if not isinstance(values, list):
        return None
    named = _by_name(prop, argument, said)
    if named.get("enum") != values:
        return named
    question = said.question
    places = {m.end() for m in (_AFTER_START if starts_route(argument) else _AFTER_PLACE).finditer(question)} \
        if _says(argument, PLACE_WORDS) else set()
    called = _called(values, argument, question)
    kept = [v for v in values if isinstance(v, str) and (v in called or v[:1].isupper()
                                                          and any(question.startswith(v, at) for at in places))]
    return {**prop, "enum": kept} if kept else None


def _called(values: Sequence[Any], argument: Any, question: str) -> list[str]:
    """Of ``values``, those the question says right after "called", "named", "titled" or "labelled",
    when the argument is a name or a label (:data:`_LABEL_WORDS`): "Make a playlist called Summer
    Drive with Dancing Queen, ..." had named the playlist "Dancing Queen"."""
    if not _says(argument, _LABEL_WORDS):
        return []
    at = {m.end() for m in _AFTER_CALLED.finditer(question[:MAX_SAID_CHARS])}
    return [v for v in values if isinstance(v, str) and any(question.startswith(v, a) for a in at)] if at else []


def named_arguments(arguments: Sequence[Any], said: Said, apart: Sequence[Any] = ()) -> list[str]:
    """The names of a tool's string arguments that the question says with a value beside them
    (:func:`_by_name`: "add them to my hardware list" names an ``add-to-list``'s list): evidence
    that the question is about that tool, whatever the ranker's similarities.  Not by values only
    another tool's arguments (``apart``) declare: "need a maths tutor" names a tutor search's
    subject, no lesson's tutor called "maths"."""
    offered = {"enum": said.texts}
    declared = {v.lower() for a in apart for v in getattr(a, "enum", None) or () if isinstance(v, str)}

    def named(argument: Any) -> bool:
        if getattr(argument, "type", None) not in (None, "string") or getattr(argument, "enum", None) \
                or getattr(argument, "free_text", None) or _moment_kind(argument) is not None:
            return False   # a day's or a time's name is said of anything ("7 times 8")
        name = _name_words(argument)
        # Not as the request's first word, its verb as often ("Text 555-0199 that ...").
        if not name or not any(m.start() > 0 for m in _mentions(name, said.question)):
            return False
        kept = _by_name(offered, argument, said)["enum"]
        return kept != said.texts and not (declared and all(str(v).lower() in declared for v in kept))

    return [a.name for a in arguments if named(a)]


#: A name that ends with its own number: capitalised words, then one to four digits ("Inside Out 2",
#: "Toy Story 4", "Windows 11").
_NAME_NUMBER = re.compile(r"(?<![\w'’-])[A-Z][\w'’-]*(?:[ \t]+[A-Z][\w'’-]*)*[ \t]+\d{1,4}(?![\w.,:/-])")


def _numbered_names(question: str) -> frozenset[str]:
    """The names ``question`` writes with their own number (:data:`_NAME_NUMBER`): not one whose
    number counts the noun after it ("Buy Apple 3 shares"), nor a sentence's first word with it
    ("Add 2 apples"), nor a month's ("December 2020")."""
    text = question[:MAX_SAID_CHARS]
    out = set()
    for m in _NAME_NUMBER.finditer(text):
        after = _NOUN_AFTER.match(text, m.end())
        if after is not None and after.group(1).lower() not in _EDGE_WORDS:
            continue
        name = m.group(0)
        if _SENTENCE_START.search(text[:m.start()]):
            name = name.split(None, 1)[1] if " " in name else ""   # its first word is a sentence's
        # (Nor a date: "25 December 2020" is a month's year.)
        if name and not _DIGIT.match(name) and name.split()[-2].lower() not in CALENDAR:
            out.add(name)
    return frozenset(out)


def _takes_number(properties: Mapping[str, Any], arguments: Sequence[Any]) -> bool:
    """Whether a tool has a number argument the dialog's numbers are offered to (one of declared
    numbers too: :func:`_numbers_declared`)."""
    return any(isinstance(prop, dict) and prop.get("type") in ("number", "integer")
               and ("enum" not in prop or _numbers_declared(prop))
               and not getattr(_argument(arguments, name), "free_text", None)
               for name, prop in properties.items())


def _numbers_declared(prop: Any) -> bool:
    """Whether a property declares its values and they are numbers (weeks 1, 2 or 3): the numbers
    the dialog says are offered to it as to any number argument's, among those."""
    values = prop.get("enum") if isinstance(prop, dict) else None
    return isinstance(prop, dict) and prop.get("type") in ("number", "integer") and isinstance(values, list) \
        and bool(values) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


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
    # An identifier written with digits takes a text with one, the tool's number or not (:func:`_numbered`).
    # Not a run of words between two numbers with no operation in it, which only an expression
    # argument is offered: "75 dollars to account 12345678" had been the only account offered
    # (digits in groups stay, "9400 1118 9922", and one word of letters and digits, "1Z999AA1").
    numbered = [t for t in texts if _DIGIT.search(t) and (t not in said.expressions or _OPERATION.search(t)
                                                          or not (_LETTERS.search(t) and " " in t))]
    if said.numbers and _takes_number(properties, arguments):
        # Nor is a quantity ("150 euros", "$40"), or its number, an identifier's when the tool takes
        # numbers: the account of "Send 150 euros to account GB29 ..." is no "150" (an account
        # number written in digits alone stays one: "account 12345678").
        numbered = [t for t in numbered if not _QUANTITY.fullmatch(t) and t not in _counted_numbers(said.question)] \
            or numbered
        # The numbers said go to the tool's number argument: its text arguments get no run with a
        # number in it ("40" or "15 American" as the currency converted to; "Two" of "Two small
        # espressos" as the drink), unless quoted.
        # (Nor a name's own number: "4 tickets for Inside Out 2" is the film `Inside Out 2`.)
        texts = [t for t in texts if t in said.kept or t in said.numbered_names
                 or not (_DIGIT.search(t) or _word_numbers(t))] or texts
    elif said.expressions:
        # A tool that takes no number gets an expression whole, never the start of one: the 135M model
        # gave a calculator "17" of "What's 17 times 23?", greedy decoding closing the shorter value.
        # Nor a number from inside one: "12" of "(12 + 8) / 4", which starts with its parenthesis.
        texts = [t for t in texts if not any(e != t and (e.startswith(t) or _inside(t, e))
                                             for e in said.expressions)] or texts
    # What the question's numbers count, for a tool that takes a number: its conversion's units.
    units = said.units if _takes_number(properties, arguments) else set()
    taken = tuple(_taken_kinds(arguments))
    taken_values: tuple[str, ...] = ()
    numbers = said.numbers
    if taken:
        # An address or a time the tool takes is that argument's, and so is each part of it that the
        # dialog says nowhere else ("30" of "9:30", and the number 8 of "at 8:30" for a party's
        # size); what else the dialog says is the rest's.
        values, rest, numbers = said.taken(taken)
        taken_values = values
        # Nor a run that cuts one in two ("3 June at 9" of "on 3 June at 9am" had been a pet's name).
        texts, numbered = ([t for t in offered if not any(k.fullmatch(t) for k in taken)
                            and (not any(t in v for v in values) or any(t in r for r in rest))
                            and not _cuts_across(t, values, said.dialog)]
                           for offered in (texts, numbered))
    # A word of a day said is no value ("weekend" of "next weekend" had been a team), the day whole
    # may be (a topic, "Friday").
    texts = [t for t in texts if t not in said.date_parts] or texts
    if said.money and not any(_says(a, _MONEY_TEXT_WORDS) for a in arguments
                              if getattr(a, "type", None) in (None, "string")):
        # Nor a sum of money said, where no text argument takes money: the tax year of "dont want
        # another £100 fine" had been "100".
        texts = [t for t in texts if t in said.kept or not _money_text(t, said.money)] or texts
    # A declared value of one argument said in the question is that argument's: "Something vegan
    # with tofu" is the diet vegan and the ingredient tofu.
    declared_values = {v.lower() for prop in properties.values() if isinstance(prop, dict)
                       for v in prop.get("enum") or () if isinstance(v, str)}
    if declared_values:
        # Nor a run that starts or ends with one: "Two small espressos" is the size small and the
        # drink espressos (the 135M model ordered the drink "small espressos").
        # Nor one with a word of four letters or more inside that is one: "british airways business
        # class" is the airline British Airways and the cabin business.
        inner = {v for v in declared_values if len(v) >= 4 and " " not in v}

        def edged(text: str) -> bool:
            tokens = _TOKEN.findall(text.lower())
            return text.lower() in declared_values or bool(tokens) and (
                tokens[0] in declared_values or tokens[-1] in declared_values or any(t in inner for t in tokens))
        texts = [t for t in texts if not edged(t)]
    claims = _claims(properties, arguments, texts, said)
    # A tool that carries a text the question sets apart after "saying" or a colon (not by quotes): an
    # argument named for a text (`message`, `body`, `text`) or written in the model's own words.
    carries = bool(said.apart) and said.apart != said.kept and any(
        (_named_text(a) or getattr(a, "free_text", None)) and not asks_whole(a) for a in arguments)
    has_place = any(takes_place(a) for a in arguments)
    has_maker = any(takes_maker(a) for a in arguments)
    people_with = _with_people(texts, said) if any(_takes_people(a) for a in arguments) else []
    has_start = any(takes_place(a) and starts_route(a) for a in arguments)
    # The numbers each number argument is offered, read once: in the loop, and again for those
    # offered none (left out after it).
    offers: dict[str, list[Any]] = {}

    def numbers_for(name: str, kind: str, declared: Any) -> list[Any]:
        if name not in offers:
            offers[name] = _numbers_for(kind, numbers, declared, arguments, said)
        return offers[name]

    out = {}
    for name, prop in properties.items():
        declared = _argument(arguments, name)
        kind = prop.get("type") if isinstance(prop, dict) else None
        if declared is None:
            out[name] = prop
        elif getattr(declared, "free_text", None):
            # The model's own words, unless the question sets apart the message it carries ("Send a
            # text to 07700 900456 saying see you soon": the 135M model wrote a paragraph of its own).
            carried = kind == "string" and said.apart and _says(declared, _CARRIED) and not asks_whole(declared)
            codes = said.currencies if takes_currency(declared) else ()
            out[name] = {**prop, "enum": sorted(said.apart)} if carried else {**prop, "enum": list(codes)} if codes \
                else prop
        elif _numbers_declared(prop):
            # Declared numbers: those the dialog says for it ("renew The Salt Path please, 3 weeks" of
            # weeks 1, 2 or 3 had been left to the default 2, and `3` offered as the book).
            said_numbers = numbers_for(name, kind, declared)
            kept = [v for v in prop["enum"] if any(v == n for n in said_numbers)]
            out[name] = {**prop, "enum": kept} if kept else prop
        elif "enum" in prop:
            out[name] = _by_edge(_by_said(_by_quantity(prop, name, units, True, said), said), declared, said)
        elif kind == "string" and (address := address_kind(declared)) is not None \
                and (address is not _STREET or said.streets):
            # An address argument takes the dialog's addresses of its kind; with none said it is left
            # to the model, and the check asks back (a greeting's "Hi" is no recipient).
            # (A street's name is no one span: read off the dialog. With none said, a street argument
            # takes what any text argument does.)
            addresses = list(said.streets) if address is _STREET else [t for t in said.texts if address.fullmatch(t)]
            out[name] = {**prop, "enum": addresses} if addresses else prop
        elif kind == "string" and _kind_taken(name, str(getattr(declared, "description", "") or "")) is _FILE \
                and (files := list(dict.fromkeys(m.group(0).rstrip(".,;:!?)") for text in said.dialog
                                                 for m in _FILE.finditer(text[:MAX_SAID_CHARS])))):
            # A file argument takes the files the dialog names, whole ("print contracts/acme-nda.pdf on the
            # finance printer, 2 copies single sided" had printed the file "copies single sided").
            out[name] = {**prop, "enum": files}
        elif kind == "string" and (moment := _moment_kind(declared)) is not None:
            # A day or a time of day: the ones the dialog says ("tomorrow" is no span: it is no
            # city); with none said it is left to the model, and the check asks back for a made-up one.
            moments = list(dict.fromkeys(m.group(0) for text in said.dialog for m in moment.finditer(text)))
            if (edge := _range_edge(declared)) is not None:
                # A range's start is said after "from", its end after "to" or "until": "book my leave
                # from 18 August to 22 August" had started on another date the question said.
                moments = _at_edge(moments, edge, said) or moments
            out[name] = {**prop, "enum": moments} if moments else prop
        elif kind == "string" and said.expressions and _says(declared, _EXPRESSION_WORDS) \
                and (expressions := [t for t in texts if t in said.expressions]):
            # An arithmetic expression is one the question says, whole: the 135M model gave a
            # calculator "square root" of "What's the square root of 81?".
            out[name] = {**prop, "enum": expressions}
        elif kind == "string" and _coded(declared) and not said.caseless and (codes := list(dict.fromkeys(
                m.group(0) for m in _CODE_SAID.finditer(_QUOTED.sub(" ", said.question[:MAX_SAID_CHARS]))
                if m.group(0) not in _NOT_CODES))):
            # A code in capitals, when the question says any: "What's Tesla trading at? Ticker TSLA"
            # had priced the ticker "Tesla".
            out[name] = {**prop, "enum": codes}
        elif kind == "string" and _numbered(declared):
            # A flight's or a parcel's number is said with its digits: with none said it is left to
            # the model, and the check asks back ("Why is the sky blue?" is no flight "blue").
            if _says(declared, _PHONE_WORDS):
                # A phone number whole, with its "+" and its spaces ("+44 7700 900123"): the words
                # of a span drop the "+" (the probe texted "44 7700 900123").
                numbered = list(dict.fromkeys(m.group(0) for m in _PHONE.finditer(said.question))) or numbered
            numbered = _shaped(numbered, declared, arguments, said)
            # (A range's edge, "from_postcode", takes the code said where it starts.)
            out[name] = _by_edge(_by_name({**prop, "enum": _whole_codes(numbered, said.question)}, declared,
                                          said), declared, said) if numbered else prop
        elif kind == "string" and (texts or said.question and not _says(declared, _CARRIED)
                                   and (said.says_something and name in (schema.get("required") or ())
                                        or asks_whole(declared))):
            # (With nothing of its own said, the whole question is a required argument's, never an
            # optional one's: "which pills am I meant to take today?" is no medication.)
            # The whole question is the request, never the message it asks to send: a message with
            # nothing of its own said is left to the model, and the check asks back for a made-up one.
            whole = [said.question] if said.question and (asks_whole(declared) or not texts and said.says_something) \
                else []
            mine = [t for t in texts if not any(_claimed(t, *claim) for other, claim in claims.items()
                                                if other != name)] or texts
            # Nor is a value its own argument's name, in any form, unquoted: "Which clients are more
            # than 30 days late paying me?" had listed the overdue invoices of the client "clients".
            own_name = _name_words(declared).split()
            # Nor a number argument's name: what that number counts ("extend my loan of Educated by
            # 1 more week" had renewed the book `week`, of the argument `weeks`).
            counts = [w for a in arguments if a is not declared and getattr(a, "type", None) in ("number", "integer")
                      for w in _name_words(a).split()]
            mine = [t for t in mine if t in said.kept or not _said_in(t, own_name + counts)] or mine
            if carries and not _named_text(declared):
                # What the question says a message carries is the carrying argument's, no part of
                # it another's: "ping Marco saying I'll be 10 minutes late" had messaged the colleague `10`.
                mine = _outside(mine, said.apart, said.question) or mine
            if measures := {u for u in units if u in _KIND_OF}:
                if _direction(name) is None and not _says(declared, _UNIT_NAMES):
                    # A unit of measure written after a number is that number's, no other
                    # argument's: "Give the fern 200 ml of water" waters no plant "ml" (the 135M
                    # model's pick).  What a number counts may be a value ("3 apples").
                    # Nor does a value start with one ("a 1 hour budget sync" is no meeting titled
                    # "hour budget sync").
                    mine = [t for t in mine if not (_words(t) and (_words(t) <= measures or (
                        _TOKEN.findall(t) or [""])[0].lower() in measures))] or mine
            if people_with:
                # The people said with someone are the people list's ("Set up a budget sync with
                # maria@example.com and Tom" had titled the meeting `Tom`).
                mine = [t for t in mine if t not in people_with] or mine
            if _takes_person(declared) and (names := set(_names_in(said))):
                # A person is named, when the question writes a name: "ping Marco saying ..." had
                # offered the colleague "ping Marco" and "Marco saying" beside "Marco".
                mine = [t for t in mine if t in names] or mine
            place = takes_place(declared)
            if has_place and not place:
                # Where something is, said after "in", is the tool's place argument's, no other's:
                # "Where can I watch Oppenheimer in Chicago tonight?" had shown the film "Chicago".
                mine = [t for t in mine if not said.said_where(t)] or mine
            if has_maker:
                # Who made a work, said after "by", is the maker's argument's only, and what it is
                # the others': "Play Up by Olly Murs" had played the song "Olly Murs".
                maker = takes_maker(declared)
                mine = [t for t in mine if said.said_after("by", t) == maker] or mine
            if place:
                # A place is one the dialog says as a place (:func:`_named_place`); with none said
                # it is left to the model, and the check asks back for a made-up one.
                mine = [t for t in mine if said.is_place(t)]
                if has_start:
                    # Where a ride starts is said after "from", and is no other place argument's:
                    # "a cab from the Hilton to Heathrow" had gone to the Hilton.  With none said
                    # after "from", it is the place said right before "to" ("Piraeus to Santorini").
                    start = starts_route(declared)
                    starts = [t for t in mine if said.said_after("from", t)] \
                        or [t for t in mine if said.said_before("to", t)]
                    mine = [t for t in mine if (t in starts) == start] or ([] if start else mine)
                else:
                    # A tool of no route is asked of where one goes or is, not where one came from:
                    # "My sister moved from Dublin to Toronto ... how many people live in Toronto?"
                    # had counted Dublin's.
                    mine = [t for t in mine if not said.said_after("from", t)] or mine
                if not mine:
                    out[name] = prop
                    continue
                whole = []
            offered = _by_quantity({**prop, "enum": list(dict.fromkeys(whole + mine))}, name, units, False, said,
                                   of_unit=_says(declared, _UNIT_NAMES))
            named = _by_name(offered, declared, said)
            if called := _called(named.get("enum") or (), declared, said.question):
                named = {**named, "enum": called}
            out[name] = _by_query(_by_text(_by_topic(named, declared, said.question), declared, said.apart),
                                  declared, said)
            if not asks_whole(declared):
                out[name] = _before_times(out[name], taken_values)
        elif kind == "array" and isinstance(items := prop.get("items"), dict) and isinstance(items.get("enum"), list):
            # A list of declared values: those said, each once ("how does my week look overall?" had
            # listed `steps` thirty times, greedy decoding repeating the first), or, none said, at
            # most one (an optional one is then left out below: the tool's default).
            chosen = _declared_said(items["enum"], said)
            most = {} if "maxItems" in prop else {"maxItems": max(1, len(chosen))}
            out[name] = {**prop, "items": {**items, "enum": chosen or items["enum"]}, "uniqueItems": True, **most}
        elif kind == "array" and texts and isinstance(items := prop.get("items"), dict) \
                and items.get("type") == "string" and "enum" not in items:
            # A list of texts: each member one the dialog says; when the question says a list of
            # them, its members, at least as many as the longest ("chicken and rice": two
            # ingredients, not "chicken", nor "recipe" of "a recipe with").
            said_lists = [found for found in said.lists if set(found) <= set(texts)]
            members = list(dict.fromkeys(m for found in said_lists for m in found)) or texts
            if _takes_people(declared):
                # People are named, or written as email addresses: "where is there a gap?" had
                # invited `gap`, "Find 90 minutes on Thursday" `minutes`.
                people = [t for t in texts if _EMAIL.fullmatch(t) or _person(t)]
                members = [m for m in members if m in people] or people
                if not members:
                    # No one said: an optional list is left out, a required one left to the model
                    # (and the check asks back for whoever it makes up).
                    if name in (schema.get("required") or ()):
                        out[name] = prop
                    continue
                said_lists = [found for found in said_lists if set(found) <= set(members)]
                longest = max(map(len, said_lists), default=0)
                least = {"minItems": longest} if longest > 1 and "minItems" not in prop else {}
                most = {} if "maxItems" in prop else {"maxItems": len(members)}
                out[name] = {**prop, "items": {**items, "enum": members}, **least, **most}
                continue
            longest = max(map(len, said_lists), default=0)
            least = {"minItems": longest} if longest > 1 and "minItems" not in prop else {}
            # And no more members than it says: greedy decoding repeats one member until the reply
            # is cut off ("Ring 020 7946 0000" filled a cart with that number, 30 times over).
            most = {} if "maxItems" in prop else {"maxItems": max(len(members) if said_lists else 1, longest)}
            out[name] = {**prop, "items": {**items, "enum": members}, **least, **most}
        elif kind in ("number", "integer") and (offered_numbers := numbers_for(name, kind, declared)):
            out[name] = {**prop, "enum": _with_one(offered_numbers, declared, said)}
        elif kind in ("integer", "number") and says_one(declared, said.heard):
            out[name] = {**prop, "enum": [1]}
        elif kind == "boolean" and (flag := said_flag(declared, said.question)) is not None:
            out[name] = {**prop, "enum": [flag]}
        else:
            out[name] = prop
    required = schema.get("required")
    for name in [n for n in out if n not in (required or ())]:
        declared, type_ = _argument(arguments, name), out[name].get("type") if isinstance(out[name], dict) else None
        if declared is None or "enum" in out[name]:
            continue
        listed = out[name].get("items") if type_ == "array" else None
        if (type_ == "boolean" and not getattr(declared, "free_text", None)) or (
                said.numbers and type_ in ("number", "integer") and not numbers_for(name, type_, declared)) or (
                isinstance(listed, dict) and isinstance(listed.get("enum"), list)
                and not _declared_said(listed["enum"], said)):
            # A switch the question does not name is the tool's default, not the model's guess; so is
            # a number the question says none of for it (each counts what another argument does, or
            # is a time's), and a list of declared values none of which it says.
            del out[name]
    if isinstance(required, list) and required:
        plain = _optional(out, properties, arguments, said, required)
    else:
        # A tool whose arguments are all optional (many MCP tools' schemas list none as required):
        # those the question plainly gives carry what it is asked, as required ones would ("put on
        # some jazz on shuffle" had played no genre, the 135M model leaving it out, and "Play some
        # reggae" the song "Play some reggae"); with none plainly given it is left as it is.
        # (A name said stays offered to the others, which no required argument takes: "Did I pay
        # Netflix anything in the last 60 days?" asks of the merchant Netflix.)
        given = [n for n in out if _plainly_given(n, out, properties, arguments, said)]
        plain = [*given, *_optional(out, properties, arguments, said, given, names_stay=True)] if given else []
        required = []
    _short_unsaid(out, arguments)
    return {**schema, "properties": out, "required": [*required, *plain]} if plain else {**schema, "properties": out}


#: What a number argument's name or description says when it takes a part of a time of day.
_CLOCK_WORDS = frozenset({"hour", "hours", "minute", "minutes", "hh", "mm", "clock", "o'clock"})


def _clock_numbers(question: str) -> frozenset[float]:
    """The numbers ``question`` says only as the hour or the minutes of a time written with a colon
    ("07:45": 7 and 45), the time no argument took: "I took 200 mg of ibuprofen at 07:45" had been
    offered a patient's age of 7 or 45."""
    text = question[:MAX_SAID_CHARS]
    return _only_inside(text, [m.span() for m in _TIME.finditer(text) if ":" in m.group(0)])


def _only_inside(text: str, spans: Sequence[tuple[int, int]]) -> frozenset[float]:
    """The numbers ``text`` writes only within ``spans`` (a time's, a date's), nowhere else."""
    if not spans:
        return frozenset()
    inside: set[float] = set()
    outside: set[float] = set()
    for start, value, _ in _written_numbers(text):
        (inside if any(a <= start < b for a, b in spans) else outside).add(value)
    return frozenset(inside - outside)


#: What a number argument's name or description says when it takes a part of a date.
_DATE_PART_WORDS = frozenset({"day", "month", "year", "date", "dates", "dd", "yyyy", "yy", "weekday"})


#: What a text argument says when its value may be a sum of money.
_MONEY_TEXT_WORDS = frozenset({"amount", "money", "price", "cost", "sum", "budget", "fee", "total", "currency"})
_MONEY_TEXT = re.compile(r"[$€£¥]?[ \t]?(\d+(?:[.,]\d+)?)")


def _money_text(text: str, money: frozenset[float]) -> bool:
    """Whether ``text`` holds a number the question says as a sum of money (``money``), its sign
    aside, as a word of its own ("100", "£100", "100 fine")."""
    for token in text.split():
        m = _MONEY_TEXT.fullmatch(token)
        try:
            if m is not None and float(m.group(1).replace(",", ".")) in money:
                return True
        except ValueError:
            continue
    return False


def _date_parts(texts: Sequence[str], question: str) -> frozenset[str]:
    """The ``texts`` the question says only as a part of a date ("weekend" of "next weekend",
    "August" of "14 August"), not the date whole."""
    text = question[:MAX_SAID_CHARS]
    spans = [m.span() for m in _DATE.finditer(text)]
    if not spans:
        return frozenset()
    dates = [text[a:b].lower() for a, b in spans]
    out = set()
    for t in texts:
        if not any(t.lower() in d and t.lower() != d for d in dates):
            continue   # (most texts: no part of any date)
        found = [m.span() for m in re.finditer(rf"(?<!\w){re.escape(t)}(?!\w)", text)]
        if found and all(any(a <= start and end <= b and (start, end) != (a, b) for a, b in spans)
                         for start, end in found):
            out.add(t)
    return frozenset(out)


def _date_numbers(question: str) -> frozenset[float]:
    """The numbers ``question`` says only inside a date written with digits ("2026-03-08": 2026, 3
    and 8; "14 August": 14): "what was the score when Lakeview played Fernside on 2026-03-08" had
    listed the fixtures 2026 weeks ahead."""
    text = question[:MAX_SAID_CHARS]
    return _only_inside(text, [m.span() for m in _DATE.finditer(text) if _DIGIT.search(m.group(0))])


def _numbers_for(kind: str, numbers: list[float], argument: Any, arguments: Sequence[Any], said: Said) -> list[Any]:
    """The said ``numbers`` a number or integer ``argument`` is offered (an integer's whole ones, as
    ints): not a time of day's hour or minutes, nor a date's parts, unless it takes one
    (:func:`_clock_numbers`, :func:`_date_numbers`), and
    by what they are said as (a percentage, a quantity of a unit, money for a count) and by what
    they count (:func:`_by_noun`)."""
    if said.clock and not _says(argument, _CLOCK_WORDS):
        numbers = [n for n in numbers if n not in said.clock]
    if said.dated and not _says(argument, _DATE_PART_WORDS):
        numbers = [n for n in numbers if n not in said.dated]
    narrowed = _by_unit(_by_percent(numbers, argument, said), argument, said,
                        strict=getattr(argument, "required", True) is False)
    if kind == "integer":
        return [int(n) for n in _by_noun(_by_money(narrowed, argument, said), argument, arguments, said)
                if n.is_integer()]
    return [int(n) if n.is_integer() else n for n in _by_noun(narrowed, argument, arguments, said)]


#: The longest value of a string argument the dialog offers none for (left to the model): a value
#: nobody said is refused by the argument check anyway, and one the model may infer with the check
#: off (a city, a name) is short.
UNSAID_MAX_CHARS = 80


def _counted_numbers(question: str) -> set[str]:
    """The numbers ``question`` writes as quantities, as written: with a unit or a currency after
    them ("150 euros") or a currency's sign before ("$40")."""
    text = question[:MAX_SAID_CHARS]
    out = {m.group(1) for m in re.finditer(r"[$€£¥][ \t]?(\d+(?:,\d{3})*(?:\.\d+)?)", text)}
    for m in re.finditer(rf"(?<![\w.])(\d+(?:,\d{{3}})*(?:\.\d+)?){_UNIT_AFTER.pattern}", text):
        word = m.group(2)
        if word.lower() in _KIND_OF or word.lower() in CURRENCIES or word in CURRENCY_CODES:
            out.add(m.group(1))
    return out


def _short_unsaid(out: dict[str, Any], arguments: Sequence[Any]) -> None:
    """Bound each string argument of ``out`` the dialog offers no value for (no ``enum``), unless it
    is the model's own words (free text) or bounded tighter already: "How are you today?" says no
    value, and the 135M model wrote 300 characters of made-up text for each of translate-text's
    arguments (90 s on a loaded machine) before the check refused them."""
    for name, prop in out.items():
        declared = _argument(arguments, name)
        if declared is None or getattr(declared, "free_text", None) or not isinstance(prop, dict) \
                or prop.get("type") != "string" or "enum" in prop:
            continue
        limit = prop.get("maxLength")
        if not isinstance(limit, int) or limit > UNSAID_MAX_CHARS:
            out[name] = {**prop, "maxLength": UNSAID_MAX_CHARS}


def _with_one(numbers: list[Any], argument: Any, said: Said) -> list[Any]:
    """``numbers``, with 1 first when the dialog says one of what ``argument`` counts
    (:func:`says_one`): "a pizza for 4 people" is one pizza, greedy decoding taking the first."""
    if not says_one(argument, said.heard):
        return numbers
    return [1, *(n for n in numbers if n != 1)]


def _counted(out: Mapping[str, Any], name: str, question: str) -> bool:
    """Whether integer argument ``name`` (grounded in ``out``) is offered one count, said at most
    three words before the one value another argument is offered: "Two large oat lattes please"
    counts the drink "lattes" (the 135M model, free to leave the optional count out, had ordered
    one)."""
    counts = out[name].get("enum") or ()
    if len(counts) != 1:
        return False
    things = [prop["enum"][0] for other, prop in out.items() if other != name and isinstance(prop, dict)
              and prop.get("type") == "string" and len(prop.get("enum") or ()) == 1 and isinstance(prop["enum"][0], str)]
    text = question[:MAX_SAID_CHARS]
    # (Its words between are what the thing is like, "large oat", not a clause's: "cancel job 4473
    # and print boarding-pass-v2.pdf" prints no 4473 copies.)
    return any(value == counts[0] and re.match(rf"\s+{_WORDS_BETWEEN}{re.escape(thing)}(?!\w)", text[end:], re.IGNORECASE)
               for _, value, end in _written_numbers(text) for thing in things)


def _plainly_given(name: str, out: Mapping[str, Any], properties: Mapping[str, Any], arguments: Sequence[Any],
                   said: Said) -> bool:
    """Whether the question plainly gives argument ``name`` a value: one of its declared values, or,
    for a day, a time, an address or an identifier with digits, one of that kind (``out``: the
    grounded properties, whose ``enum`` holds those said)."""
    declared, prop = _argument(arguments, name), properties.get(name)
    if declared is None or getattr(declared, "free_text", None) or not isinstance(prop, dict):
        return False
    if "enum" in prop:
        return bool(_declared_said(prop.get("enum") or (), said))
    if prop.get("type") == "string" and (address_kind(declared) or _moment_kind(declared) or _numbered(declared)):
        return isinstance(out.get(name), dict) and "enum" in out[name]
    if prop.get("type") in ("number", "integer"):
        return _with_its_unit(out.get(name), declared, said.question)
    return False


def _with_its_unit(prop: Any, argument: Any, question: str) -> bool:
    """Whether a number argument (grounded: ``prop``'s ``enum`` holds the numbers it is offered) is
    offered a number the question writes with a unit its name or description says: "30 days" for
    ``min_days_overdue``, "20 minutes" for ``duration_minutes``, "4kg" for ``weight_kg``, "60
    degrees" for a temperature "in degrees Celsius" (the wash's temperature had been left out)."""
    offered = prop.get("enum") if isinstance(prop, dict) else None
    if not offered:
        return False
    # (The description's words of three letters or more, outside its examples: "e.g." writes no grams.)
    described = _EXAMPLES.sub(" ", str(getattr(argument, "description", "") or ""))
    own = [*_name_words(argument).split(), *sorted(w for w in content_words(described) if len(w) > 2)]
    text = question[:MAX_SAID_CHARS]
    return any(value in offered and (unit := re.match(r"\s*([^\W\d_]+)", text[end:])) is not None
               and _one_unit(unit.group(1), own) for _, value, end in _written_numbers(text))


def _one_unit(written: str, names: Sequence[str]) -> bool:
    """Whether a unit as written ("min", "kilos", "hours") is one of ``names`` (an argument's name
    words: "minutes", "kg"), either written short."""
    return bool(_stems(frozenset({written.lower()}), True) & _stems(frozenset(n.lower() for n in names), True))


def _optional(out: dict[str, Any], properties: Mapping[str, Any], arguments: Sequence[Any], said: Said,
              required: list[Any], names_stay: bool = False) -> list[str]:
    """Leave out of ``out`` (a tool's grounded properties) each optional argument the question
    says nothing for, and narrow a string one to what it points at (:func:`_pointed`), for a tool
    that has required arguments (they carry what it is asked; an optional one qualifies it, and
    the tool does without it), or optional ones the question plainly gives (``required`` then names
    those; ``names_stay``: a string argument pointed at by nothing keeps the names said).  An argument of a kind (a day, an address, an identifier with
    digits) keeps the values of its kind said, an enum the declared values said, a number the
    numbers said beyond what the required numbers take.  A tool whose arguments are all optional
    is left as it is: many MCP tools' schemas list none as required.

    Returns the optional arguments the question plainly gives a value (a declared value said, one
    of its kind, one it points at; a number is not plain): the step requires them, since the 135M
    model left out the size of "Two small espressos" when it could."""
    numbered = sum(1 for n in required if isinstance(properties.get(n), dict)
                   and properties[n].get("type") in ("number", "integer"))
    plain = []
    for name in [n for n in out if n not in required]:
        declared, prop, kind = _argument(arguments, name), properties[name], None
        if isinstance(prop, dict):
            kind = prop.get("type")
        if declared is not None and getattr(declared, "free_text", None) and takes_currency(declared) \
                and isinstance(out[name], dict) and "enum" in out[name]:
            plain.append(name)   # a currency said is the call's: left out, the default's ("15 pounds" in EUR)
            continue
        if declared is None or getattr(declared, "free_text", None) or not isinstance(prop, dict):
            continue
        sure = False
        if _numbers_declared(prop):
            # As a number argument's, below: kept when the question says one of them, plainly with its unit.
            keep = out[name].get("enum") != prop.get("enum") and len(said.numbers) > numbered
            sure = keep and (kind == "integer" and _counted(out, name, said.question)
                             or _with_its_unit(out[name], declared, said.question))
        elif "enum" in prop or kind == "string" and (address_kind(declared) or _moment_kind(declared)
                                                   or _numbered(declared)):
            keep = sure = _plainly_given(name, out, properties, arguments, said)
        elif kind == "string":
            pointed = _pointed(out[name], declared, said)
            keep = sure = pointed is not None
            if keep:
                out[name] = pointed
            elif names_stay and (names := [v for v in out[name].get("enum") or () if v in _names_in(said)]):
                keep, out[name] = True, {**out[name], "enum": names}
        elif kind in ("number", "integer"):
            keep = "enum" in out[name] and len(said.numbers) > numbered
            sure = keep and (kind == "integer" and _counted(out, name, said.question)
                             or _with_its_unit(out[name], declared, said.question))
        else:
            keep = True   # a boolean, a list, an object: kept (the check reads a list's texts)
        if not keep:
            del out[name]
        elif sure:
            plain.append(name)
    return plain
