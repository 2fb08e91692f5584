"""How likely the model found each option for one field of its JSON output, from its token
probabilities (the ``score-choices`` request property, ``trustgraph.base.formats.decision_schema``).

The agent needs to know how sure the model was of the tool it named: a
small model constrained by a grammar always names *some* tool, and a guess
looks exactly like a choice.  llama.cpp reports, beside each generated
token, the model's own probabilities of the most likely tokens at that
point, computed *before* the grammar narrows them.  So one generation tells,
at the position where the field's value starts, how much the model wanted
each option there:

* along the generated value, every token that the option shares with it
  counts with its own probability;
* where the option parts from the generated text, the probability of the
  alternative tokens that continue the option (the rest of the option is
  taken as certain, a small under-count for long names);
* an option the model never considered (below the reported alternatives)
  gets half the smallest reported probability.

Whole option names are scored, not only their first token: two tools that
share a first word (``convert-currency``, ``convert-units``) are told apart
where they differ.  The result is each option's probability as the model saw
it, not renormalised: what is missing to 1 went to text that is no option
(the model wanted to write something else), which is worth knowing too.

The field :data:`FIRST_MENTION` asks for the same in free text (an agent's
ReAct reply): the position scored is where the text first names one of the
options, as a word of its own.  That is where a ReAct reply decides ("I will
use the ``tell-joke`` tool", before its ``Action:`` line repeats the name).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

from trustgraph.base.formats import decision_schema

#: How many alternatives per token the services ask for (``top_logprobs``; OpenAI accepts at most 20).
TOP_LOGPROBS = 20

FIRST_MENTION = decision_schema.FIRST_MENTION
# What may come right after an option named in free text: not more of a name.
_NAME_GOES_ON = re.compile(r"[\w-]")


def _value_start(tokens: Sequence[dict[str, Any]], field: str) -> int | None:
    """The index of the first token of ``field``'s string value, or None."""
    opening = re.compile(r'"' + re.escape(field) + r'"\s*:\s*"$')
    text = ""
    for i, token in enumerate(tokens):
        if opening.search(text):
            return i
        text += str(token.get("token", ""))
    return None


def _first_mention(tokens: Sequence[dict[str, Any]], options: Sequence[str]) -> int | None:
    """The index of the token where the generated text first names one of ``options`` as a
    word of its own (spaces before it belong to that token), or None."""
    pieces = [str(t.get("token", "")) for t in tokens]
    text = "".join(pieces)
    offsets = [0, *accumulate(len(piece) for piece in pieces)][:-1]   # where each token starts
    best: int | None = None
    for option in options:
        for found in re.finditer(r"(?<![\w-])" + re.escape(option) + r"(?![\w-])", text):
            # The token holding its first character, unless that token holds more than spaces before it.
            i = bisect_right(offsets, found.start()) - 1
            if text[offsets[i]:found.start()].strip():
                continue
            best = i if best is None else min(best, i)
            break
    return best


def _continues(token: str, rest: str) -> bool:
    """Whether ``token`` can come next when ``rest`` (the option's remaining text and its
    closing quote) is still to be written."""
    return bool(token) and (rest.startswith(token) or token.startswith(rest))


def choice_scores(tokens: Sequence[dict[str, Any]], field: str, options: Sequence[str]) -> dict[str, float] | None:
    """``{option: probability}`` for ``field``'s value, from a chat completion's
    ``logprobs.content`` as llama.cpp and the OpenAI API both send it (each token with
    ``token``, ``logprob`` and ``top_logprobs``, a list of ``{token, logprob}`` that may hold the
    generated token too); None when the output has no such field or no probabilities.

    An option's probability adds up the ways the model could have started
    writing it: along the generated tokens as long as they spell the option,
    and at each of those positions every other reported token that also
    continues it (another tokenisation: ``tell`` where ``t`` was generated).
    A reported token that continues several options (``tell`` for both
    ``tell-joke`` and ``tell-dad-joke``) is shared among them, in proportion
    to what the generation says of each further on (the model's
    probabilities where they part), or equally when it says nothing: given
    whole to each, it made every two options with a common start tie.
    """
    text = field == FIRST_MENTION
    start = _first_mention(tokens, options) if text else _value_start(tokens, field)
    if start is None:
        return None
    own: dict[str, float] = {}                       # option -> the generated tokens spelling it whole
    starts: dict[tuple[int, str], float] = {}        # (position, token) -> probability of starting so
    via: dict[tuple[int, str], list[str]] = {}       # ... and the options that start continues
    for option in options:
        rest = option if text else option + '"'
        along = 1.0      # the probability of the generated tokens so far, which spell the option
        j = start
        own[option] = 0.0
        while rest and j < len(tokens):
            token = _token(tokens[j], text and j == start)
            lp = tokens[j].get("logprob")
            if not isinstance(lp, (int, float)):
                return None
            alternatives = [a for a in tokens[j].get("top_logprobs") or []
                            if isinstance(a, dict) and isinstance(a.get("logprob"), (int, float))]
            spelled = bool(token) and (rest.startswith(token) or token.startswith(rest))
            found = False
            for a in alternatives:
                other = _token(a, text and j == start)
                if a.get("token") != tokens[j].get("token") and _continues(other, rest):
                    key = (j, str(a.get("token", "")))
                    starts[key] = along * math.exp(a["logprob"])
                    via.setdefault(key, []).append(option)
                    found = True
            if spelled:
                along *= math.exp(lp)
                rest = "" if token.startswith(rest) else rest[len(token):]
                j += 1
                continue
            if not found:   # never considered: half the smallest reported probability here
                floor = min((a["logprob"] for a in alternatives), default=math.log(1e-6))
                key = (j, "\0" + option)
                starts[key] = along * math.exp(floor) / 2
                via[key] = [option]
            along = 0.0
            rest = ""
        if text and along and j < len(tokens) and _NAME_GOES_ON.match(str(tokens[j].get("token", ""))):
            along = 0.0    # the text went on to name something longer
        own[option] = along
    # Deepest starts first: what an option got further on weighs its share of a shallower start.
    got = dict(own)
    for key in sorted(starts, key=lambda k: -k[0]):
        sharing = via[key]
        weights = [got[o] for o in sharing]
        total = sum(weights)
        for o, w in zip(sharing, weights, strict=True):
            got[o] += starts[key] * (w / total if total > 0 else 1 / len(sharing))
    return got


def _token(entry: dict[str, Any], first_in_text: bool) -> str:
    token = str(entry.get("token", ""))
    return token.lstrip() if first_in_text else token
