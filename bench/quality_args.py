"""How the agent-quality table judges a call's arguments and reads a tool's result, per tool.

:func:`args_right` says whether the right tool's call has the values a
question expects (leniently: the services' own readings of a value decide,
so a value the tool reads as the expected one is right); :func:`key_value`
picks out of a result what the user asked for, so a wrongly successful answer
that shortened the result can be told from one that ignored it.  Each of the
table's tools has its rule here (the scoring, ``quality_scoring.py``, calls
them); a tool without one is an error, not a pass.
"""

from __future__ import annotations

import re
from typing import Any

from quality_sets import qs, qs3  # the table's tool services, whose readings of an argument the scores use

__all__ = ["args_right", "distinctive", "key_value", "normal_ws"]


def normal_ws(text: str) -> str:
    """``text`` with its whitespace runs made one space, in lower case."""
    return " ".join(text.split()).lower()


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _same_number(got: Any, want: Any) -> bool:
    try:
        return abs(float(got) - float(want)) < 1e-9
    except (TypeError, ValueError):
        return False


def _city(got: Any, want: str) -> bool:
    city = normal_ws(str(got)).strip(" .!?\"'")
    return city == normal_ws(want) or city.startswith(normal_ws(want) + ",")


def _same_word(got: Any, want: str) -> bool:
    return qs.headword(str(got)) == qs.headword(want)


def args_right(q: dict[str, Any], args: Any) -> bool:
    """Whether the expected tool's call has the question's expected arguments (leniently).

    Jokes: the question's topic word is contained in ``topic``. Weather, local
    time, forecast, sunrise and sunset: the city, optionally followed by ",
    <region>". Time difference: the two cities, in either order. Word count:
    the same words as the expected text (case, punctuation and quotes
    ignored; containment would score the whole question as the text).
    Currency: the same amount, and a ``to`` the converter reads as the
    expected code. Dictionary, spelling, letter count, synonyms: the word,
    case and surrounding quotes ignored; translation: that, and a language
    the lexicon reads as the expected one. Units and temperatures: the same
    value, and ``from``/``to`` the converter reads as the expected units
    (scales).
    """
    if not isinstance(args, dict):
        return False
    tool = q["tool"]
    if tool in ("tell-joke", "tell-dad-joke"):
        return q["topic"].lower() in str(args.get("topic", "")).lower()
    want = q["args"]
    if tool in ("weather", "local-time", "forecast", "sunrise-sunset"):
        return _city(args.get("city", ""), want["city"])
    if tool == "time-difference":
        got = (args.get("city", ""), args.get("other_city", ""))
        return (_city(got[0], want["city"]) and _city(got[1], want["other_city"])) \
            or (_city(got[0], want["other_city"]) and _city(got[1], want["city"]))
    if tool == "count-words":
        return _words(str(args.get("text", ""))) == _words(want["text"])
    if tool == "convert-currency":
        return _same_number(args.get("amount"), want["amount"]) \
            and qs.currency_code(str(args.get("to", ""))) == want["to"]
    if tool in ("define-word", "spell-word", "count-letters", "find-synonyms"):
        return _same_word(args.get("word", ""), want["word"])
    if tool == "translate-word":
        return _same_word(args.get("word", ""), want["word"]) \
            and qs3.language_name(str(args.get("language", ""))) == qs3.language_name(want["language"])
    if tool == "convert-units":
        return _same_number(args.get("value"), want["value"]) \
            and qs.unit_code(str(args.get("from", ""))) == want["from"] \
            and qs.unit_code(str(args.get("to", ""))) == want["to"]
    if tool == "convert-temperature":
        return _same_number(args.get("value"), want["value"]) \
            and qs3.temperature_scale(str(args.get("from", ""))) == want["from"] \
            and qs3.temperature_scale(str(args.get("to", ""))) == want["to"]
    raise ValueError(f"no argument rule for tool {tool!r}")


def distinctive(observation: str) -> str:
    """The line of a result that only it has: the last non-empty one (a joke's joke)."""
    lines = [ln for ln in observation.splitlines() if ln.strip()]
    return lines[-1] if lines else observation


#: What the user asked for, as each tool's result states it (the pattern's last group, or all of it).
KEY_PATTERNS = {
    "weather": r"-?\d+°C and \w+",
    "count-words": r"There (?:is|are) (\d+) words?",
    "convert-currency": r" is ([\d,]+\.\d\d) [A-Z]{3}\.",
    "local-time": r"\d\d:\d\d",
    "convert-units": r" is ([\d,.]+ \w+)\.$",
    "define-word": r"\): (.+?)\.?$",
    "forecast": r"-?\d+°C to -?\d+°C, \w+",
    "sunrise-sunset": r"rises at (\d\d:\d\d)",
    "convert-temperature": r" is (-?[\d,.]+ (?:°[CF]|K))\.$",
    "spell-word": r"spelled ([A-Z'-]+)\.$",
    "count-letters": r"has (\d+) letters?",
    "translate-word": r" is \"(.+)\"\.$",
    "find-synonyms": r": (.+?)\.$",
    "time-difference": r" is ([\d.]+ hours?) (?:ahead|behind)|keeps the same",
}


def key_value(tool: str, observation: str) -> str | None:
    """What the user asked for, as the result states it: the temperature and sky, the count, the
    converted amount or quantity, the time, the meaning, the letters, the translation, the synonyms,
    the difference, a joke's first five words. Not a score of the table (an answer must carry the
    result itself): it tells a wrongly successful answer that shortened the result from one that
    ignored it."""
    pattern = KEY_PATTERNS.get(tool)
    if pattern is None:
        return " ".join(distinctive(observation).split()[:5]) or None
    m = re.search(pattern, observation)
    return m.group(m.lastindex or 0) if m else None
