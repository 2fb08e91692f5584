"""The stages of an agent step (trustgraph.agent.react.steps), each on its own typed values."""

from __future__ import annotations

import dataclasses
import json
import time

from trustgraph.agent.react.calls import (
    FAILURE_FAILED,
    FAILURE_LOST,
    FAILURE_MISTAKE,
    FAILURE_UNAVAILABLE,
    ToolCall,
)
from trustgraph.agent.react.decisions import Confidence, Switch
from trustgraph.agent.react.grounding import (
    grounded,
    named_arguments,
    own_words,
    said_kinds,
    said_values,
    takes_kind,
)
from trustgraph.agent.react.prompting import prompt_terms
from trustgraph.agent.react.registry import build_registry
from trustgraph.agent.react.steps import (
    Accepted,
    NoResult,
    Pending,
    Served,
    Step,
    admit,
    after_call,
    by_coverage,
    by_verb,
    carried_failures,
    failures_property,
    gone_nearer,
    judge_answer,
    judge_call,
    next_request,
    plainly_asked,
    prepare,
    settle,
)
from trustgraph.agent.react.vocabulary import Action, Failed, Final
from trustgraph.base.tool_services.tool_service_client import ToolServiceClients
from trustgraph.catalog import embedding
from trustgraph.catalog.ranking import rank
from trustgraph.schema import AgentRequest, AgentStep
from trustgraph.schema.services.agent import OUTCOME_ANSWER, OUTCOME_ASKED, OUTCOME_NO_TOOL, OUTCOME_TOOL

SERVICE = {"id": "svc", "request-queue": "non-persistent://tg/request/svc",
           "response-queue": "non-persistent://tg/response/svc"}


def tool(name: str, description: str, arg: str = "city", **extra) -> str:
    return json.dumps({"type": "tool-service", "name": name, "description": description, "service": "svc",
                       "arguments": [{"name": arg, "type": "string", "description": f"The {arg}"}], **extra})


def declared(name: str, description: str, *arguments: dict) -> str:
    """A tool-service tool of ``svc`` with these ``arguments`` (each ``{name, type, ...}``)."""
    return json.dumps({"type": "tool-service", "name": name, "description": description, "service": "svc",
                       "arguments": [{"description": f"The {a['name']}", **a} for a in arguments]})


def registry_of(*tools: str):
    """A registry of ``tools`` (``declared``) on the ``svc`` service."""
    return build_registry({"tool": {json.loads(t)["name"]: t for t in tools},
                           "tool-service": {"svc": json.dumps(SERVICE)}}, ToolServiceClients(None))


TEXT = {"type": "string"}
LIST = declared("add-to-list", "Add an item to a list", {"name": "list", **TEXT}, {"name": "item", **TEXT})


REGISTRY = build_registry({"tool": {"weather": tool("weather", "Current weather in a city"),
                                    "local-time": tool("local-time", "The current local time in a city"),
                                    "joke": tool("joke", "Tell a joke on a given topic", "topic",
                                                 group=["fun"])},
                           "tool-service": {"svc": json.dumps(SERVICE)}}, ToolServiceClients(None))


def request(question: str, history=(), **kw) -> AgentRequest:
    return AgentRequest(question=question, history=list(history), user="alice", **kw)


# -- admit ------------------------------------------------------------------------------------


def test_admit_refuses_a_dialog_at_its_limits_saying_the_last_error():
    failed = AgentStep(action="weather", arguments={"city": "x"}, observation="Error: tool 'weather' failed: boom")
    assert admit([], {}, 3, None, None) is None
    got = admit([failed] * 3, {0: FAILURE_FAILED, 1: FAILURE_FAILED, 2: FAILURE_FAILED}, 3, None, None)
    assert isinstance(got, Failed) and "limit of 3 steps" in got.message and "tool 'weather' failed: boom" in got.message
    got = admit([failed], {0: FAILURE_FAILED}, 10, time.time() + 0.5, None)
    assert got.message.startswith("The dialog ran out of time after 1 step(s) without an answer")
    assert admit([], {}, 10, None, lambda: "gone").message == "gone"


# -- prepare (rank) ---------------------------------------------------------------------------


def test_a_request_to_act_goes_to_a_near_acting_tool_it_can_call_when_the_first_cannot(monkeypatch):
    from trustgraph.agent.react.steps import by_needs
    from trustgraph.catalog import embedding
    from trustgraph.catalog.ranking import Ranked
    calibration = embedding.MINILM_CALIBRATION
    monkeypatch.setattr(embedding, "calibration", lambda: calibration)
    tools = {t.name: t for t in registry_of(
        declared("ticket-status", "The status of a helpdesk ticket",
                 {"name": "ticket_number", **TEXT, "description": "The ticket number, e.g. 4471"}),
        declared("create-ticket", "Create a helpdesk ticket", {"name": "title", **TEXT})).tools.values()}

    def ranked(status: float, create: float, shared: float = 0.1) -> list[Ranked]:
        return [Ranked(tools["ticket-status"], status, status, shared), Ranked(tools["create-ticket"], create, create, shared)]

    # "... please raise a ticket for it" put ticket-status 0.06 ahead, and asked back for its number.
    printer = "The printer on the third floor is jamming again, please raise a ticket for it."
    got = by_needs(ranked(0.361, 0.297), printer)
    assert got[0].tool.name == "create-ticket" and got[0].meaning - got[1].meaning >= calibration.lead
    for question, before in [
        ("Any progress on ticket 4471, please?", ranked(0.361, 0.297)),         # the first can be called
        ("The printer is jamming again, what should I do?", ranked(0.361, 0.297)),   # no request to act
        (printer, ranked(0.361, 0.361 - 2.1 * calibration.lead)),                # too far behind
        (printer, ranked(0.361, 0.297, shared=0.0)),                            # no word of the question
    ]:
        assert by_needs(list(before), question) == before


def test_prepare_ranks_the_requests_tools_by_meaning_and_keeps_what_the_dialog_said():
    step = prepare(request("Is it going to be chilly in Oslo?"), REGISTRY, {})
    assert [t.name for t in step.tools] == ["weather", "local-time"]          # the joke is in group fun
    assert set(step.meaning) == {"weather", "local-time"}
    assert step.meaning["weather"] > step.meaning["local-time"]
    assert "Oslo" in step.said.texts and step.results == [] and step.own   # no result: an own answer is marked
    done = AgentStep(action="weather", arguments={"city": "Oslo"}, observation="It is 3°C in Oslo.")
    bad = AgentStep(action="weather", arguments={"city": "x"}, observation="Error: no")
    step = prepare(request("Is it chilly in Oslo?", [bad, done]), REGISTRY, {0: FAILURE_MISTAKE})
    assert step.results == [("weather", "It is 3°C in Oslo.")] and not step.own
    assert 3.0 in step.said.numbers


def test_a_step_reads_the_question_with_its_chat_shorthand_written_out():
    step = prepare(request("is it cold in oslo rn? thx"), REGISTRY, {})
    assert step.request.question == "is it cold in oslo rn? thx"          # as the user wrote it
    assert step.question == "is it cold in oslo right now? thanks"
    assert "rn" not in step.said.texts and step.meaning == prepare(request(step.question), REGISTRY, {}).meaning
    assert json.loads(prompt_terms(step.request, step.tools, step.context, step.question)["question"]) == step.question


def ranked_as(tools, near: dict[str, float]):
    """``tools`` ranked as if the encoder had put them ``near`` the question (what by_kind reorders)."""
    return sorted((r._replace(meaning=near[r.tool.name], score=near[r.tool.name]) for r in rank("x", tools)),
                  key=lambda r: -r.meaning)


def test_a_code_whose_prefix_a_tools_example_writes_is_about_that_tool():
    from trustgraph.agent.react.steps import by_kind
    # "has EXP-2304 been approved yet??" had asked a ferry's check-in (its references "FX-20931").
    office = list(registry_of(
        declared("ferry-checkin-status", "Whether we have checked in for a ferry crossing",
                 {"name": "booking_reference", **TEXT, "description": "The booking reference, e.g. FX-20931"}),
        declared("expenses-report-status", "Where an expense report is in its approval",
                 {"name": "report_number", **TEXT, "description": "The expense report number, e.g. EXP-2291"})
    ).tools.values())
    ranked = ranked_as(office, {"ferry-checkin-status": 0.397, "expenses-report-status": 0.318})
    got = by_kind(ranked, "has EXP-2304 been approved yet??")
    assert got[0].tool.name == "expenses-report-status" and got[0].meaning > got[1].meaning
    # A code of no example's prefix, or none at all, leaves the order as it was.
    for question in ("has ZZ-2304 been approved yet??", "has 2304 been approved yet??"):
        assert by_kind(ranked, question) == ranked


