"""The agent-quality table's tool services: weather, a word counter, a currency converter,
a dictionary, a local clock and a unit converter.

Six self-announcing ``DynamicToolService`` subclasses, one per process,
chosen by ``--service weather|count|convert|define|time|units`` (every other
flag is the processor's own: ``-p URL --no-metrics``, readiness via
``TG_READY_FILE``); the third set's five services, ``--service
sky|temperature|letters|lexicon|zones``, live in ``quality_services_set3.py``
and are started the same way, through this file::

    .venv/bin/python bench/agent/quality_services.py --service weather -p pulsar://127.0.0.1:6650

Each declares one tool with an argument name of its own (``city``, ``text``,
``amount`` + ``to``), so the table sees whether the model fills the right
arguments for the tool it chose.  The answers are deterministic and
distinctive (``It is 21°C and sunny in Paris.``, ``There are 6 words in "to
be or not to be".``, ``20 USD is 18.40 EUR.``), so "the agent answered from
the tool's result" can be checked by text.  The converter takes US dollars
and a currency code (or one of its names); an unknown currency is a
``ToolError`` naming the known ones.

The last three serve only the table's second question set (paraphrased
questions over eight tools), so they are started after the first set is
done: ``define-word`` knows a short glossary (an unknown word is a
``ToolError``), ``local-time`` makes up a clock time per city as the weather
makes up a report, and ``convert-units`` converts with real factors between
a handful of units of length, mass and volume.  Their descriptors are given
by the table's design and kept as given: the second set's rule is that a
question shares no word with its tool's text, so changing that text changes
the test.
"""

from __future__ import annotations

import argparse
import re
import sys
import zlib
from typing import Any

from quality_services_set3 import SERVICES as SET3_SERVICES
from trustgraph.base import DynamicToolService
from trustgraph.base.tool_services.dynamic_tool_service import ToolError

# -- weather ---------------------------------------------------------------------------
_CONDITIONS = ("sunny", "cloudy", "rainy", "windy", "foggy", "snowy")


def weather_report(city: str) -> str:
    """The made-up weather of ``city``: the same city always gets the same report."""
    name = " ".join(city.split()) or "nowhere"
    h = zlib.crc32(name.lower().encode())
    return f"It is {h % 35 - 5}°C and {_CONDITIONS[(h >> 8) % len(_CONDITIONS)]} in {name}."


class Weather(DynamicToolService):
    default_topic = "quality-weather"
    tools = [{
        "name": "weather", "description": "Current weather in a city",
        "arguments": [{"name": "city", "type": "string", "description": "The city"}],
    }]

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> str:
        return weather_report(str(arguments.get("city", "")))


# -- word counter --------------------------------------------------------------------------
def count_report(text: str) -> str:
    n = len(text.split())
    return f"There {'is' if n == 1 else 'are'} {n} word{'' if n == 1 else 's'} in \"{' '.join(text.split())}\"."


class WordCounter(DynamicToolService):
    default_topic = "quality-count"
    tools = [{
        "name": "count-words", "description": "Count the words in a text",
        "arguments": [{"name": "text", "type": "string", "description": "The text whose words to count"}],
    }]

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> str:
        return count_report(str(arguments.get("text", "")))


# -- currency converter ------------------------------------------------------------------
#: Units of each currency per US dollar (fixed: the answers must not move).
RATES = {"USD": 1.0, "EUR": 0.92, "GBP": 0.79, "JPY": 151.5, "CHF": 0.88, "CAD": 1.37, "AUD": 1.52,
         "INR": 83.2}
#: Names the converter also reads as a code (lower case, singular).
NAMES = {
    "dollar": "USD", "us dollar": "USD", "euro": "EUR", "pound": "GBP", "british pound": "GBP",
    "pound sterling": "GBP", "sterling": "GBP", "yen": "JPY", "japanese yen": "JPY",
    "franc": "CHF", "swiss franc": "CHF", "canadian dollar": "CAD", "australian dollar": "AUD",
    "rupee": "INR", "indian rupee": "INR",
}


