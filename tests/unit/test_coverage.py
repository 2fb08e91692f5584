"""What a question says of closed kinds, and how much of it each tool's arguments take
(``trustgraph.agent.react.coverage``): evidence between tools the ranker cannot tell apart."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from trustgraph.agent.react.coverage import (
    MAX_VALUES,
    argument_kind,
    covered,
    most_covered,
    said,
)


def arg(name: str, type: str = "string", description: str = "", required: bool = True,
        enum: list[str] | None = None) -> SimpleNamespace:
    return SimpleNamespace(name=name, type=type, description=description, required=required, enum=enum)


def tool(name: str, description: str, *arguments: SimpleNamespace) -> SimpleNamespace:
    return SimpleNamespace(name=name, description=description, arguments=list(arguments))


def kinds(question: str) -> dict[str, set[str]]:
    return {v.text: set(v.kinds) for v in said(question)}


LOCAL_TIME = tool("local-time", "The current local time in a city", arg("city"))
TIME_DIFFERENCE = tool("time-difference", "The time difference between two cities", arg("city"), arg("other_city"))
CURRENCY = tool("convert-currency", "Convert an amount of US dollars to another currency",
                arg("amount", "number", "How many US dollars"), arg("to", description="The currency to convert to"))
UNITS = tool("convert-units", "Convert a quantity between units of measure", arg("value", "number"), arg("from"),
             arg("to"))
TRANSLATE = tool("translate-word", "Translate an English word into another language",
                 arg("word", description="The English word"), arg("language", description="The language"))
SPELL = tool("spell-word", "Spell a word letter by letter", arg("word"))
REMINDER = tool("create-reminder", "Remind me of something", arg("text", description="What to be reminded of"))
LIST = tool("add-to-list", "Add an item to a list", arg("list"), arg("item"))


def test_a_question_says_places_languages_currencies_units_quotes_and_numbers_of_a_kind():
    assert kinds("If it's noon in New York, what hour is it in Paris?") == {"New York": {"place"}, "Paris": {"place"},
                                                                           "noon": {"time"}}
    assert kinds("How would I ask for 'bread' in Portuguese?") == {"'bread'": {"word"}, "portuguese": {"language"}}
    got = kinds("My suitcase weighs 23 kg; what is that in pounds?")
    assert got["kg"] == {"unit"} and got["pounds"] == {"unit", "currency"}
    assert {"number", "mass"} in got.values()
    assert {"number", "money"} in kinds("Convert €50 to yen").values()
    assert {"number", "money"} in kinds("Is 50 € a lot?").values()
    assert {"number", "money"} in kinds("What do I tip on $80?").values()
    assert {"number", "money"} in kinds("How much is 40 euros in dollars?").values()
    # "3 pounds" is a mass or money: neither kind is said of it alone.
    assert {"number", "measure"} in kinds("How many ounces make 3 pounds?").values()
    assert kinds("Count the words in 'to be or not to be'") == {"'to be or not to be'": {"text"}}
    # A month, a language or a currency after "in"/"to" is no place; "I" is no place.
    assert kinds("What happens in March when I fly to Paris?") == {"Paris": {"place"}}
    assert kinds("Translate it to Spanish") == {"spanish": {"language"}}
    # Words of other meanings are no currency ("won", "real"), a lone letter no unit.
    assert kinds("Who won the real cup? Answer in a word") == {}
    assert kinds("Make me laugh about trains") == {}
    # A question that says thousands of values (a column of numbers pasted in) is read for the first ones.
    assert len(said("1 " * 5000)) == MAX_VALUES


def test_an_arguments_kind_comes_from_its_name_its_description_or_its_tools_description():
    assert argument_kind(arg("city")) == "place"
    assert argument_kind(arg("target", description="The language to translate into")) == "language"
    assert argument_kind(arg("amount", "number", "How many US dollars")) == "money"
    assert argument_kind(arg("weight_kg", "number")) == "mass"
    assert argument_kind(arg("weight", "number", "The weight in pounds")) == "mass"   # pounds: no money
    assert argument_kind(arg("count", "integer")) == "number"
    assert argument_kind(arg("text", description="The text whose words to count")) == "text"
    assert argument_kind(arg("word", description="The word whose letters to count")) == "word"
    # Said by nothing of its own: its tool's one kind of value, if it says one.
    assert argument_kind(arg("from"), "Convert a quantity between units of measure") == "unit"
    assert argument_kind(arg("to"), "Convert an amount to another currency") == "currency"
    assert argument_kind(arg("to"), "Convert between currencies and units") is None
    assert argument_kind(arg("topic"), "Tell a joke on a given topic") is None
    # An argument that describes itself keeps its own word, not its tool's.
    assert argument_kind(arg("query", description="What to look up"), "Search in any language") is None


def test_a_tool_covers_the_values_its_arguments_take_by_kind_one_each():
    values = said("If it's noon in New York, what hour is it in Paris?")
    assert covered(TIME_DIFFERENCE.arguments, TIME_DIFFERENCE.description, values) == 2
    assert covered(LOCAL_TIME.arguments, LOCAL_TIME.description, values) == 1
    values = said("My suitcase weighs 23 kg; what is that in pounds?")
    assert covered(UNITS.arguments, UNITS.description, values) == 3
    # The dollars' amount does not take a mass; "pounds" is a currency too.
    assert covered(CURRENCY.arguments, CURRENCY.description, values) == 1
    # An argument of no kind is no evidence, but could hold a quoted text or a place.
    values = said("Add 'call the plumber' to my todo list")
    assert covered(LIST.arguments, LIST.description, values) == 0
    assert covered(LIST.arguments, LIST.description, values, surely=False) == 1
    assert covered(REMINDER.arguments, REMINDER.description, values) == 1


@pytest.mark.parametrize("question, tools, winner", [
    ("If it's noon in New York, what hour is it in Paris?", [LOCAL_TIME, TIME_DIFFERENCE], "time-difference"),
    # A tool ranked after it that takes nothing of the question is behind it by both counts.
    ("If it's noon in New York, what hour is it in Paris?", [LOCAL_TIME, TIME_DIFFERENCE, SPELL], "time-difference"),
    ("My suitcase weighs 23 kg; what is that in pounds?", [CURRENCY, UNITS], "convert-units"),
    ("How many ounces make 3 pounds?", [CURRENCY, UNITS], "convert-units"),
    ("How much is 40 euros in dollars?", [UNITS, CURRENCY], "convert-currency"),
    ("I'm visiting Lisbon: how would I ask for 'bread' in Portuguese?", [SPELL, TRANSLATE], "translate-word"),
])
def test_the_tool_that_surely_takes_more_than_any_other_could_is_found(question, tools, winner):
    found = most_covered(tools, question)
    assert found is not None and tools[found[0]].name == winner


@pytest.mark.parametrize("question, tools", [
    ("Is it the middle of the night in Honolulu right now?", [LOCAL_TIME, TIME_DIFFERENCE]),   # one place
    ("Add 'call the plumber' to my todo list", [REMINDER, LIST]),   # the list's item could hold it
    ("Write me a poem about Lisbon in Portuguese", [SPELL, TRANSLATE]),   # no word to translate
    ("Make me laugh about trains", [LOCAL_TIME, SPELL]),             # says nothing of a kind
    ("What rhymes with 'orange'?", [SPELL, TRANSLATE]),              # both take the word alike
    # The tool ranked first takes nothing the question says: it may be what is asked, with values not said.
    ("How long is the flight from Madrid to Berlin?", [tool(
        "travel-time", "How long a journey takes at a given speed", arg("distance_km", "number", "The distance in km"),
        arg("speed_kmh", "number", "The speed in km/h")), TIME_DIFFERENCE]),
])
def test_no_tool_is_found_where_the_question_does_not_tell_them_apart(question, tools):
    assert most_covered(tools, question) is None


COOK = tool("cooking-time", "How long to cook a food", arg("food"),
            arg("method", enum=["roast", "bake", "boil", "fry"], required=False))
NUTRITION = tool("nutrition-facts", "Nutrition facts of a food", arg("food"), arg("grams", "number", required=False))
DISTANCE = tool("city-distance", "How far apart two cities are", arg("from_city"), arg("to_city"))
TRAVEL = tool("travel-time", "How long a journey between two cities takes", arg("from_city"), arg("to_city"),
              arg("mode", enum=["driving", "train", "flying"], required=False))
LIGHTS = tool("lights", "Switch the lights in a room", arg("room"), arg("state", enum=["on", "off"]))
TV = tool("television", "Control the television", arg("command"))


@pytest.mark.parametrize("question, tools, winner", [
    # A value only one of them declares, said in any form: "boil" a cooking method, "drive" a mode.
    ("How long do I boil eggs for?", [COOK, NUTRITION], "cooking-time"),
    ("How long does it take to drive from Los Angeles to San Francisco?", [DISTANCE, TRAVEL], "travel-time"),
    ("How long is the train from Paris to Lyon?", [DISTANCE, TRAVEL], "travel-time"),
])
def test_a_declared_value_said_is_evidence_for_the_tool_that_declares_it(question, tools, winner):
    found = most_covered(tools, question)
    assert found is not None and tools[found[0]].name == winner


@pytest.mark.parametrize("question, tools", [
    ("Turn off the TV", [LIGHTS, TV]),                        # "off" is said of anything
    ("How far is Berlin from Munich?", [DISTANCE, TRAVEL]),   # no mode said: both take the places
])
def test_a_short_or_unsaid_declared_value_is_no_evidence(question, tools):
    assert most_covered(tools, question) is None


EVENT = tool("create-event", "Put an event in the calendar", arg("title", description="What the event is"),
             arg("date", description="The day"), arg("start_time", description="When it starts"),
             arg("location", description="Where", required=False))
EVENTS = tool("calendar-events", "List calendar events in a range of days", arg("start_date"), arg("end_date"))
NEWS = tool("news-headlines", "The latest news headlines on a topic", arg("topic"), arg("count", "integer"))
JOKE = tool("tell-joke", "Tell a joke on a given topic", arg("topic", description="The topic for the joke"))


def test_days_and_times_are_values_of_their_kind_and_their_numbers_no_numbers():
    assert kinds("Add a dentist appointment on March 3 at 2pm to my calendar") == {"March 3": {"day"}, "2pm": {"time"}}
    # "8" of "at 8pm" is no party's size: the only number is the 4.
    got = kinds("Reserve a spot for 4 at Luigi's this Friday at 8pm")
    assert got["this Friday"] == {"day"} and got["8pm"] == {"time"}
    assert [v for v, k in got.items() if "number" in k] == ["#4@19"]
    assert [argument_kind(a) for a in EVENT.arguments] == [None, "day", "time", "place"]


@pytest.mark.parametrize("question, tools, winner", [
    # An event's day and time, where a range of days takes one of them (the probe had asked back).
    ("Add a dentist appointment on March 3 at 2pm to my calendar", [EVENT, EVENTS], "create-event"),
    ("Add a dentist appointment on March 3 at 2pm to my calendar", [EVENTS, EVENT], "create-event"),
    # A count said, beside a topic: a joke takes no number (an argument of no kind, "title",
    # "topic", is no evidence against its tool).
    ("Show me 5 top stories about climate change", [NEWS, JOKE], "news-headlines"),
])
def test_a_tool_whose_kinded_arguments_take_the_days_times_and_counts_said_is_found(question, tools, winner):
    found = most_covered(tools, question)
    assert found is not None and tools[found[0]].name == winner


CALCULATOR = tool("calculator", "Work out an arithmetic expression",
                  arg("expression", description="The expression, e.g. 2 * (3 + 4)"))
SPLIT = tool("split-bill", "Split a bill evenly between people", arg("total", "number", "The bill"),
             arg("people", "integer", "How many people"))


def test_an_arithmetic_expression_is_a_value_and_its_numbers_no_numbers():
    assert kinds("What's 250 divided by 5?") == {"250 divided by 5": {"expression"}}
    assert kinds("What's the square root of 81?") == {"square root of 81": {"expression"}}
    # Numbers with no operation between them are no expression: a bill and its people.
    assert {"number", "money"} in kinds("Split $120 between 4 people").values()
    assert argument_kind(CALCULATOR.arguments[0]) == "expression"
    # The calculator takes the division; the bill's total and people take none of it (the probe
    # had asked back between them: split-bill 0.032 behind).
    found = most_covered([CALCULATOR, SPLIT], "What's 250 divided by 5?")
    assert found is not None and found[0] == 0
    found = most_covered([SPLIT, CALCULATOR], "Split $120 between 4 people")
    assert found is not None and found[0] == 0


JOURNEY = tool("plan-journey", "Plan a trip on public transport", arg("origin", description="Where from"),
               arg("destination", description="Where to"))
RESERVE = tool("reserve-book", "Reserve a library book", arg("title", description="The book's title"),
               arg("branch", enum=["central", "northside", "riverside"], required=False))
FUEL_COST = tool("trip-fuel-cost", "What the fuel for a trip costs", arg("distance_km", "number"),
                 arg("consumption_l_per_100km", "number", "The car's fuel consumption in litres per 100 km",
                     required=False),
                 arg("price_per_litre", "number", "The fuel price per litre in euros", required=False))
ECONOMY = tool("fuel-economy", "How many litres per 100 km a car used", arg("distance_km", "number"),
               arg("litres", "number", "The litres of fuel it took to fill the tank back up"))


def test_places_after_the_declared_values_and_rates_are_read_as_what_they_are():
    # "from Riverside Park to the Old Town": two places (the second after "the"), and no library
    # branch "riverside" (an argument of declared values takes one of them, and a place's name of
    # several words says none): the journey planner had tied with the book reservation.
    question = "What's the quickest way to get from Riverside Park to the Old Town on public transport?"
    assert kinds(question) == {"Riverside Park": {"place"}, "Old Town": {"place"}}
    assert most_covered([RESERVE, JOURNEY], question) == (1, 2)
    assert most_covered([RESERVE, JOURNEY], "Reserve Dune at riverside") == (0, 1)   # the branch, said alone
    # "5.8 l/100km" is a rate: no division (its numbers had been an expression's, which neither
    # tool takes), and no volume.
    question = "Fuel cost for a two hundred km trip if my car does 5.8 l/100km?"
    assert "expression" not in {k for ks in kinds(question).values() for k in ks}
    assert "volume" not in kinds(question)["#5.8@51"]
    assert most_covered([FUEL_COST, ECONOMY], question) == (0, 3)


def test_an_argument_of_a_kind_and_declared_values_takes_its_kinds_values_as_said():
    # A unit written short ("kg") is the declared "kilograms" a unit argument lists.
    weights = tool("convert-weight", "Convert a weight", arg("amount", "number"),
                   arg("from_unit", description="The unit to convert from", enum=["kilograms", "grams"]),
                   arg("to_unit", description="The unit wanted", enum=["kilograms", "grams"]))
    assert covered(weights.arguments, weights.description, said("How many grams is 2 kg?")) == 3