def test_a_postcode_said_is_about_a_tool_that_takes_one():
    from trustgraph.agent.react.steps import by_kind
    # Probe V: "wher can i juice up my leaf around LS1 4AP? chademo only pls" asked back offering a
    # wine order, a wine search and a campsite (the idiom near none of the tools).
    tools = list(registry_of(
        declared("wine-search-cellar", "Search the bottles we have in stock by grape, region, colour or price",
                 {"name": "grape", **TEXT}),
        declared("evcharge-find-chargers", "Find public electric car charging points near a town, street or postcode",
                 {"name": "location", **TEXT, "description": "Where to look: a town, street or postcode, e.g. Leeds"})
    ).tools.values())
    ranked = ranked_as(tools, {"wine-search-cellar": 0.274, "evcharge-find-chargers": 0.21})
    got = by_kind(ranked, "wher can i juice up my leaf around LS1 4AP? chademo only pls")
    assert got[0].tool.name == "evcharge-find-chargers" and got[0].meaning > got[1].meaning
    assert said_kinds("bins for SW1A 1AA and M14 5RQ")   # a postcode is a kind said
    # No postcode (a flight, a code of one group, a lower-case word), the order as it was.
    for question in ("is BA117 on time?", "wher can i juice up my leaf around LS14AP?", "around ls1 4ap?"):
        assert by_kind(ranked, question) == ranked, question


# -- judge ------------------------------------------------------------------------------------


def test_among_tools_the_ranker_cannot_tell_apart_the_one_that_takes_what_the_question_says_leads(monkeypatch):
    # "If it's noon in New York, what hour is it in Paris?" put local-time 0.013 ahead of
    # time-difference; the 135M model's choice was noise and the dialog asked back.
    from trustgraph.catalog import embedding
    from trustgraph.catalog.ranking import Ranked
    calibration = embedding.MINILM_CALIBRATION
    monkeypatch.setattr(embedding, "calibration", lambda: calibration)
    tools = {t.name: t for t in registry_of(
        declared("local-time", "The current local time in a city", {"name": "city", **TEXT}),
        declared("time-difference", "The time difference between two cities", {"name": "city", **TEXT},
                 {"name": "other_city", **TEXT}),
        declared("weather", "Current weather in a city", {"name": "city", **TEXT})).tools.values()}

    def ranked(**meaning: float) -> list[Ranked]:
        return [Ranked(tools[name.replace("_", "-")], m, m, 0.0) for name, m in meaning.items()]

    noon = "If it's noon in New York, what hour is it in Paris?"
    got = by_coverage(ranked(local_time=0.507, time_difference=0.494, weather=0.3), noon)
    assert [r.tool.name for r in got] == ["time-difference", "local-time", "weather"]
    assert got[0].meaning - got[1].meaning >= calibration.lead and got[0].score == got[0].meaning
    # Up to two leads behind ("Please record that I took 200 mg of ibuprofen at 07:45": 0.08).
    got = by_coverage(ranked(local_time=0.55, time_difference=0.55 - 1.9 * calibration.lead, weather=0.3), noon)
    assert got[0].tool.name == "time-difference"
    # Unchanged: the ranker's first leads; one place said (both take it); no tool near enough to
    # be about the question (evidence between tools, never for one).
    for question, meaning in [(noon, {"local_time": 0.6, "time_difference": 0.6 - 2.1 * calibration.lead,
                                      "weather": 0.3}),
                              ("Is it the middle of the night in Honolulu?", {"local_time": 0.42,
                                                                               "time_difference": 0.40}),
                              (noon, {"local_time": 0.19, "time_difference": 0.18, "weather": 0.17})]:
        before = ranked(**meaning)
        assert by_coverage(list(before), question) == before
    # The tie is read among as many tools as a prompt lists (a catalog of near copies ties by the
    # thousand): a tool that covers most beyond them stays where it is.
    from trustgraph.catalog.ranking import MAX_PROMPT_TOOLS
    copies = [Ranked(tools["local-time"], 0.5, 0.5, 0.0) for _ in range(MAX_PROMPT_TOOLS)]
    before = [*copies, Ranked(tools["time-difference"], 0.49, 0.49, 0.0)]
    assert by_coverage(list(before), noon) == before
    assert by_coverage([*copies[:3], before[-1]], noon)[0].tool.name == "time-difference"
    # Through the real ranker, as a step sees it.
    monkeypatch.undo()
    step = prepare(request(noon), registry_of(*(json.dumps({
        "type": "tool-service", "name": t.name, "description": t.description, "service": "svc",
        "arguments": [{"name": a.name, "type": "string", "description": a.description} for a in t.arguments]})
        for t in tools.values())), {})
    assert step.tools[0].name == "time-difference", step.meaning
    assert step.meaning["time-difference"] - step.meaning["local-time"] >= (embedding.calibration() or calibration).lead
    # Without the embedding model there is no lead to read it by.
    monkeypatch.setattr(embedding, "calibration", lambda: None)
    before = ranked(local_time=0.507, time_difference=0.494)
    assert by_coverage(list(before), noon) == before


def test_a_tool_that_takes_the_kind_of_value_the_question_says_comes_first_and_leads():
    # "Show me what's in /etc/hosts": the encoder put the contact lookup first ("hosts" near
    # "contacts"), and the 135M model looked up the contact "/etc/hosts".
    from trustgraph.catalog import embedding
    from trustgraph.catalog.ranking import rank
    files = build_registry({"tool": {
        "lookup-contact": tool("lookup-contact", "A person's phone number and email from the address book", "name"),
        "read-file": tool("read-file", "Show the contents of a file", "path"),
        "send-email": json.dumps({"type": "tool-service", "name": "send-email", "description": "Send an email",
                                  "service": "svc", "arguments": [
                                      {"name": "to", "type": "string", "description": "The recipient's email address"},
                                      {"name": "message", "type": "string", "description": "What the email says"}]}),
        "weather": tool("weather", "Current weather in a city")},
        "tool-service": {"svc": json.dumps(SERVICE)}}, ToolServiceClients(None))
    calibration = embedding.calibration() or embedding.WORDLLAMA_CALIBRATION
    for question, first in [("Show me what's in /etc/hosts", "read-file"), ("Open notes/todo.txt", "read-file"),
                            ("What's inside ~/.bashrc?", "read-file"),
                            ("Let ann@example.org know about the weather in Oslo", "send-email")]:
        step = prepare(request(question), files, {})
        assert step.tools[0].name == first, (question, [t.name for t in step.tools])
        nearest_other = max(v for k, v in step.meaning.items() if k != first)
        assert step.meaning[first] - nearest_other >= calibration.lead, step.meaning
        assert step.meaning[first] >= calibration.clear, step.meaning
        assert plainly_asked(step, Confidence()) == first   # called even if the model would answer alone
    # A phone number is such a kind too ("Text +1 415 555 0199: running 10 minutes late" had started
    # a 10-minute timer); an account's IBAN, a parcel's number or a date is none.
    phones = build_registry({"tool": {
        "set-timer": json.dumps({"type": "tool-service", "name": "set-timer", "description": "Start a countdown timer",
                                 "service": "svc", "arguments": [{"name": "minutes", "type": "integer",
                                                                  "description": "How many minutes"}]}),
        "send-sms": json.dumps({"type": "tool-service", "name": "send-sms", "description": "Send a text message",
                                "service": "svc", "arguments": [
                                    {"name": "phone_number", "type": "string", "description": "The phone number"},
                                    {"name": "message", "type": "string", "description": "What to say"}]}),
        "transfer-money": json.dumps({"type": "tool-service", "name": "transfer-money",
                                      "description": "Send money to a bank account", "service": "svc", "arguments": [
                                          {"name": "amount", "type": "number", "description": "How much"},
                                          {"name": "account_number", "type": "string",
                                           "description": "The account to pay"}]})},
        "tool-service": {"svc": json.dumps(SERVICE)}}, ToolServiceClients(None))
    for question in ["Text +1 415 555 0199: running 10 minutes late", "text 07700 900123 running late"]:
        step = prepare(request(question), phones, {})
        assert step.tools[0].name == "send-sms" and plainly_asked(step, Confidence()) == "send-sms", question
        # (a UK mobile's groups, five digits then six, had been no phone number)
        assert takes_kind(phones.tools["send-sms"].arguments, said_kinds(question)), question
    for question in ["Send €250 to account DE44 5001 0517 5407 3249 31", "Set a timer for 2027-05-03",
                     "Send 150 euros to account GB29 NWBK 6016 1331 9268 19",
                     "Where is parcel 9400111899223100012345?"]:
        step = prepare(request(question), phones, {})
        ranked = {r.tool.name: r.meaning for r in rank(question, list(phones.tools.values()))}
        assert step.meaning["send-sms"] == ranked["send-sms"], question   # not raised
    # A question that says no such value keeps the ranker's order and similarities.
    step = prepare(request("Is it going to be chilly in Oslo?"), files, {})
    ranked = rank("Is it going to be chilly in Oslo?", list(files.tools.values()))
    assert [t.name for t in step.tools] == [r.tool.name for r in ranked]
    assert step.meaning == {r.tool.name: r.meaning for r in ranked}



