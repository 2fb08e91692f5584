"""The agent-quality table's tool services for its third question set: a sky service (forecast,
sunrise and sunset), a temperature converter, a letters service (spelling, letter count), a
lexicon (translation, synonyms) and a time-zone service.

Five self-announcing ``DynamicToolService`` subclasses declaring eight tools,
each chosen as the others by ``--service sky|temperature|letters|lexicon|zones``
of ``bench/agent/quality_services.py`` (which takes them from :data:`SERVICES`
here; every other flag is the processor's own)::

    .venv/bin/python bench/agent/quality_services.py --service sky -p pulsar://127.0.0.1:6650

They are started only after the table's second set is done, so sets 1 and 2
are asked of the tools they always had.  Each new tool has a near neighbour
among the tools already there, so set 3 tells whether a model keeps apart
tools that are easy to confuse:

* ``forecast`` (tomorrow) and ``weather`` (now);
* ``convert-temperature`` and ``weather`` (degrees), and ``convert-units``
  (a conversion);
* ``sunrise-sunset`` and ``time-difference`` and ``local-time`` (a clock time
  in a city);
* ``count-letters`` and ``count-words`` (a count), and ``spell-word`` (the
  letters of a word);
* ``translate-word`` and ``find-synonyms`` and ``define-word`` (what a word is).

The answers are deterministic and distinctive as the other services' are:
made up per city from its name (forecast, sunrise and sunset: the same city
always gets the same answer), or real (temperature formulas, the letters of a
word, standard-time UTC offsets of a fixed list of cities, a short
translation glossary and thesaurus; what they do not know is a ``ToolError``
naming what they know).  As with the second set's services, the descriptors
are part of the test: set 3's questions share no word with their right
tool's text, so changing that text changes the test.
"""

from __future__ import annotations

import re
import zlib
from typing import Any

from trustgraph.base import DynamicToolService
from trustgraph.base.tool_services.dynamic_tool_service import ToolError


def _name(text: str) -> str:
    return " ".join(str(text).split()) or "nowhere"


def _hash(kind: str, city: str) -> int:
    return zlib.crc32(f"{kind}/{_name(city).lower()}".encode())


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def plain_word(word: str) -> str:
    """``word`` as the glossaries spell it: lower case, without surrounding quotes or punctuation."""
    return re.sub(r"^\W+|\W+$", "", " ".join(str(word).split()).lower())


def _operation(config: dict[str, Any], known: tuple[str, ...]) -> str:
    """The tool's ``operation`` config param: which of its service's tools was called."""
    operation = config.get("operation")
    if operation not in known:
        raise ToolError(f"the tool's 'operation' must be one of {', '.join(known)}, got {operation!r}")
    return str(operation)


#: Several tools of one service: each tool sets the service's ``operation`` param (as the joke
#: service's two tools set ``style``).
OPERATION = [{"name": "operation", "required": True}]


# -- sky: forecast, sunrise and sunset -------------------------------------------------------
_OUTLOOK = ("sunny", "cloudy", "rainy", "windy", "foggy", "snowy", "stormy")


def forecast_report(city: str) -> str:
    """Tomorrow's made-up forecast for ``city``: a low, a high and a sky."""
    h = _hash("forecast", city)
    low = h % 30 - 8
    return (f"Forecast for {_name(city)} tomorrow: {low}°C to {low + 3 + (h >> 5) % 9}°C, "
            f"{_OUTLOOK[(h >> 10) % len(_OUTLOOK)]}.")


def sun_report(city: str) -> str:
    """Today's made-up sunrise (04:00-07:59) and sunset (16:00-20:59) in ``city``."""
    h = _hash("sun", city)
    return (f"In {_name(city)} the sun rises at {_clock(4 * 60 + h % 240)} and sets at "
            f"{_clock(16 * 60 + (h >> 8) % 300)} today.")


class Sky(DynamicToolService):
    default_topic = "quality-sky"
    config_params = OPERATION
    tools = [
        {"name": "forecast", "description": "The weather forecast for the next day in a city",
         "operation": "forecast", "arguments": [{"name": "city", "type": "string", "description": "The city"}]},
        {"name": "sunrise-sunset", "description": "When the sun rises and sets in a city today",
         "operation": "sun", "arguments": [{"name": "city", "type": "string", "description": "The city"}]},
    ]

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> str:
        report = {"forecast": forecast_report, "sun": sun_report}[_operation(config, ("forecast", "sun"))]
        return report(str(arguments.get("city", "")))


# -- temperature converter ---------------------------------------------------------------
SCALES = {"C": "°C", "F": "°F", "K": "K"}
_SCALE_NAMES = {"celsius": "C", "centigrade": "C", "fahrenheit": "F", "kelvin": "K"}


def temperature_scale(name: str) -> str | None:
    """The scale ``name`` stands for (``C``, ``°F``, ``degrees Celsius``, ``kelvin`` -> one of
    ``C``, ``F``, ``K``), None when unknown."""
    text = " ".join(str(name).replace("°", " ").replace(".", " ").split()).lower()
    text = re.sub(r"^degrees? ", "", text)
    if text.upper() in SCALES:
        return text.upper()
    return _SCALE_NAMES.get(text.removesuffix("s"))