def currency_code(name: str) -> str | None:
    """The code ``name`` stands for (``EUR``, ``euros``, ``Euro`` -> ``EUR``), None when unknown."""
    text = " ".join(name.replace(".", " ").split()).lower()
    if text.upper() in RATES:
        return text.upper()
    for candidate in (text, text.removesuffix("s")):
        if candidate in NAMES:
            return NAMES[candidate]
    return None


def convert_report(amount: float, to: str) -> str:
    code = currency_code(to)
    if code is None:
        raise ToolError(f"unknown currency {to!r}: the known ones are {', '.join(sorted(RATES))}")
    return f"{amount:g} USD is {amount * RATES[code]:,.2f} {code}."


class CurrencyConverter(DynamicToolService):
    default_topic = "quality-convert"
    tools = [{
        "name": "convert-currency", "description": "Convert an amount of US dollars to another currency",
        "arguments": [
            {"name": "amount", "type": "number", "description": "How many US dollars"},
            {"name": "to", "type": "string", "description": "The currency to convert to, e.g. EUR"},
        ],
    }]

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> str:
        amount = arguments.get("amount")
        if isinstance(amount, bool) or not isinstance(amount, (int, float)):
            raise ToolError(f"'amount' must be a number, got {amount!r}")
        return convert_report(float(amount), str(arguments.get("to", "")))


# -- dictionary ------------------------------------------------------------------------
#: The dictionary's words: (part of speech, meaning).
GLOSSARY = {
    "ephemeral": ("adjective", "lasting for a very short time"),
    "serendipity": ("noun", "the luck of finding something good without looking for it"),
    "obfuscate": ("verb", "to make something unclear or hard to understand on purpose"),
    "ubiquitous": ("adjective", "present or found everywhere"),
    "laconic": ("adjective", "using very few words"),
    "gregarious": ("adjective", "fond of company; sociable"),
    "quixotic": ("adjective", "idealistic in a way that ignores what is practical"),
    "candid": ("adjective", "truthful and straightforward; frank"),
    "mellifluous": ("adjective", "sweet or pleasant to hear"),
    "pragmatic": ("adjective", "dealing with things sensibly, as they are in practice"),
}


def headword(word: str) -> str:
    """``word`` as the glossary spells it: lower case, without surrounding quotes or punctuation."""
    return re.sub(r"^\W+|\W+$", "", " ".join(word.split()).lower())


def define_report(word: str) -> str:
    key = headword(word)
    if key not in GLOSSARY:
        raise ToolError(f"{word!r} is not in this dictionary ({len(GLOSSARY)} words, e.g. "
                        f"{', '.join(sorted(GLOSSARY)[:3])})")
    part, meaning = GLOSSARY[key]
    return f"{key} ({part}): {meaning}."


class Dictionary(DynamicToolService):
    default_topic = "quality-define"
    tools = [{
        "name": "define-word", "description": "Look up the meaning of a word in the dictionary",
        "arguments": [{"name": "word", "type": "string"}],
    }]

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> str:
        return define_report(str(arguments.get("word", "")))


# -- local time ------------------------------------------------------------------------
def local_time_report(city: str) -> str:
    """A made-up clock time in ``city``: the same city always gets the same time (as the weather)."""
    name = " ".join(city.split()) or "nowhere"
    h = zlib.crc32(name.lower().encode())
    return f"The local time in {name} is {h % 24:02d}:{(h >> 8) % 60:02d}."


class LocalTime(DynamicToolService):
    default_topic = "quality-time"
    tools = [{
        "name": "local-time", "description": "The current local time in a city",
        "arguments": [{"name": "city", "type": "string"}],
    }]

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> str:
        return local_time_report(str(arguments.get("city", "")))