def test_a_sum_said_is_a_kind_of_value_a_calculator_takes():
    # "Work out 17 times 23": the encoder put a BMI calculator ("Work out the body mass index")
    # and a workout log first, the calculator third; the dialog asked back without it.
    sums = registry_of(
        declared("calculator", "Evaluate an arithmetic expression",
                 {"name": "expression", **TEXT, "description": "The expression, e.g. 2 + 2"}),
        declared("body-mass-index", "Work out the body mass index (BMI)",
                 {"name": "weight_kg", "type": "number"}, {"name": "height_cm", "type": "number"}),
        declared("log-workout", "Record a workout in the fitness log",
                 {"name": "exercise", **TEXT}, {"name": "duration_minutes", "type": "number"}),
        declared("add-to-cart", "Add products to the shopping cart", {"name": "products", **TEXT}))
    for question in ["Work out 17 times 23", "What is 12 squared plus 5?", "what's 144 / 12", "Compute 7 x 8"]:
        step = prepare(request(question), sums, {})
        assert step.tools[0].name == "calculator" and plainly_asked(step, Confidence()) == "calculator", \
            (question, step.meaning)
    # Numbers with no operation between them are no sum: a cart, a phone number, a date, a range.
    calculator = sums.tools["calculator"].arguments
    for question in ["Add 2 apples and 3 pears to my cart", "Call 555-1234", "I ran 5 km on 12/05 from 3-4pm",
                     "I run 3 times a week", "Take 20% off 50"]:
        assert not takes_kind(calculator, said_kinds(question)), question

def test_a_message_said_to_be_passed_on_is_a_kind_of_value_a_messaging_tool_takes():
    # "Tell Priya that the report is ready for review" was as near a vet's booking (0.25) as the
    # colleague's message (0.28): the 135M model ordered pet food for "Priya", and the dialog asked back.
    work = registry_of(
        declared("message-colleague", "Send a chat message to a colleague",
                 {"name": "colleague", **TEXT, "description": "The colleague's name"},
                 {"name": "message", **TEXT, "description": "The message to send"}),
        declared("book-vet-appointment", "Book an appointment at the vet for a pet",
                 {"name": "pet_name", **TEXT}, {"name": "date", **TEXT, "description": "The day, e.g. 12 May"}),
        declared("add-reminder", "Remember something to be reminded of later",
                 {"name": "text", **TEXT, "description": "What to remind of"}),
        declared("my-meetings-today", "The meetings on my calendar today"))
    for question in ["Tell Priya that the report is ready for review", "ping Marco saying I'll be 10 minutes late"]:
        step = prepare(request(question), work, {})
        assert step.tools[0].name == "message-colleague" and plainly_asked(step, Confidence()) == "message-colleague", \
            (question, step.meaning)
    # What a reminder is to say is a reminder's own text, no message; "Tell me ..." passes nothing on.
    for question in ["Remind me tomorrow to tell Priya the report is ready", "Tell me a joke that is about cats"]:
        assert not takes_kind(work.tools["message-colleague"].arguments, said_kinds(question)), question


def test_judge_answer_tells_a_tools_result_from_the_models_own_and_refuses_no_answer():
    done = AgentStep(action="weather", arguments={"city": "Oslo"}, observation="It is 3°C in Oslo.")
    step = prepare(request("Weather in Oslo?", [done]), REGISTRY, {})
    assert judge_answer(step, Final("", "It is 3°C in Oslo.")) == Accepted(OUTCOME_TOOL, ("weather",))
    assert judge_answer(step, Final("", "Cold, I think")) == Accepted(OUTCOME_ANSWER)
    assert "empty" in judge_answer(step, Final("", ""))
    fresh = prepare(request("Weather in Oslo?"), REGISTRY, {})
    assert judge_answer(fresh, Final("", "Cold, I think")) == Accepted(OUTCOME_NO_TOOL)


def test_judge_call_never_offers_a_tool_that_cannot_be_used_now():
    step = prepare(request("Is it chilly in Oslo?"), REGISTRY, {})
    unsure = {"weather": 0.5, "local-time": 0.5}
    close = dict(step.meaning, **{"local-time": step.meaning["weather"]})   # no clear lead either
    step = Step(step.request, step.tools, close, step.failures, step.said)
    asked = judge_call(step, Action("", "local-time", {"city": "Oslo"}), unsure, Confidence())
    assert asked.outcome == OUTCOME_ASKED and set(asked.candidates) == {"weather", "local-time"}
    only = judge_call(step, Action("", "local-time", {"city": "Oslo"}), unsure, Confidence(),
                      usable=lambda name: name != "weather")
    assert only.candidates == ("local-time",)
    none = judge_call(step, Action("", "local-time", {"city": "Oslo"}), unsure, Confidence(), usable=lambda n: False)
    assert none.outcome == OUTCOME_NO_TOOL


def test_judge_call_asks_back_for_an_amount_said_in_another_currency_than_its_argument_takes():
    registry = registry_of(declared("convert-currency", "Convert an amount of US dollars to another currency",
                                    {"name": "amount", "type": "number", "description": "How many US dollars"},
                                    {"name": "to", **TEXT, "description": "The currency to convert to"}))
    step = prepare(request("How much is 40 euros in dollars?"), registry, {})
    asked = judge_call(step, Action("", "convert-currency", {"amount": 40, "to": "dollars"}), None, Confidence())
    assert asked.outcome == OUTCOME_ASKED and asked.unsaid == ("amount",)
    step = prepare(request("How much is 40 dollars in euros?"), registry, {})
    assert judge_call(step, Action("", "convert-currency", {"amount": 40, "to": "euros"}), None, Confidence()) is None
    # With the argument check off, the model's values are taken as they are.
    step = prepare(request("How much is 40 euros in dollars?"), registry, {})
    assert judge_call(step, Action("", "convert-currency", {"amount": 40, "to": "dollars"}), None,
                      Confidence(check_arguments=False)) is None


NOW_PLAYING = json.dumps({"type": "tool-service", "name": "now-playing", "service": "svc", "arguments": [],
                          "description": "Which song and artist is playing on the speakers right now",
                          "examples": ["What's this song?", "Who sings the track that's on?"]})
SPEAKERS = registry_of(NOW_PLAYING,
                       declared("play-music", "Play a song, an artist or a genre on the speakers", {"name": "song", **TEXT}),
                       declared("account-balance", "How much money is in my bank accounts right now",
                                {"name": "account", "type": "string", "enum": ["checking", "savings"],
                                 "required": False}))


OUTAGES = registry_of(
    declared("power-outage-report", "Report a power cut at an address to the electricity network operator",
             {"name": "address", **TEXT}),
    declared("power-outage-status", "Known power cuts in an area and when the power should be back",
             {"name": "area", **TEXT}),
    declared("outage-map", "Show a map of the power cuts in an area", {"name": "area", **TEXT}),
    declared("podcast-play", "Play a podcast by its name", {"name": "podcast", **TEXT}))


def test_the_tool_whose_verb_a_request_says_leads_the_tools_the_ranker_cannot_tell_apart():
    from trustgraph.agent.react.steps import ordered
    lead = embedding.calibration().lead
    tools = list(OUTAGES.tools.values())
    # "..., please report it": reporting a cut and the known cuts were 0.003 apart, and it asked back.
    question = "Our lights have all gone off at 27 Mill Lane, please report it"
    plain = [r.tool.name for r in rank(question, tools)]
    assert set(plain[:2]) == {"power-outage-report", "power-outage-status"}
    near = {r.tool.name: r.meaning for r in rank(question, tools)}
    assert abs(near["power-outage-report"] - near["power-outage-status"]) < lead   # no lead of its own
    got = ordered(question, tools)
    assert got[0].tool.name == "power-outage-report" and got[0].meaning - got[1].meaning >= lead
    # A question that asks to know, or a verb no tool near it starts with, leaves the order as it was.
    for question in ("is there a known blackout in Camden right now?", "Scratch the power cut report at 3 Elm Road"):
        assert [r.tool.name for r in ordered(question, tools)] == [r.tool.name for r in rank(question, tools)]
    # Only the verb of the request served first counts: "What's happening with ticket 3307? Also, assign
    # ticket 3310 to Marco Rossi" had assigned ticket 3307, the model's pick of the two numbers.
    helpdesk = list(registry_of(
        declared("ticket-status", "Look up the current status of an existing helpdesk ticket by its number",
                 {"name": "ticket_number", **TEXT}),
        declared("assign-ticket", "Assign an existing helpdesk ticket to a colleague",
                 {"name": "ticket_number", **TEXT}, {"name": "assignee", **TEXT})).tools.values())
    tied = [r._replace(meaning=0.55, score=0.55) for r in rank("ticket", helpdesk)]   # as near as the probe's
    assert [r.tool.name for r in by_verb(tied, "Assign ticket 3310 to Marco Rossi")][0] == "assign-ticket"
    question = "What's happening with ticket 3307? Also, assign ticket 3310 to Marco Rossi."
    assert by_verb(tied, question) == tied
    # Nor does the verb win when another tool says what the request is of: "log a ticket" asks for a
    # ticket, which logging a workout is not.
    desk = list(registry_of(declared("create-ticket", "Create a support ticket for an IT problem", {"name": "title", **TEXT}),
                            declared("log-workout", "Log a workout I did", {"name": "activity", **TEXT})).tools.values())
    question = "Can you log a ticket saying the VPN drops every hour?"
    near = {r.tool.name: r.meaning for r in rank(question, desk)}
    assert abs(near["create-ticket"] - near["log-workout"]) < lead
    assert [r.meaning for r in ordered(question, desk)] == [r.meaning for r in rank(question, desk)]