def _number(x: float) -> str:
    """At most two decimals, no trailing zeros (``392``, ``38.33``, ``-40``)."""
    text = f"{x:,.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _kelvin(value: float, scale: str) -> float:
    return {"C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15, "K": value}[scale]


def convert_temperature_report(value: float, source: str, target: str) -> str:
    scales = []
    for what, name in (("from", source), ("to", target)):
        scale = temperature_scale(name)
        if scale is None:
            raise ToolError(f"unknown scale {name!r} in {what!r}: give C, F or K")
        scales.append(scale)
    src, dst = scales
    kelvin = _kelvin(value, src)
    if kelvin < -1e-9:
        raise ToolError(f"{_number(value)} {SCALES[src]} is below absolute zero")
    out = {"C": kelvin - 273.15, "F": (kelvin - 273.15) * 9 / 5 + 32, "K": kelvin}[dst]
    return f"{_number(value)} {SCALES[src]} is {_number(out)} {SCALES[dst]}."


class TemperatureConverter(DynamicToolService):
    default_topic = "quality-temperature"
    tools = [{
        "name": "convert-temperature", "description": "Convert a temperature between Celsius, Fahrenheit and Kelvin",
        "arguments": [
            {"name": "value", "type": "number", "description": "The temperature"},
            {"name": "from", "type": "string", "enum": list(SCALES), "description": "Its scale: C, F or K"},
            {"name": "to", "type": "string", "enum": list(SCALES), "description": "The scale wanted: C, F or K"},
        ],
    }]

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> str:
        value = arguments.get("value")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ToolError(f"'value' must be a number, got {value!r}")
        return convert_temperature_report(float(value), str(arguments.get("from", "")),
                                          str(arguments.get("to", "")))


# -- letters: spelling and letter count ------------------------------------------------------
def _one_word(word: str) -> str:
    key = plain_word(word)
    if not key or not re.fullmatch(r"[^\W\d_]+(?:['-][^\W\d_]+)*", key):
        raise ToolError(f"give one word, got {word!r}")
    return key


def spell_report(word: str) -> str:
    key = _one_word(word)
    return f"{key} is spelled {'-'.join(c.upper() for c in key if c.isalpha())}."


def count_letters_report(word: str) -> str:
    n = sum(c.isalpha() for c in _one_word(word))
    shown = re.sub(r"^\W+|\W+$", "", " ".join(str(word).split()))   # as written, case kept
    return f"\"{shown}\" has {n} letter{'' if n == 1 else 's'}."


class Letters(DynamicToolService):
    default_topic = "quality-letters"
    config_params = OPERATION
    tools = [
        {"name": "spell-word", "description": "Spell a word out letter by letter", "operation": "spell",
         "arguments": [{"name": "word", "type": "string", "description": "The word to spell"}]},
        {"name": "count-letters", "description": "Count the letters in a word", "operation": "count",
         "arguments": [{"name": "word", "type": "string", "description": "The word whose letters to count"}]},
    ]

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> str:
        report = {"spell": spell_report, "count": count_letters_report}[_operation(config, ("spell", "count"))]
        return report(str(arguments.get("word", "")))


# -- lexicon: translation and synonyms ---------------------------------------------------------
LANGUAGES = ("French", "German", "Spanish", "Italian", "Portuguese")
_LANGUAGE_CODES = {"fr": "French", "de": "German", "es": "Spanish", "it": "Italian", "pt": "Portuguese"}
#: English word -> its translation in each of LANGUAGES, in that order.
TRANSLATIONS = {
    "butterfly": ("papillon", "Schmetterling", "mariposa", "farfalla", "borboleta"),
    "cheese": ("fromage", "Käse", "queso", "formaggio", "queijo"),
    "bread": ("pain", "Brot", "pan", "pane", "pão"),
    "library": ("bibliothèque", "Bibliothek", "biblioteca", "biblioteca", "biblioteca"),
    "friend": ("ami", "Freund", "amigo", "amico", "amigo"),
    "window": ("fenêtre", "Fenster", "ventana", "finestra", "janela"),
    "apple": ("pomme", "Apfel", "manzana", "mela", "maçã"),
    "water": ("eau", "Wasser", "agua", "acqua", "água"),
}
THESAURUS = {
    "happy": ("cheerful", "content", "joyful", "glad"),
    "big": ("large", "huge", "enormous", "sizeable"),
    "difficult": ("hard", "tough", "demanding", "tricky"),
    "fast": ("quick", "rapid", "swift", "speedy"),
    "important": ("significant", "crucial", "vital", "essential"),
    "tired": ("weary", "exhausted", "drained", "sleepy"),
    "beautiful": ("lovely", "gorgeous", "stunning", "attractive"),
    "angry": ("furious", "irate", "cross", "annoyed"),
}


def language_name(name: str) -> str | None:
    """The language ``name`` stands for (``German``, ``germans``, ``de`` -> ``German``), None when unknown."""
    text = plain_word(name)
    if text in _LANGUAGE_CODES:
        return _LANGUAGE_CODES[text]
    for candidate in (text, text.removesuffix("s")):
        for language in LANGUAGES:
            if candidate == language.lower():
                return language
    return None


def translate_report(word: str, language: str) -> str:
    key, lang = plain_word(word), language_name(language)
    if lang is None:
        raise ToolError(f"unknown language {language!r}: the known ones are {', '.join(LANGUAGES)}")
    if key not in TRANSLATIONS:
        raise ToolError(f"{word!r} is not in this glossary ({len(TRANSLATIONS)} words, e.g. "
                        f"{', '.join(sorted(TRANSLATIONS)[:3])})")
    return f"\"{key}\" in {lang} is \"{TRANSLATIONS[key][LANGUAGES.index(lang)]}\"."


def synonyms_report(word: str) -> str:
    key = plain_word(word)
    if key not in THESAURUS:
        raise ToolError(f"{word!r} is not in this thesaurus ({len(THESAURUS)} words, e.g. "
                        f"{', '.join(sorted(THESAURUS)[:3])})")
    return f"Synonyms of \"{key}\": {', '.join(THESAURUS[key])}."


class Lexicon(DynamicToolService):
    default_topic = "quality-lexicon"
    config_params = OPERATION
    tools = [
        {"name": "translate-word", "description": "Translate an English word into another language",
         "operation": "translate",
         "arguments": [{"name": "word", "type": "string", "description": "The English word"},
                       {"name": "language", "type": "string", "description": "The language to translate into"}]},
        {"name": "find-synonyms", "description": "Find words with the same meaning as a word",
         "operation": "synonyms", "arguments": [{"name": "word", "type": "string", "description": "The word"}]},
    ]

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> str:
        word = str(arguments.get("word", ""))
        if _operation(config, ("translate", "synonyms")) == "translate":
            return translate_report(word, str(arguments.get("language", "")))
        return synonyms_report(word)


# -- time zones ------------------------------------------------------------------------------
#: Standard-time UTC offsets in hours (summer time left out: the answers must not move).
UTC_OFFSETS = {
    "london": 0, "dublin": 0, "lisbon": 0, "reykjavik": 0, "paris": 1, "berlin": 1, "madrid": 1,
    "rome": 1, "vienna": 1, "prague": 1, "lagos": 1, "athens": 2, "cairo": 2, "helsinki": 2,
    "johannesburg": 2, "istanbul": 3, "moscow": 3, "nairobi": 3, "dubai": 4, "mumbai": 5.5,
    "delhi": 5.5, "bangkok": 7, "singapore": 8, "beijing": 8, "hong kong": 8, "tokyo": 9,
    "seoul": 9, "sydney": 10, "auckland": 12, "new york": -5, "toronto": -5, "chicago": -6,
    "mexico city": -6, "denver": -7, "los angeles": -8, "san francisco": -8, "vancouver": -8,
    "honolulu": -10, "sao paulo": -3, "buenos aires": -3, "lima": -5,
}


def utc_offset(city: str) -> float | None:
    """``city``'s standard-time UTC offset (``Tokyo``, ``tokyo, japan`` -> 9), None when unknown."""
    key = " ".join(str(city).split(",")[0].split()).lower().replace("ã", "a")
    return UTC_OFFSETS.get(key)


def _hours(h: float) -> str:
    return f"{h:g} hour{'' if h == 1 else 's'}"


def time_difference_report(city: str, other: str) -> str:
    offsets = []
    for name in (city, other):
        offset = utc_offset(name)
        if offset is None:
            raise ToolError(f"unknown city {name!r}: the known ones are "
                            f"{', '.join(c.title() for c in sorted(UTC_OFFSETS))}")
        offsets.append(offset)
    a, b = _name(city.split(",")[0]), _name(other.split(",")[0])
    diff = offsets[0] - offsets[1]
    if diff == 0:
        return f"{a} keeps the same standard time as {b}."
    return f"{a} is {_hours(abs(diff))} {'ahead of' if diff > 0 else 'behind'} {b} (standard time)."


class TimeZones(DynamicToolService):
    default_topic = "quality-zones"
    tools = [{
        "name": "time-difference", "description": "The time difference between two cities",
        "arguments": [{"name": "city", "type": "string", "description": "The city to compare"},
                      {"name": "other_city", "type": "string", "description": "The city to compare it with"}],
    }]

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> str:
        return time_difference_report(str(arguments.get("city", "")), str(arguments.get("other_city", "")))


#: ``--service`` name -> (processor id, class), merged into quality_services.SERVICES.
SERVICES: dict[str, tuple[str, type[DynamicToolService]]] = {
    "sky": ("quality-sky", Sky),
    "temperature": ("quality-temperature-converter", TemperatureConverter),
    "letters": ("quality-letters", Letters),
    "lexicon": ("quality-lexicon", Lexicon),
    "zones": ("quality-time-zones", TimeZones),
}
