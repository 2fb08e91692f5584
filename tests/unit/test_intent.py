"""Whether a question asks for an action, and whether a tool acts (``trustgraph.agent.react.intent``)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from trustgraph.agent.react.intent import (
    MAX_REQUESTS,
    acts,
    asks_for_action,
    asks_how_or_why_in_general,
    requested_verbs,
    requests_of,
    said_verb,
)
from trustgraph.base.descriptors.annotations import Annotations


@pytest.mark.parametrize("question", [
    "Book a table for 4 at Nobu tonight", "Put on some Fleetwood Mac", "Switch off the kitchen lights",
    "Please order a pizza", "Hey, turn the lights on", "Can you book me a cab to the airport?",
    "Could I get a large oat latte?", "I'd like a medium pizza with mushrooms", "I need a cab to the airport at 5am",
    "We want two tickets", "Let's set an alarm for 7", "Is it raining? Please check", "Pizza for two",
    "Bestelle eine Pizza", "¿Puedes pedir una pizza?",
    # A request after a question: each sentence is read.
    "What's Jane's number? Text her that I'm late", "I swam for 45 minutes. Log it.",
    "How about ordering a pizza?", "Shall we book a table at Nobu?", "Would you mind turning the lights off?",
    "Why don't you call Anna?", "Mind turning the heating up?",
    # A request in a later clause, after what the speaker says of themselves or of the scene.
    "I swam for 45 minutes this morning, can you note that down?", "I'm freezing, bump the heating up to 22 degrees",
    "my eggs need 7 minutes, start a timer", "In Paris, book me a taxi", "When I get home - turn on the lights",
    "Tomorrow at 7, wake me up", "don't let me forget to call mum at 6pm", "Do not let the plants dry out",
    "OK, pizza for two", "Hey, put on some jazz",
    # Telling someone else is a message to send.
    "Tell Bob that lunch is ready", "Could you tell Anna I'm late?",
])
def test_a_request_asks_for_an_action(question):
    assert asks_for_action(question)


@pytest.mark.parametrize("question", [
    # The probe's questions that had ordered a coffee, booked a taxi, watered a plant, played a song.
    "Is coffee bad for your heart?", "Why are taxis yellow in New York?", "How often should I water succulents?",
    "What's a good tip for learning the piano?", "Can dogs eat chocolate?", "Who invented the alarm clock?",
    "I swam for 45 minutes", "Do I need sunscreen in Sydney today?", "", "   ",
    "Why is the sky blue? Is it the light?", "Is coffee bad?\nIs tea?", "Should I book a hotel in Rome?",
    "How about the weather?",
    # A clause that sets the scene, or a later clause that is no action's verb.
    "In Paris, are taxis yellow?", "If it rains, what should I wear?", "After dinner, what should we watch?",
    "Is coffee bad for your heart, or is that a myth?", "I swam for 45 minutes, it was hard",
    "Coffee, tea or juice: which has the most caffeine?", "thanks, that's all for now", "Thank you!",
    "Don't you think it's cold in here?", "Never mind",
    # A request to be told something ("Can you explain photosynthesis?" had watered a plant of that name).
    "Can you explain photosynthesis?", "Please explain how vaccines work", "Recommend a movie for tonight",
    "Could you tell me about Rome, please?", "Tell me a joke", "Can you tell me the weather?",
    # "I need to know when my library books have to go back" had renewed the book "library".
    "I need to know when my library books have to go back", "I'd like to know what's on tonight",
    # Typed without apostrophes ("wheres my ordr 30388?" had cancelled the order, pending approval).
    "wheres my ordr 30388?", "whats the status of order 12", "hows my order doing", "isnt it late?",
])
def test_a_question_that_asks_to_know_asks_for_no_action(question):
    assert not asks_for_action(question)


def tool(description: str, **annotations) -> SimpleNamespace:
    return SimpleNamespace(description=description, annotations=Annotations(**annotations))


def test_a_tool_acts_when_it_says_so_or_its_description_starts_with_an_actions_verb():
    assert acts(tool("Order pizza for delivery")) and acts(tool("Book a taxi ride"))
    assert acts(tool("Turn the lights in a room on or off")) and acts(tool("Send an email to someone"))
    assert not acts(tool("Current weather in a city")) and not acts(tool("Convert a temperature"))
    assert not acts(tool("Find recipes that use some ingredients")) and not acts(tool(""))
    # What a tool says of itself decides: a read-only "Send" (a preview), a destructive "Forget".
    assert not acts(tool("Send a preview of the message, nothing is sent", read_only=True))
    assert acts(tool("Forget a contact", destructive=True)) and acts(tool("Archive a note", read_only=False))
    assert not acts(SimpleNamespace(description="Book a taxi ride", annotations=Annotations(read_only=True)))
    assert acts(SimpleNamespace(description="Book a taxi ride"))   # no annotations at all


@pytest.mark.parametrize("question, requests", [
    ("What day of the week is 31 October 2026 and how many days away is it?",
     ["What day of the week is 31 October 2026", "how many days away is it?"]),
    ("How many calories are in 100 g of crisps, and how many does 30 minutes of jogging burn?",
     ["How many calories are in 100 g of crisps", "how many does 30 minutes of jogging burn?"]),
    ("Find me a hotel in Rome for 2 nights and book a table for 2 at Roscioli at 8pm.",
     ["Find me a hotel in Rome for 2 nights", "book a table for 2 at Roscioli at 8pm."]),
    ("What is the weather in Paris? And what time is it there?", ["What is the weather in Paris?",
                                                                 "what time is it there?"]),
    ("Turn on the lights; play some jazz", ["Turn on the lights", "play some jazz"]),
    # "and" before anything but a question or an imperative joins words of one request.
    ("Add milk and eggs to my list", ["Add milk and eggs to my list"]),
    ("I want to know the weather in Paris and London", ["I want to know the weather in Paris and London"]),
    ("Find and book a table", ["Find and book a table"]),                  # too short to be a request
    ("Translate 'salt and how' into French", ["Translate 'salt and how' into French"]),   # quoted
    ("Tell me a joke", ["Tell me a joke"]),
    # What the asker says of their situation is no request; two sentences alone are one said twice.
    ("I have 75 dollars. How many Swiss francs is that?", ["I have 75 dollars. How many Swiss francs is that?"]),
    ("I keep using 'important' in my report; suggest some substitutes",
     ["I keep using 'important' in my report; suggest some substitutes"]),
    ("Is 'candid' a compliment? What does it signify?", ["Is 'candid' a compliment? What does it signify?"]),
    ("Where is parcel 1Z999AA10123456784? Also, what are the public holidays in France?",
     ["Where is parcel 1Z999AA10123456784?", "what are the public holidays in France?"]),
    # An apostrophe is no quote ("Liverpool's"); a first request opens with any verb ("Scale").
    ("When's Liverpool's next game, and how long would it take me to drive there?",
     ["When's Liverpool's next game", "how long would it take me to drive there?"]),
    ("Scale my pancake recipe up to 10, then tell me how many grams 1.5 cups of sugar is.",
     ["Scale my pancake recipe up to 10", "tell me how many grams 1.5 cups of sugar is."]),
    ("List France's public holidays for 2026; also, what day of the week is 14 July 2026?",
     ["List France's public holidays for 2026", "what day of the week is 14 July 2026?"]),
    # A sentence that opens with "Also" and an imperative of any verb is a next request; not a name.
    ("What's happening with ticket 3307? Also, assign ticket 3310 to Marco Rossi.",
     ["What's happening with ticket 3307?", "assign ticket 3310 to Marco Rossi."]),
    ("What's the weather in Oslo? And tomorrow?", ["What's the weather in Oslo? And tomorrow?"]),
    # A go-ahead is no request of its own: "ok go ahead and grab P-14 for us, 5 nights from 14 August"
    # (probe V) had ranked the tools for "ok go ahead" and ended with the model's own answer.
    ("ok go ahead and grab P-14 for us, 5 nights from 14 August",
     ["ok go ahead and grab P-14 for us, 5 nights from 14 August"]),
    ("Yes please, go ahead and book it", ["Yes please, go ahead and book it"]),
])
def test_a_question_makes_one_request_or_several(question, requests):
    assert requests_of(question) == requests


def test_at_most_a_few_requests_are_read():
    question = " and ".join(["what is the time in Paris"] * 10)
    parts = requests_of(question)
    assert len(parts) == MAX_REQUESTS and parts[-1].count(" and ") == 10 - MAX_REQUESTS


@pytest.mark.parametrize(("question", "verbs"), [
    ("Play episode 212 of Radiolab", {"play"}),
    ("Our lights have all gone off at 27 Mill Lane, please report it", {"report"}),
    ("Can you report a power cut at 3 Elm Road?", {"report"}),
    ("I'm freezing, bump the heating up", {"bump"}),
    ("Hey, show me the shopping list", {"show"}),
    ("What's on the shopping list?", set()),
    ("Is there a blackout in Camden?", set()),
    ("Could you please check my tyres?", {"check"}),
    # A later clause's verb after what it starts with, and an everyday word for an act.
    ("We fixed the leak ourselves, so scrap repair RR-30990", {"scrap"}),
    ("Scratch butter from the shopping list", {"scratch"}),
])
def test_the_verbs_a_request_asks_to_be_done(question, verbs):
    assert requested_verbs(question) == verbs


def test_a_tool_does_what_a_request_asks_when_its_description_starts_with_that_verb():
    def tool(description):
        return SimpleNamespace(description=description)
    assert said_verb(tool("Plays a podcast by its name"), {"play"})
    assert said_verb(tool("Report a power cut at an address"), {"report"})
    assert said_verb(tool("Watches a folder"), {"watch"}) and said_verb(tool("Fixes typos"), {"fix"})
    assert not said_verb(tool("List the recent episodes of a podcast"), {"play"})
    assert not said_verb(tool("Known power cuts in an area"), {"report"})
    assert not said_verb(tool(""), {"play"}) and not said_verb(tool("Play a song"), set())
    # An everyday word for what the description says: "scrap" a repair is to cancel it.
    assert said_verb(tool("Cancel a repair visit"), {"scrap"}) and said_verb(tool("Remove an item"), {"scratch"})
    assert said_verb(tool("Send a chat message to a colleague"), {"ping"})
    assert not said_verb(tool("Show a repair request's status"), {"scrap"})
    # "drop my Saturday yoga booking" cancels it; "finish the trip" ends a ride.
    assert said_verb(tool("Cancel a booked gym class"), {"drop"}) and said_verb(tool("End a bike ride"), {"finish"})
    assert not said_verb(tool("Book a gym class"), {"drop"})
    assert said_verb(tool("Order a refill of a prescription"), {"reorder"})   # doing it again is doing it


@pytest.mark.parametrize(("question", "general"), [
    ("Why do cats purr?", True), ("why is the sky blue", True), ("Hey, how come leaves turn red in autumn?", True),
    ("Why is petrol more expensive than diesel in some countries?", True),
    # How something works, how two things differ: "how does plastic recycling actually work" had asked
    # which bin takes `plastic`.
    ("how does plastic recycling actually work", True), ("How do vaccines work?", True),
    ("whats the difference between baking soda and baking powder", True),
    ("How does my thermostat work?", False), ("What's the difference between 5 and 7 in the list?", False),
    ("how do I book a class", False), ("How does the Tokyo office work?", False),
    # Of someone, of something named, of a number: a tool may know it.
    ("Why is my parcel late?", False), ("Why is it so cold in Oslo?", False), ("Why did order 30388 fail?", False),
    ("Why are you so slow?", False),
    # A request, a suggestion, another kind of question.
    ("Why is the sky blue? Set a timer for 5 minutes", False), ("Why not book a table for two", False),
    ("Why don't you book a table", False), ("What makes cats purr?", False), ("", False),
])
def test_a_question_asking_how_or_why_in_general_is_told_apart(question, general):
    assert asks_how_or_why_in_general(question) is general