GYM = list(registry_of(
    declared("gym-timetable", "Which classes are on at the gym on a day", {"name": "day", **TEXT}),
    declared("book-gym-class", "Book a place in a gym class", {"name": "class_type", **TEXT}, {"name": "day", **TEXT}),
    declared("cancel-gym-booking", "Cancel a booked place in a gym class", {"name": "class_type", **TEXT},
             {"name": "day", **TEXT})).tools.values())


def test_the_one_tool_that_does_what_a_request_says_leads_a_first_that_does_something_else():
    lead = embedding.calibration().lead

    def ranked(**near: float) -> list:
        # The ranker's order of the probe's run, at its similarities (tools as far apart as there).
        return sorted((r._replace(meaning=near[r.tool.name], score=near[r.tool.name]) for r in rank("gym", GYM)),
                      key=lambda r: -r.meaning)

    # "..., cancel it" had booked the class, 0.21 nearer than cancelling it; "drop" a booking listed the
    # timetable (a tool that does nothing), 0.05 nearer.
    for question, near in [("cant make spin on thursday anymore, cancel it",
                            {"book-gym-class": 0.634, "cancel-gym-booking": 0.426, "gym-timetable": 0.327}),
                           ("Please drop my Saturday yoga booking",
                            {"gym-timetable": 0.594, "cancel-gym-booking": 0.54, "book-gym-class": 0.36})]:
        got = by_verb(ranked(**near), question)
        assert got[0].tool.name == "cancel-gym-booking", question
        assert got[0].meaning - max(r.meaning for r in got[1:]) >= lead
    # A tool that does nothing is no evidence against the one that does: "Book" it.
    near = {"gym-timetable": 0.594, "cancel-gym-booking": 0.54, "book-gym-class": 0.36}
    assert by_verb(ranked(**near), "Book my Saturday yoga, please")[0].tool.name == "book-gym-class"
    # Unchanged: a request whose verb the first does, one no tool does ("make"), a question that asks
    # to know, and a first that says what the question is of where the verb's tool does not.
    booking = {"book-gym-class": 0.634, "cancel-gym-booking": 0.426, "gym-timetable": 0.327}
    assert by_verb(ranked(**booking), "Book my Saturday yoga, please") == ranked(**booking)
    for question in ("Please make my Saturday yoga booking", "When is my Saturday yoga booking?"):
        assert by_verb(ranked(**near), question) == ranked(**near), question
    # Of several tools that do it, the nearest when it leads the next: "scrap booking CW-5602" cancels a
    # desk booking, not a print job.
    desks = list(registry_of(
        declared("my-bookings", "List my upcoming desk and meeting room bookings", {"name": "date", **TEXT}),
        declared("cancel-booking", "Cancel a desk or room booking by its number", {"name": "booking", **TEXT}),
        declared("cancel-print-job", "Cancel a print job", {"name": "job", **TEXT})).tools.values())
    near = {"my-bookings": 0.458, "cancel-booking": 0.331, "cancel-print-job": 0.25}
    ranked_desks = sorted((r._replace(meaning=near[r.tool.name], score=near[r.tool.name]) for r in rank("desk", desks)),
                          key=lambda r: -r.meaning)
    assert by_verb(ranked_desks, "scrap booking CW-5602, not coming in friday")[0].tool.name == "cancel-booking"
    near["cancel-print-job"] = 0.32    # as near as the other: neither
    ranked_desks = sorted((r._replace(meaning=near[r.tool.name], score=near[r.tool.name]) for r in rank("desk", desks)),
                          key=lambda r: -r.meaning)
    assert by_verb(ranked_desks, "scrap booking CW-5602, not coming in friday") == ranked_desks
    timetable = {"gym-timetable": 0.594, "cancel-gym-booking": 0.3, "book-gym-class": 0.2}
    assert by_verb(ranked(**timetable), "Please drop the classes on Saturday from my timetable") == ranked(**timetable)

def test_a_call_no_value_confirms_is_made_only_when_its_tool_is_plainly_asked_for():
    # No argument check confirms a call that carries no value: "thanks, that's all for now!" had
    # been near now-playing (0.32, far ahead of the rest) and called it, and "What's a typical
    # mortgage interest rate these days?" had shown the bank balance.
    for question, name in (("thanks, that's all for now!", "now-playing"),
                           ("What's a typical mortgage interest rate these days?", "account-balance")):
        step = prepare(request(question), SPEAKERS, {})
        assert step.meaning[name] < embedding.calibration().alone
        ending = judge_call(step, Action("", name, {}), None, Confidence())
        assert ending is not None and ending.outcome in (OUTCOME_ASKED, OUTCOME_NO_TOOL), question
        # With the argument check off, the call is the model's as before.
        assert judge_call(step, Action("", name, {}), None, Confidence(check_arguments=False)) is None
    # Near the question (its examples), the call is made; so is one with a value the question says.
    step = prepare(request("ooh whats this song called??"), SPEAKERS, {})
    assert judge_call(step, Action("", "now-playing", {}), None, Confidence()) is None
    step = prepare(request("What's in my savings, and is the mortgage rate good?"), SPEAKERS, {})
    assert judge_call(step, Action("", "account-balance", {"account": "savings"}), None, Confidence()) is None
    # Asked back, the tool is named when it is near the question, and never when it cannot be used.
    step = prepare(request("thanks, that's all for now!"), SPEAKERS, {})
    asked = judge_call(step, Action("", "now-playing", {}), None, Confidence())
    assert asked.outcome == OUTCOME_ASKED and asked.candidates == ("now-playing",)
    gone = judge_call(step, Action("", "now-playing", {}), None, Confidence(), usable=lambda n: n != "now-playing")
    assert gone.outcome == OUTCOME_NO_TOOL


def test_settle_leaves_out_an_optional_arguments_guess_and_keeps_what_was_said():
    registry = registry_of(declared("showtimes", "When a film is on", {"name": "movie", **TEXT},
                                    {"name": "city", **TEXT, "description": "Where", "required": False}))
    step = prepare(request("Showtimes for Oppenheimer"), registry, {})
    guessed = Action("t", "showtimes", {"movie": "Oppenheimer", "city": "Oppenheimer"})
    assert settle(step, guessed, Confidence()) == Action("t", "showtimes", {"movie": "Oppenheimer"})
    assert judge_call(step, settle(step, guessed, Confidence()), {"showtimes": 1.0}, Confidence()) is None
    said = Action("t", "showtimes", {"movie": "Oppenheimer", "city": "Boston"})
    step = prepare(request("Showtimes for Oppenheimer in Boston"), registry, {})
    assert settle(step, said, Confidence()) is said
    # With the argument check off, the model's values are taken as they are.
    assert settle(step, guessed, Confidence(check_arguments=False)) is guessed


def test_settle_takes_a_list_that_repeats_a_member_as_the_question_says_it():
    # "add batteries and a phone charger to my cart" filled the cart with two phone chargers: the
    # grammar asks for two members but cannot ask for them apart.
    registry = registry_of(declared("add-to-cart", "Add products to the cart",
                                    {"name": "products", "type": "array", "items": TEXT}))
    step = prepare(request("add batteries and a phone charger to my cart"), registry, {})
    repeated = Action("t", "add-to-cart", {"products": ["phone charger", "phone charger"]})
    assert settle(step, repeated, Confidence()).arguments == {"products": ["batteries", "phone charger"]}
    # Members apart, or a list the question does not say, are the model's as they are.
    apart = Action("t", "add-to-cart", {"products": ["phone charger", "batteries"]})
    assert settle(step, apart, Confidence()) is apart
    step = prepare(request("add batteries to my cart"), registry, {})
    twice = Action("t", "add-to-cart", {"products": ["batteries", "batteries"]})
    assert settle(step, twice, Confidence()) is twice