# -- unit converter ----------------------------------------------------------------------
#: Each unit: (what it measures, how many of the base unit (metre, kilogram, litre) one is).
UNITS = {
    "m": ("length", 1.0), "km": ("length", 1000.0), "cm": ("length", 0.01), "mm": ("length", 0.001),
    "mi": ("length", 1609.344), "yd": ("length", 0.9144), "ft": ("length", 0.3048), "in": ("length", 0.0254),
    "kg": ("mass", 1.0), "g": ("mass", 0.001), "lb": ("mass", 0.45359237), "oz": ("mass", 0.028349523125),
    "l": ("volume", 1.0), "ml": ("volume", 0.001), "gal": ("volume", 3.785411784),   # US gallon
    "pt": ("volume", 0.473176473), "cup": ("volume", 0.2365882365),                  # US pint and cup
}
#: Names the converter also reads as a unit's code (lower case, singular; both spellings of metre).
UNIT_NAMES = {
    "metre": "m", "meter": "m", "kilometre": "km", "kilometer": "km", "centimetre": "cm", "centimeter": "cm",
    "millimetre": "mm", "millimeter": "mm", "mile": "mi", "yard": "yd", "foot": "ft", "feet": "ft",
    "inch": "in", "gram": "g", "kilogram": "kg", "kilo": "kg", "pound": "lb", "lbs": "lb",
    "ounce": "oz", "litre": "l", "liter": "l", "millilitre": "ml", "milliliter": "ml", "gallon": "gal",
    "pint": "pt",
}


def unit_code(name: str) -> str | None:
    """The code ``name`` stands for (``lb``, ``pounds``, ``Pound`` -> ``lb``), None when unknown."""
    text = " ".join(name.replace(".", " ").split()).lower()
    for candidate in (text, text.removesuffix("s"), text.removesuffix("es")):
        if candidate in UNITS:
            return candidate
        if candidate in UNIT_NAMES:
            return UNIT_NAMES[candidate]
    return None


def _number(x: float) -> str:
    """At most two decimals, no trailing zeros (``48``, ``7.57``, ``1,609.34``)."""
    return f"{x:,.2f}".rstrip("0").rstrip(".")


def convert_units_report(value: float, source: str, target: str) -> str:
    codes = []
    for what, name in (("from", source), ("to", target)):
        code = unit_code(name)
        if code is None:
            raise ToolError(f"unknown unit {name!r} in {what!r}: the known ones are {', '.join(UNITS)}")
        codes.append(code)
    src, dst = codes
    if UNITS[src][0] != UNITS[dst][0]:
        raise ToolError(f"cannot convert {UNITS[src][0]} ({src}) to {UNITS[dst][0]} ({dst})")
    return f"{_number(value)} {src} is {_number(value * UNITS[src][1] / UNITS[dst][1])} {dst}."


class UnitConverter(DynamicToolService):
    default_topic = "quality-units"
    tools = [{
        "name": "convert-units",
        "description": "Convert a quantity between units of measure, e.g. kilometres to miles",
        "arguments": [{"name": "value", "type": "number"}, {"name": "from", "type": "string"},
                      {"name": "to", "type": "string"}],
    }]

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> str:
        value = arguments.get("value")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ToolError(f"'value' must be a number, got {value!r}")
        return convert_units_report(float(value), str(arguments.get("from", "")), str(arguments.get("to", "")))


SERVICES: dict[str, tuple[str, type[DynamicToolService]]] = {
    "weather": ("quality-weather", Weather),
    "count": ("quality-word-counter", WordCounter),
    "convert": ("quality-currency-converter", CurrencyConverter),
    "define": ("quality-dictionary", Dictionary),
    "time": ("quality-local-time", LocalTime),
    "units": ("quality-unit-converter", UnitConverter),
    **SET3_SERVICES,   # sky, temperature, letters, lexicon, zones: quality_services_set3.py
}


def main(argv: list[str] | None = None) -> None:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--service", choices=sorted(SERVICES), required=True)
    known, rest = pre.parse_known_args(sys.argv[1:] if argv is None else argv)
    ident, cls = SERVICES[known.service]
    cls.launch(ident, __doc__, argv=rest)


if __name__ == "__main__":
    main()
