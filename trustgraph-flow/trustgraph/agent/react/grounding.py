"""Whether a tool call's arguments were said in the dialog, or the model made them up.

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

from trustgraph.catalog.relevance import COMMON_WORDS

__all__ = ["unsaid_arguments"]

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