def test_settle_says_a_looping_free_text_once_unless_the_question_says_it_so():
    registry = registry_of(declared("sms", "Send a text message", {"name": "phone", **TEXT},
                                    {"name": "message", **TEXT, "free-text": True}))
    step = prepare(request("Text 555-0199 that I'm running late"), registry, {})
    looped = Action("", "sms", {"phone": "555-0199", "message": "I'm late, I'm late, I'm late, I'm late"})
    assert settle(step, looped, Confidence()).arguments == {"phone": "555-0199", "message": "I'm late"}
    step = prepare(request("Text 555-0199: 'Go! Go! Go!'"), registry, {})
    cheer = Action("", "sms", {"phone": "555-0199", "message": "Go! Go! Go!"})
    assert settle(step, cheer, Confidence()) is cheer


def test_the_models_call_stands_against_the_rankers_first_when_the_question_names_its_argument():
    # "Remember to buy batteries: add them to my hardware list": the encoder put a lights switch
    # first (0.42, add-to-list 0.32), and its lead took the model's right call over.
    registry = registry_of(LIST, declared("lights", "Turn the lights on or off", {"name": "room", **TEXT},
                                          {"name": "state", **TEXT, "enum": ["on", "off"]}))
    ranked = prepare(request("Remember to buy batteries: add them to my hardware list"), registry, {})
    step = Step(ranked.request, ranked.tools, {"lights": 0.42, "add-to-list": 0.32}, {}, ranked.said)
    unsure = {"add-to-list": 0.5, "lights": 0.5}
    call = Action("", "add-to-list", {"list": "hardware", "item": "batteries"})
    assert judge_call(step, call, unsure, Confidence()) is None
    guessed = Action("", "add-to-list", {"list": "hardware", "item": "glue"})
    asked = judge_call(step, guessed, unsure, Confidence())
    assert asked.outcome == OUTCOME_ASKED and asked.unsaid == ("item",) and asked.candidates == ("add-to-list", "lights")
    # Nothing named, or the model's choice far from the question: the ranker's lead decides.
    plain = prepare(request("Remember to buy batteries"), registry, {})
    step = Step(plain.request, plain.tools, {"lights": 0.42, "add-to-list": 0.32}, {}, plain.said)
    assert judge_call(step, Action("", "add-to-list", {"list": "batteries", "item": "batteries"}), unsure,
                      Confidence()) == Switch("lights", 0.5)
    step = Step(ranked.request, ranked.tools, {"lights": 0.42, "add-to-list": 0.1}, {}, ranked.said)
    assert judge_call(step, call, unsure, Confidence()) == Switch("lights", 0.5)


def test_a_value_the_rankers_tool_declares_names_no_argument_of_the_models():
    # Probe W: "need a maths tutor for a primary school kid, who've you got" kept the model's lesson
    # booking (its tutor "maths", a date and time made up: asked back) over the ranker's tutor search,
    # whose subject "maths" is: the value beside "tutor" is what the search declares.
    registry = registry_of(
        declared("tutoring-find-tutors", "Find tutors on the agency's books for a subject and level",
                 {"name": "subject", **TEXT, "enum": ["maths", "english", "physics"]},
                 {"name": "level", **TEXT, "enum": ["primary", "gcse"], "required": False}),
        declared("tutoring-book-lesson", "Book a lesson with a named tutor for a student at a given day and time",
                 {"name": "tutor", **TEXT, "description": "The tutor's name, e.g. Priya Shah"},
                 {"name": "student", **TEXT}, {"name": "date", **TEXT}, {"name": "time", **TEXT}))
    ranked = prepare(request("need a maths tutor for a primary school kid, who've you got"), registry, {})
    step = Step(ranked.request, ranked.tools, {"tutoring-find-tutors": 0.594, "tutoring-book-lesson": 0.531}, {},
                ranked.said)
    made_up = Action("", "tutoring-book-lesson", {"tutor": "maths", "student": "primary", "date": "2026-07-04",
                                                  "time": "2026-07-04"})
    got = judge_call(step, made_up, {"tutoring-book-lesson": 0.04, "tutoring-find-tutors": 0.03}, Confidence())
    assert got == Switch("tutoring-find-tutors", got.share), got
    # A name beside it that nothing declares still names it ("a lesson with tutor Priya Shah").
    named = prepare(request("book a lesson with tutor Priya Shah for Ella on Thursday at 16:30"), registry, {})
    assert named_arguments(named.tools[1].arguments if named.tools[1].name == "tutoring-book-lesson"
                           else named.tools[0].arguments, named.said, apart=registry.tools["tutoring-find-tutors"].arguments)


def test_where_the_ranker_cannot_tell_a_tool_whose_argument_the_question_names_is_called():
    # Over 42 tools: call-contact {"name": "call the plumber"} for "Add 'call the plumber' to my todo
    # list" (call-contact 0.331, add-to-list 0.322), the model's own scores favouring add-to-list.
    registry = registry_of(LIST, declared("call-contact", "Phone someone", {"name": "name", **TEXT}))
    ranked = prepare(request("Add 'call the plumber' to my todo list"), registry, {})
    step = Step(ranked.request, ranked.tools, {"call-contact": 0.331, "add-to-list": 0.322}, {}, ranked.said)
    call = Action("", "call-contact", {"name": "call the plumber"})
    assert judge_call(step, call, {"add-to-list": 0.085, "call-contact": 0.001}, Confidence()).tool == "add-to-list"
    # Not when the model finds its own choice likelier, nor when the ranker tells them apart.
    assert judge_call(step, call, {"add-to-list": 0.001, "call-contact": 0.5}, Confidence()) is None
    alone = judge_call(step, call, {"add-to-list": 0.085, "call-contact": 0.001}, Confidence(lead=0))
    assert alone.outcome == OUTCOME_ASKED   # the ranker's part off: the model's share alone decides
    apart = Step(ranked.request, ranked.tools, {"call-contact": 0.5, "add-to-list": 0.322}, {}, ranked.said)
    assert judge_call(apart, call, {"add-to-list": 0.085, "call-contact": 0.001}, Confidence()) is None


def test_judge_call_switches_to_the_rankers_clear_first_tool():
    ranked = prepare(request("Is it going to be chilly in Oslo?"), REGISTRY, {})
    step = Step(ranked.request, ranked.tools, {"weather": 0.4, "local-time": 0.2}, {}, ranked.said)
    unsure = {"local-time": 0.55, "weather": 0.45}
    assert judge_call(step, Action("", "local-time", {"city": "Oslo"}), unsure, Confidence()) == Switch("weather", 0.55)
    sure = {"local-time": 0.95, "weather": 0.05}
    assert judge_call(step, Action("", "local-time", {"city": "Oslo"}), sure, Confidence()) is None



def test_a_sure_choice_whose_values_nobody_said_gives_way_to_the_rankers_clear_first_tool():
    # "How do you say 'apple' in German?": the 135M model was sure of local-time for the city
    # "Berlin", translate-word first by far; the ask-back had named local-time alone.
    ranked = prepare(request("Is it going to be chilly in Oslo?"), REGISTRY, {})
    step = Step(ranked.request, ranked.tools, {"weather": 0.44, "local-time": 0.12, "joke": 0.1}, {}, ranked.said)
    sure = {"local-time": 0.9, "weather": 0.05, "joke": 0.05}
    made_up = Action("", "local-time", {"city": "Berlin"})
    switched = judge_call(step, made_up, sure, Confidence())
    assert isinstance(switched, Switch) and switched.tool == "weather"
    # The ranker's first unusable, or not clearly first, or the values said: as before.
    asked = judge_call(step, made_up, sure, Confidence(), usable=lambda name: name != "weather")
    assert asked.outcome == OUTCOME_ASKED and asked.tool == "local-time" and asked.unsaid == ("city",)
    close = Step(step.request, step.tools, {"weather": 0.44, "local-time": 0.42, "joke": 0.1}, {}, step.said)
    assert judge_call(close, made_up, sure, Confidence()).unsaid == ("city",)
    assert judge_call(step, Action("", "local-time", {"city": "Oslo"}), sure, Confidence()) is None


def test_an_ask_back_for_a_call_without_scores_offers_the_rankers_near_tools_after_it():
    # The ranker's local-time taken for "is LH 400 delayed", its city unsaid: the ask-back had
    # offered local-time alone (no scores to rank others by), flight-status third in the ranker's order.
    ranked = prepare(request("Is it going to be chilly in Oslo?"), REGISTRY, {})
    unrelated = embedding.calibration().unrelated if embedding.calibration() else 0.08
    step = Step(ranked.request, ranked.tools, {"weather": unrelated + 0.1, "local-time": unrelated + 0.2,
                                               "joke": unrelated - 0.05}, {}, ranked.said)
    asked = judge_call(step, Action("", "local-time", {"city": "Berlin"}), None, Confidence())
    assert asked.outcome == OUTCOME_ASKED and asked.tool == "local-time" and asked.candidates == ("local-time", "weather")
    only = judge_call(step, Action("", "local-time", {"city": "Berlin"}), None, Confidence(),
                      usable=lambda name: name != "weather")
    assert only.candidates == ("local-time",)

