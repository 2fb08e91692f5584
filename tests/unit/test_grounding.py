"""A tool call's arguments: said in the dialog, or made up by the model (``grounding``), and
what the agent's judge does with a made-up one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trustgraph.agent.react.decisions import Confidence, ask_back, judge
from trustgraph.agent.react.grounding import (
    address_kind,
    argument_currency,
    money_said,
    other_currency,
    takes_place,
    unsaid_arguments,
)
from trustgraph.base.descriptors.arguments import ToolArgument
from trustgraph.schema.services.agent import OUTCOME_ASKED

ROOT = Path(__file__).resolve().parents[2]


# Calls the embedded model made on the agent-quality bench's set 1, each with a value nobody said.
@pytest.mark.parametrize("question, values, unsaid", [
    ("Count the words in: the quick brown fox jumps over the lazy dog", {"city": "New York"}, ["city"]),
    ("What's it like outside in Buenos Aires at the moment?", {"city": "Barcelona"}, ["city"]),
    ("Do you know anything funny about cats?",
     {"text": "The cat is a cat, but it's not a cat that can talk, it's a cat that can talk"}, ["text"]),
    ("I have 75 dollars. How many Swiss francs is that?", {"text": "1000000"}, ["text"]),
    ("I need a pun about coffee", {"topic": "example 1"}, ["topic"]),
    ("How much is 50 dollars in yen?", {"amount": 500, "to": "JPY"}, ["amount"]),
    ("Exchange 12.5 dollars into euros", {"amount": 10**400, "to": "EUR"}, ["amount"]),
])
def test_a_made_up_value_is_found(question, values, unsaid):
    assert unsaid_arguments(values, [], [question]) == unsaid


@pytest.mark.parametrize("question, values", [
    ("Make me laugh about trains", {"topic": "train"}),                    # another ending
    ("My kids love corny dad jokes. Give me one about dinosaurs.", {"topic": "dino-joke"}),
    ("Is it cold in Oslo right now?", {"city": "Oslo"}),
    ("How many words does 'to be or not to be' have?", {"text": "to be or not to be"}),
    ("Exchange 12.5 dollars into euros, please", {"amount": 12.5, "to": "EUR"}),
    ("What are 100 US dollars worth in British pounds?", {"amount": 100, "to": "GBP"}),  # a code
    ("How far is 3,5 km in miles?", {"value": 3.5, "from": "km", "to": "mi"}),
    ("Convert 1,000.50 dollars to euros", {"amount": 1000.5, "to": "EUR"}),
    ("Convert 1.000 dollars to euros", {"amount": 1000, "to": "EUR"}),
    ("Tell me a joke", {"topic": ""}),                                     # nothing to judge
    ("Tell me a joke", {"loud": True, "lines": None}),
])
def test_a_said_or_unjudgeable_value_passes(question, values):
    assert unsaid_arguments(values, [], [question]) == []


def test_values_from_an_enum_are_not_judged_and_tool_results_count_as_said():
    arguments = [ToolArgument(name="unit", enum=("celsius", "fahrenheit")), ToolArgument(name="city")]
    assert unsaid_arguments({"unit": "fahrenheit", "city": "Paris"}, arguments, ["Weather in Paris?"]) == []
    said = ["Where is the Eiffel Tower?", "The Eiffel Tower is in Paris."]   # a question, then a result
    assert unsaid_arguments({"city": "Paris"}, arguments, said) == []
    assert unsaid_arguments({"city": "Paris"}, arguments, said[:1]) == ["city"]


def test_the_right_arguments_of_every_bench_question_pass():
    # Both question sets' expected calls (set 2 held out from tuning: only its right answers are read).
    for name in ("quality_questions.json", "quality_questions_paraphrased.json"):
        for q in json.loads((ROOT / "bench" / "agent" / name).read_text())["questions"]:
            if q.get("tool"):
                values = q.get("args") or {"topic": q["topic"]}
                assert unsaid_arguments(values, [], [q["question"]]) == [], q["question"]


TOOLS = ["weather", "count-words", "tell-joke"]


def test_a_sure_choice_with_a_made_up_value_asks_back_naming_the_tool_and_argument():
    scores = {"weather": 0.7, "count-words": 0.2, "tell-joke": 0.01}
    assert judge("weather", scores, TOOLS, Confidence(), []) is None
    got = judge("weather", scores, TOOLS, Confidence(), ["city"])
    assert got is not None and got.outcome == OUTCOME_ASKED
    assert got.candidates == ("weather", "count-words") and got.tool == "weather" and got.unsaid == ("city",)
    # without scores (an upstream LLM service, ReAct text) the check still holds
    got = judge("weather", None, TOOLS, Confidence(), ["city"])
    assert got is not None and got.candidates == ("weather",)
    assert judge("weather", scores, TOOLS, Confidence(check_arguments=False), ["city"]) is None


class _T:
    def __init__(self, name: str, description: str) -> None:
        self.name, self.description = name, description


def test_asking_back_for_a_made_up_value_says_what_is_missing():
    text = ask_back([_T("weather", "Current weather in a city")], "weather", ["city"])
    assert text.startswith("I am not sure how to answer: the likeliest tool, `weather`, needs its city, and your "
                           "question does not say it.")
    assert "Did you mean `weather` (Current weather in a city)?" in text
    # An argument whose name says little is named with its description ("its to" alone read as nothing).
    mail = _T("send-email", "Send an email")
    mail.arguments = [ToolArgument(name="to", type="string", description="The recipient's email address."),
                      ToolArgument(name="city", type="string", description="The city")]
    text = ask_back([mail], "send-email", ["to", "city"])
    assert "needs its to (the recipient's email address) and its city, and your question does not say them." in text


# -- values by construction: what the decision schema lets an argument be ------------------------

from trustgraph.agent.react.grounding import grounded, own_words, said_values  # noqa: E402
from trustgraph.catalog.relevance import content_words  # noqa: E402


def offered(question, tool_text="", results=()):
    return said_values(question, list(results)).for_tool(content_words(tool_text))


@pytest.mark.parametrize("question, tool_text, wanted, not_offered", [
    ("Tell me a dad joke about coffee", "tell-dad-joke Tell a groan-worthy dad joke about a given topic",
     "coffee", ["joke", "dad joke", "joke about coffee", "topic-joke"]),
    ("Tell me a joke about cats", "tell-joke Tell a joke on a given topic", "cats", ["joke", "Tell me"]),
    ("What's it like outside in Buenos Aires at the moment?", "weather Current weather in a city",
     "Buenos Aires", ["Barcelona", "What's"]),
    ("How many words does 'to be or not to be' have?", "count-words Count the words in a text",
     "to be or not to be", ["words", "be or not"]),
    ("Count the words in: the quick brown fox jumps over the lazy dog", "count-words Count the words in a text",
     "the quick brown fox jumps over the lazy dog", ["Count", "words"]),
    ("How much is 50 dollars in yen?", "convert-currency Convert an amount of US dollars to another currency",
     "yen", ["JPY", "much"]),
    ("Say something witty about the ocean", "tell-joke Tell a joke on a given topic", "ocean", ["Say"]),
    ("Exchange 15 American bucks for British pounds", "convert-currency Convert an amount of US dollars",
     "British pounds", ["Exchange", "Exchange 15 American"]),
    ("Tell me a joke about the stock exchange", "tell-joke Tell a joke on a given topic", "stock exchange", []),
    # A title's point ends no clause: the name is whole, never its last word alone.
    ("What's the weather in St. Louis?", "weather Current weather in a city", "St. Louis", ["Louis", "St"]),
    ("Send a note to Dr. Smith", "send-note Send a note to a person", "Dr. Smith", ["Smith"]),
])
def test_a_string_argument_is_offered_the_questions_spans_and_not_the_tools_own_words(
        question, tool_text, wanted, not_offered):
    texts = offered(question, tool_text)
    assert wanted in texts
    for text in not_offered:
        assert text not in texts
    assert question.strip().rstrip("?!. ") not in texts   # the question itself: only for a question


def test_a_descriptions_examples_are_values_not_the_tools_own_words():
    from trustgraph.agent.react.grounding import own_words
    units = own_words("convert-units", "Convert a quantity between units of measure, e.g. kilometres to miles")
    assert {"convert", "units", "measure"} <= units and not {"kilometres", "miles"} & units
    assert "eur" not in own_words("convert-currency", "Convert US dollars to a currency such as EUR. Fast")
    assert "eat" in own_words("menu", "Things you like to eat")           # "like" is a verb too
    offered = said_values("Express 5 miles in kilometres", []).for_tool(units)
    assert "miles" in offered and "kilometres" in offered


def test_the_whole_question_is_offered_only_to_an_argument_that_is_a_question():
    said = said_values("Who flew STS-51-L?", [])
    question = ToolArgument(name="question", description="The question to ask")
    topic = ToolArgument(name="topic", description="The topic for the joke")
    got = grounded(schema_of(question, topic), [question, topic], said)["properties"]
    assert "Who flew STS-51-L" in got["question"]["enum"]
    assert "Who flew STS-51-L" not in got["topic"]["enum"] and "STS-51-L" in got["topic"]["enum"]


def test_numbers_are_offered_as_written_and_results_are_spans_too():
    said = said_values("Exchange 12.5 dollars, or 1,000 dollars, into euros", [])
    assert said.numbers == [12.5, 1000.0]
    said = said_values("And in Oslo?", ["It is 21°C and sunny in Paris."])
    assert "Paris" in said.texts and "Oslo" in said.texts and said.numbers == [21.0]
    assert len(said_values("word " * 5000, ["x " * 5000]).texts) <= 200


def schema_of(*arguments):
    return {"type": "object", "properties": {a.name: a.json_schema() for a in arguments},
            "required": [a.name for a in arguments], "additionalProperties": False}


def test_the_schema_lets_each_argument_take_only_what_was_said():
    args = [ToolArgument(name="amount", type="number"), ToolArgument(name="to", type="string"),
            ToolArgument(name="count", type="integer")]
    said = said_values("How much is 50 dollars in yen, or 7.5?", [])
    got = grounded(schema_of(*args), args, said, content_words("convert-currency Convert dollars"))
    props = got["properties"]
    assert props["amount"]["enum"] == [50, 7.5]
    assert props["count"]["enum"] == [50]              # only whole numbers for an integer
    assert "yen" in props["to"]["enum"] and "dollars" not in props["to"]["enum"]
    assert got["required"] == ["amount", "to", "count"] and got["additionalProperties"] is False


def test_a_tool_with_a_number_argument_gets_no_number_in_its_text_arguments():
    # "What would 40 bucks be in yen?": 40 is the amount; the currency is a text without it.
    args = [ToolArgument(name="amount", type="number"), ToolArgument(name="to", type="string")]
    said = said_values("Exchange 15 American bucks for British pounds, or '15 A' bills", [])
    got = grounded(schema_of(*args), args, said, content_words("convert-currency Convert dollars"))["properties"]
    assert got["amount"]["enum"] == [15]
    assert "British pounds" in got["to"]["enum"] and "15 A" in got["to"]["enum"]       # quoted: kept
    assert not [t for t in got["to"]["enum"] if "15" in t and t != "15 A"]
    # Without a number argument, a run with a number is a value like any (a record's id).
    lookup = [ToolArgument(name="entry", type="string")]
    got = grounded(schema_of(*lookup), lookup, said_values("Show record 42 of the stock", []))["properties"]
    assert "record 42" in got["entry"]["enum"]


def test_free_text_enum_and_unsaid_kinds_are_left_to_the_model():
    args = [ToolArgument.model_validate({"name": "summary", "type": "string", "free-text": True}),
            ToolArgument(name="scale", type="string", enum=("C", "F")),
            ToolArgument(name="limit", type="number"), ToolArgument(name="flag", type="boolean")]
    schema = schema_of(*args)
    got = grounded(schema, args, said_values("Summarise the weather report", []))
    assert got["properties"] == schema["properties"]   # no number said: the limit stays free too
    undeclared = {"type": "object", "properties": {"x": {"type": "string"}}}
    assert grounded(undeclared, [], said_values("anything", [])) == undeclared
    assert grounded({"type": "object"}, [], said_values("anything", [])) == {"type": "object"}


def test_a_free_text_value_is_the_models_own_words_and_not_judged():
    # An email's body the model wrote for "Email bob@example.com that the meeting moved to 3pm" asked
    # back ("needs its body") though its tool declared it free text.
    args = [ToolArgument(name="to", type="string"),
            ToolArgument.model_validate({"name": "body", "type": "string", "free-text": True})]
    question = ["Email bob@example.com that the meeting moved to 3pm"]
    assert unsaid_arguments({"to": "bob@example.com", "body": "The meeting is now at three."}, args, question) == []
    assert unsaid_arguments({"to": "alice@wonderland.org", "body": "Moved."}, args, question) == ["to"]


def test_free_text_round_trips_through_the_catalog_listing():
    arg = ToolArgument.model_validate({"name": "summary", "free-text": True})
    assert arg.free_text is True
    assert arg.model_dump(mode="json", exclude_none=True, by_alias=True)["free-text"] is True
    assert "free-text" not in ToolArgument(name="x").model_dump(mode="json", exclude_none=True, by_alias=True)


def test_a_run_that_starts_with_the_tools_own_words_offers_what_follows_them():
    from trustgraph.agent.react.grounding import said_values
    greeter = {"greet", "greeter", "person", "times"}
    # "Greet Ada": one capitalised run, the whole question; the greeter gets "Ada", not "Greet Ada".
    assert said_values("Greet Ada", []).for_tool(greeter) == ["Ada"]
    offered = said_values("Please greet Ada Lovelace twice", []).for_tool(greeter)
    assert offered[0] == "Ada Lovelace" and not any(t.lower().startswith("greet") for t in offered)
    # A question of the tool's words alone offers nothing of its own (the whole question is the
    # fallback, in grounded); one without them is untouched.
    assert said_values("Greet", []).for_tool(greeter) == []
    assert said_values("Paris", []).for_tool({"weather", "city"}) == []


def test_the_unit_written_with_a_number_is_what_it_is_converted_out_of():
    from trustgraph.agent.react.grounding import quantity_units
    assert quantity_units("My thermometer reads 101 °F; what is that in °C?") == {"f"}
    assert quantity_units("What would 300 US dollars be in yen?") == {"us", "dollars"}
    assert quantity_units("How much is 50 in yen, on the 3rd, in the 1990s?") == set()   # no unit said
    scales = [ToolArgument(name="value", type="number"), ToolArgument(name="from", type="string", enum=("C", "F", "K")),
              ToolArgument(name="to", type="string", enum=("C", "F", "K"))]
    # The 135M model wrote {"from": "C", "to": "F"} for the first: the question's order is no guide.
    for question, source, target in [("My thermometer reads 101 °F; what is that in °C?", ["F"], ["C"]),
                                     ("What is 451 Fahrenheit in Celsius?", ["F"], ["C", "K"]),
                                     ("Physics homework: what is 300 K in degrees C?", ["K"], ["C"])]:
        got = grounded(schema_of(*scales), scales, said_values(question, []))["properties"]
        assert (got["from"]["enum"], got["to"]["enum"]) == (source, target), question
    # A converted-into argument of spans loses the amount's own unit; one converted out of keeps the
    # other spans but what the question converts "in" (below).
    units = [ToolArgument(name="value", type="number"), ToolArgument(name="from_unit", type="string"),
             ToolArgument(name="target", type="string")]
    got = grounded(schema_of(*units), units, said_values("My suitcase weighs 23 kg; what is that in pounds?", []))
    assert "kg" not in got["properties"]["target"]["enum"] and "pounds" in got["properties"]["target"]["enum"]
    # An argument that says it is a unit (or a currency) takes the unit written with the number; one
    # that says nothing of it keeps the other spans ("If it's 3 pm in London": "pm" is no place).
    assert got["properties"]["from_unit"]["enum"] == ["kg"]
    fx = [ToolArgument(name="amount", type="number", description="How much money"),
          ToolArgument(name="from_currency", type="string", description="The currency to convert from"),
          ToolArgument(name="to_currency", type="string", description="The currency to convert to")]
    got = grounded(schema_of(*fx), fx, said_values("what's 30 pounds in US dollars?", []))["properties"]
    assert got["from_currency"]["enum"] == ["pounds"]   # it had converted dollars into dollars
    # What follows the quantity's last "in"/"to" is converted into, never out of (the 135M model wrote
    # kilometres for both of the first); the last, since an earlier "in" may say where.
    plain = [ToolArgument(name="value", type="number"), ToolArgument(name="from", type="string"),
             ToolArgument(name="to", type="string")]
    for question, source, not_source in [("Express 5 miles in kilometres", "miles", "kilometres"),
                                         ("Convert 20 USD to EUR", "USD", "EUR"),
                                         ("If it's 3 pm in London, what time is it in Tokyo?", "London", "Tokyo")]:
        got = grounded(schema_of(*plain), plain, said_values(question, []))["properties"]
        assert source in got["from"]["enum"] and not_source not in got["from"]["enum"], question
        assert not_source in got["to"]["enum"], question
    money = [ToolArgument(name="amount", type="number"), ToolArgument(name="to", type="string")]
    got = grounded(schema_of(*money), money, said_values("If I change 300 USD, how many Canadian dollars do I get?", []))
    assert "USD" not in got["properties"]["to"]["enum"] and "Canadian dollars" in got["properties"]["to"]["enum"]


def test_a_quantity_narrows_nothing_to_nothing_and_leaves_other_arguments_alone():
    scales = [ToolArgument(name="value", type="number"), ToolArgument(name="from", type="string", enum=("C", "F")),
              ToolArgument(name="to", type="string", enum=("C", "F"))]
    # No declared value is the quantity's unit: both stay whole (the model picks, as before).
    got = grounded(schema_of(*scales), scales, said_values("Is 20 degrees warm?", []))["properties"]
    assert got["from"]["enum"] == ["C", "F"] and got["to"]["enum"] == ["C", "F"]
    # Only the unit said: the target keeps what is left rather than nothing.
    got = grounded(schema_of(*scales), scales, said_values("Convert 20 C", []))["properties"]
    assert got["from"]["enum"] == ["C"] and got["to"]["enum"] == ["F"]
    # A time's "pm" is no city's unit: arguments that are not directions, and tools with no number, keep every span.
    meeting = [ToolArgument(name="hour", type="number"), ToolArgument(name="from", type="string"),
               ToolArgument(name="venue", type="string")]
    got = grounded(schema_of(*meeting), meeting, said_values("Meet at 3 pm from London in Tokyo time", []))["properties"]
    assert "London" in got["from"]["enum"] and "pm" in got["venue"]["enum"]
    words = [ToolArgument(name="to", type="string")]
    got = grounded(schema_of(*words), words, said_values("Send 3 apples to Ada", []))["properties"]
    assert "apples" in got["to"]["enum"]


def test_a_tools_unit_codes_match_the_unit_said_in_full_the_longest_first():
    lengths = [ToolArgument(name="value", type="number"),
               ToolArgument(name="from", type="string", enum=("m", "mi", "km")),
               ToolArgument(name="to", type="string", enum=("m", "mi", "km"))]
    got = grounded(schema_of(*lengths), lengths, said_values("How far is 5 miles in m?", []))["properties"]
    assert got["from"]["enum"] == ["mi"] and got["to"]["enum"] == ["m"]   # "m" starts "miles" too
    got = grounded(schema_of(*lengths), lengths, said_values("Convert 5 metres", []))["properties"]
    assert got["from"]["enum"] == ["m"] and got["to"]["enum"] == ["mi", "km"]


def test_a_requests_topic_is_what_follows_about_when_the_question_says_it():
    topic = [ToolArgument(name="topic", type="string", description="The topic for the joke")]
    joke_words = content_words("tell-dad-joke Tell a groan-worthy dad joke about a given topic")

    def topics(question, args=topic):
        return grounded(schema_of(*args), args, said_values(question, []), joke_words)["properties"][args[0].name]["enum"]

    # The 135M model took "father" and "witty" for these.
    assert topics("My father loves corny puns; share a cheesy one about lawnmowers") == ["lawnmowers"]
    assert topics("Say something witty about the ocean") == ["ocean"]
    # The parts in the clause "about" starts come first (the 135M model took "tells").
    assert topics("A really lame pun about cheese, the kind my father tells") == ["cheese"]
    assert set(topics("Tell me one regarding the history of Rome")) == {"history", "Rome"}
    # Without "about", what follows "on" or "in" ("the top 5 stories in technology" had been news on
    # "top"); without any, every part, as before; nothing after it: every part too.
    assert topics("What are the top 5 stories in technology today?") == ["technology"]
    assert topics("Any good puns on cheese for my dad?") == ["cheese"]   # "dad": the tool's own word
    assert {"father", "barbecue"} <= set(topics("I want the kind of corny pun a father would make at a barbecue"))
    assert "Cats" in topics("Cats: tell me something funny about them")
    # An argument that is no topic keeps every part.
    city = [ToolArgument(name="city", type="string", description="The city")]
    assert "Paris" in topics("What do you know about the weather in Paris, London?", city) and \
        "London" in topics("Tell me about London, or Paris", city)


def test_a_text_the_tool_works_on_is_the_quoted_text_or_what_follows_the_colon():
    text = [ToolArgument(name="text", type="string", description="The text whose words to count")]
    count_words = content_words("count-words Count the words in a text")

    def texts(question, args=text):
        return grounded(schema_of(*args), args, said_values(question, []), count_words)["properties"][args[0].name]["enum"]

    # The 135M model counted "quick brown fox jumps" of the first.
    assert texts("Count the words in: the quick brown fox jumps over the lazy dog") == \
        ["the quick brown fox jumps over the lazy dog"]
    assert texts("Note: how many words has 'to be or not to be'?") == ["to be or not to be"]
    assert "big cats" in texts("How many words has the phrase big cats")   # nothing set apart: every part
    city = [ToolArgument(name="city", type="string", description="The city")]
    assert {"Paris", "Rome"} <= set(texts("Weather report: Paris and Rome", city))   # no text: every part


def test_a_question_argument_keeps_the_whole_question_when_it_quotes_a_text():
    question = [ToolArgument(name="question", type="string", description="The question text to ask")]
    got = grounded(schema_of(*question), question, said_values("What does 'ephemeral' mean?", []))
    assert "What does 'ephemeral' mean" in got["properties"]["question"]["enum"]


def test_a_value_converted_into_is_no_proper_adjective_without_its_noun():
    # The 135M model wrote "Swiss" and "Canadian" (greedy decoding closes the shorter value), which
    # the converter refused: the target is written whole, as a name is.
    money = [ToolArgument(name="amount", type="number"), ToolArgument(name="to", type="string")]
    for question, whole, cut in [("I have 75 dollars. How many Swiss francs is that?", "Swiss francs", "Swiss"),
                                 ("If I change 300 USD, how many Canadian dollars do I get?", "Canadian dollars", "Canadian"),
                                 ("What is 20 USD in Japanese yen today?", "Japanese yen", "Japanese")]:
        offered = grounded(schema_of(*money), money, said_values(question, []))["properties"]["to"]["enum"]
        assert whole in offered and cut not in offered, question
    # A name followed by a filler word or by nothing stays a value; a number's own unit side is untouched.
    for question, value in [("What is 20 USD in EUR today?", "EUR"), ("How many dollars is 30 Euro", "dollars"),
                            ("Convert 30 EUR to USD exactly", "USD"), ("What is 30 EUR in Swiss roughly?", "Swiss")]:
        assert value in grounded(schema_of(*money), money, said_values(question, []))["properties"]["to"]["enum"]
    # Only an argument converted into, of a tool that takes a number: a city keeps "Paris" of "Paris weather".
    city = [ToolArgument(name="city", type="string")]
    assert "Paris" in grounded(schema_of(*city), city, said_values("How is the Paris weather for 2 days?", []))[
        "properties"]["city"]["enum"]


def test_what_a_question_asks_how_many_of_is_never_converted_out_of():
    # The 135M model wrote {"from": "cups", "to": "cups"} for the first.
    units = [ToolArgument(name="value", type="number"), ToolArgument(name="from", type="string"),
             ToolArgument(name="to", type="string")]
    for question, counted, source in [("How many cups are in 2 litres?", "cups", "litres"),
                                      ("How many ounces make 3 pounds?", "ounces", "pounds"),
                                      # a number in words is a quantity too: "two feet" had
                                      # been converted out of inches
                                      ("How many inches are in two feet?", "inches", "feet")]:
        got = grounded(schema_of(*units), units, said_values(question, []))["properties"]
        assert counted not in got["from"]["enum"] and source in got["from"]["enum"], question
        assert counted in got["to"]["enum"], question
    # Without "how many", what follows the quantity's "in" is what it converts into.
    for question in ["What is 2 litres in cups?", "What is two litres in cups?"]:
        got = grounded(schema_of(*units), units, said_values(question, []))["properties"]
        assert "litres" in got["from"]["enum"] and "cups" not in got["from"]["enum"], question
    # Neither said: the side converted out of keeps every span (a time's "pm" is no city's unit).
    got = grounded(schema_of(*units), units, said_values("Is 2 litres of water enough for cups of tea?",
                                                         []))["properties"]
    assert {"litres", "cups"} <= set(got["from"]["enum"])


def test_an_address_is_offered_whole_and_never_in_parts():
    # The 135M model sent an email "to" "example" of "alice@example.org": the dot ended a clause
    # and the "@" split the word, so no span was the whole address.
    page = [ToolArgument(name="target", type="string", description="What to look at")]
    for question, address in [("Send a note to alice@example.org saying hello", "alice@example.org"),
                              ("Email bob@example.com that the meeting moved to 3pm.", "bob@example.com"),
                              ("Summarise https://example.com/a/b?x=1. Thanks", "https://example.com/a/b?x=1"),
                              ("Fetch www.python.org for me", "www.python.org"),
                              ("What does example.com/pricing say?", "example.com/pricing")]:
        offered = grounded(schema_of(*page), page, said_values(question, []))["properties"]["target"]["enum"]
        assert address in offered, question
        assert not [t for t in offered if t != address and (t in address or address in t)], (question, offered)


def test_an_argument_that_is_an_address_takes_only_an_address_of_its_kind():
    # "Hi there!" and "Remind me in 10 minutes" sent an email "to" "Hi" and "10" once the body (free
    # text) no longer asked back; "Translate 'hello' to French" sent one "to" "hello".
    mail = [ToolArgument(name="to", type="string", description="The recipient's email address"),
            ToolArgument(name="page", type="string", description="The URL of the page")]
    got = grounded(schema_of(*mail), mail,
                   said_values("Mail bob@example.com what https://example.com/news says", []))["properties"]
    assert got["to"]["enum"] == ["bob@example.com"] and got["page"]["enum"] == ["https://example.com/news"]
    got = grounded(schema_of(*mail), mail, said_values("Hi there!", []))["properties"]
    assert "enum" not in got["to"] and "enum" not in got["page"]          # none said: the check asks back
    for question, value in [("Hi there!", "Hi"), ("Remind me in 10 minutes", "10"),
                            ("Translate 'hello' to French", "hello"), ("Hi there!", "hi@there.com")]:
        assert unsaid_arguments({"to": value}, mail, [question]) == ["to"], question
    assert unsaid_arguments({"to": "Bob@Example.com", "page": "https://example.com/news"}, mail,
                            ["Mail bob@example.com what https://example.com/news says"]) == []
    assert [a.name for a in mail if address_kind(a) is not None] == ["to", "page"]
    assert address_kind(ToolArgument(name="city", type="string", description="The city")) is None


def test_an_arithmetic_expression_is_offered_whole_to_a_tool_that_takes_no_number():
    # The 135M model gave a calculator "17" of "What's 17 times 23?", "1024" and "2" of the others:
    # greedy decoding closes the string at the shorter value the grammar allows.
    calc = [ToolArgument(name="expression", type="string", description="The expression to evaluate")]

    def offered(question):
        return grounded(schema_of(*calc), calc, said_values(question, []))["properties"]["expression"]["enum"]

    for question, expression in [("What's 17 times 23?", "17 times 23"),
                                 ("Can you work out 1024 divided by 8?", "1024 divided by 8"),
                                 ("What's 2+2?", "2+2"), ("What is 15% of 200?", "15% of 200"),
                                 ("What is (3 + 4) * 12?", "(3 + 4) * 12"),
                                 ("Work out 2 * (3 + 4) please", "2 * (3 + 4)"),
                                 ("Compute ((1+2)*3)-4", "((1+2)*3)-4")]:
        got = offered(question)
        assert expression in got, question
        assert not [t for t in got if t != expression and expression.startswith(t)], (question, got)
    # A parenthesis only joins arithmetic it balances: "3 + 4" was the probe's calculator value for
    # "(3 + 4) * 12", cut at the parenthesis as a clause is; an aside in words is still apart.
    assert "3 + 4" not in offered("What is (3 + 4) * 12?")
    assert not [t for t in offered("Convert 5 miles (about 8 km) to feet") if "(" in t or ")" in t]
    # Each expression comes before the spans of its clause, as the model reads them in order (to an
    # argument that is no expression, which takes the other spans too).
    plain = [ToolArgument(name="input", type="string", description="What to work on")]
    got = grounded(schema_of(*plain), plain, said_values("My cat is called Tom. What is 17 times 23?", [])
                   )["properties"]["input"]["enum"]
    assert got.index("17 times 23") > got.index("Tom")
    # Nor is a number from inside one offered alone: "Please compute (12 + 8) / 4" computed "12".
    assert "23" not in got and not {"12", "8", "4"} & set(offered("Please compute (12 + 8) / 4"))
    # A lone number is no expression, and keeps its spans; so do a tool's number arguments.
    assert {"record 42", "42"} <= set(offered("Show record 42 of the stock"))
    adder = [ToolArgument(name="a", type="number"), ToolArgument(name="b", type="number")]
    got = grounded(schema_of(*adder), adder, said_values("What's 17 times 23?", []))["properties"]
    assert got["a"]["enum"] == [17, 23] and got["b"]["enum"] == [17, 23]


def test_a_function_of_a_number_is_an_expression_and_an_expression_argument_takes_only_the_ones_said():
    # The 135M model gave a calculator "square root" of "What's the square root of 81?": the
    # expression started at the number, and its words were offered as spans beside it.
    calc = [ToolArgument(name="expression", type="string", description="The expression, e.g. 2 * (3 + 4)")]

    def offered(question):
        return grounded(schema_of(*calc), calc, said_values(question, []))["properties"]["expression"].get("enum")

    for question, expression in [("What's the square root of 81?", "square root of 81"),
                                 ("Work out the cube root of 27", "cube root of 27"),
                                 ("What is 12 squared?", "12 squared"),
                                 ("Calculate 2 to the power of 10", "2 to the power of 10"),
                                 ("What's the log of 1000 plus 3?", "log of 1000 plus 3"),
                                 ("What's 17 times 23?", "17 times 23"),
                                 # An operation said in words before its numbers is part of it: the
                                 # probe's calculator had got "48 by 365".
                                 ("What do you get if you multiply 48 by 365?", "multiply 48 by 365"),
                                 ("Divide 100 by 4 please", "Divide 100 by 4"),
                                 ("What's the sum of 3 and 4?", "sum of 3 and 4"),
                                 ("What is the difference between 10 and 3?", "difference between 10 and 3")]:
        assert offered(question) == [expression], question
    # An operation with one number is none ("multiply 6" says not by what).
    assert not said_values("Please multiply 6", []).expressions
    # No expression said: the argument keeps the question's spans (a lone number is none).
    assert {"record 42", "42"} <= set(offered("Show record 42 of the stock"))
    # An argument that is no expression keeps the other spans beside it.
    note = [ToolArgument(name="text", type="string", description="What to write down")]
    got = grounded(schema_of(*note), note, said_values("Note that 12 squared is big", []))["properties"]["text"]["enum"]
    assert "12 squared" in got and "big" in got


def test_an_argument_named_a_day_or_a_time_takes_the_days_and_times_the_dialog_says():
    # "tomorrow" is no span (it is no city of "Is it cold in Oslo today?"), so a meeting's date had
    # no value it could take; nor did "15:30", split at its colon.
    args = [ToolArgument(name="date", type="string"), ToolArgument(name="start_time", type="string"),
            ToolArgument(name="title", type="string", description="What the meeting is about")]

    def offered(question):
        got = grounded(schema_of(*args), args, said_values(question, []))["properties"]
        return [got[a.name].get("enum") for a in args]

    date, time, title = offered("Book a meeting with Sam tomorrow at 3pm")
    assert (date, time) == (["tomorrow"], ["3pm"]) and "Sam" in title
    assert offered("Schedule the review for next Friday at 15:30")[:2] == [["next Friday"], ["15:30"]]
    assert offered("Put the dentist on May 3rd, 2027 at noon")[:2] == [["May 3rd, 2027"], ["noon"]]
    # None said: left to the model (a made-up one asks back); "may" alone is no month.
    assert offered("You may book lunch with Ann")[:2] == [None, None]
    # A name whose last part says so: a "dueDate" is a day, a "time_zone" no time.
    named = [ToolArgument(name="dueDate", type="string"), ToolArgument(name="time_zone", type="string")]
    got = grounded(schema_of(*named), named, said_values("Due tomorrow at 3pm in Tokyo", []))["properties"]
    assert got["dueDate"]["enum"] == ["tomorrow"] and "Tokyo" in got["time_zone"]["enum"]
    # A description that speaks of time does not make a city a time.
    city = [ToolArgument(name="city", type="string", description="The city whose local time to give")]
    got = grounded(schema_of(*city), city, said_values("What time is it in Oslo at 3pm?", []))["properties"]
    assert "Oslo" in got["city"]["enum"]
    # A colon inside a time of day sets nothing apart.
    text = [ToolArgument(name="text", type="string", description="The text whose words to count")]
    got = grounded(schema_of(*text), text, said_values("How many words are in the 10:30 news headline", []))
    assert "news headline" in got["properties"]["text"]["enum"]


def test_only_the_start_of_a_huge_question_is_read_for_values():
    # A 1 MB question once kept the agent busy for minutes (an address pattern that was quadratic
    # in a run of word characters); what is offered comes from its first MAX_SAID_CHARS.
    from trustgraph.agent.react.grounding import MAX_SAID_CHARS
    head = "Mail bob@example.com please "
    question = head + "x" * (MAX_SAID_CHARS - len(head)) + " and carol@example.com " + "y" * 1_000_000
    said = said_values(question, [])
    assert "bob@example.com" in said.texts and "carol@example.com" not in said.texts
    assert len(said.dialog[0]) == MAX_SAID_CHARS


def test_a_message_takes_the_words_a_request_says_it_carries():
    # A probe's "say thank you very much" sent the message "thank": every run of the question's
    # words was offered, none spans "you" or "very" (filler words), and greedy decoding closes the
    # string at the shortest value the grammar allows.
    mail = [ToolArgument(name="to", type="string", description="The recipient's email address"),
            ToolArgument(name="message", type="string", description="What the email says")]
    for question, words in [("Send a note to ann@example.org saying thank you very much", "thank you very much"),
                            ("Email ann@example.org a line saying hi, see you at six. Thanks!", "hi, see you at six"),
                            ("Mail ann@example.org a card that reads happy birthday", "happy birthday"),
                            ("Mail ann@example.org that the meeting moved to 3pm.", "the meeting moved to 3pm"),
                            ("Tell Ann at ann@example.org that lunch is ready", "lunch is ready"),
                            # A request that starts by mailing someone says what next ("green" had been sent).
                            ("Email ann@example.org the build is green", "the build is green"),
                            ("text ann@example.org: running late", "running late")]:
        got = grounded(schema_of(*mail), mail, said_values(question, []))["properties"]
        assert got["message"]["enum"] == [words], question
        assert got["to"]["enum"] == ["ann@example.org"], question
    assert said_values("Email Ann the build is green", []).apart == {"the build is green"}
    assert not said_values("Email Ann about the build", []).apart   # what it is about, not what it says
    # Quoted words, or a colon, set the message apart as before; "saying" then sets nothing apart.
    for question, words in [("Send ann@example.org a note saying 'lunch is ready'", "lunch is ready"),
                            ("Send ann@example.org this, saying it twice: lunch is ready", "lunch is ready")]:
        got = grounded(schema_of(*mail), mail, said_values(question, []))["properties"]
        assert got["message"]["enum"] == [words], question
    # An argument that is no text keeps every part; a question without "saying" offers no clause.
    place = [ToolArgument(name="team", type="string", description="The team")]
    got = grounded(schema_of(*place), place, said_values("Wire the office in Oslo saying we land at noon",
                                                         []))["properties"]
    assert {"Oslo", "we land at noon"} <= set(got["team"]["enum"])
    for question in ["Send ann@example.org a note that lunch is ready", "Tell me a joke that makes me laugh"]:
        texts = said_values(question, []).texts
        assert not [t for t in texts if " " in t and t.endswith(("ready", "laugh"))], (question, texts)


def test_a_text_or_a_title_that_speaks_of_an_email_is_no_address():
    # The probe's message argument, "What the email says", took only the question's addresses.
    for name, description in [("message", "What the email says"), ("subject", "The email's subject line"),
                              ("body", "The e-mail body"), ("link_text", "The text of the link"),
                              ("title", "The title of the web page at the URL")]:
        assert address_kind(ToolArgument(name=name, type="string", description=description)) is None, name
    for name, description in [("to", "The recipient's email address"), ("recipient", "Email of the recipient"),
                              ("page", "The URL of the page"), ("email", "")]:
        assert address_kind(ToolArgument(name=name, type="string", description=description)) is not None, name


def test_an_argument_whose_example_is_no_address_is_no_address_though_its_description_names_one():
    # Probe V: "The booking reference from the confirmation email, e.g. CS-20931" took only email
    # addresses, so "did my deposit go through on CS-20955?" asked back for the booking reference.
    booking = [ToolArgument(name="booking_number", type="string",
                            description="The booking reference from the confirmation email, e.g. CS-20931")]
    assert address_kind(booking[0]) is None
    got = grounded(schema_of(*booking), booking, said_values("did my deposit go through on CS-20955?", []))
    assert got["properties"]["booking_number"]["enum"] == ["CS-20955"]
    assert unsaid_arguments({"booking_number": "CS-20955"}, booking, ["did my deposit go through on CS-20955?"]) == []
    # An example of its kind, or none, and the description's word stands; the name's always does.
    for name, description in [("to", "The recipient's email address, e.g. ann@example.org"),
                              ("page", "The URL of the page, e.g. https://example.org/a"),
                              ("email", "e.g. the one on your account"), ("recipient", "Email of the recipient")]:
        assert address_kind(ToolArgument(name=name, type="string", description=description)) is not None, name


def test_a_message_is_never_its_recipients_address_nor_the_whole_request():
    # "Email ann@example.org" sent the message "ann@example.org" (the one span the dialog held).
    mail = [ToolArgument(name="to", type="string", description="The recipient's email address"),
            ToolArgument(name="message", type="string", description="What the email says")]
    words = own_words("send-email", "Send an email to someone")
    got = grounded(schema_of(*mail), mail, said_values("Email ann@example.org", []), words)["properties"]
    assert got["to"]["enum"] == ["ann@example.org"]
    assert "enum" not in got["message"]   # nothing of its own said: left to the model, checked below
    said = ["Email ann@example.org"]
    assert unsaid_arguments({"to": "ann@example.org", "message": "ann@example.org"}, mail, said) == ["message"]
    assert unsaid_arguments({"to": "ann@example.org", "message": "Email ann@example.org"}, mail, said) == []
    # A tool with no address argument is offered addresses as before (a page counted, a link shortened).
    text = [ToolArgument(name="text", type="string", description="The text")]
    got = grounded(schema_of(*text), text, said_values("Count the letters of ann@example.org", []))["properties"]
    assert "ann@example.org" in got["text"]["enum"]


def test_a_time_the_tool_takes_is_no_other_arguments_value():
    # "Remind me to call mom at 5pm" created a reminder of "5pm" at 5pm.
    reminder = [ToolArgument(name="text", type="string", description="What to be reminded of"),
                ToolArgument(name="time", type="string", description="When, e.g. 5pm")]
    got = grounded(schema_of(*reminder), reminder, said_values("Remind me to call mom at 5pm", []),
                   own_words("create-reminder", "Create a reminder"))["properties"]
    assert got["time"]["enum"] == ["5pm"]
    # What the reminder says follows its "to", up to the time its own argument takes.
    assert got["text"]["enum"] == ["call mom"]
    got = grounded(schema_of(*reminder), reminder, said_values("Remind me at 5pm", []),
                   own_words("create-reminder", "Create a reminder"))["properties"]
    assert "Remind" not in got["text"].get("enum", []) and "5pm" not in got["text"].get("enum", [])
    got = grounded(schema_of(*reminder), reminder, said_values("Set a reminder for 9:30 to take my pills", []),
                   own_words("create-reminder", "Create a reminder"))["properties"]
    assert got["time"]["enum"] == ["9:30"] and got["text"]["enum"] == ["take my pills"]
    said = ["Remind me to call mom at 5pm"]
    assert unsaid_arguments({"text": "5pm", "time": "5pm"}, reminder, said) == ["text"]
    assert unsaid_arguments({"text": "call mom", "time": "5pm"}, reminder, said) == []


def test_a_query_is_the_question_or_what_it_says_to_look_for():
    # "Search the web for cheap flights to Rome" searched "Rome": among the question's words greedy
    # decoding takes the shortest value.
    query = [ToolArgument(name="query", type="string", description="What to search the web for")]
    words = own_words("web-search", "Search the web")
    for question, values in [
            ("Search the web for cheap flights to Rome",
             ["cheap flights to Rome", "Search the web for cheap flights to Rome"]),
            ("Look up the history of the Eiffel Tower online. Thanks",
             ["the history of the Eiffel Tower online", "Look up the history of the Eiffel Tower online. Thanks"]),
            ("Who was Ada Lovelace?", ["Who was Ada Lovelace"]),
            ("Find 'tiny house plans' for me", ["Find 'tiny house plans' for me", "tiny house plans"])]:
        got = grounded(schema_of(*query), query, said_values(question, []), words)["properties"]["query"]["enum"]
        assert got == values, (question, got)


def test_a_word_inside_an_address_the_tool_takes_is_still_offered_where_the_question_says_it_apart():
    fetch = [ToolArgument(name="page", type="string", description="The URL of the page"),
             ToolArgument(name="topic", type="string", description="What to look for on it")]
    got = grounded(schema_of(*fetch), fetch, said_values("Find the weather on https://example.com/weather", []),
                   own_words("fetch-page", "Read a web page"))["properties"]
    assert got["page"]["enum"] == ["https://example.com/weather"] and "weather" in got["topic"]["enum"]


def test_a_number_said_only_inside_a_time_the_tool_takes_is_no_number_arguments():
    # "Reserve dinner for two at Nobu on Friday at 8:30" booked a table for 8.
    booking = [ToolArgument(name="restaurant", type="string", description="The restaurant's name"),
               ToolArgument(name="people", type="integer", description="How many people"),
               ToolArgument(name="time", type="string", description="The time of the booking")]
    question = "Reserve dinner for two at Nobu on Friday at 8:30"
    got = grounded(schema_of(*booking), booking, said_values(question, []))["properties"]
    assert got["time"]["enum"] == ["8:30"] and got["people"]["enum"] == [2]   # "two", not the time's 8
    assert unsaid_arguments({"restaurant": "Nobu", "people": 8, "time": "8:30"}, booking, [question]) == ["people"]
    question = "Book a table for 4 at Luigi's at 7pm"
    got = grounded(schema_of(*booking), booking, said_values(question, []))["properties"]
    assert got["people"]["enum"] == [4] and got["time"]["enum"] == ["7pm"]
    assert unsaid_arguments({"restaurant": "Luigi's", "people": 4, "time": "7pm"}, booking, [question]) == []


def test_a_text_that_runs_on_into_a_time_the_tool_takes_is_offered_without_it():
    # "trains from manchester piccadilly to liverpool lime street after 6pm?" had gone to the
    # station "liverpool lime street after 6pm", and the time, a repeat of it, was left out.
    rail = [ToolArgument(name="from_station", type="string", description="The station the train leaves from"),
            ToolArgument(name="to_station", type="string", description="The station to travel to"),
            ToolArgument(name="time", type="string", required=False, description="Only trains leaving after this time")]
    question = "trains from manchester piccadilly to liverpool lime street after 6pm?"
    got = grounded(schema_of(*rail), rail, said_values(question, []), own_words("rail-departures", "The next trains"))
    assert got["properties"]["time"]["enum"] == ["6pm"]
    assert "liverpool lime street" in got["properties"]["to_station"]["enum"]
    assert not any("6pm" in v for v in got["properties"]["to_station"]["enum"])
    # And a place in lower case after the "to" of a route ("from ... to ...") is said as a place.
    call = {"from_station": "manchester piccadilly", "to_station": "liverpool lime street", "time": "6pm"}
    assert unsaid_arguments(call, rail, [question]) == []
    assert "to_station" in unsaid_arguments({**call, "to_station": "bed"}, rail, ["I want to go to bed after 6pm"])
    # A tool that takes no time keeps the run as it was said.
    stations = rail[:2]
    got = grounded(schema_of(*stations), stations, said_values(question, []), own_words("rail-departures", "Trains"))
    assert "liverpool lime street after 6pm" in got["properties"]["to_station"]["enum"]


def test_what_a_message_carries_is_no_other_arguments_value():
    # "ping Marco saying I'll be 10 minutes late to standup" had messaged the colleague `10`: every
    # span was offered to the colleague, the carried message's words and the message itself among them.
    chat = [ToolArgument(name="colleague", type="string", description="The colleague's name, e.g. Priya"),
            ToolArgument(name="message", type="string", description="The message to send", free_text=True)]
    question = "ping Marco saying I'll be 10 minutes late to standup"
    offered = grounded(schema_of(*chat), chat, said_values(question, []))["properties"]["colleague"]["enum"]
    assert "Marco" in offered
    assert not [v for v in offered if "10" in v or "late" in v or "I'll" in v], offered
    # A tool that carries no text keeps every part (as before).
    place = [ToolArgument(name="team", type="string", description="The team")]
    got = grounded(schema_of(*place), place, said_values(question, []))["properties"]["team"]["enum"]
    assert "10 minutes" in got


def test_a_number_written_in_words_is_a_number():
    # "Convert five miles to km" had no number to offer: the model's own 5 was unsaid, and it asked back.
    for text, numbers in [("Convert five miles to km", [5]), ("a table for twenty-five", [25]),
                          ("two hundred and fifty grams, then 3 more", [250, 3]), ("a dozen eggs", [12]), ("two dozen roses and seventeen tulips", [24, 17]), ("five and six", [5, 6]),
                          ("one hundred and one dalmatians", [101]),
                          ("a funny one", []), ("one c or two?", [2]), ("Count 'a stitch in time saves nine'", [])]:
        assert said_values(text, []).numbers == numbers, text
    scales = [ToolArgument(name="value", type="number"), ToolArgument(name="from", type="string"),
              ToolArgument(name="to", type="string")]
    assert unsaid_arguments({"value": 5, "from": "miles", "to": "km"}, scales, ["Convert five miles to km"]) == []


def test_a_files_path_is_offered_whole():
    # "Open the file notes/todo.txt" read the file "notes": the slash ended the value.
    read = [ToolArgument(name="path", type="string", description="The file's path")]
    words = own_words("read-file", "Show the contents of a file")
    for question, path in [("Open the file notes/todo.txt", "notes/todo.txt"),
                           ("Show me what's in /etc/hosts.", "/etc/hosts"),
                           ("cat ~/notes and ./run.sh", "~/notes"), ("Display the contents of config.yaml", "config.yaml")]:
        got = grounded(schema_of(*read), read, said_values(question, []), words)["properties"]["path"]["enum"]
        assert path in got and "notes" not in got and "etc" not in got, (question, got)
    # Not a fraction, a date or a unit.
    assert not [t for t in said_values("Convert 3/5 of 24/7 km/h and/or 2/3/2027", []).texts if "/" in t
                and not t[0].isdigit() and t not in ("km/h", "and/or")]
    assert "and/or" not in said_values("this and/or that", []).texts


def test_a_value_ends_at_its_owner():
    # "What's Jane Doe's phone number?" looked up the contact "Jane Doe's phone number".
    assert said_values("What's Jane Doe's phone number?", []).texts[0] == "Jane Doe"
    assert "Jane Doe's phone number" not in said_values("What's Jane Doe's phone number?", []).texts
    assert said_values("What's Apple’s stock price?", []).texts[:2] == ["Apple", "stock"]
    # A place named so, with nothing it owns said next, keeps its name; "How's" is no one's.
    assert "Luigi's" in said_values("Book a table at Luigi's tomorrow", []).texts
    assert said_values("How's the sky looking over Reykjavik?", []).texts[0] == "sky"


def test_a_requests_verb_starts_no_value_and_is_no_part_of_a_name():
    texts = said_values("Play Bohemian Rhapsody by Queen", []).texts
    assert "Bohemian Rhapsody" in texts and "Queen" in texts and not [t for t in texts if "Play" in t]
    texts = said_values("Can you check whether LH 400 is delayed?", []).texts
    assert "LH 400" in texts and not [t for t in texts if "check" in t or "whether" in t]
    assert "Why" not in said_values("Why is the sky blue?", []).texts


def test_the_value_said_beside_an_arguments_name_is_that_arguments():
    # "Add milk to my shopping list" added milk to the list "milk".
    lists = [ToolArgument(name="list", type="string", description="Which list, e.g. groceries"),
             ToolArgument(name="item", type="string", description="What to add to it")]
    words = own_words("add-to-list", "Add an item to one of the user's lists")
    for question, name, item in [("Add milk to my shopping list", "shopping", "milk"),
                                 ("Remember to buy batteries: add them to my hardware list", "hardware", "batteries"),
                                 ("Put eggs on the groceries lists", "groceries", "eggs")]:
        got = grounded(schema_of(*lists), lists, said_values(question, []), words)["properties"]
        assert got["list"]["enum"] == [name], (question, got["list"])
        # The list's value, alone or with its name, is no item ("Add 'call the plumber' to my todo
        # list" had added the item "todo").
        assert item in got["item"]["enum"] and not [v for v in got["item"]["enum"] if name in v], got["item"]
    song = [ToolArgument(name="song", type="string")]
    got = grounded(schema_of(*song), song, said_values("Play the song Imagine by John Lennon", []))["properties"]
    assert got["song"]["enum"] == ["Imagine"]
    # A plain word after the name is no value of it ("the word count"); a quoted text stays.
    word = [ToolArgument(name="word", type="string", description="The word to define")]
    for question, kept in [("What is the word count of 'hello world'?", ["hello world", "count"]),
                           ("Give me another word for 'big'", ["big"])]:
        got = grounded(schema_of(*word), word, said_values(question, []), own_words("define", "Define a word"))
        assert got["properties"]["word"]["enum"] == kept, question
    # A name of filler words says nothing.
    to = [ToolArgument(name="to", type="string")]
    got = grounded(schema_of(*to), to, said_values("Send the Paris report to Ann", []))["properties"]
    assert set(got["to"]["enum"]) >= {"Paris", "Ann"}


def test_an_identifier_with_digits_takes_a_value_with_digits_or_asks_back():
    # "Why is the sky blue?" checked the status of the flight "blue", and answered.
    flight = [ToolArgument(name="flight", type="string", description="The flight number, e.g. BA117")]
    got = grounded(schema_of(*flight), flight, said_values("Is flight BA117 on time?", []),
                   own_words("flight-status", "Whether a flight is on time"))["properties"]
    assert got["flight"]["enum"] == ["BA117"]
    got = grounded(schema_of(*flight), flight, said_values("Can you check whether LH 400 is delayed?", []))
    assert got["properties"]["flight"]["enum"] == ["LH 400"]
    # Written in groups of capitals and digits, the identifier is the groups whole: "Is U2 4587 on
    # time?" had checked the flight "4587" (offered beside "U2" and "2 4587").
    got = grounded(schema_of(*flight), flight, said_values("Is U2 4587 on time?", []))
    assert got["properties"]["flight"]["enum"] == ["U2 4587"]
    got = grounded(schema_of(*flight), flight, said_values("Why is the sky blue?", []))["properties"]
    assert "enum" not in got["flight"]   # nothing with digits said: the model's, and the check asks back
    assert unsaid_arguments({"flight": "blue"}, flight, ["Why is the sky blue?"]) == ["flight"]
    assert unsaid_arguments({"flight": "BA117"}, flight, ["Why is the sky blue?"]) == ["flight"]
    assert unsaid_arguments({"flight": "BA117"}, flight, ["Is BA117 late?"]) == []
    # A name that ends in "number" says so too; an example that is no identifier does not.
    parcel = [ToolArgument(name="tracking_number", type="string"), ToolArgument(name="amount", type="number")]
    got = grounded(schema_of(*parcel), parcel, said_values("Where is parcel 1Z999AA1 of 3?", []))["properties"]
    assert "1Z999AA1" in got["tracking_number"]["enum"] and got["amount"]["enum"] == [3]
    assert all(any(c.isdigit() for c in v) for v in got["tracking_number"]["enum"])
    calculator = [ToolArgument(name="expression", type="string", description="The expression, e.g. 2 * (3 + 4)")]
    assert unsaid_arguments({"expression": "pi"}, calculator, ["What is pi?"]) == []
    ticker = [ToolArgument(name="ticker", type="string", description="The ticker, e.g. AAPL")]
    assert unsaid_arguments({"ticker": "Apple"}, ticker, ["What's Apple's stock price?"]) == []


def test_a_quoted_text_is_the_value_beside_a_name_only_where_it_is_said():
    # "Add 'call the plumber' to my todo list" added to the list "call the plumber".
    lists = [ToolArgument(name="list", type="string", description="Which list, e.g. groceries"),
             ToolArgument(name="item", type="string", description="What to add to it")]
    got = grounded(schema_of(*lists), lists, said_values("Add 'call the plumber' to my todo list", []),
                   own_words("add-to-list", "Add an item to a list"))["properties"]
    assert got["list"]["enum"] == ["todo"] and got["item"]["enum"] == ["call the plumber"]
    word = [ToolArgument(name="word", type="string", description="The word to define")]
    got = grounded(schema_of(*word), word, said_values("Is the word 'big' bigger than 'large'?", []))
    assert got["properties"]["word"]["enum"] == ["big"]


def test_a_name_joined_by_of_or_the_is_offered_whole():
    # "Put on Kind of Blue by Miles Davis" played "Blue".
    for question, name, parts in [("Put on Kind of Blue by Miles Davis", "Kind of Blue", ["Blue", "Kind"]),
                                  ("Show the Lord of the Rings trailer", "Lord of the Rings", ["Rings", "Lord"]),
                                  ("How tall is the Statue of Liberty?", "Statue of Liberty", ["Liberty"])]:
        texts = said_values(question, []).texts
        assert name in texts and not set(parts) & set(texts), (question, texts)
    # Not "and", nor after a clause's first word.
    assert {"Paris", "London"} <= set(said_values("Time difference between Paris and London", []).texts)
    assert "Rome" in said_values("Map of Rome please", []).texts
    # A file's name is whole too: "Print README.md" printed "md".
    assert said_values("Print README.md", []).texts[0] == "README.md"


def test_a_value_after_an_arguments_name_is_the_one_it_names_and_what_comes_before_describes_it():
    # "What is the German word for 'apple'?" defined the word "German".
    word = [ToolArgument(name="word", type="string", description="The word to define")]
    got = grounded(schema_of(*word), word, said_values("What is the German word for 'apple'?", []),
                   own_words("define-word", "The dictionary definition of a word"))["properties"]
    assert got["word"]["enum"] == ["apple"]
    lists = [ToolArgument(name="list", type="string"), ToolArgument(name="item", type="string")]
    got = grounded(schema_of(*lists), lists, said_values("Make a list called Weekend and add milk", []))
    assert got["properties"]["list"]["enum"] == ["Weekend"]
    assert "milk" in got["properties"]["item"]["enum"] and "Weekend" not in got["properties"]["item"]["enum"]
    # "for" before a plain name is no naming: "my shopping list for Saturday" is the list shopping.
    got = grounded(schema_of(*lists), lists, said_values("Add milk to my shopping list for Saturday", []))
    assert got["properties"]["list"]["enum"] == ["shopping"]


def test_a_declared_value_the_question_says_is_taken():
    # "Turn off the lights in the kitchen" turned them on: the model took the first declared value.
    lights = [ToolArgument(name="room", type="string"), ToolArgument(name="state", type="string", enum=("on", "off"))]
    got = grounded(schema_of(*lights), lights, said_values("Turn off the lights in the kitchen", []))["properties"]
    assert got["state"]["enum"] == ["off"]
    got = grounded(schema_of(*lights), lights, said_values("Are the kitchen lights working?", []))["properties"]
    assert got["state"]["enum"] == ["on", "off"]   # none said: every value, the model's to choose


def test_a_declared_value_said_singular_or_plural_is_taken():
    # "I only have a tablespoon, how many of those is 50 millilitres?" converted into grams: the
    # declared "tablespoons" was not said, so every unit was offered and the model took one.
    measure = [ToolArgument(name="amount", type="number"),
               ToolArgument(name="from_unit", type="string", enum=("cups", "grams", "tablespoons", "millilitres")),
               ToolArgument(name="to_unit", type="string", enum=("cups", "grams", "tablespoons", "millilitres"))]
    for question, out_of, into in [
        ("I only have a tablespoon, how many of those is 50 millilitres of olive oil?", "millilitres", "tablespoons"),
        ("Convert 3 cup of sugar to gram", "cups", "grams"),
        ("How many cups is 1 gram of flour?", "grams", "cups"),
    ]:
        got = grounded(schema_of(*measure), measure, said_values(question, []))["properties"]
        assert (got["from_unit"]["enum"], got["to_unit"]["enum"]) == ([out_of], [into]), question
    sizes = [ToolArgument(name="size", type="string", enum=("small box", "large box"))]
    got = grounded(schema_of(*sizes), sizes, said_values("Two large boxes, please", []))["properties"]
    assert got["size"]["enum"] == ["large box"]
    got = grounded(schema_of(*sizes), sizes, said_values("A box, please", []))["properties"]
    assert got["size"]["enum"] == ["small box", "large box"]   # "box" alone names neither
    # A code in capitals is said as written: "come up" names no carrier "UPS".
    parcel = [ToolArgument(name="number", type="string"), ToolArgument(name="carrier", type="string", enum=("UPS", "DHL"))]
    got = grounded(schema_of(*parcel), parcel, said_values("When does the sun come up in Nairobi?", []))["properties"]
    assert got["carrier"]["enum"] == ["UPS", "DHL"]


def test_a_percentage_goes_to_the_argument_that_is_one():
    # "How much should I tip on $80 at 15%?" gave the amount 15.
    tip = [ToolArgument(name="amount", type="number", description="The bill"),
           ToolArgument(name="percent", type="number", description="The tip's percentage")]
    for question in ["How much should I tip on $80 at 15%?", "What's a 15 percent tip on 80 dollars?"]:
        got = grounded(schema_of(*tip), tip, said_values(question, []))["properties"]
        assert got["amount"]["enum"] == [80] and got["percent"]["enum"] == [15], question
    # Without a percentage said, both take every number.
    got = grounded(schema_of(*tip), tip, said_values("Tip 15 on 80", []))["properties"]
    assert got["amount"]["enum"] == [15, 80] == got["percent"]["enum"]


def test_a_number_said_once_is_no_two_arguments_values():
    # "What's the square root of 81?" called a tip calculator with the amount and the percent 81.
    tip = [ToolArgument(name="amount", type="number"), ToolArgument(name="percent", type="number")]
    assert unsaid_arguments({"amount": 81, "percent": 81}, tip, ["What's the square root of 81?"]) == ["percent"]
    assert unsaid_arguments({"amount": 10, "percent": 10}, tip, ["A 10 percent tip on 10 dollars"]) == []
    assert unsaid_arguments({"amount": 2, "percent": 2}, tip, ["Two and 2"]) == []   # in words too


def optional_schema(*arguments):
    return {"type": "object", "properties": {a.name: a.json_schema() for a in arguments},
            "required": [a.name for a in arguments if a.required], "additionalProperties": False}


def test_an_optional_argument_the_question_says_nothing_for_is_left_out():
    # "Wake me up at 6:30" labelled the alarm "Wake"; "Book a hotel in Lisbon for 3 nights" arrived
    # on "Lisbon": offered every span, the 135M model filled an optional argument with any word.
    alarm = [ToolArgument(name="time", type="string", description="When the alarm rings"),
             ToolArgument(name="label", type="string", description="A name for the alarm", required=False)]
    got = grounded(optional_schema(*alarm), alarm, said_values("Wake me up at 6:30", []))
    assert set(got["properties"]) == {"time"} and got["required"] == ["time"]
    got = grounded(optional_schema(*alarm), alarm, said_values("Set an alarm for 7 am called gym", []))
    assert got["properties"]["label"]["enum"] == ["gym"]          # a name said after "called"
    hotel = [ToolArgument(name="city", type="string"), ToolArgument(name="nights", type="integer"),
             ToolArgument(name="check_in_date", type="string", required=False),
             ToolArgument(name="guests", type="integer", required=False),
             ToolArgument(name="breakfast", type="boolean", required=False),
             ToolArgument(name="board", type="string", enum=("room only", "half board"), required=False)]
    got = grounded(optional_schema(*hotel), hotel, said_values("Book a hotel in Lisbon for 3 nights", []))
    assert set(got["properties"]) == {"city", "nights"}   # a switch it does not name: the tool's default
    got = grounded(optional_schema(*hotel), hotel,
                   said_values("Book Lisbon for 3 nights from Friday for 2 guests, half board", []))["properties"]
    assert got["check_in_date"]["enum"] == ["Friday"] and got["board"]["enum"] == ["half board"]
    assert got["guests"]["enum"] == [2]                             # the number said of guests
    # A place is a name said after "in", "at" or "near"; a plain word there is none.
    films = [ToolArgument(name="movie", type="string"),
             ToolArgument(name="city", type="string", description="Where", required=False)]
    got = grounded(optional_schema(*films), films, said_values("When is Dune playing in Boston?", []))
    assert got["properties"]["city"]["enum"] == ["Boston"]
    got = grounded(optional_schema(*films), films, said_values("Is Dune playing in cinemas?", []))
    assert set(got["properties"]) == {"movie"}


def test_a_number_goes_to_the_argument_that_counts_what_it_counts():
    # "Roll three 8-sided dice" rolled one die of 3 sides: the model took the first number for both.
    dice = [ToolArgument(name="sides", type="integer", description="Faces on each die (default 6)", required=False),
            ToolArgument(name="count", type="integer", description="How many dice to roll (default 1)",
                         required=False)]
    got = grounded(optional_schema(*dice), dice, said_values("Roll three 8-sided dice", []))["properties"]
    assert got["sides"]["enum"] == [8] and got["count"]["enum"] == [3]
    got = grounded(optional_schema(*dice), dice, said_values("roll 2 dice with 12 sides", []))["properties"]
    assert got["sides"]["enum"] == [12] and got["count"]["enum"] == [2]
    # Each number said counts the other's: this one is left out, the tool's default.
    got = grounded(optional_schema(*dice), dice, said_values("roll 2 dice", []))["properties"]
    assert set(got) == {"count"} and got["count"]["enum"] == [2]
    hotel = [ToolArgument(name="nights", type="integer", description="How many nights"),
             ToolArgument(name="guests", type="integer", description="How many guests", required=False)]
    got = grounded(optional_schema(*hotel), hotel,
                   said_values("A hotel in Amsterdam from 12 September for 3 nights for 4 guests", []))["properties"]
    assert got["nights"]["enum"] == [3] and got["guests"]["enum"] == [4]
    # A number that counts nothing an argument counts goes to either, as before.
    got = grounded(optional_schema(*hotel), hotel, said_values("A hotel for 3, 4 of us", []))["properties"]
    assert got["nights"]["enum"] == [3, 4]


def test_what_a_count_argument_counts_is_read_once_for_both_its_uses():
    from trustgraph.agent.react.grounding import counted_by, says_one
    assert counted_by("How many dice to roll (default 1)") == "dice"
    assert counted_by("The number of people at the table") == "people"
    assert counted_by("Faces on each die") is None and counted_by("How many") is None
    pizzas = ToolArgument(name="quantity", type="integer", description="The number of pizzas")
    assert says_one(pizzas, ["get me a large pepperoni pizza"])          # "a ... pizza" is one of them
    assert not says_one(pizzas, ["a table for two pizzas"])


@pytest.mark.parametrize("question", ["Exchange 12.5 dollars into euros, please", "Bill was 64.50, what's a 20% tip?",
                                      "Remind me at 9:30"])
def test_an_optional_number_the_question_says_none_of_is_left_out(question):
    # The question's numbers are no whole ones, a percentage or a time's: roll-dice's had stayed
    # open to the model's guess while another tool's said values decided the step.
    dice = [ToolArgument(name="sides", type="integer", description="Faces on each die (default 6)", required=False),
            ToolArgument(name="count", type="integer", description="How many dice to roll (default 1)",
                         required=False),
            ToolArgument(name="time", type="string", description="When to remind", required=False)]
    got = grounded(optional_schema(*dice), dice, said_values(question, []))["properties"]
    assert "sides" not in got and "count" not in got
    # A whole number said is offered, as before.
    got = grounded(optional_schema(*dice), dice, said_values("Roll 3 of them", []))["properties"]
    assert got["sides"]["enum"] == [3] and got["count"]["enum"] == [3]


@pytest.mark.parametrize("question, flag", [
    ("I need a 12 character password with no symbols", False),
    ("password, 20 chars, don't include any symbols", False),
    ("A password without special symbols", False),
    ("A password with symbols, please", True),
    ("Give me a password", None),          # not named: left out, the tool's default
])
def test_a_switch_is_what_the_question_says_of_it_or_left_out(question, flag):
    # "I need a 12 character password with no symbols" had symbols true, and so had "Give me a password".
    password = [ToolArgument(name="length", type="integer", description="How many characters", required=False),
                ToolArgument(name="include_symbols", type="boolean", description="Punctuation too", required=False)]
    got = grounded(optional_schema(*password), password, said_values(question, []))["properties"]
    if flag is None:
        assert "include_symbols" not in got
    else:
        assert got["include_symbols"]["enum"] == [flag]


def test_number_words_that_make_no_one_number_are_several():
    # "Roll two twelve-sided dice" had rolled 14 sides: "two twelve" read as one number.
    from trustgraph.agent.react.grounding import _word_numbers
    assert [n for _, n, _ in _word_numbers("Roll two twelve-sided dice")] == [2, 12]
    assert [n for _, n, _ in _word_numbers("five six")] == [5, 6]
    assert [n for _, n, _ in _word_numbers("twenty-five, two hundred and fifty, two dozen")] == [25, 250, 24]
    dice = [ToolArgument(name="sides", type="integer", description="Faces on each die", required=False),
            ToolArgument(name="count", type="integer", description="How many dice to roll", required=False)]
    got = grounded(optional_schema(*dice), dice, said_values("Roll two twelve-sided dice for me", []))["properties"]
    assert got["sides"]["enum"] == [12] and got["count"]["enum"] == [2]


def test_a_unit_written_short_says_the_declared_unit():
    # "3 tbsp butter in g?" converted from cups, and "15 ml" asked back: "tbsp" and "ml" named no
    # declared unit.
    units = ("cups", "grams", "tablespoons", "teaspoons", "millilitres")
    measure = [ToolArgument(name="amount", type="number"),
               ToolArgument(name="from_unit", type="string", enum=units),
               ToolArgument(name="to_unit", type="string", enum=units)]
    got = grounded(schema_of(*measure), measure, said_values("3 tbsp butter in g?", []))["properties"]
    assert got["from_unit"]["enum"] == ["tablespoons"]
    got = grounded(schema_of(*measure), measure, said_values("how many teaspoons is 15 ml of vanilla?", []))
    assert (got["properties"]["from_unit"]["enum"], got["properties"]["to_unit"]["enum"]) == (["millilitres"],
                                                                                              ["teaspoons"])
    # A letter alone is a unit only written after a number: "I'm" says no metre.
    lengths = [ToolArgument(name="unit", type="string", enum=("metres", "feet"))]
    got = grounded(schema_of(*lengths), lengths, said_values("I'm tall, what unit?", []))["properties"]
    assert got["unit"]["enum"] == ["metres", "feet"]


def test_adverbs_of_time_and_manner_are_no_values():
    # "What about for eight of us instead?" had scaled the recipe "instead".
    recipe = [ToolArgument(name="recipe", type="string")]
    for question, word in [("Bake the trifle again, for 8 instead", "instead"),
                           ("Has the workday started yet in Singapore?", "yet")]:
        got = grounded(schema_of(*recipe), recipe, said_values(question, []))["properties"]
        assert not any(word in v.split() for v in got["recipe"].get("enum", [])), question


def test_a_tool_whose_arguments_are_all_optional_keeps_them():
    # Many MCP tools' schemas list no argument as required: nothing is left out for that.
    search = [ToolArgument(name="query", type="string", required=False)]
    got = grounded(optional_schema(*search), search, said_values("Search for cats", []))
    assert "cats" in got["properties"]["query"]["enum"]


def test_an_optional_arguments_guess_is_left_out_of_the_call_not_asked_back_for():
    from trustgraph.agent.react.grounding import optional_guesses
    films = [ToolArgument(name="movie", type="string"),
             ToolArgument(name="city", type="string", required=False)]
    # "Showtimes for Oppenheimer" gave the film and its city "Oppenheimer".
    assert optional_guesses({"movie": "Oppenheimer", "city": "Oppenheimer"}, films,
                            ["Showtimes for Oppenheimer"]) == ["city"]
    assert optional_guesses({"movie": "Dune", "city": "Paris"}, films, ["When is Dune on in Boston?"]) == ["city"]
    assert optional_guesses({"movie": "Dune", "city": "Boston"}, films, ["When is Dune on in Boston?"]) == []
    # A required argument's guess is the check's to ask back for, not this one's to drop.
    assert optional_guesses({"movie": "Alien"}, films, ["When is Dune on?"]) == []
    # A list that says the title again: probe O's ticket had the labels ["printer"] of its title "printer".
    ticket = [ToolArgument(name="title", type="string"),
              ToolArgument(name="labels", type="array", items={"type": "string"}, required=False)]
    said = ["The printer is jamming, please raise a ticket"]
    assert optional_guesses({"title": "printer", "labels": ["printer"]}, ticket, said) == ["labels"]
    assert optional_guesses({"title": "printer", "labels": ["jamming"]}, ticket, said) == []
    # Probe V: a claim's free-text details were "2026-02-03", its date again, and "policy_number", an
    # argument's name.
    claim = [ToolArgument(name="policy_number", type="string"), ToolArgument(name="incident_date", type="string"),
             ToolArgument(name="details", type="string", required=False, free_text=True)]
    said = ["Burst pipe flooded the kitchen on 2026-02-03, policy POL-88213"]
    for details in ["2026-02-03", "policy_number", "Policy number"]:
        values = {"policy_number": "POL-88213", "incident_date": "2026-02-03", "details": details}
        assert optional_guesses(values, claim, said) == ["details"], details
    values = {"policy_number": "POL-88213", "incident_date": "2026-02-03", "details": "A burst pipe flooded the kitchen"}
    assert optional_guesses(values, claim, said) == []
    # A declared word nobody said, though one of its kind's values is a unit's name ("second").
    fixtures = [ToolArgument(name="team", type="string", required=False),
                ToolArgument(name="division", type="string", enum=["premier", "first", "second"], required=False)]
    said = ["who are harbour rovers up against next weekend"]
    assert optional_guesses({"team": "harbour rovers", "division": "second"}, fixtures, said) == ["division"]
    scales = [ToolArgument(name="to", type="string", enum=["celsius", "fahrenheit", "kelvin"], required=False)]
    assert optional_guesses({"to": "kelvin"}, scales, ["how hot is 300 degrees"]) == []   # a unit: translated to


def test_a_currency_sign_written_with_an_amount_is_what_it_is_converted_out_of():
    # "Convert €50 to dollars" converted out of dollars, "How many yen is $20?" out of yen: the
    # sign was no value the model could take.  It is offered as its code.
    from trustgraph.agent.react.grounding import currency_codes, quantity_units
    assert currency_codes("Convert €50 to dollars") == ("EUR",)
    assert currency_codes("Is 50 € more than £40 or $45 or C$ 60?") == ("EUR", "GBP", "USD", "CAD")
    assert currency_codes("The $PATH variable, and 5 $") == ("USD",)        # only with an amount
    assert quantity_units("What is 50€ in pounds?") == {"eur"}
    fx = [ToolArgument(name="amount", type="number"), ToolArgument(name="from_currency", type="string"),
          ToolArgument(name="to_currency", type="string")]
    for question, source, target in [("Convert €50 to dollars", "EUR", "dollars"),
                                     ("How many yen is $20?", "USD", "yen"),
                                     ("Change C$ 40 to pounds", "CAD", "pounds")]:
        got = grounded(schema_of(*fx), fx, said_values(question, []))["properties"]
        assert got["from_currency"]["enum"] == [source], question
        assert target in got["to_currency"]["enum"] and source not in got["to_currency"]["enum"], question
        assert not [v for v in got["to_currency"]["enum"] if v.endswith(" C")], question   # "C$" is no span
    codes = [ToolArgument(name="amount", type="number"), ToolArgument(name="from", type="string", enum=("USD", "EUR")),
             ToolArgument(name="to", type="string", enum=("USD", "EUR"))]
    got = grounded(schema_of(*codes), codes, said_values("Convert €50 to dollars", []))["properties"]
    assert got["from"]["enum"] == ["EUR"] and got["to"]["enum"] == ["USD"]
    assert unsaid_arguments({"amount": 50, "from_currency": "EUR", "to_currency": "dollars"}, fx,
                            ["Convert €50 to dollars"]) == []


def test_a_list_of_texts_takes_the_list_the_question_says():
    # "Find me a recipe with chicken and rice" listed only chicken; "eggs, spinach and cheese"
    # gave "spinnad", a list's members being the model's own words.
    recipes = [ToolArgument.model_validate({"name": "ingredients", "type": "array", "items": {"type": "string"}}),
               ToolArgument(name="diet", type="string", enum=("vegetarian", "vegan", "any"), required=False)]
    got = grounded(optional_schema(*recipes), recipes, said_values("Find me a recipe with chicken and rice", []))
    assert got["properties"]["ingredients"]["items"]["enum"] == ["chicken", "rice"]
    assert got["properties"]["ingredients"]["minItems"] == 2 and "diet" not in got["properties"]
    assert got["properties"]["ingredients"]["maxItems"] == 2   # no member repeated until the reply is cut
    got = grounded(optional_schema(*recipes), recipes,
                   said_values("What can I cook with eggs, spinach and cheese? Vegetarian please", []))["properties"]
    assert got["ingredients"]["items"]["enum"] == ["eggs", "spinach", "cheese"] and got["ingredients"]["minItems"] == 3
    assert got["diet"]["enum"] == ["vegetarian"]
    # A member said with its article ("add batteries and a phone charger to my cart" had put
    # only "phone" in the cart).
    cart = [ToolArgument.model_validate({"name": "products", "type": "array", "items": {"type": "string"}})]
    got = grounded(optional_schema(*cart), cart, said_values("add batteries and a phone charger to my cart", []))
    assert got["properties"]["products"]["minItems"] == 2 and got["properties"]["products"]["maxItems"] == 2
    assert {"batteries", "phone charger"} <= set(got["properties"]["products"]["items"]["enum"])
    # No list said: every text, none the diet's declared value, and no least count.
    got = grounded(optional_schema(*recipes), recipes, said_values("Something vegan with tofu", []))["properties"]
    assert got["ingredients"]["items"]["enum"] == ["tofu"] and "minItems" not in got["ingredients"]
    assert got["ingredients"]["maxItems"] == 1
    assert unsaid_arguments({"ingredients": ["eggs", "spinnad"]}, recipes, ["eggs, spinach and cheese"]) == \
        ["ingredients"]
    assert unsaid_arguments({"ingredients": ["eggs", "spinach"]}, recipes, ["eggs, spinach and cheese"]) == []


def test_a_phone_number_is_offered_whole_with_its_plus():
    # "Send an SMS to +44 7700 900123 ..." texted "44 7700 900123".
    sms = [ToolArgument(name="phone_number", type="string", description="The phone number"),
           ToolArgument.model_validate({"name": "message", "type": "string", "free-text": True})]
    for question, phone in [("Send an SMS to +44 7700 900123 saying the meeting moved", "+44 7700 900123"),
                            ("Text (212) 555-0100: on my way", "(212) 555-0100"),
                            ("Text 555-0199 that I'm running late", "555-0199")]:
        assert grounded(schema_of(*sms), sms, said_values(question, []))["properties"]["phone_number"]["enum"] \
            == [phone], question


def test_a_phrase_said_over_and_over_is_said_once():
    from trustgraph.agent.react.grounding import said_once
    assert said_once("I'm running late, I'm running late, I'm running late, I'm running late") == "I'm running late"
    assert said_once("Yes! Yes! Yes!") == "Yes"
    for kept in ["Happy birthday! Happy birthday!", "go go go team", "ha ha ha", "The meeting moved", "x" * 3000,
                 "Sorry, I can't make it, sorry", "abcdefgh abcdefgh"]:
        assert said_once(kept) == kept
    # A loop cut off at the value's length, after words of its own (probe V: a cancellation's reason,
    # shown in the approval prompt, ran 300 characters).
    looped = "Dentist-cancellation-by-doctor-appointment-dont-be-doctor" + "-cancellation-by-doctor-appointment-dont-be-doctor" * 6
    assert said_once(looped[:300]) == "Dentist-cancellation-by-doctor-appointment-dont-be-doctor"
    assert said_once("Please note: I'm running late, I'm running late, I'm running late, I'm runn") \
        == "Please note: I'm running late"


def test_a_number_said_with_a_unit_goes_to_the_argument_of_its_kind():
    # "BMI for 82 kilos and 180 cm" gave the height 82, and the check asked back.
    bmi = [ToolArgument(name="weight_kg", type="number", description="Weight in kilograms"),
           ToolArgument(name="height_cm", type="number", description="Height in centimetres")]
    got = grounded(schema_of(*bmi), bmi, said_values("BMI for 82 kilos and 180 cm", []))["properties"]
    assert got["weight_kg"]["enum"] == [82] and got["height_cm"]["enum"] == [180]
    travel = [ToolArgument(name="distance", type="number", description="The distance in kilometres"),
              ToolArgument(name="speed", type="number", description="The speed in km/h")]
    for question in ["How long to drive 300 km at 100 km/h?", "At 100 kilometres per hour, how long for 300 km?"]:
        got = grounded(schema_of(*travel), travel, said_values(question, []))["properties"]
        assert got["distance"]["enum"] == [300] and got["speed"]["enum"] == [100], question
    # Numbers without units, or of no kind the argument says, are every argument's.
    got = grounded(schema_of(*bmi), bmi, said_values("BMI for 82 and 180", []))["properties"]
    assert got["weight_kg"]["enum"] == [82, 180] == got["height_cm"]["enum"]


def test_a_text_said_once_is_no_two_arguments_values():
    # "Play some jazz" played the song "jazz" by the artist "jazz": one of them is a guess.
    music = [ToolArgument(name="song", type="string"), ToolArgument(name="artist", type="string")]
    assert unsaid_arguments({"song": "jazz", "artist": "jazz"}, music, ["Play some jazz"]) == ["artist"]
    assert unsaid_arguments({"song": "Hey Jude", "artist": "hey jude"}, music, ["Play Hey Jude"]) == ["artist"]
    assert unsaid_arguments({"song": "Jazz", "artist": "Jazz"}, music, ["Play Jazz by Jazz"]) == []   # said twice
    assert unsaid_arguments({"song": "Imagine", "artist": "John Lennon"}, music, ["Play Imagine by John Lennon"]) == []
    # A short word too: "What's a good tip for learning the piano?" played the song "tip" by "tip".
    assert unsaid_arguments({"song": "tip", "artist": "tip"}, music,
                            ["What's a good tip for learning the piano?"]) == ["artist"]
    codes = [ToolArgument(name="from", type="string"), ToolArgument(name="to", type="string")]
    assert unsaid_arguments({"from": "EUR", "to": "EUR"}, codes, ["euros to euros?"]) == []   # codes not judged


def test_a_free_text_message_the_question_sets_apart_is_that_text():
    # "Send a text to 07700 900456 saying see you soon": the 135M model wrote a paragraph of its own.
    sms = [ToolArgument(name="phone_number", type="string", description="The phone number"),
           ToolArgument.model_validate({"name": "message", "type": "string", "description": "What to say",
                                        "free-text": True})]
    for question, message in [("Send a text to 07700 900456 saying see you soon", "see you soon"),
                              ("Text 555-0199 that I'm running late", "I'm running late"),
                              ("Text Bob that dinner is ready", "dinner is ready"),
                              ("Text +1 212 555 0100 the door code is 4321", "the door code is 4321")]:
        got = grounded(schema_of(*sms), sms, said_values(question, []))["properties"]
        assert got["message"]["enum"] == [message], question
    # Nothing set apart: the model's own words.
    assert "enum" not in grounded(schema_of(*sms), sms, said_values("Text mum", []))["properties"]["message"]
    summary = [ToolArgument.model_validate({"name": "summary", "type": "string", "free-text": True})]
    got = grounded(schema_of(*summary), summary, said_values("Log a call saying the client is happy", []))
    assert "enum" not in got["properties"]["summary"]   # a text of its own, not a message it carries
    alarm = [ToolArgument(name="time", type="string"),
             ToolArgument(name="label", type="string", description="A name for the alarm", required=False)]
    got = grounded(optional_schema(*alarm), alarm, said_values("Set an alarm for 8:15 labelled meds", []))
    assert got["properties"]["label"]["enum"] == ["meds"]


def test_an_optional_argument_the_question_plainly_gives_is_required_and_runs_take_no_sibling_value():
    # "Two small espressos please" ordered the drink "small espressos", leaving out the size.
    coffee = [ToolArgument(name="drink", type="string"),
              ToolArgument(name="size", type="string", enum=("small", "large"), required=False),
              ToolArgument(name="quantity", type="integer", required=False)]
    got = grounded(optional_schema(*coffee), coffee, said_values("Two small espressos please", []))
    assert got["properties"]["drink"]["enum"] == ["espressos"]         # not "Two", not "small espressos"
    assert got["properties"]["size"]["enum"] == ["small"]
    # A count said before what another argument takes is plain too ("Two large oat lattes please"
    # had ordered one); a number said otherwise is not: it stays optional.
    assert got["properties"]["quantity"]["enum"] == [2] and got["required"] == ["drink", "size", "quantity"]
    got = grounded(optional_schema(*coffee), coffee, said_values("A small latte for table 4", []))
    assert got["properties"]["quantity"]["enum"] == [4] and "quantity" not in got["required"]
    got = grounded(optional_schema(*coffee), coffee, said_values("2 large lattes and a small mocha", []))
    assert "quantity" not in got["required"]                            # two drinks: whose count?
    # A unit of measure after a number is that number's; what a number counts may be a value.
    plant = [ToolArgument(name="plant", type="string"),
             ToolArgument(name="amount_ml", type="number", required=False)]
    got = grounded(optional_schema(*plant), plant, said_values("Give the fern 200 ml of water", []))
    assert "fern" in got["properties"]["plant"]["enum"] and "ml" not in got["properties"]["plant"]["enum"]
    stock = [ToolArgument(name="item", type="string"), ToolArgument(name="count", type="integer")]
    got = grounded(schema_of(*stock), stock, said_values("Order 3 apples", []))
    assert "apples" in got["properties"]["item"]["enum"]


def arg(name: str, type: str = "string", description: str = "", required: bool = True) -> ToolArgument:
    return ToolArgument(name=name, type=type, description=description, required=required)


def test_an_amount_said_in_another_currency_than_its_argument_takes_is_none_of_its():
    # "How much is 40 euros in dollars?" gave a converter of "How many US dollars" the amount 40,
    # and the answer converted 40 dollars.
    amount = arg("amount", "number", "How many US dollars")
    assert argument_currency(amount) == "USD"
    assert argument_currency(arg("amount_eur", "number")) == "EUR"
    assert argument_currency(arg("price", "number", "How many Canadian dollars")) == "CAD"
    assert argument_currency(arg("amount", "number", "In any currency, e.g. USD or EUR")) is None
    assert argument_currency(arg("count", "integer", "How many people")) is None
    assert argument_currency(arg("weight", "number", "The weight in pounds")) is None   # a mass
    assert money_said("What are 100 US dollars worth in British pounds?") == {100.0: {"USD"}}
    assert money_said("Exchange 15 American bucks, or €20, or EUR 30") == {15.0: {"USD"}, 20.0: {"EUR"}, 30.0: {"EUR"}}
    assert money_said("how many euros for 40 quid") == {40.0: {"GBP"}}   # British slang
    assert money_said("How much is 50 in yen?") == {}            # the currency converted into is no amount's
    assert money_said("What is EUR 40 in dollars?") == {40.0: {"EUR"}} and money_said("Try xEUR 40") == {}
    assert money_said("Convert 50 Fijian dollars to yen") == {}  # an adjective not known: not judged
    for question, amount_given, wrong in [("How much is 40 euros in dollars?", 40, ["amount"]),
                                          ("Convert €50 to yen", 50, ["amount"]),
                                          ("How much is 50 dollars in yen?", 50, []),
                                          ("Convert 20 USD to EUR", 20, []),
                                          ("Exchange 15 American bucks for British pounds", 15, []),
                                          ("How much is 50 in yen?", 50, []),
                                          ("Convert 50 Fijian dollars to yen", 50, [])]:
        assert other_currency({"amount": amount_given}, [amount], [question]) == wrong, question
    # A model's integer past any float is judged elsewhere (the check asks back for an unsaid number).
    assert other_currency({"amount": 10 ** 400}, [amount], ["How much is 40 euros in dollars?"]) == []
    # An argument that names no currency takes any.
    assert other_currency({"total": 40}, [arg("total", "number", "The bill")], ["Split 40 euros three ways"]) == []
    # The argument check itself judges it, and the tool results count as said too.
    assert unsaid_arguments({"amount": 40}, [amount], ["How much is 40 euros in dollars?"]) == ["amount"]
    assert unsaid_arguments({"amount": 40}, [amount], ["Convert it to yen", "The fare is 40 dollars"]) == []


def test_an_optional_amount_said_in_another_currency_is_left_out_not_asked_back_for():
    from trustgraph.agent.react.grounding import optional_guesses

    # A transfer's optional tip "in US dollars": "Send 200 euros to Ana, with a 5 euro tip" has no
    # tip in dollars; the tool does without it rather than the dialog asking back.
    arguments = [arg("amount", "number", "How much"), arg("name", "string", "Who to pay"),
                 arg("tip_usd", "number", "A tip in US dollars", required=False)]
    question = "Send 200 euros to Ana, with a 5 euro tip"
    assert optional_guesses({"amount": 200, "name": "Ana", "tip_usd": 5}, arguments, [question]) == ["tip_usd"]
    assert optional_guesses({"amount": 200, "name": "Ana", "tip_usd": 5}, arguments,
                            ["Send 200 euros to Ana, with a 5 dollar tip"]) == []



def test_a_place_is_said_as_a_name_or_after_in_at_from():
    # "Why is the sky blue?" had called sunrise-sunset for the city "blue" (the 135M model's pick
    # among every span): a place is written as a name, or said after "in", "at", "near", "from".
    city = arg("city", "string", "The city")
    said_as = {"Paris": "What's the weather in Paris?", "paris": "weather in paris please", "北京": "北京的天气怎么样？",
               "tokyo": "tokyo weather now",
               "Buenos Aires": "Paris weather, then Buenos Aires", "New York": "If it's noon in New York, what hour is it?"}
    for value, question in said_as.items():
        assert unsaid_arguments({"city": value}, [city], [question]) == [], (value, question)
    not_places = {"blue": "Why is the sky blue?", "Why": "Why is it so cold?",
                  "Portuguese": "Write me a poem about Lisbon in Portuguese", "euros": "What's £30 in euros?",
                  "Friday": "Book it for Friday", "6pm": "Get me a taxi at 6pm",
                  "call": "I'm in Chicago and need to call a colleague in Berlin",
                  "Moscow ahead": "Is Moscow ahead of Dubai?", "Reserve": "Reserve a table in Rome",
                  # A quoted word is spoken of, in a text typed without capitals too.
                  "ubiquitous": 'what\'s the meaning of "ubiquitous"?', "Oslo": "How do you spell 'Oslo'?",
                  # Typed without capitals, a place starts or ends the request, or follows "in"...
                  "meaning": 'what\'s the meaning of "ubiquitous"?', "weather": "what's the weather like today",
                  # ... and not every word after "in" is a place.
                  "characters": "What is the length of the name 'Schwarzenegger' in characters?"}
    for value, question in not_places.items():
        assert unsaid_arguments({"city": value}, [city], [question]) == ["city"], (value, question)
    # A destination said after "to the" (not after a bare "to": "need to call"), and a place an
    # earlier tool result names.
    destination = arg("destination", "string", "Where to go")
    assert unsaid_arguments({"destination": "airport"}, [destination], ["I need a cab to the airport at 5am"]) == []
    # Quoted after a place's lead, it is a place.
    assert unsaid_arguments({"city": "paris"}, [city], ["what's the weather in 'paris'?"]) == []
    assert unsaid_arguments({"city": "Helsinki"}, [city], ["And the sunset there?",
                                                           "The local time in Helsinki is 10:00"]) == []
    # An argument that is no place, or a place's kind of something else, is not judged so.
    assert unsaid_arguments({"topic": "blue"}, [arg("topic")], ["Why is the sky blue?"]) == []
    assert unsaid_arguments({"to": "yen"}, [arg("to", "string", "The currency to convert to, e.g. a place's")],
                            ["How much is 50 dollars in yen?"]) == []


def test_a_place_argument_is_offered_the_places_said_and_none_is_left_to_the_model():
    city = arg("city", "string", "The city")
    got = grounded(schema_of(city), [city], said_values("Should I grab a jacket before heading outside in Vienna?", []))
    assert got["properties"]["city"]["enum"] == ["Vienna"]
    pair = [arg("city", "string", "The city to compare"), arg("other_city", "string", "The city to compare it with")]
    got = grounded(schema_of(*pair), pair,
                   said_values("I'm in Chicago and need to call a colleague in Berlin; how many hours apart are we?", []))
    assert got["properties"]["city"]["enum"] == ["Chicago", "Berlin"] == got["properties"]["other_city"]["enum"]
    # No place said: the argument is the model's, and the check asks back for what it makes up.
    got = grounded(schema_of(city), [city], said_values("Why is the sky blue?", []))
    assert "enum" not in got["properties"]["city"]
    # A place the tool's own words started a run with is offered too ("Weather Paris": "Paris").
    got = grounded(schema_of(city), [city], said_values("Weather Paris tomorrow?", []),
                   content_words("weather Current weather in a city"))
    assert got["properties"]["city"]["enum"] == ["Paris"]


def test_a_question_of_filler_words_only_is_no_value_but_one_run_of_words_is():
    # "thanks, that's all for now" had phoned a contact of that name: offered whole, as a question
    # of one run of words is ("Paris" to the weather).
    name = arg("name", "string", "Who to call", required=False)
    got = grounded(schema_of(name), [name], said_values("thanks, that's all for now", []))
    assert "enum" not in got["properties"]["name"]
    got = grounded(schema_of(name), [name], said_values("Tom", []))
    assert got["properties"]["name"]["enum"] == ["Tom"]
    query = arg("query", "string", "What to search the web for")
    got = grounded(schema_of(query), [query], said_values("thanks, that's all for now", []))
    assert got["properties"]["query"]["enum"] == ["thanks, that's all for now"]


def test_a_declared_word_nobody_said_is_a_guess_but_a_code_or_a_unit_is_not_judged():
    # The 135M model ordered a "large" pizza for "Reserve a spot for 4 at Luigi's this Friday at
    # 8pm" and turned the lights "on" for "Explain how a rainbow forms".
    size = ToolArgument(name="size", description="The size", enum=("small", "medium", "large"))
    state = ToolArgument(name="state", description="On or off", enum=("on", "off"))
    assert unsaid_arguments({"size": "large"}, [size], ["Reserve a spot for 4 at Luigi's this Friday at 8pm"]) == ["size"]
    assert unsaid_arguments({"size": "large"}, [size], ["Get me two large pepperoni pizzas delivered"]) == []
    assert unsaid_arguments({"state": "on"}, [state], ["Explain how a rainbow forms"]) == ["state"]
    assert unsaid_arguments({"state": "off"}, [state], ["Switch off the kitchen lights"]) == []
    # Words written capitalised are words too: "what homework have I got?" had listed the
    # homework of the subject `science`, and "What's the capital of Australia?" had called it.
    subject = ToolArgument(name="subject", description="Only homework for this school subject", required=False,
                           enum=("maths", "English", "science", "history", "French"))
    assert unsaid_arguments({"subject": "science"}, [subject], ["what homework have I got?"]) == ["subject"]
    assert unsaid_arguments({"subject": "English"}, [subject], ["What's the capital of Australia?"]) == ["subject"]
    assert unsaid_arguments({"subject": "English"}, [subject], ["any english homework due?"]) == []
    assert unsaid_arguments({"subject": "maths"}, [subject], ["any math homework due by Thursday?"]) == []
    # Codes, units, scales and currencies are the model's to translate to ("°F" is F, "km" kilometres).
    for name, values, value, question in [("scale", ("C", "F", "K"), "F", "My thermometer reads 101 °F"),
                                          ("to_unit", ("km", "mi"), "km", "How far is 5 miles in kilometres?"),
                                          ("temp", ("celsius", "fahrenheit"), "fahrenheit", "It is 101 °F"),
                                          ("to", ("usd", "eur"), "usd", "How much is 40 euros in dollars?"),
                                          ("kind", ("metric", "imperial"), "metric", "Which units, kg or lb?")]:
        declared = ToolArgument(name=name, description="The unit" if name == "kind" else "", enum=values)
        assert unsaid_arguments({name: value}, [declared], [question]) == [], (name, value)


def test_one_of_what_a_count_counts_is_said_with_its_article():
    # "I'm starving, get me a large pepperoni pizza" had asked back for the quantity (How many pizzas).
    quantity = ToolArgument(name="quantity", type="integer", description="How many pizzas")
    size = ToolArgument(name="size", description="The size", enum=("small", "medium", "large"))
    question = "I'm starving, get me a large pepperoni pizza"
    got = grounded(schema_of(quantity, size), [quantity, size], said_values(question, []))["properties"]
    assert got["quantity"]["enum"] == [1]
    assert unsaid_arguments({"quantity": 1, "size": "large"}, [quantity, size], [question]) == []
    # Said beside another number, one comes first ("a pizza for 4 people": greedy decoding takes the first).
    got = grounded(schema_of(quantity), [quantity], said_values("order a pizza for 4 people", []))["properties"]
    assert got["quantity"]["enum"][0] == 1
    # Not said so: a number of the thing, no article, or an article parted from it by a number or a
    # preposition ("a timer for fifteen minutes" is no one minute).
    assert unsaid_arguments({"quantity": 1}, [quantity], ["Order 2 pizzas"]) == ["quantity"]
    assert unsaid_arguments({"quantity": 1}, [quantity], ["Order pizza"]) == ["quantity"]
    minutes = ToolArgument(name="duration_minutes", type="number", description="How many minutes")
    assert unsaid_arguments({"duration_minutes": 1}, [minutes], ["Set a timer for fifteen minutes"]) == \
        ["duration_minutes"]
    assert "enum" not in grounded(schema_of(minutes), [minutes],
                                  said_values("Log a workout for the record", []))["properties"]["duration_minutes"]


def test_the_verb_after_a_modal_and_its_subject_is_no_value():
    # "What should I cook tonight?" had searched recipes for the ingredient "cook".
    assert said_values("What should I cook tonight?", []).texts == []
    assert said_values("What can I cook with chicken and rice?", []).texts == ["chicken", "rice"]
    assert "tip" not in said_values("How much should I tip on $80 at 15%?", []).texts
    assert said_values("Did you see Dune?", []).texts == ["Dune"]
    # A word after a modal that is no subject's stays ("Can Paris ..."), as does a name after "I".
    assert "Paris" in said_values("Does Paris have a metro?", []).texts
    # So the verb after "like to", "want to", "need to": "I'd like to hear something by Nina Simone"
    # had offered the song "hear".
    assert said_values("I'd like to hear something by Nina Simone", []).texts == ["Nina Simone"]
    assert said_values("I want to watch Dune in Leeds", []).texts == ["Dune", "Leeds"]
    assert "Paris" in said_values("I'd like to Paris and back", []).texts
    # Nor what something looks, seems or feels like: "The basil looks thirsty, give it some water"
    # had watered the plant "thirsty".
    assert said_values("The basil looks thirsty, give it some water", []).texts == ["basil", "water"]
    assert "Happy" in said_values("Play Happy, it sounds great", []).texts
    assert "Feels" in said_values("Play Feels by Calvin Harris", []).texts   # capitalised: a title


def test_a_number_after_a_minus_is_negative_and_a_subtraction_or_a_code_is_not():
    # "Convert minus 10 celsius to fahrenheit" converted 10 °C: the sign was never read.
    value = ToolArgument(name="value", type="number")
    for question, number in [("Convert minus 10 celsius to fahrenheit", -10), ("What is -40 F in C?", -40),
                             ("It is -5.5 degrees outside", -5.5), ("What's 3 x -2?", -2)]:
        assert number in said_values(question, []).numbers, question
        assert unsaid_arguments({"value": number}, [value], [question]) == [], question
        assert unsaid_arguments({"value": abs(number)}, [value], [question]) == ["value"], question
        got = grounded(schema_of(value), [value], said_values(question, []))["properties"]["value"]["enum"]
        assert number in got and abs(number) not in got, question
    # A subtraction, a range, a phone number, a date: no number is negative.
    for question in ["What is 10 - 3?", "ten minus three", "Text 555-0142 now", "on 2027-05-03", "10-20 people"]:
        assert all(n >= 0 for n in said_values(question, []).numbers), question


def test_a_message_told_to_someone_else_is_what_follows_them():
    # "Please write to anna@example.org and tell her the report is done" mailed "report".
    email = [ToolArgument(name="to", description="The recipient's email address"),
             ToolArgument(name="message", description="What the email says")]
    got = grounded(schema_of(*email), email,
                   said_values("Please write to anna@example.org and tell her the report is done", []))["properties"]
    assert got["message"]["enum"] == ["the report is done"] and got["to"]["enum"] == ["anna@example.org"]
    assert said_values("Tell me a joke about cats", []).apart == frozenset()


def test_where_something_is_said_is_the_place_arguments_value_only():
    # "Where can I watch Oppenheimer in Chicago tonight?" had shown the film "Chicago".
    showtimes = [ToolArgument(name="movie", description="The film's title"),
                 ToolArgument(name="city", description="Where", required=False)]
    got = grounded(optional_schema(*showtimes), showtimes,
                   said_values("Where can I watch Oppenheimer in Chicago tonight?", []))["properties"]
    assert got["movie"]["enum"] == ["Oppenheimer"] and got["city"]["enum"] == ["Chicago"]
    # Said otherwise, or with no place argument beside it, it stays a value ("Showtimes for Chicago").
    got = grounded(optional_schema(*showtimes), showtimes, said_values("Showtimes for Chicago", []))["properties"]
    assert "Chicago" in got["movie"]["enum"]
    title = [ToolArgument(name="title", description="The film's title")]
    got = grounded(schema_of(*title), title, said_values("Is Chicago showing in Boston?", []))["properties"]
    assert "Boston" in got["title"]["enum"]
    # Nor are the letters of a code with digits ("is LH 400 delayed" had asked the local time in "LH").
    city = ToolArgument(name="city", description="The city")
    assert unsaid_arguments({"city": "LH"}, [city], ["is LH 400 delayed"]) == ["city"]
    assert unsaid_arguments({"city": "BA"}, [city], ["Is BA283 on time in London?"]) == ["city"]
    assert unsaid_arguments({"city": "LA"}, [city], ["time in LA rn?"]) == []
    assert unsaid_arguments({"city": "400"}, [city], ["is LH 400 delayed"]) == ["city"]   # nor a number
    # A number in words is no place ("in three meters").
    assert unsaid_arguments({"city": "three"}, [ToolArgument(name="city", description="The city")],
                            ["How many feet are in three meters?"]) == ["city"]


def test_a_question_typed_in_title_case_names_nothing_by_its_capitals():
    # "Switch Off The Kitchen Lights" had switched the lights of the room "Switch Off The Kitchen
    # Lights": every word capitalised, capitals tell no name from a word.
    room = offered("Switch Off The Kitchen Lights", "lights Turn the lights in a room on or off")
    assert "Kitchen" in room and "Switch Off The Kitchen Lights" not in room
    assert "Is The Capital Of France" not in offered("What Is The Capital Of France?")
    assert "Turn On The Living Room Lights" not in offered("Turn On The Living Room Lights")
    # Its places are read as in a question typed without capitals: after a place's lead, or at its
    # start or its end.
    city = arg("city", "string", "The city")
    assert unsaid_arguments({"city": "Paris"}, [city], ["Weather In Paris Tomorrow"]) == []
    assert unsaid_arguments({"city": "Tokyo"}, [city], ["What Time Is It In Tokyo?"]) == []
    assert unsaid_arguments({"city": "Capital"}, [city], ["What Is The Capital Of France?"]) == ["city"]
    assert unsaid_arguments({"city": "Kitchen"}, [city], ["Switch Off The Kitchen Lights"]) == ["city"]
    # Small words written small, the capitals name as ever; so in a question in capitals only.
    assert "Olly Murs" in offered("Play Up by Olly Murs") and "Murs" not in offered("Play Up by Olly Murs")
    assert "Kind of Blue" in offered("Put On Kind of Blue")
    assert unsaid_arguments({"city": "Kitchen"}, [city], ["SWITCH OFF THE KITCHEN LIGHTS"]) == ["city"]


def test_who_made_a_work_is_said_after_by_and_is_the_makers_argument_only():
    # "Play Up by Olly Murs": both arguments had been offered both names; the 135M model played the
    # song "Olly Murs" by "Olly Murs", and the check asked back.
    music = [ToolArgument(name="song", description="The song's title"),
             ToolArgument(name="artist", description="Who performs it")]
    got = grounded(schema_of(*music), music, said_values("Play Up by Olly Murs", []))["properties"]
    assert got["song"]["enum"] == ["Up"] and got["artist"]["enum"] == ["Olly Murs"]
    got = grounded(schema_of(*music), music, said_values("Put on It's My Life by Bon Jovi", []))["properties"]
    assert got["song"]["enum"] == ["It's My Life"] and got["artist"]["enum"] == ["Bon Jovi"]
    got = grounded(schema_of(*music), music, said_values("play hello by the beatles", []))["properties"]
    assert got["artist"]["enum"] == ["beatles"] and got["song"]["enum"] == ["hello"]
    # A day's word capitalised inside a sentence is a title's.
    got = grounded(schema_of(*music), music, said_values("I want to hear Yesterday by the Beatles", []))
    assert "Yesterday" in got["properties"]["song"]["enum"] and got["properties"]["artist"]["enum"] == ["Beatles"]
    # With no maker's argument beside it, or nothing said after "by", a name stays every argument's.
    book = [ToolArgument(name="title", description="The book's title")]
    got = grounded(schema_of(*book), book, said_values("Find Dune by Frank Herbert", []))["properties"]
    assert "Frank Herbert" in got["title"]["enum"]
    got = grounded(schema_of(*music), music, said_values("Play Adele", []))["properties"]
    assert got["artist"]["enum"] == ["Adele"] == got["song"]["enum"]


def test_where_a_ride_starts_is_said_after_from_and_is_no_destination():
    # "Get me a cab from the Hilton to Heathrow at 5pm" had gone to the Hilton, its pickup left out.
    taxi = [ToolArgument(name="pickup", description="Where to be picked up", required=False),
            ToolArgument(name="destination", description="Where to go"),
            ToolArgument(name="time", description="When", required=False)]
    got = grounded(optional_schema(*taxi), taxi, said_values("Get me a cab from the Hilton to Heathrow at 5pm", []))
    assert got["properties"]["pickup"]["enum"] == ["Hilton"] and got["properties"]["destination"]["enum"] == ["Heathrow"]
    assert {"pickup", "destination"} <= set(got["required"])
    got = grounded(optional_schema(*taxi), taxi, said_values("taxi to the airport from Union Square", []))
    assert got["properties"]["pickup"]["enum"] == ["Union Square"]
    assert got["properties"]["destination"]["enum"] == ["airport"]
    # Nothing said after "from": the destination as before, no pickup.
    got = grounded(optional_schema(*taxi), taxi, said_values("I need a taxi to the airport at 6am", []))
    assert "pickup" not in got["properties"] and got["properties"]["destination"]["enum"] == ["airport"]
    # A tool with no argument for where from keeps a place said after "from" for its place.
    flight = [ToolArgument(name="city", description="The city")]
    got = grounded(schema_of(*flight), flight, said_values("How cold is it for my flight from Oslo?", []))
    assert got["properties"]["city"]["enum"] == ["Oslo"]


def test_a_code_in_capitals_is_the_value_of_an_argument_whose_example_is_one():
    # "What's Tesla trading at? Ticker TSLA" had priced the ticker "Tesla" ("Ticker TSLA" was one name).
    ticker = [ToolArgument(name="ticker", description="The stock ticker symbol, e.g. AAPL")]
    got = grounded(schema_of(*ticker), ticker, said_values("What's Tesla trading at? Ticker TSLA", []))
    assert got["properties"]["ticker"]["enum"] == ["TSLA"]
    got = grounded(schema_of(*ticker), ticker, said_values("How is Apple stock doing? (AAPL)", []))
    assert got["properties"]["ticker"]["enum"] == ["AAPL"]
    got = grounded(schema_of(*ticker), ticker, said_values("OK, what's TSLA at?", []))
    assert got["properties"]["ticker"]["enum"] == ["TSLA"]
    got = grounded(schema_of(*ticker), ticker, said_values("WHAT IS TSLA TRADING AT", []))
    assert "WHAT" not in got["properties"]["ticker"].get("enum", [])     # in capitals only: no codes told apart
    # No code said: the question's texts, as before; a currency's example is no such code.
    got = grounded(schema_of(*ticker), ticker, said_values("How is Apple stock doing?", []))
    assert "Apple" in got["properties"]["ticker"]["enum"]
    to = [ToolArgument(name="to", description="The currency to convert to, e.g. EUR")]
    got = grounded(schema_of(*to), to, said_values("How much is 50 USD in yen?", []))
    assert "yen" in got["properties"]["to"]["enum"]


def test_a_value_left_to_the_model_is_short_and_its_own_words_are_not():
    # "How are you today?" says no value: the 135M model wrote 300 characters of made-up text for
    # each of translate-text's arguments, which the check refuses anyway (90 s on a loaded machine).
    from trustgraph.agent.react.grounding import UNSAID_MAX_CHARS
    translate = [arg("text", "string", "The text to translate"), arg("language", "string", "The language")]
    got = grounded(schema_of(*translate), translate, said_values("How are you today?", []))["properties"]
    assert got["text"]["maxLength"] == got["language"]["maxLength"] == UNSAID_MAX_CHARS
    # A shorter limit the schema has stays; the model's own words (free text) are not limited here.
    code = arg("code", "string", "A code")
    schema = schema_of(code)
    schema["properties"]["code"]["maxLength"] = 5
    assert grounded(schema, [code], said_values("How are you today?", []))["properties"]["code"]["maxLength"] == 5
    note = ToolArgument(name="note", type="string", description="Anything to add", free_text=True)
    got = grounded(schema_of(note), [note], said_values("How are you today?", []))["properties"]
    assert "maxLength" not in got["note"]
    # Values said are the enum's, unlimited by it.
    got = grounded(schema_of(*translate), translate, said_values("Translate 'good morning' into Italian", []))
    assert "maxLength" not in got["properties"]["text"] and "good morning" in got["properties"]["text"]["enum"]


def test_an_iban_is_one_value_and_its_digits_are_no_numbers():
    # "Send 150 euros to account GB29 NWBK 6016 1331 9268 19" had paid the account "1331"; the
    # amount was offered the IBAN's groups of digits too.
    pay = [ToolArgument(name="amount", type="number", description="How much"),
           ToolArgument(name="account_number", type="string", description="The account to pay")]
    for question, iban in [("Send 150 euros to account GB29 NWBK 6016 1331 9268 19", "GB29 NWBK 6016 1331 9268 19"),
                           ("Pay 150 to DE44500105175407324931 today", "DE44500105175407324931")]:
        got = grounded(schema_of(*pay), pay, said_values(question, []))["properties"]
        assert got["amount"]["enum"] == [150] and got["account_number"]["enum"][0] == iban, got
        assert "150 euros" not in got["account_number"]["enum"]
    # So for a tool that also takes a day or a time (its numbers read again without them).
    table = [ToolArgument(name="total", type="integer", description="The sum"),
             ToolArgument(name="date", type="string", description="The day")]
    got = grounded(schema_of(*table), table, said_values("Send €250 to account DE44 5001 0517 5407 3249 31", []))
    assert got["properties"]["total"]["enum"] == [250]
    # An account number in digits: offered, not the run from the amount to it.
    got = grounded(schema_of(*pay), pay, said_values("Transfer 75 dollars to account 12345678 for rent", []),
                   own_words("transfer-money", "Send money to a bank account"))
    assert got["properties"]["account_number"]["enum"] == ["12345678"], got


def test_a_possessive_inside_a_capitalised_name_is_part_of_it():
    # "from King's Cross to Heathrow" had been picked up at "King" for "Cross".
    texts = said_values("I need a taxi from King's Cross to Heathrow Terminal 5", []).texts
    assert "King's Cross" in texts and "King" not in texts and "Cross" not in texts
    taxi = [ToolArgument(name="destination", description="Where to go")]
    got = grounded(schema_of(*taxi), taxi, said_values("I need a taxi from King's Cross to Heathrow Terminal 5", []))
    assert "Heathrow Terminal 5" in got["properties"]["destination"]["enum"]   # a number may end a name
    # An owner with what it owns after it, in small letters, stays apart.
    assert "Jane Doe" in said_values("What's Jane Doe's phone number?", []).texts


def test_a_time_of_day_said_in_words_is_one():
    # "Set an alarm for half past seven" had left the time to the model.
    alarm = [arg("time", "string", "When")]
    for question, time_said in [("Set an alarm for half past seven", "half past seven"),
                                ("wake me at quarter to 8", "quarter to 8"),
                                ("Remind me at seven o'clock to stretch", "seven o'clock"),
                                ("Alarm at 6 o'clock", "6 o'clock")]:
        got = grounded(schema_of(*alarm), alarm, said_values(question, []))["properties"]
        assert got["time"]["enum"] == [time_said], (question, got)


def test_a_count_takes_no_amount_of_money():
    # "Split the $120 dinner four ways": the people sharing it had been offered 120 first.
    split = [ToolArgument(name="total", type="number", description="The whole bill"),
             ToolArgument(name="people", type="integer", description="How many people share it")]
    got = grounded(schema_of(*split), split, said_values("Split the $120 dinner four ways", []))["properties"]
    assert got["people"]["enum"] == [4] and got["total"]["enum"][0] == 120
    got = grounded(schema_of(*split), split, said_values("Divide 90 euros among 6 friends", []))["properties"]
    assert got["people"]["enum"] == [6]
    # Only money said: the count is offered none (left to the model, and the check asks back): "hotel in
    # Berlin, 318 EUR" had asked the per diem of a 318-day trip.
    got = grounded(schema_of(*split), split, said_values("Split $40", []))["properties"]
    assert "enum" not in got["people"] and got["total"]["enum"] == [40]
    assert "people" in unsaid_arguments({"total": 40, "people": 40}, split, ["Split $40"])


def test_a_greeting_says_no_value():
    # "Good morning!" had asked sunrise-sunset for the sun in the city "Good".
    city = arg("city", "string", "The city")
    for question in ["Good morning!", "Hello there", "Good evening, how are you?", "Hey, good night"]:
        assert said_values(question, []).texts == [], question
        assert unsaid_arguments({"city": "Good"}, [city], [question]) == ["city"], question
    # Inside a sentence, capitalised, such words may name things still ("Play Good Vibrations").
    assert "Good Vibrations" in said_values("Play Good Vibrations by the Beach Boys", []).texts


def _offers(arguments, question):
    """What each argument of a tool of ``arguments`` is offered for ``question``: its enum, or None
    when it is left to the model, or "left out"."""
    got = grounded(optional_schema(*arguments), arguments, said_values(question, []))["properties"]
    return {a.name: got[a.name].get("enum") if a.name in got else "left out" for a in arguments}


def test_a_unit_written_right_after_its_number_is_read_with_it():
    # "Daily food for a 4kg cat?" asked back for the weight; "5.8l/100km" had offered 5.
    pet = [ToolArgument(name="species", type="string", description="dog, cat or rabbit"),
           ToolArgument(name="weight_kg", type="number", description="The pet's weight in kilograms")]
    assert _offers(pet, "Daily food for a 4kg cat?")["weight_kg"] == [4]
    trip = [ToolArgument(name="distance_km", type="number", description="How far"),
            ToolArgument(name="consumption_l_per_100km", type="number", description="Litres per 100 km")]
    got = _offers(trip, "Fuel for 350km if my car does 5.8l/100km?")
    assert got["consumption_l_per_100km"] == [5.8] and 350 in got["distance_km"] and 5 not in got["distance_km"]
    assert said_values("my 5G phone costs $5m, from the 3rd at 5pm", []).numbers == []   # no units
    assert said_values("version 1.2.3", []).numbers == [] and said_values("It is 12.5.", []).numbers == [12.5]


def test_a_time_of_days_numbers_are_no_other_numbers():
    # "Please record that I took 200 mg of ibuprofen at 07:45" had offered a patient's age of 200, 7 or 45.
    dosage = [ToolArgument(name="drug", type="string", description="The medicine"),
              ToolArgument(name="age_years", type="integer", description="The patient's age in years", required=False),
              ToolArgument(name="weight_kg", type="number", description="Body weight in kilograms", required=False)]
    got = _offers(dosage, "Please record that I took 200 mg of ibuprofen at 07:45.")
    assert got["age_years"] == "left out" and got["drug"] == ["ibuprofen"]
    assert _offers(dosage, "The dose for a 7 year old")["age_years"] == [7]
    alarm = [ToolArgument(name="hour", type="integer", description="The hour"),
             ToolArgument(name="minute", type="integer", description="The minutes past it")]
    assert _offers(alarm, "Wake me at 07:45")["hour"] == [7, 45]           # a time's parts to a clock's
    assert _offers(dosage, "200 mg for a 45 year old at 07:45")["age_years"] == [45]   # said again


def test_a_dates_numbers_are_no_other_numbers():
    # Probe V: "what was the score when Lakeview played Fernside on 2026-03-08" listed fixtures
    # 2026 weeks ahead (offered 2026, 3 and 8); "5 nights from 14 August" had offered 14 nights too.
    fixtures = [ToolArgument(name="team", type="string", description="Only this club's games", required=False),
                ToolArgument(name="weeks_ahead", type="integer", description="How many weeks ahead to list (1 to 8)",
                             required=False)]
    assert _offers(fixtures, "what was the score when Lakeview played Fernside on 2026-03-08")["weeks_ahead"] \
        == "left out"
    assert _offers(fixtures, "Fernside games in the next 3 weeks from 2026-03-08")["weeks_ahead"] == [3]
    stay = [ToolArgument(name="arrival_date", type="string", description="First night, e.g. 2026-07-17"),
            ToolArgument(name="nights", type="integer", description="How many nights")]
    got = _offers(stay, "grab P-14 for us, 5 nights from 14 August")
    assert got["nights"] == [5] and "14 August" in got["arrival_date"]
    assert _offers(stay, "4 nights from 12/05")["nights"] == [4]
    # An argument that takes a date's part is offered it; a number said again outside a date is offered.
    birthday = [ToolArgument(name="year", type="integer", description="The year"),
                ToolArgument(name="day", type="integer", description="Day of the month", required=False)]
    assert _offers(birthday, "what weekday was 1969-07-20")["year"] == [1969, 7, 20]
    assert _offers(stay, "8 nights from 2026-08-08")["nights"] == [8]
    # And the argument check refuses one, as written by a model that read no schema.
    question = ["what was the score when Lakeview played Fernside on 2026-03-08"]
    assert unsaid_arguments({"weeks_ahead": 2026}, fixtures, question) == ["weeks_ahead"]
    assert unsaid_arguments({"year": 1969}, birthday, ["what weekday was 1969-07-20"]) == []


@pytest.mark.parametrize("question, host, ip", [
    ("ping 8.8.8.8 5 times", ["8.8.8.8"], ["8.8.8.8"]),
    ("Can you check whether github.com is reachable?", ["github.com"], "left out"),
    ("where is 2001:db8::1", ["2001:db8::1"], ["2001:db8::1"]),
    ("What country does my own IP address show up in?", None, "left out"),   # "show" had been the IP
    ("What does DNS stand for?", None, "left out"),                          # "stand" had been the domain
])
def test_a_host_or_an_ip_address_is_one_said_as_such(question, host, ip):
    tool = [ToolArgument(name="domain", type="string", description="The domain name, e.g. example.com"),
            ToolArgument(name="ip", type="string", description="The IP address, e.g. 203.0.113.7", required=False)]
    got = _offers(tool, question)
    assert (got["domain"], got["ip"]) == (host, ip)
    assert address_kind(ToolArgument(name="topic", type="string", description="The domain of knowledge")) is None
    pinged = _offers([ToolArgument(name="host", type="string", description="Host name or IP address"),
                      ToolArgument(name="count", type="integer", description="How many pings", required=False)],
                     "ping 10.0.0.1 3 times")
    assert pinged == {"host": ["10.0.0.1"], "count": [3]}                  # no number of the address


@pytest.mark.parametrize("question, offered", [
    ("Please record that I took ibuprofen", ["ibuprofen"]),            # "record", "took": verbs
    # "moved", "past", and the period's "month" (another argument's): the request whole, said nothing else.
    ("how has it moved over the past month?", ["how has it moved over the past month"]),
    ("Is the stock of Apple up over the last week", ["stock", "Apple", "Apple up", "up"]),
])
def test_verbs_after_who_does_them_and_the_words_that_place_a_period_are_no_values(question, offered):
    tool = [ToolArgument(name="name", type="string", description="The name"),
            ToolArgument(name="period", type="string", description="How far back", enum=["week", "month"],
                         required=False)]
    assert sorted(_offers(tool, question)["name"]) == sorted(offered)


def test_the_verb_do_in_its_other_forms_is_no_value():
    # "how has microsft stock done over the last year" had priced the ticker "done".
    ticker = [ToolArgument(name="ticker", type="string", description="The stock's ticker or company name")]
    assert "done" not in _offers(ticker, "how has microsft stock done over the last year")["ticker"]
    assert "doing" not in _offers(ticker, "How is Tesla doing today?")["ticker"]
    # A declared value is still said: a task's status "done".
    status = [ToolArgument(name="task", type="integer", description="The task's number"),
              ToolArgument(name="status", type="string", description="The new status", enum=["todo", "done"])]
    assert _offers(status, "Mark task 12 as done")["status"] == ["done"]


@pytest.mark.parametrize("question, first", [
    ("Is there an ebook version of Project Hail Mary I could borrow?", "Project Hail Mary"),
    ("Do you have The Lord of the Rings?", "The Lord of the Rings"),
    ("Who wrote Pride and Prejudice?", "Pride and Prejudice"),
    ("I want to read something by Ursula K. Le Guin", "Ursula K. Le Guin"),
    ("Have you got any books about beekeeping?", "beekeeping"),          # no name: what it looks for
])
def test_a_query_that_looks_up_titles_takes_the_names_said_first(question, first):
    # The catalog had been searched for the whole question, and the format said in it was lost.
    catalog = [ToolArgument(name="query", type="string", description="What to look for: a title, an author or a subject"),
               ToolArgument(name="format", type="string", enum=["book", "ebook"], required=False)]
    got = _offers(catalog, question)
    assert got["query"][0] == first and question.rstrip("?") not in got["query"]   # the model wrote it, offered
    web = [ToolArgument(name="query", type="string", description="What to search the web for")]
    assert _offers(web, "Who wrote Pride and Prejudice?")["query"] == ["Who wrote Pride and Prejudice"]


def test_a_line_whose_examples_are_numbers_and_codes_takes_a_value_with_digits_and_a_stop_is_a_place():
    alerts = [ToolArgument(name="line", type="string", description="Only this line, e.g. 73 or N8", required=False),
              ToolArgument(name="mode", type="string", enum=["bus", "tram", "train"], required=False)]
    # "morning" had been offered; with nothing of its kind said, and the mode said (the request's
    # value), the line is left out.
    assert _offers(alerts, "Are the trains running on time this morning?")["line"] == "left out"
    assert _offers(alerts, "Are there delays this morning?")["line"] is None   # nothing said: the model's
    assert _offers(alerts, "any delays on line 42?")["line"] == ["42"]
    departures = [ToolArgument(name="stop", type="string", description="The stop or station, e.g. Market Square")]
    assert _offers(departures, "When does the next 42 bus leave Park Lane")["stop"] == ["Park Lane"]   # had been "42 bus"


@pytest.mark.parametrize("question, activity", [
    ("I went for a 30 minute run this morning, can you log it?", ["running"]),   # had offered all three
    ("Log 40 minutes of swimming", ["swimming"]),
    ("I cycled 20 km", ["cycling"]),
])
def test_a_declared_value_is_said_in_any_regular_form_a_doubled_consonant_too(question, activity):
    workout = [ToolArgument(name="activity", type="string", enum=["running", "swimming", "cycling"]),
               ToolArgument(name="duration_minutes", type="integer", description="How long", required=False)]
    assert _offers(workout, question)["activity"] == activity


def test_an_activity_said_after_who_did_it_is_a_value():
    # "I cycled for 40 minutes, how many calories did that burn?" had burned the exercise "burn" once
    # verbs after "I" were no values; only the common ones are not ("I took").
    burned = [ToolArgument(name="exercise", type="string", description="The exercise"),
              ToolArgument(name="duration_minutes", type="number", description="How long")]
    assert "cycled" in _offers(burned, "I cycled for 40 minutes, how many calories did that burn?")["exercise"]
    assert "took" not in _offers(burned, "I took a walk for 40 minutes")["exercise"]


def test_a_list_of_declared_values_is_those_said_each_once_or_left_out():
    # "how does my week look overall?" had listed `steps` thirty times.
    summary = [ToolArgument(name="metrics", type="array", required=False, description="Which figures",
                            items={"type": "string", "enum": ["steps", "workouts", "calories"]})]
    got = grounded(optional_schema(*summary), summary, said_values("How many steps and calories this week?", []))
    metrics = got["properties"]["metrics"]
    assert (metrics["items"]["enum"], metrics["maxItems"], metrics["uniqueItems"]) == (["steps", "calories"], 2, True)
    got = grounded(optional_schema(*summary), summary, said_values("How does my week look overall?", []))
    assert "metrics" not in got["properties"]


@pytest.mark.parametrize("question, start, end", [
    ("Tom from Finance says the freeze starts on 1 September, so book my leave from 18 August to 22 August",
     ["18 August"], ["22 August"]),
    ("Please book me off from the 2nd of June until 06/06/2026.", ["2nd of June"], ["06/06/2026"]),
    ("Book leave on 3 March", ["3 March"], ["3 March"]),            # no range said: either
])
def test_a_ranges_start_is_said_after_from_and_its_end_after_to(question, start, end):
    leave = [ToolArgument(name="start_date", type="string", description="First day"),
             ToolArgument(name="end_date", type="string", description="Last day")]
    got = _offers(leave, question)
    assert (got["start_date"], got["end_date"]) == (start, end)


def test_a_tool_of_no_route_is_asked_of_where_one_goes_not_where_one_came_from():
    # "My sister moved from Dublin to Toronto ... how many people actually live in Toronto?" had
    # counted Dublin's; a place said after "from" only is still offered ("weather from Rome?").
    population = [ToolArgument(name="city", type="string", description="The city")]
    question = "My sister moved from Dublin to Toronto in 2019, how many people actually live in Toronto?"
    assert _offers(population, question)["city"] == ["Toronto"]
    assert _offers(population, "What's the news from Rome?")["city"] == ["Rome"]


def test_an_account_money_leaves_and_one_it_goes_into_are_said_after_their_words():
    # "shift £120 out of savings into checking" had moved the money from checking to savings.
    accounts = ["checking", "savings", "credit card"]
    transfer = [ToolArgument(name="amount", type="number", description="How much money to move"),
                ToolArgument(name="from_account", type="string", description="The account it comes out of",
                             enum=accounts),
                ToolArgument(name="to_account", type="string", description="The account it goes into", enum=accounts)]
    for question, source, target in [
            ("Rent came out early, can you shift £120 out of savings into checking?", "savings", "checking"),
            ("Please move 350 from my checking account to savings", "checking", "savings"),
            ("Move 50 to my credit card from savings", "savings", "credit card")]:
        got = _offers(transfer, question)
        assert (got["from_account"], got["to_account"]) == ([source], [target]), question


def test_a_name_said_after_called_is_the_name_a_required_label_takes():
    # "Make a playlist called Summer Drive with Dancing Queen, ..." had named the playlist "Dancing Queen".
    playlist = [ToolArgument(name="name", type="string", description="The playlist's name"),
                ToolArgument(name="songs", type="array", description="The songs, by title", items={"type": "string"})]
    got = _offers(playlist, "Make a playlist called Summer Drive with Dancing Queen, Take On Me and Mr. Brightside")
    assert got["name"] == ["Summer Drive"]
    # Not a label: what is said after "called" is no reason to narrow another text.
    artist = [ToolArgument(name="artist", type="string", description="Who performs it")]
    assert "Beatles" in _offers(artist, "Play the song called Yesterday by the Beatles")["artist"]


def test_a_tool_of_optional_arguments_requires_those_the_question_plainly_gives():
    # "put on some jazz on shuffle" had played no genre (the 135M model left it out) and "Play some
    # reggae" the song "Play some reggae": the declared genre said carries the request.
    music = [ToolArgument(name="song", type="string", description="The song's title", required=False),
             ToolArgument(name="artist", type="string", description="Who performs it", required=False),
             ToolArgument(name="genre", type="string", description="A genre", enum=["jazz", "reggae", "pop"],
                          required=False),
             ToolArgument(name="shuffle", type="boolean", description="Shuffle the songs", required=False)]
    got = grounded(optional_schema(*music), music, said_values("put on some jazz on shuffle", []))
    assert got["required"] == ["genre"] and got["properties"]["genre"]["enum"] == ["jazz"]
    assert "song" not in got["properties"] and "artist" not in got["properties"]
    got = grounded(optional_schema(*music), music, said_values("Play some reggae", []))
    assert got["required"] == ["genre"] and set(got["properties"]) == {"genre"}
    # Nothing plainly given: left as it is (an MCP tool's schema often lists none as required).
    got = grounded(optional_schema(*music), music, said_values("Play Bohemian Rhapsody by Queen", []))
    assert "required" not in got or got["required"] == []
    assert got["properties"]["song"]["enum"] == ["Bohemian Rhapsody"]


def test_a_value_is_not_its_own_arguments_name_and_a_number_with_its_unit_is_plainly_given():
    # "Which clients are more than 30 days late paying me?" had listed the invoices of the client "clients".
    overdue = [ToolArgument(name="client", type="string", description="Only this client's invoices",
                            required=False),
               ToolArgument(name="min_days_overdue", type="integer", description="Late by at least this many days",
                            required=False)]
    got = grounded(optional_schema(*overdue), overdue, said_values("Which clients are more than 30 days late paying me?",
                                                                     []))
    assert got["required"] == ["min_days_overdue"] and got["properties"]["min_days_overdue"]["enum"] == [30]
    assert "client" not in got["properties"]
    client = [ToolArgument(name="client", type="string", description="The client")]
    assert "clients" not in _offers(client, "Show the clients of Globex")["client"]
    assert _offers(client, "Invoices of the client 'clients'")["client"] == ["clients"]   # quoted: a value
    # A number said with the unit its argument's name says is required even where it is optional.
    meeting = [ToolArgument(name="title", type="string", description="What the meeting is called"),
               ToolArgument(name="duration_minutes", type="integer", description="How long", required=False)]
    got = grounded(optional_schema(*meeting), meeting, said_values("Schedule a catch-up for 20 minutes", []))
    assert "duration_minutes" in got["required"] and got["properties"]["duration_minutes"]["enum"] == [20]
    got = grounded(optional_schema(*meeting), meeting, said_values("Schedule a catch-up in room 20", []))
    assert "duration_minutes" not in got.get("required", [])


def test_a_name_said_stays_offered_in_a_tool_of_optional_arguments_one_of_which_is_plainly_given():
    # "Did I pay Netflix anything in the last 60 days?": the days given, the merchant Netflix stays.
    history = [ToolArgument(name="days", type="integer", description="How many days back", required=False),
               ToolArgument(name="merchant", type="string", description="Only payments to this shop",
                            required=False)]
    got = grounded(optional_schema(*history), history, said_values("Did I pay Netflix anything in the last 60 days?",
                                                                     []))
    assert got["required"] == ["days"] and got["properties"]["merchant"]["enum"] == ["Netflix"]


def test_a_verb_after_how_to_is_no_value():
    # "... I have no idea how to keep it alive - how often should it get watered?" had asked the care
    # of the plant "keep".
    plant = [ToolArgument(name="plant", type="string", description="The kind of plant")]
    offered = _offers(plant, "Someone gave me an orchid and I have no idea how to keep it alive")["plant"]
    assert "keep" not in offered and "orchid" in offered
    assert "water" not in _offers(plant, "When to water a fern?")["plant"]


def test_what_which_or_what_asks_for_is_no_value():
    # "which pills am I meant to take today?" had listed the reminders of the medication "pills".
    meds = [ToolArgument(name="medication", type="string", description="Only reminders for this medicine",
                         required=False)]
    assert _offers(meds, "which pills am I meant to take today?")["medication"] in ("left out", None)
    required = [ToolArgument(name="medication", type="string", description="The medicine")]
    # (A required one is offered the whole question, as before, and the check reads what is written.)
    assert _offers(required, "which pills am I meant to take today?")["medication"] == [
        "which pills am I meant to take today"]
    assert _offers(meds, "what time do I take my metformin?")["medication"] == ["metformin"]
    podcast = [ToolArgument(name="podcast", type="string", description="The podcast's name")]
    offered = _offers(podcast, "which episodes of Serial have come out lately?")["podcast"]
    assert "Serial" in offered and "episodes" not in offered
    # What the asked-for thing is said to be stays a value: the cuisine of "What Thai restaurants ...".
    food = [ToolArgument(name="cuisine", type="string", description="The kind of food")]
    assert "Thai" in _offers(food, "What Thai restaurants are open near me?")["cuisine"]


def test_a_number_said_in_another_unit_than_its_arguments_name_says_is_not_its_value():
    # "I need a 2-hour block ..." had looked for 2 minutes: the agent copies numbers, never converts.
    slot = [ToolArgument(name="date", type="string", description="The day"),
            ToolArgument(name="duration_minutes", type="integer", description="How long, in minutes")]
    assert _offers(slot, "I need a 2-hour block on 2026-06-09")["duration_minutes"] is None   # asked for
    assert _offers(slot, "Find 90 minutes on Thursday")["duration_minutes"] == [90]
    assert _offers(slot, "Find 45 min on Thursday")["duration_minutes"] == [45]                  # written short
    pet = [ToolArgument(name="weight_kg", type="number", description="The weight")]
    assert _offers(pet, "My dog weighs 30 kilos")["weight_kg"] == [30]
    assert _offers(pet, "My dog weighs 30 lbs")["weight_kg"] is None


def test_people_are_names_or_email_addresses_and_no_other_arguments_values():
    meeting = [ToolArgument(name="title", type="string", description="What the meeting is called"),
               ToolArgument(name="attendees", type="array", description="The people to invite",
                            items={"type": "string"}, required=False)]
    got = grounded(optional_schema(*meeting), meeting,
                   said_values("Set up a budget sync with maria@example.com and Tom on Thursday", []))["properties"]
    assert sorted(got["attendees"]["items"]["enum"]) == ["Tom", "maria@example.com"]
    assert "Tom" not in got["title"]["enum"] and "maria@example.com" not in got["title"]["enum"]
    # "where is there a gap?" had invited `gap`: no one said, the optional list is left out.
    assert _offers(meeting, "Set up a deep work block, where is there a gap?")["attendees"] == "left out"
    got = grounded(optional_schema(*meeting), meeting, said_values("Sync with Priya, Omar and I on Friday", []))
    attendees = got["properties"]["attendees"]
    assert attendees["items"]["enum"] == ["Priya", "Omar"] and attendees["minItems"] == 2
    # A list whose description only mentions people is no list of people.
    cook = [ToolArgument(name="ingredients", type="array", description="The ingredients people have at hand",
                         items={"type": "string"})]
    got = grounded(optional_schema(*cook), cook, said_values("What can I cook with eggs and spinach?", []))
    assert got["properties"]["ingredients"]["items"]["enum"] == ["eggs", "spinach"]


def test_a_value_does_not_start_with_the_unit_of_a_number():
    # "Set up a 1 hour budget sync" had offered the title "hour budget sync".
    meeting = [ToolArgument(name="title", type="string", description="What the meeting is called"),
               ToolArgument(name="hours", type="number", description="How long")]
    assert not any(t.startswith("hour") for t in _offers(meeting, "Set up a 1 hour budget sync")["title"])


def test_a_particle_of_a_requests_verb_is_no_value():
    # "Set up a 1 hour budget sync ..." had offered the meeting's title "up".
    meeting = [ToolArgument(name="title", type="string", description="What the meeting is called")]
    assert "up" not in _offers(meeting, "Set up a budget sync on Thursday")["title"]
    song = [ToolArgument(name="song", type="string", description="The song's title")]
    assert "Up" in _offers(song, "Play Up by Olly Murs")["song"]                     # a title, capitalised
    stock = [ToolArgument(name="name", type="string", description="The name")]
    assert "up" in _offers(stock, "Is the stock of Apple up over the last week")["name"]   # no verb before it


def test_a_free_text_currency_is_offered_the_codes_of_the_currencies_said():
    # A top-up's free-text currency (default EUR) was the model's own `USD` for "Put €20 on my travel
    # card", "add 15 pounds to my tram pass" and "Lade bitte 10 Euro auf meine Fahrkarte" (probe R):
    # the currency the question says is read as its code, and the call must give it.
    top_up = [ToolArgument(name="amount", type="number", description="How much money to add"),
              ToolArgument.model_validate({"name": "currency", "type": "string", "required": False, "default": "EUR",
                                           "free-text": True,
                                           "description": "The currency of the amount, as a code such as EUR or GBP"})]
    for question, code in (("Put €20 on my travel card", "EUR"), ("add 15 pounds to my tram pass", "GBP"),
                           ("Lade bitte 10 Euro auf meine Fahrkarte", "EUR"), ("top up 30 Canadian dollars", "CAD"),
                           ("load it with 12 GBP", "GBP"), ("Top up 20 in yen, not dollars", "JPY")):
        got = grounded(optional_schema(*top_up), top_up, said_values(question, []))
        assert got["properties"]["currency"]["enum"][0] == code, question
        assert "currency" in got["required"], question
    # None said: the model's own words (or the default), as any free text.
    got = grounded(optional_schema(*top_up), top_up, said_values("Top up my card with 20", []))
    assert "enum" not in got["properties"]["currency"] and "currency" not in got.get("required", [])
    # A currency name after a country's adjective not known here says no code ("Fijian dollars").
    got = grounded(optional_schema(*top_up), top_up, said_values("top up 30 Fijian dollars", []))
    assert "enum" not in got["properties"]["currency"]


def test_a_temperatures_scale_glued_to_its_number_is_read_with_it():
    # "The recipe says 180C, what do I set on my American oven?" had asked back for the temperature.
    oven = [ToolArgument(name="temperature", type="number", description="The oven temperature to convert"),
            ToolArgument(name="from_unit", type="string", enum=("C", "F"), description="C or F")]
    got = _offers(oven, "The recipe says 180C, what do I set on my American oven?")
    assert got == {"temperature": [180], "from_unit": ["C"]}
    assert _offers(oven, "is 37.5C a fever?")["temperature"] == [37.5]
    assert _offers(oven, "bake at 425F")["temperature"] == [425]
    # A single digit, or a small letter, is no scale: a flat, a seat, a network.
    assert said_values("flat 4F, seat 14f, my 5G phone", []).numbers == []


def test_a_person_argument_is_offered_the_names_the_question_writes():
    # "ping Marco saying I'll be 10 minutes late" had offered the colleague "ping Marco" and "Marco saying".
    chat = [ToolArgument(name="colleague", type="string", description="The colleague's name, e.g. Priya"),
            ToolArgument(name="message", type="string", description="The message to send")]
    assert _offers(chat, "ping Marco saying I'll be 10 minutes late to standup")["colleague"] == ["Marco"]
    call = [ToolArgument(name="who", type="string", description="The contact to call")]
    assert _offers(call, "ring Ana Lopez on her mobile")["who"] == ["Ana Lopez"]
    # No name written: every value, as before; nor is a name's argument a person's ("pet_name").
    assert "priya" in _offers(chat, "ping priya saying hello")["colleague"]
    pet = [ToolArgument(name="pet_name", type="string", description="The pet's name")]
    assert "walk" in _offers(pet, "book a walk for Rex")["pet_name"]


def test_a_lists_first_member_does_not_reach_back_over_the_word_leading_into_it():
    # "any dinner ideas using mushrooms and rice?" had listed the ingredient "dinner ideas using mushrooms".
    cook = [ToolArgument(name="ingredients", type="array", description="The ingredients to cook with",
                         items={"type": "string"})]
    got = grounded(optional_schema(*cook), cook, said_values("any dinner ideas using mushrooms and rice? vegetarian pls", []))
    assert got["properties"]["ingredients"]["items"]["enum"] == ["mushrooms", "rice"]
    assert said_values("bread made of flour and water", []).lists == [["flour", "water"]]
    assert said_values("Add salt, pepper and olive oil", []).lists == [["salt", "pepper", "olive oil"]]


def test_a_street_address_is_read_whole_and_its_number_is_its_own():
    # "i need someone to come get my return parcel from 7 Mill Lane tomorrow" had collected 7 parcels
    # from the example's "12 Elm Road": the street was no span, and its number went to the count.
    pickup = [ToolArgument(name="address", type="string",
                           description="Where to collect from, a street address or postcode, e.g. 12 Elm Road"),
              ToolArgument(name="date", type="string", description="The collection day, e.g. 3 July or tomorrow"),
              ToolArgument(name="parcels", type="integer", required=False, description="How many parcels")]
    got = _offers(pickup, "i need someone to come get my return parcel from 7 Mill Lane tomorrow")
    assert got == {"address": ["7 Mill Lane"], "date": ["tomorrow"], "parcels": "left out"}
    got = _offers(pickup, "arrange for a courier to collect 3 boxes from 42 Harbour Street on 3 July")
    assert got == {"address": ["42 Harbour Street"], "date": ["3 July"], "parcels": [3]}
    question = ["collect from 7 Mill Lane tomorrow"]
    assert unsaid_arguments({"address": "12 Elm Road", "date": "tomorrow"}, pickup, question) == ["address"]
    assert unsaid_arguments({"address": "7 Mill Lane", "date": "tomorrow"}, pickup, question) == []
    # An email address is an email's.
    mail = [ToolArgument(name="to", type="string", description="The recipient's email address")]
    assert _offers(mail, "Email ann@example.org about 7 Mill Lane")["to"] == ["ann@example.org"]
    # With no number, a street's name written capitalised; with none said, the argument takes what any
    # text argument does, and the check judges it so.
    assert _offers(pickup, "collect my parcel from Mill Lane on 3 July")["address"] == ["Mill Lane"]
    assert _offers(pickup, "collect my parcel from Camden tomorrow")["address"] == ["Camden"]
    assert unsaid_arguments({"address": "Camden", "date": "tomorrow"}, pickup, ["collect it in Camden tomorrow"]) == []


def test_a_time_written_with_a_point_is_one_time():
    # "book two seats for Past Lives at the Picturehouse tonight, 8.50pm showing" had booked `50pm`.
    tickets = [ToolArgument(name="film", type="string", description="The film"),
               ToolArgument(name="time", type="string", description="The showing's start time, e.g. 19:30"),
               ToolArgument(name="tickets", type="integer", required=False, description="How many tickets")]
    got = _offers(tickets, "book two seats for Past Lives at the Picturehouse tonight, 8.50pm showing")
    assert got["time"] == ["8.50pm"] and got["tickets"] == [2]
    assert said_values("It costs 8.50 pounds", []).numbers == [8.5]


def test_declared_numbers_are_offered_the_numbers_said_among_them():
    # "renew The Salt Path please, 3 weeks" of weeks 1, 2 or 3 (default 2) had renewed for the default,
    # and offered the book `3` and `3 weeks`.
    renew = [ToolArgument(name="book", type="string", description="The title of the borrowed book to renew"),
             ToolArgument(name="weeks", type="integer", enum=(1, 2, 3), required=False, default=2,
                          description="How many weeks to extend the loan by")]
    got = grounded(optional_schema(*renew), renew, said_values("renew The Salt Path please, 3 weeks", []))
    assert got["properties"]["weeks"]["enum"] == [3] and got["required"] == ["book", "weeks"]
    assert "The Salt Path" in got["properties"]["book"]["enum"]
    assert not any("3" in v for v in got["properties"]["book"]["enum"])
    # None of them said: left out, the tool's default.
    assert _offers(renew, "renew Dune please")["weeks"] == "left out"
    assert _offers(renew, "renew Dune for 5 weeks")["weeks"] == "left out"


def test_what_a_number_argument_counts_is_no_text_value():
    # "can you extend my loan of Educated by 1 more week" had renewed the book `week`.
    renew = [ToolArgument(name="book", type="string", description="The title of the borrowed book to renew"),
             ToolArgument(name="weeks", type="integer", enum=(1, 2, 3), required=False,
                          description="How many weeks to extend the loan by")]
    got = _offers(renew, "can you extend my loan of Educated by 1 more week")
    assert "week" not in got["book"] and "Educated" in got["book"] and got["weeks"] == [1]
    # A title that only holds such a word whole stays ("Week" is a word of "Fashion Week").
    assert "Fashion Week" in _offers(renew, "renew Fashion Week for 2 weeks")["book"]


def test_a_names_own_number_stays_with_it():
    # "get us 4 tickets for Inside Out 2 at the Vue on Sunday at 13:40" had booked the film `Inside Out`.
    tickets = [ToolArgument(name="film", type="string", description="The film"),
               ToolArgument(name="tickets", type="integer", description="How many tickets")]
    got = _offers(tickets, "get us 4 tickets for Inside Out 2 at the Vue on Sunday")
    assert "Inside Out 2" in got["film"] and got["tickets"] == [4]
    # A number that counts what follows it is no name's.
    assert not any("3" in v for v in _offers(tickets, "Buy Apple 3 shares")["film"])
    # Nor is a month's year a name's number.
    assert not any("December" in v and "2020" in v for v in
                   _offers(tickets, "Book 2 tickets for the film on 25 December 2020")["film"])


def test_chat_shorthand_is_read_as_the_words_it_stands_for():
    from trustgraph.agent.react.grounding import plain
    # "... hyde park corner rn" had looked for the docking station `rn`; "tmrw" was no day.
    assert plain("r there any e-bikes at hyde park corner rn") == "are there any e-bikes at hyde park corner right now"
    assert plain("any boxing tmrw morning?") == "any boxing tomorrow morning?"
    assert plain("Tmrw at 9 pls, thx") == "Tomorrow at 9 please, thanks"
    assert plain("2day or 2nite? can u check") == "today or tonight? can you check"
    # Not a quoted text, a word in capitals, nor part of a name, a code or an abbreviation.
    for question in ("what does 'rn' mean?", "Is an RN on call?", "U2 tickets", "the u.s. dollar", "posts on r/cooking",
                     "Turn on TV", "curry", "rnb playlist"):
        assert plain(question) == question
    station = [ToolArgument(name="station", type="string", description="The docking station")]
    offered = _offers(station, plain("r there any e-bikes at hyde park corner rn"))["station"]
    assert "hyde park corner" in offered and not any("rn" in v.split() or "right" in v for v in offered)
    day = [ToolArgument(name="day", type="string", description="The day of the class")]
    assert _offers(day, plain("any boxing tmrw morning?"))["day"] == ["tomorrow"]


def test_a_code_in_two_groups_is_offered_whole_and_its_numbers_are_no_expression():
    # "garden waste pickup day for M14 5RQ?" had booked a bulky-waste pickup at the address "14 5": the
    # numbers inside the postcode read as an expression, and the postcode (its example "LS6 2AB" in two
    # groups) no identifier.
    postcode = [ToolArgument(name="postcode", type="string", description="The postcode, e.g. LS6 2AB")]
    assert _offers(postcode, "garden waste pickup day for M14 5RQ?")["postcode"] == ["M14 5RQ"]
    assert _offers(postcode, "When do the bins get collected for LS6 2AB?")["postcode"] == ["LS6 2AB"]
    german = _offers(postcode, "Wann wird bei BS3 1AA der Müll abgeholt?")["postcode"]
    assert "BS3 1AA" in german and not any("BS3 1AA" in v and v != "BS3 1AA" for v in german)
    assert _offers(postcode, "When are the bins collected on my street?")["postcode"] is None   # none said
    for question in ("garden waste pickup day for M14 5RQ?", "bins for SW1A 1AA"):
        assert not said_values(question, []).expressions
    # A product written small and a number with its unit are still expressions.
    for question, expression in (("What's 3x4?", "3x4"), ("divide 10km by 2", "divide 10km by 2"),
                                 ("What is 17 times 23?", "17 times 23")):
        assert expression in said_values(question, []).expressions


def test_grams_glued_to_a_number_and_a_declared_value_inside_a_run_are_read_apart():
    # "how many cals in a 350g portion of pad thai" had looked up the dish "350g portion".
    nutrition = [ToolArgument(name="dish", type="string", description="The dish, e.g. pad thai"),
                 ToolArgument(name="portion_grams", type="integer", required=False, default=250,
                              description="The portion's weight in grams")]
    offers = _offers(nutrition, "how many cals in a 350g portion of pad thai")
    assert offers["portion_grams"] == [350] and "pad thai" in offers["dish"] and not any("350" in v for v in offers["dish"])
    assert said_values("is 5G faster than 4g?", []).numbers == []     # a network, not grams
    # "flying british airways business class, ..." had asked about the airline "british airways business class".
    baggage = [ToolArgument(name="airline", type="string", description="The airline, e.g. British Airways"),
               ToolArgument(name="cabin", type="string", enum=["economy", "premium", "business", "first"],
                            required=False, default="economy", description="The travel class")]
    airlines = _offers(baggage, "flying british airways business class, whats the hold bag weight limit")["airline"]
    assert "british airways" in airlines and not any("business" in v for v in airlines)


def test_a_number_said_with_a_unit_its_description_says_is_plainly_given():
    # "start machine 3 on cotton at 60 degrees" had started the wash at the default 40.
    washer = [ToolArgument(name="machine_number", type="integer", description="The machine's number, 1 to 6"),
              ToolArgument(name="programme", type="string", enum=["cotton", "quick", "eco"], description="The programme"),
              ToolArgument(name="temperature_c", type="integer", enum=[20, 30, 40, 60, 90], required=False, default=40,
                           description="The wash temperature in degrees Celsius")]
    schema = grounded(optional_schema(*washer), washer, said_values("start machine 3 on cotton at 60 degrees", []))
    assert schema["properties"]["temperature_c"]["enum"] == [60] and "temperature_c" in schema["required"]
    # Not a word of the description's example ("e.g." writes no grams), nor a number said without its unit.
    year = [ToolArgument(name="city", type="string", description="The city"),
            ToolArgument(name="year", type="integer", required=False, description="The year, e.g. 2026")]
    assert "year" not in grounded(optional_schema(*year), year, said_values("150 g of avocado in Paris", [])).get(
        "required", [])
    assert "temperature_c" not in grounded(optional_schema(*washer), washer,
                                           said_values("start machine 3 on cotton, 60 please", [])).get("required", [])


def test_an_identifier_is_offered_in_its_examples_shape_and_its_digits_are_no_number():
    # "can i keep the car 3 more days? rental CH-778201" had extended the rental "3"; "Please add another
    # day to my hire agreement CH-590412" had kept the car 590412 more days.
    rental = [ToolArgument(name="rental_number", type="string", description="The rental agreement number, e.g. CH-778201"),
              ToolArgument(name="extra_days", type="integer", required=False, default=1,
                           description="How many more days to keep the car")]
    offers = _offers(rental, "can i keep the car 3 more days? rental CH-778201")
    assert offers["rental_number"] == ["CH-778201"] and offers["extra_days"] == [3]
    offers = _offers(rental, "Please add another day to my hire agreement CH-590412")
    assert offers["rental_number"] == ["CH-590412"] and offers["extra_days"] == "left out"
    assert said_values("Please add another day to my hire agreement CH-590412", []).numbers == []
    # An identifier whose example is digits alone takes digits alone.
    report = [ToolArgument(name="report_number", type="string", description="The report number, e.g. 4471")]
    assert _offers(report, "whats happening with my expense report 2317")["report_number"] == ["2317"]
    # A code is no place.
    trip = [ToolArgument(name="destination", type="string", description="The city to fly to")]
    assert _offers(trip, "Any news on repair job RR-58102?")["destination"] is None


def test_an_identifier_of_one_word_is_offered_alone_and_a_count_is_none():
    # Probe V: "Bin ich mit der Police POL-90115 im Ausland krankenversichert?" looked up the policy
    # "Police POL-90115" twice (a German noun is written with a capital); "find me a riesling ... then
    # get me 2 bottles of it delivered" ordered the wine "2".
    policy = [ToolArgument(name="policy_number", type="string", description="The policy number, e.g. POL-88213")]
    assert _offers(policy, "Bin ich mit der Police POL-90115 im Ausland krankenversichert?")["policy_number"] \
        == ["POL-90115"]
    order = [ToolArgument(name="wine_code", type="string", description="The wine's shop code from the list, e.g. W1042"),
             ToolArgument(name="quantity", type="integer", description="Number of bottles")]
    question = "find me a riesling u have on the shelf and then get me 2 bottles of it delivered"
    offers = _offers(order, question)
    assert offers["wine_code"] is None and offers["quantity"] == [2]
    assert unsaid_arguments({"wine_code": "2", "quantity": 2}, order, [question]) == ["wine_code"]
    # A number that counts nothing is still offered; so is one a tool's result says.
    assert "1107" in _offers(order, "order wine 1107, 3 bottles")["wine_code"]
    assert unsaid_arguments({"wine_code": "W1107", "quantity": 2}, order, [question, "W1107 Riesling 2022"]) == []
    # A code written in two words keeps both.
    postcode = [ToolArgument(name="postcode", type="string", description="The postcode, e.g. LS6 2AB")]
    assert _offers(postcode, "when are the bins collected at LS6 2AB")["postcode"] == ["LS6 2AB"]


def test_an_examples_words_say_nothing_of_the_argument_and_a_word_of_a_day_is_no_value():
    # Probe V: "who r harbour rovers up against next weekend" listed the fixtures of the team
    # "weekend": "Only this club's games, e.g. Harbour Rovers" took a place (its example's
    # "Harbour"), and "weekend", ending a request typed small, had read as one.
    team = [ToolArgument(name="team", type="string", description="Only this club's games, e.g. Harbour Rovers",
                         required=False)]
    assert not takes_place(team[0])
    offers = _offers(team, "who are harbour rovers up against next weekend")["team"]
    assert "harbour rovers" in offers and "weekend" not in offers
    city = [ToolArgument(name="city", type="string", description="The city")]
    assert "weekend" not in (_offers(city, "what is on next weekend")["city"] or [])
    joke = [ToolArgument(name="topic", type="string", description="The topic")]
    assert _offers(joke, "tell me a joke about Friday")["topic"] == ["Friday"]   # a day whole may be a value


def test_a_part_of_a_day_is_a_day_said():
    # Probe V: "someone smashed my windscreen last night, pls start a claim on POL-88390" asked back
    # for when it happened.
    claim = [ToolArgument(name="policy_number", type="string", description="The policy, e.g. POL-88213"),
             ToolArgument(name="incident_date", type="string", description="When it happened, e.g. 2026-02-14")]
    question = "someone smashed my windscreen last night, pls start a claim on POL-88390"
    assert _offers(claim, question)["incident_date"] == ["last night"]
    assert unsaid_arguments({"policy_number": "POL-88390", "incident_date": "last night"}, claim, [question]) == []
    assert _offers(claim, "it happened this afternoon")["incident_date"] == ["this afternoon"]


def test_a_sum_of_money_is_no_texts_value():
    # Probe W: "whens the cutoff for filing my self assesment online?? dont want another £100 fine" asked
    # the deadlines of the tax year "100".
    deadlines = [ToolArgument(name="filing_type", type="string", enum=["self-assessment", "vat"], required=False),
                 ToolArgument(name="tax_year", type="string", description="The tax year, e.g. 2026-27", required=False)]
    offers = _offers(deadlines, "whens the cutoff for filing online?? dont want another £100 fine")["tax_year"] or []
    assert "100" not in offers and "100 fine" not in offers and "fine" in offers
    # An argument of money in words still takes it.
    pay = [ToolArgument(name="payee", type="string"), ToolArgument(name="amount", type="string",
                                                                     description="How much money to send")]
    assert "40" in _offers(pay, "send £40 to Tom")["amount"]


def test_codes_of_a_move_are_taken_whole_and_by_the_arrow_between_them():
    # Probe W: "ballpark for relocating our 4 bedroom house OX2 6HX -> BS8 1TH?" asked back for where
    # the move goes (offered "4 bedroom house OX2" and "6HX -> BS8" beside the postcodes, both to both).
    move = [ToolArgument(name="from_postcode", type="string", description="Postcode moving out of, e.g. BS6 5QT"),
            ToolArgument(name="to_postcode", type="string", description="Postcode moving into, e.g. CF10 1AA"),
            ToolArgument(name="bedrooms", type="integer", description="How many bedrooms")]
    offers = _offers(move, "ballpark for relocating our 4 bedroom house OX2 6HX -> BS8 1TH?")
    assert offers["from_postcode"] == ["OX2 6HX"] and offers["to_postcode"] == ["BS8 1TH"]
    offers = _offers(move, "quote me for a 1 bed move from E8 3PN to N16 7UJ")
    assert offers["from_postcode"] == ["E8 3PN"] and offers["to_postcode"] == ["N16 7UJ"]


def test_a_trip_starts_where_it_says_from_or_right_before_to():
    # "the boats from Split to Hvar" had sailed from Hvar; a port is a place.
    ferry = [ToolArgument(name="from_port", type="string", description="The port the ferry leaves from, e.g. Dover"),
             ToolArgument(name="to_port", type="string", description="The port the ferry arrives at, e.g. Calais")]
    offers = _offers(ferry, "what time are the boats from Split to Hvar on 12 August?")
    assert offers == {"from_port": ["Split"], "to_port": ["Hvar"]}
    offers = _offers(ferry, "I need a foot passenger ticket Piraeus to Santorini on July 3rd")
    assert offers == {"from_port": ["Piraeus"], "to_port": ["Santorini"]}
    # A port whose example is a number is a network's, no place.
    probe = [ToolArgument(name="port", type="string", description="The port to probe, e.g. 443")]
    assert _offers(probe, "Is port 8080 open on Paris?")["port"] != ["Paris"]


def test_a_file_argument_takes_the_files_the_question_names():
    # "print contracts/acme-nda.pdf on the finance printer, 2 copies single sided" had printed the file
    # "copies single sided"; "cancel job 4473 and print boarding-pass-v2.pdf ..." the file "cancel", and
    # 4473 copies.
    printer = [ToolArgument(name="file_path", type="string", description="The file to print, a path or file name"),
               ToolArgument(name="copies", type="integer", required=False, default=1, description="How many copies")]
    assert _offers(printer, "print contracts/acme-nda.pdf on the finance printer, 2 copies single sided")[
        "file_path"] == ["contracts/acme-nda.pdf"]
    question = "cancel job 4473 and print boarding-pass-v2.pdf on the lobby printer in colour"
    assert _offers(printer, question)["file_path"] == ["boarding-pass-v2.pdf"]
    assert "copies" not in grounded(optional_schema(*printer), printer, said_values(question, [])).get("required", [])
    assert _offers(printer, "print my notes please")["file_path"] != []     # no file named: as any text
