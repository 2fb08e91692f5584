"""The agent-quality table's tool services: weather, a word counter and a currency converter.

Three self-announcing ``DynamicToolService`` subclasses, one per process,
chosen by ``--service weather|count|convert`` (every other flag is the
processor's own: ``-p URL --no-metrics``, readiness via ``TG_READY_FILE``)::

    .venv/bin/python bench/agent/quality_services.py --service weather -p pulsar://127.0.0.1:6650

Each declares one tool with an argument name of its own (``city``, ``text``,
``amount`` + ``to``), so the table sees whether the model fills the right
arguments for the tool it chose.  The answers are deterministic and
distinctive (``It is 21°C and sunny in Paris.``, ``There are 6 words in "to
be or not to be".``, ``20 USD is 18.40 EUR.``), so "the agent answered from
the tool's result" can be checked by text.  The converter takes US dollars
and a currency code (or one of its names); an unknown currency is a
``ToolError`` naming the known ones.
"""

from __future__ import annotations

import argparse
import sys
import zlib
from typing import Any

from trustgraph.base import DynamicToolService
from trustgraph.base.dynamic_tool_service import ToolError

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


SERVICES: dict[str, tuple[str, type[DynamicToolService]]] = {
    "weather": ("quality-weather", Weather),
    "count": ("quality-word-counter", WordCounter),
    "convert": ("quality-currency-converter", CurrencyConverter),
}


def main(argv: list[str] | None = None) -> None:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--service", choices=sorted(SERVICES), required=True)
    known, rest = pre.parse_known_args(sys.argv[1:] if argv is None else argv)
    ident, cls = SERVICES[known.service]
    cls.launch(ident, __doc__, argv=rest)


if __name__ == "__main__":
    main()