def test_a_first_step_plainly_asks_for_the_rankers_clear_first_tool_when_it_can_be_used():
    ranked = prepare(request("Is it going to be chilly in Oslo?"), REGISTRY, {})
    step = Step(ranked.request, ranked.tools, {"weather": 0.4, "local-time": 0.2}, {}, ranked.said)
    assert plainly_asked(step, Confidence()) == "weather"
    assert plainly_asked(step, Confidence(), usable=lambda name: name != "weather") is None
    assert plainly_asked(step, Confidence(lead=0)) is None                      # the ranker's part off
    alone = Step(step.request, step.tools[:1], {"weather": 0.4}, {}, step.said)
    assert plainly_asked(alone, Confidence()) is None                           # a lone tool: the model's
    close = Step(step.request, step.tools, {"weather": 0.4, "local-time": 0.38}, {}, step.said)
    assert plainly_asked(close, Confidence()) is None                           # no clear lead
    far = Step(step.request, step.tools, {"weather": 0.12, "local-time": 0.01}, {}, step.said)
    assert plainly_asked(far, Confidence(clear=0.2)) is None                    # not near enough
    later = request("Is it going to be chilly in Oslo?", [AgentStep(action="weather", arguments={"city": "Oslo"},
                                                                    observation="3°C")])
    assert plainly_asked(Step(later, step.tools, step.meaning, {}, step.said), Confidence()) is None


def test_the_rankers_clear_first_and_a_lone_tool_left():
    from trustgraph.agent.react.decisions import clear_first
    policy = Confidence(lead=0.05, clear=0.3)
    assert clear_first({"weather": 0.4, "local-time": 0.2}, ["weather", "local-time"], policy) == "weather"
    assert clear_first({"weather": 0.4, "local-time": 0.38}, ["weather", "local-time"], policy) is None   # no lead
    assert clear_first({"weather": 0.25, "local-time": 0.0}, ["weather", "local-time"], policy) is None   # not near
    assert clear_first({"weather": 0.4}, ["weather", "local-time"], policy) is None    # one not ranked
    # One tool leads nothing, unless it is the one left for a request the others have not served.
    assert clear_first({"weather": 0.4}, ["weather"], policy) is None
    assert clear_first({"weather": 0.4}, ["weather"], policy, lone=True) == "weather"
    assert clear_first({"weather": 0.25}, ["weather"], policy, lone=True) is None
    assert clear_first({"weather": 0.4}, ["weather"], Confidence(lead=0, clear=0.3), lone=True) is None   # ranker off
    assert clear_first({}, [], policy, lone=True) is None


DATES = registry_of(declared("day-of-week", "The day of the week a date falls on", {"name": "date", **TEXT}),
                    declared("days-until", "How many days from today until a date", {"name": "date", **TEXT}),
                    declared("weather", "Current weather in a city", {"name": "city", **TEXT}))
TWO = "What day of the week is 31 October 2026 and how many days away is it?"


def test_the_next_request_of_a_question_is_served_by_its_clear_tool_then_the_results_answer():
    # The 135M model answered "What day of the week is 31 October 2026 and how many days away is
    # it?" with the day alone: the second request went unanswered.
    day = AgentStep(action="day-of-week", arguments={"date": "31 October 2026"}, observation="A Saturday.")
    after_one = prepare(request(TWO, [day]), DATES, {})
    assert next_request(after_one, Confidence()) == Pending("days-until", "how many days away is it?")
    assert next_request(after_one, Confidence(), usable=lambda name: name != "days-until") is None
    until = AgentStep(action="days-until", arguments={"date": "31 October 2026"}, observation="24 days.")
    after_two = prepare(request(TWO, [day, until]), DATES, {})
    assert next_request(after_two, Confidence()) == Served("A Saturday.\n24 days.", ("day-of-week", "days-until"))


def test_the_next_requests_call_of_no_values_is_judged_by_that_request():
    from trustgraph.agent.react.steps import ordered
    library = registry_of(declared("renew-book", "Renew a book you already have on loan, extending its due date",
                                   {"name": "title", **TEXT}, {"name": "weeks", "type": "integer", "required": False}),
                          declared("reserve-book", "Reserve a book that is out on loan, to collect at a branch",
                                   {"name": "title", **TEXT}),
                          declared("my-loans", "List the books you have borrowed and when each is due back",
                                   {"name": "overdue_only", "type": "boolean", "required": False}))
    renewed = AgentStep(action="renew-book", arguments={"title": "Circe", "weeks": "2"},
                        observation="Circe is now due on 21 December.")
    step = prepare(request("Renew Circe for two weeks, then show me what else I have borrowed.", [renewed]),
                   library, {})
    pending = next_request(step, Confidence())
    assert pending == Pending("my-loans", "show me what else I have borrowed.")
    assert pending.meaning == {r.tool.name: r.meaning for r in ordered(pending.request, step.tools)}
    # The whole question is less near the loans than its request for them is.
    assert judge_call(step, Action("", "my-loans", {}), None, Confidence()) is not None
    by_request = dataclasses.replace(step, meaning=pending.meaning)
    assert judge_call(by_request, Action("", "my-loans", {}), None, Confidence()) is None
    # A flag left false is no value the question gives; one set is.
    assert judge_call(step, Action("", "my-loans", {"overdue_only": False}), None, Confidence()) is not None


def test_the_next_requests_call_takes_its_own_values_or_the_questions():
    from trustgraph.agent.react.steps import request_arguments

    def cities(step, pending):
        return request_arguments(step, pending)["properties"]["city"]["enum"]

    # "..., and what's the local time in Tokyo?" had been given Lisbon, said first.
    rain = AgentStep(action="weather", arguments={"city": "Lisbon"}, observation="It is raining in Lisbon.")
    step = prepare(request("Is it raining in Lisbon right now, and what's the local time in Tokyo?", [rain]),
                   REGISTRY, {})
    pending = next_request(step, Confidence())
    assert pending == Pending("local-time", "what's the local time in Tokyo?") and cities(step, pending) == ["Tokyo"]
    # "there" says no city: the whole question's.
    sun = AgentStep(action="weather", arguments={"city": "Oslo"}, observation="It is 4°C in Oslo.")
    step = prepare(request("What's the weather in Oslo and what time is it there?", [sun]), REGISTRY, {})
    pending = next_request(step, Confidence())
    assert pending is not None and pending.tool == "local-time" and "Oslo" in cities(step, pending)


def test_a_next_request_that_says_nothing_of_its_own_takes_the_questions_values():
    from trustgraph.agent.react.steps import request_arguments
    # "..., and how has it moved over the past month?" had priced the ticker "past": its request,
    # offered whole where it says nothing else, is no ticker.
    stocks = registry_of(declared("stock-price", "The current share price of a company", {"name": "ticker", **TEXT}),
                         declared("stock-history", "How a company's share price moved over a period",
                                  {"name": "ticker", **TEXT},
                                  {"name": "period", "type": "string", "enum": ["week", "month"]}))
    price = AgentStep(action="stock-price", arguments={"ticker": "Apple"}, observation="Apple: 190.12")
    step = prepare(request("What's Apple's share price now, and how has it moved over the past month?", [price]),
                   stocks, {})
    pending = Pending("stock-history", "how has it moved over the past month?")
    got = request_arguments(step, pending)["properties"]
    assert "Apple" in got["ticker"]["enum"] and "past" not in got["ticker"]["enum"]
    assert got["period"]["enum"] == ["month"]


def test_a_next_request_that_names_no_one_takes_the_name_from_the_question():
    from trustgraph.agent.react.steps import request_arguments
    # "When are Rex's vaccinations due? Then book him in at the vet on 3 June at 9am" had booked the
    # pet `3 June at 9`: its request names no pet, so the question's values are offered (Rex), and
    # no run read across the time; then the date of the first result ("due 1 July") instead of its
    # own: each argument the request says is its own.
    vet = registry_of(declared("pet-vaccination-due", "When a pet's next vaccinations are due",
                               {"name": "pet_name", "type": "string", "description": "The pet's name"}),
                      declared("book-vet-appointment", "Book an appointment at the vet for a pet",
                               {"name": "pet_name", "type": "string", "description": "The pet's name"},
                               {"name": "date", "type": "string", "description": "The day, e.g. 12 May"},
                               {"name": "time", "type": "string", "description": "The time of day, e.g. 3pm"}))
    due = AgentStep(action="pet-vaccination-due", arguments={"pet_name": "Rex"}, observation="Rex: due 1 July")
    step = prepare(request("When are Rex's vaccinations due? Then book him in at the vet on 3 June at 9am", [due]),
                   vet, {})
    pending = Pending("book-vet-appointment", "Then book him in at the vet on 3 June at 9am")
    props = request_arguments(step, pending)["properties"]
    assert "Rex" in props["pet_name"]["enum"] and not any("9" in v for v in props["pet_name"]["enum"])
    assert props["date"]["enum"] == ["3 June"] and props["time"]["enum"] == ["9am"]
    # Not raised: no run of the whole dialog cut across its time either.
    tool = step.tool("book-vet-appointment")
    whole = grounded(tool.schema, tool.arguments, step.said, own_words(tool.name, tool.description))["properties"]
    assert not any("9" in v for v in whole["pet_name"]["enum"])


def test_a_first_step_of_several_requests_is_ranked_for_the_first_when_it_plainly_asks():
    # The whole of "How many days until 25 December 2026, and what day of the week is that?" is as
    # near both tools, and the dialog asked back; its first request plainly asks for one.
    question = "How many days until 25 December 2026, and what day of the week is that?"
    whole = prepare(request(question), DATES, {})
    assert plainly_asked(whole, Confidence()) is None
    step = prepare(request(question), DATES, {}, Confidence())
    assert step.tools[0].name == "days-until" and plainly_asked(step, Confidence()) == "days-until"
    assert [t.name for t in prepare(request("Is it cold in Oslo?"), DATES, {}, Confidence()).tools][0] == "weather"


def test_the_first_request_of_several_takes_its_own_values():
    # "Roll two dice and then pick a random number between 1 and 50" had rolled dice of 1 side.
    chance = registry_of(
        declared("roll-dice", "Roll one or more dice", {"name": "sides", "type": "integer", "required": False,
                                                       "description": "Faces on each die"},
                 {"name": "count", "type": "integer", "required": False, "description": "How many dice to roll"}),
        declared("random-number", "Pick a random whole number between a minimum and a maximum",
                 {"name": "minimum", "type": "integer", "required": False},
                 {"name": "maximum", "type": "integer", "required": False}))
    step = prepare(request("Roll two dice and then pick a random number between 1 and 50"), chance, {}, Confidence())
    assert step.tools[0].name == "roll-dice" and step.said.numbers == [2]
    # A first request that says none of its tool's values takes the question's.
    weather = prepare(request("What's it like there, and is it raining in Oslo?"), REGISTRY, {}, Confidence())
    assert "Oslo" in weather.said.texts


def test_a_question_of_one_request_or_a_failed_step_has_no_next_request():
    weather = AgentStep(action="weather", arguments={"city": "Oslo"}, observation="3°C")
    assert next_request(prepare(request("Is it cold in Oslo?", [weather]), DATES, {}), Confidence()) is None
    assert next_request(prepare(request(TWO), DATES, {}), Confidence()) is None          # no result yet
    failed = AgentStep(action="day-of-week", arguments={"date": "x"}, observation="Error: no such date")
    assert next_request(prepare(request(TWO, [failed]), DATES, {0: FAILURE_FAILED}), Confidence()) is None
    # Each request's nearest tool called, but one tool only: the model answers, as before.
    day = AgentStep(action="day-of-week", arguments={"date": "31 October 2026"}, observation="A Saturday.")
    both = "What day of the week is 31 October 2026 and what day of the week is 1 November 2026?"
    assert next_request(prepare(request(both, [day]), DATES, {}), Confidence()) is None


# -- record -----------------------------------------------------------------------------------


def call(failure: str | None, reason: str = "") -> ToolCall:
    return ToolCall("Error: " + reason if failure else "fine", None, failure, reason)


def test_after_call_ends_an_unusable_tool_at_once_and_a_repeated_failure_with_the_models_answer():
    action = Action("", "weather", {"city": "Oslo"})
    step = prepare(request("Weather in Oslo?"), REGISTRY, {})
    assert after_call(step, action, {"city": "Oslo"}, call(None)) is None
    assert after_call(step, action, {"city": "Oslo"}, call(FAILURE_FAILED, "tool 'weather' failed: boom")) is None
    gone = after_call(step, action, {"city": "Oslo"},
                      call(FAILURE_UNAVAILABLE, "tool 'weather' cannot be used now: tool service 'svc' is not running"))
    assert gone == Failed("Tool 'weather' cannot be used now: tool service 'svc' is not running",
                          outcome="tool-unavailable")
    failed = AgentStep(action="weather", arguments={"city": "Oslo"}, observation="Error: boom")
    again = prepare(request("Weather in Oslo?", [failed]), REGISTRY, {0: FAILURE_FAILED})
    ended = after_call(again, action, {"city": "Oslo"}, call(FAILURE_FAILED, "tool 'weather' failed: boom"))
    assert ended == NoResult("the same call of tool 'weather' failed twice: tool 'weather' failed: boom")
    # other arguments are another call: the dialog goes on
    assert after_call(again, action, {"city": "Bergen"}, call(FAILURE_FAILED, "x")) is None
    # a call lost mid-way may be tried again once; lost twice, the tool cannot be used now
    assert after_call(step, action, {"city": "Oslo"}, call(FAILURE_LOST, "lost")) is None
    lost = prepare(request("Weather in Oslo?", [failed]), REGISTRY, {0: FAILURE_LOST})
    assert after_call(lost, action, {"city": "Bergen"}, call(FAILURE_LOST, "lost")).outcome == "tool-unavailable"


def test_failure_kinds_travel_with_the_dialog_and_an_upstream_dialog_is_read_by_its_errors():
    history = [AgentStep(action="a", observation="Error: x"), AgentStep(action="b", observation="fine")]
    assert carried_failures(failures_property({0: FAILURE_UNAVAILABLE}), history) == {0: FAILURE_UNAVAILABLE}
    assert carried_failures(None, history) == {0: FAILURE_FAILED}          # an upstream peer's dialog
    assert carried_failures("not json", history) == {0: FAILURE_FAILED}
    assert carried_failures('{"7": "lost", "x": "y", "1": 3}', history) == {}   # out of range, junk
    assert said_values("", []).texts == []


# -- a question about a tool whose service stopped -----------------------------------------------

STOPPED = [("joke-service", {"name": "tell-joke", "description": "Tell a joke on a given topic",
                             "arguments": [{"name": "topic", "description": "The topic"}]})]


def test_a_question_about_a_stopped_services_tool_ends_as_tool_unavailable_naming_both():
    live = build_registry({"tool": {"weather": tool("weather", "Current weather in a city")},
                           "tool-service": {"svc": json.dumps(SERVICE)}}, ToolServiceClients(None))
    ended = gone_nearer(prepare(request("Make me laugh with a joke about cats"), live, {}), STOPPED)
    assert isinstance(ended, Failed) and ended.outcome == "tool-unavailable"
    assert "tell-joke" in ended.message and "joke-service" in ended.message and "not running" in ended.message
    # A question a live tool fits better goes on; so does a later step, and nothing stopped.
    assert gone_nearer(prepare(request("What is the weather in Paris?"), live, {}), STOPPED) is None
    later = [AgentStep(action="weather", arguments={"city": "Paris"}, observation="18 C")]
    assert gone_nearer(prepare(request("Make me laugh with a joke about cats", later), live, {}), STOPPED) is None
    assert gone_nearer(prepare(request("Make me laugh with a joke about cats"), live, {}), []) is None


def test_a_question_near_nothing_is_not_blamed_on_a_stopped_service():
    live = build_registry({"tool": {"weather": tool("weather", "Current weather in a city")},
                           "tool-service": {"svc": json.dumps(SERVICE)}}, ToolServiceClients(None))
    assert gone_nearer(prepare(request("Who wrote Pride and Prejudice?"), live, {}), STOPPED) is None


def test_a_stopped_tool_the_question_is_about_is_named_though_a_live_one_is_barely_related():
    # "what classes are on at the gym on friday" with the gym's service stopped (its timetable 0.92
    # near) had asked back offering a bike dock (0.21) and a flight's status.
    bikes = json.loads(declared("bike-availability", "Find free bikes and empty docks at a bike-share docking "
                                "station and nearby", {"name": "station", **TEXT}))
    bikes["examples"] = ["Are there any bikes left at Waterloo Place?", "Any electric bikes at Canary Wharf?",
                         "Where can I dock my bike near Kings Cross?"]
    live = registry_of(json.dumps(bikes), declared("flight-status", "Is a flight on time, delayed or cancelled",
                                                   {"name": "flight_number", **TEXT}))
    gym = [("gym-service", {"name": "gym-timetable", "description": "Which classes are on at the gym on a day"})]
    step = prepare(request("what classes are on at the gym on friday"), live, {})
    calibration = embedding.calibration()
    assert calibration.unrelated <= max(step.meaning.values()) < calibration.near   # related, barely
    ended = gone_nearer(step, gym)
    assert isinstance(ended, Failed) and ended.outcome == "tool-unavailable" and "gym-service" in ended.message


def test_a_listed_tool_whose_service_is_down_is_named_not_asked_back_around():
    # In the seconds between a service's death and its lease running out its tools are still listed,
    # but none can be used: "what classes are on at the gym on friday" had asked back offering a bike
    # dock and a flight's status (the ask-back offers usable tools only, however far).
    bikes = declared("bike-availability", "Find free bikes and empty docks at a bike-share docking station",
                     {"name": "station", **TEXT})
    flights = declared("flight-status", "Is a flight on time, delayed or cancelled", {"name": "flight_number", **TEXT})
    gym = declared("gym-timetable", "Which classes are on at the gym on a day", {"name": "day", **TEXT})
    live = registry_of(bikes, flights, gym)
    down = "tool service 'gym-service' is not running: no replica is live"
    step = prepare(request("what classes are on at the gym on friday"), live, {})
    ended = gone_nearer(step, [], unavailable=lambda name: down if name == "gym-timetable" else None)
    assert isinstance(ended, Failed) and ended.outcome == "tool-unavailable"
    assert ended.message == f"Tool 'gym-timetable' cannot be used now: {down}"
    # Usable, it is used; a question about a usable tool is not blamed on the one that is down.
    assert gone_nearer(step, []) is None
    flight = prepare(request("is BA117 on time?"), live, {})
    assert gone_nearer(flight, [], unavailable=lambda name: down if name == "gym-timetable" else None) is None


def test_a_usable_tool_that_fits_is_used_however_near_a_stopped_one():
    # A weather service replaced by another: the old one is remembered as stopped.
    # The stopped tool is the nearer by more than the ranker's lead (0.50 against 0.44), but the live
    # one fits the question too.
    live = build_registry({"tool": {"conditions": tool("conditions", "Outdoor conditions for a location")},
                           "tool-service": {"svc": json.dumps(SERVICE)}}, ToolServiceClients(None))
    old = [("old-weather-service", {"name": "weather", "description": "Current weather in a city"})]
    assert gone_nearer(prepare(request("What is the weather in Oslo?"), live, {}), old) is None


def test_judge_call_asks_back_before_a_tool_that_acts_for_a_question_that_asks_for_no_action():
    # "Is coffee bad for your heart?" had ordered a coffee called "bad" (the ranker's clear first
    # tool, 0.55 near); "Why are taxis yellow in New York?" booked a taxi to New York.
    registry = registry_of(declared("order-coffee", "Order a coffee from the cafe", {"name": "drink", **TEXT}),
                           declared("weather", "Current weather in a city", {"name": "city", **TEXT}))
    step = prepare(request("Is coffee bad for your heart?"), registry, {})
    asked = judge_call(step, Action("", "order-coffee", {"drink": "bad"}), {"order-coffee": 0.9, "weather": 0.1},
                       Confidence())
    assert asked.outcome == OUTCOME_ASKED and asked.candidates == ("order-coffee",)
    # A request is called; a tool that only reads answers a question; the check off, anything goes.
    step = prepare(request("Can I get a latte?"), registry, {})
    assert judge_call(step, Action("", "order-coffee", {"drink": "latte"}), {"order-coffee": 0.9, "weather": 0.1},
                      Confidence()) is None
    step = prepare(request("Is it raining in Dublin?"), registry, {})
    assert judge_call(step, Action("", "weather", {"city": "Dublin"}), {"weather": 0.9, "order-coffee": 0.1},
                      Confidence()) is None
    step = prepare(request("Is coffee bad for your heart?"), registry, {})
    assert judge_call(step, Action("", "order-coffee", {"drink": "coffee"}), {"order-coffee": 0.9, "weather": 0.1},
                      Confidence(check_arguments=False)) is None
    # The ranker's tool taken over the model's choice is judged so too, and one that cannot be used
    # now is not offered.
    step = prepare(request("Is coffee bad for your heart?"), registry, {})
    meaning = dict(step.meaning, **{"order-coffee": 0.55, "weather": 0.1})
    step = Step(step.request, step.tools, meaning, step.failures, step.said)
    asked = judge_call(step, Action("", "weather", {"city": "heart"}), {"weather": 0.4, "order-coffee": 0.35},
                       Confidence())
    assert asked.outcome == OUTCOME_ASKED and asked.candidates == ("order-coffee",)
    gone = judge_call(step, Action("", "weather", {"city": "heart"}), {"weather": 0.4, "order-coffee": 0.35},
                      Confidence(), usable=lambda name: name != "order-coffee")
    assert gone.outcome == OUTCOME_NO_TOOL


def test_judge_call_leaves_a_question_asking_why_in_general_to_the_model():
    # "Why do cats purr?" had called a pet's vaccinations for the pet `cats` (probe R).
    registry = registry_of(declared("pet-vaccination-due", "When a pet's next vaccinations are due",
                                    {"name": "pet_name", **TEXT}))
    step = prepare(request("Why do cats purr?"), registry, {})
    verdict = judge_call(step, Action("", "pet-vaccination-due", {"pet_name": "cats"}), None, Confidence())
    assert verdict is not None and verdict.outcome == OUTCOME_NO_TOOL
    # Of the asker's own pet, it is called; with the check off, anything goes.
    step = prepare(request("Why is Rex due for his shots?"), registry, {})
    assert judge_call(step, Action("", "pet-vaccination-due", {"pet_name": "Rex"}), None, Confidence()) is None
    step = prepare(request("Why do cats purr?"), registry, {})
    assert judge_call(step, Action("", "pet-vaccination-due", {"pet_name": "cats"}), None,
                      Confidence(check_arguments=False)) is None
    # A call of no value too, which a weak nearness alone would have asked back about.
    pets = registry_of(declared("pet-facts", "Facts about my pets"))
    step = prepare(request("Why do cats purr?"), pets, {})
    step = dataclasses.replace(step, meaning={"pet-facts": 0.40})
    verdict = judge_call(step, Action("", "pet-facts", {}), None, Confidence())
    assert verdict is not None and verdict.outcome == OUTCOME_NO_TOOL


def test_a_call_of_no_value_asks_back_when_a_near_tool_takes_what_the_question_names():
    # "does the library have anything by Matt Haig?" had listed the loans (0.57, no arguments) where
    # the library search (0.51) takes the author.
    library = registry_of(declared("library-loans", "The books I have on loan from the library"),
                          declared("library-search", "Search the library catalogue for a book",
                                   {"name": "book", **TEXT, "description": "A title or an author"}))
    step = prepare(request("does the library have anything by Matt Haig?"), library, {})
    step = dataclasses.replace(step, meaning={"library-loans": 0.569, "library-search": 0.514})
    verdict = judge_call(step, Action("", "library-loans", {}), None, Confidence())
    assert verdict is not None and verdict.outcome == OUTCOME_ASKED
    assert set(verdict.candidates) == {"library-loans", "library-search"}
    # Naming nothing, or the other tool far behind, the call stands as the rest of the judge says.
    step = prepare(request("what books have I got on loan"), library, {})
    step = dataclasses.replace(step, meaning={"library-loans": 0.8, "library-search": 0.5})
    assert judge_call(step, Action("", "library-loans", {}), None, Confidence()) is None
    step = prepare(request("does the library have anything by Matt Haig?"), library, {})
    step = dataclasses.replace(step, meaning={"library-loans": 0.8, "library-search": 0.5})
    assert judge_call(step, Action("", "library-loans", {}), None, Confidence()) is None


def test_an_ask_back_before_a_tool_that_acts_offers_the_tools_near_that_only_read():
    # "What's my dentist's phone number?" was nearest a tool that phones (0.47), then one that looks
    # a number up (0.38): the ask-back offered only the first.
    registry = registry_of(declared("call-contact", "Phone someone", {"name": "name", **TEXT}),
                           declared("lookup-contact", "A person's phone number and email from the address book",
                                    {"name": "name", **TEXT}),
                           declared("weather", "Current weather in a city", {"name": "city", **TEXT}))
    step = prepare(request("What's my dentist's phone number?"), registry, {})
    meaning = dict(step.meaning, **{"call-contact": 0.47, "lookup-contact": 0.38, "weather": 0.1})
    step = Step(step.request, step.tools, meaning, step.failures, step.said)
    scores = {"call-contact": 0.9, "lookup-contact": 0.05, "weather": 0.05}
    asked = judge_call(step, Action("", "call-contact", {"name": "dentist"}), scores, Confidence())
    assert asked.outcome == OUTCOME_ASKED and asked.candidates == ("call-contact", "lookup-contact")
    # A tool that cannot be used now is not offered, and one far from the question neither.
    asked = judge_call(step, Action("", "call-contact", {"name": "dentist"}), scores, Confidence(),
                       usable=lambda name: name != "lookup-contact")
    assert asked.candidates == ("call-contact",)
