"""Honest endings: how sure the model was (choice scores), asking back, answers taken from a
tool's result, and the tools a prompt has room for."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import pytest
from trustgraph.agent.react.decisions import (
    Confidence,
    answer_problem,
    ask_back,
    from_result,
    judge,
)
from trustgraph.base.formats import decision_schema
from trustgraph.catalog import embedding
from trustgraph.catalog.ranking import MAX_PROMPT_TOOL_CHARS, for_prompt, rank
from trustgraph.model.text_completion.choice_scores import choice_scores
from trustgraph.schema.services.agent import OUTCOME_ASKED, OUTCOME_NO_TOOL

# -- choice scores from token probabilities ---------------------------------------------------


def tok(text: str, p: float, *alternatives: tuple[str, float]) -> dict[str, Any]:
    """One llama.cpp logprobs entry: the token, its probability and the alternatives (with itself)."""
    top = [{"token": text, "logprob": math.log(p)}] + [{"token": t, "logprob": math.log(q)} for t, q in alternatives]
    return {"token": text, "logprob": math.log(p), "top_logprobs": top}


def generated(*value_tokens: dict[str, Any]) -> list[dict[str, Any]]:
    """``{"action": "<value tokens>", "args": {}}`` as tokens; the value's tokens as given."""
    return [tok('{"', 1.0), tok("action", 1.0), tok('":', 1.0), tok(' "', 1.0), *value_tokens,
            tok(' "', 1.0), tok("args", 1.0), tok('":', 1.0), tok(" {}}", 1.0)]


def test_whole_names_are_scored_where_they_part():
    # "convert-" is shared: the options are told apart at the token after it.
    tokens = generated(tok("convert", 0.8, ("weather", 0.1)), tok("-", 0.99),
                       tok("units", 0.6, ("currency", 0.3)), tok('",', 0.9))
    scores = choice_scores(tokens, "action", ["convert-units", "convert-currency", "weather", "final-answer"])
    assert math.isclose(scores["convert-units"], 0.8 * 0.99 * 0.6 * 0.9, rel_tol=1e-6)
    assert math.isclose(scores["convert-currency"], 0.8 * 0.99 * 0.3, rel_tol=1e-6)
    assert math.isclose(scores["weather"], 0.1, rel_tol=1e-6)
    # never considered: half the smallest reported probability at the point it parted
    assert math.isclose(scores["final-answer"], 0.1 / 2, rel_tol=1e-6)


def test_alternative_tokenisations_of_an_option_count_together():
    tokens = generated(tok("tell", 0.5, ("t", 0.2), ("weather", 0.1)), tok("-", 1.0), tok("joke", 1.0),
                       tok('",', 1.0))
    scores = choice_scores(tokens, "action", ["tell-joke", "weather"])
    assert math.isclose(scores["tell-joke"], 0.5 + 0.2, rel_tol=1e-6)   # "tell", and "t" then the rest
    assert math.isclose(scores["weather"], 0.1, rel_tol=1e-6)


def test_a_start_two_options_share_is_split_by_what_the_model_said_where_they_part():
    # The grammar wrote "t" + "ell"; the model rated the "tell" token, which starts both tools,
    # far higher.  Given whole to each, it made every two tools with a common start tie.
    tokens = generated(tok("t", 0.07, ("tell", 0.07)), tok("ell", 0.04), tok("-", 1.0),
                       tok("dad", 0.75, ("j", 0.25)), tok("-", 1.0), tok("joke", 1.0), tok('",', 1.0))
    scores = choice_scores(tokens, "action", ["tell-dad-joke", "tell-joke"])
    path = 0.07 * 0.04
    assert math.isclose(scores["tell-dad-joke"], path * 0.75 + 0.07 * 0.75, rel_tol=1e-6)
    assert math.isclose(scores["tell-joke"], path * 0.25 + 0.07 * 0.25, rel_tol=1e-6)
    # Where the generation says nothing of either (it wrote another option), they share equally.
    tokens = generated(tok("weather", 0.6, ("tell", 0.3)), tok('",', 1.0))
    scores = choice_scores(tokens, "action", ["weather", "tell-dad-joke", "tell-joke"])
    assert math.isclose(scores["tell-dad-joke"], 0.15, rel_tol=1e-6)
    assert math.isclose(scores["tell-joke"], 0.15, rel_tol=1e-6)


def test_in_react_text_the_tool_is_scored_where_the_reply_first_names_it():
    # "Thought: I will use the tell-joke tool.\nAction: tell-joke": the choice is made in the
    # thought; the Action line only repeats it (and was near certain).
    tokens = [tok(" I", 0.9), tok(" will", 0.9), tok(" use", 0.9), tok(" the", 0.9),
              tok(" tell", 0.5, ("weather", 0.2), (" weather", 0.1), (" count", 0.1)), tok("-", 1.0),
              tok("joke", 0.8, ("dad", 0.2)), tok(" tool", 0.9), tok(".\nAction", 1.0), tok(":", 1.0),
              tok(" tell", 0.99, (" weather", 0.01)), tok("-", 1.0), tok("joke", 1.0)]
    field = decision_schema.FIRST_MENTION
    scores = choice_scores(tokens, field, ["tell-joke", "weather", "tell-dad-joke", "count-words"])
    assert math.isclose(scores["weather"], 0.2 + 0.1, rel_tol=1e-6)   # with and without the space
    assert math.isclose(scores["tell-joke"], 0.5 * 0.8, rel_tol=1e-6)
    assert math.isclose(scores["tell-dad-joke"], 0.5 * 0.2, rel_tol=1e-6)
    assert math.isclose(scores["count-words"], 0.1, rel_tol=1e-6)   # considered; its rest taken as certain
    # A name inside a longer one is no mention of it; a reply that names no option has no scores.
    longer = [tok(" use", 1.0), tok(" weather", 0.7, (" tell", 0.3)), tok("-report", 1.0), tok(" now", 1.0)]
    assert choice_scores(longer, field, ["weather", "tell-joke"]) is None
    assert choice_scores([tok(" Paris", 1.0)], field, ["weather"]) is None


def test_no_field_or_no_probabilities_gives_none():
    assert choice_scores([tok("hello", 1.0)], "action", ["a"]) is None
    broken = generated(tok("a", 1.0))
    broken[4]["logprob"] = None
    assert choice_scores(broken, "action", ["a"]) is None


def test_choices_and_scores_properties_round_trip_and_refuse_junk():
    raw = decision_schema.choices_request(["a", "b"])
    assert decision_schema.parse_choices(raw) == ("action", ["a", "b"])
    for junk in (None, "", "[1]", "{", '{"field": 3, "options": []}', '{"field": "action", "options": [1]}'):
        assert decision_schema.parse_choices(junk) is None
    assert decision_schema.parse_scores('{"a": 0.5, "b": true, "c": 7, "d": "x"}') == {"a": 0.5}
    assert decision_schema.parse_scores("[]") is None
    schema = decision_schema.decision_schema([("a", {"type": "object"}), ("b", {"type": "object"})])
    assert decision_schema.action_names(schema) == ["a", "b", decision_schema.FINAL_ACTION]


# -- judging the choice ------------------------------------------------------------------------


TOOLS = ["weather", "local-time", "tell-joke"]


def test_a_clear_choice_is_taken():
    assert judge("weather", {"weather": 0.6, "local-time": 0.1, "tell-joke": 0.05}, TOOLS, Confidence()) is None


def test_a_guess_asks_back_with_the_likely_tools_most_likely_first():
    got = judge("local-time", {"weather": 0.5, "local-time": 0.1, "tell-joke": 0.01}, TOOLS, Confidence())
    assert got is not None and got.outcome == OUTCOME_ASKED
    assert got.candidates == ("weather", "local-time")
    assert 0.15 < got.share < 0.2
    assert judge("local-time", {"weather": 0.5, "local-time": 0.1, "tell-joke": 0.01}, TOOLS,
                 Confidence(accept=0.15)) is None


def test_nothing_likely_while_the_model_would_answer_itself_is_no_tool():
    got = judge("weather", {"weather": 0.0001, "local-time": 0.0002, "tell-joke": 0.0001,
                            decision_schema.FINAL_ACTION: 0.9}, TOOLS, Confidence())
    assert got is not None and got.outcome == OUTCOME_NO_TOOL and got.candidates == ()
    # A small model would rather answer itself almost always: that alone is no "no tool fits".
    likely = {"weather": 0.01, "local-time": 0.012, "tell-joke": 0.01, decision_schema.FINAL_ACTION: 0.9}
    assert judge("weather", likely, TOOLS, Confidence()) is None                 # a fair share: called
    got = judge("weather", likely, TOOLS, Confidence(accept=0.5))
    assert got is not None and got.outcome == OUTCOME_ASKED
    # and "no tool fits" does not wait for the chosen tool's share to be low
    got = judge("weather", {"weather": 0.0004, "local-time": 0.0001, decision_schema.FINAL_ACTION: 0.9}, TOOLS,
                Confidence())
    assert got is not None and got.outcome == OUTCOME_NO_TOOL


def test_a_toss_up_between_two_tools_asks_back_naming_both():
    close = {"local-time": 0.40, "weather": 0.35, "tell-joke": 0.02}
    got = judge("local-time", close, TOOLS, Confidence())
    assert got is not None and got.outcome == OUTCOME_ASKED and got.candidates[:2] == ("local-time", "weather")
    assert judge("local-time", close, TOOLS, Confidence(tie=0)) is None      # turned off
    assert judge("local-time", close, TOOLS, Confidence(tie=0.9)) is None    # 0.35 < 0.9 x 0.40
    # a clear lead is taken; so is the grammar's pick of the runner-up (its share alone judges it)
    assert judge("local-time", {"local-time": 0.40, "weather": 0.30}, TOOLS, Confidence()) is None
    assert judge("weather", close, TOOLS, Confidence()) is None


def test_without_scores_or_with_one_tool_or_disabled_the_choice_is_taken():
    assert judge("weather", None, TOOLS, Confidence()) is None
    assert judge("weather", {"weather": 0.01}, ["weather"], Confidence()) is None
    assert judge("weather", {"weather": 0.01, "tell-joke": 0.9}, TOOLS, Confidence(accept=0)) is None


@dataclass
class T:
    name: str
    description: str = ""
    arguments: list[Any] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)


def test_asking_back_names_each_candidate_with_its_description():
    text = ask_back([T("weather", "Current weather in a city."), T("local-time", "The local time")])
    assert "`weather` (Current weather in a city) or `local-time` (The local time)?" in text


# -- answers taken from a tool's result ----------------------------------------------------------


def test_an_echoing_tools_result_is_an_answer_not_a_restatement():
    question = "Shout 'fire drill at noon'"
    assert answer_problem("FIRE DRILL AT NOON", question, ["shout"]) is not None   # no result: refused
    assert answer_problem("FIRE DRILL AT NOON", question, ["shout"], ["FIRE DRILL AT NOON"]) is None
    assert from_result("fire drill at noon", ["It is sunny", "FIRE DRILL AT NOON!"]) == 1
    assert from_result("something else", ["FIRE DRILL AT NOON"]) is None
    assert answer_problem("", question, [], ["x"]) is not None   # empty stays refused


# -- the tools a prompt has room for ----------------------------------------------------------


def test_many_tools_are_cut_to_the_most_relevant_that_fit():
    filler = "word " * 480   # about 2.4 KB per description, as the many-tools scenario's
    tools = [{"name": f"tool-{i}", "description": f"Does thing number {i}. {filler}", "arguments": []}
             for i in range(2000)]
    tools.append({"name": "weather", "description": "Current weather in a city", "arguments": []})
    kept = for_prompt("What is the weather in Paris?", tools)
    assert kept[0]["name"] == "weather"
    assert len(json.dumps(kept)) <= MAX_PROMPT_TOOL_CHARS + len(json.dumps(kept[0])) + 2 * len(kept)
    assert 1 < len(kept) < 10


def by_relevance(question, tools):
    return [r.tool for r in rank(question, tools)]


@pytest.mark.parametrize("ranker", ["meaning", "words"])
def test_few_tools_are_all_kept_in_relevance_order(ranker, monkeypatch):
    monkeypatch.setenv(embedding.RANKER_ENV, ranker)
    embedding.reset()
    tools = [T("tell-joke", "Tell a joke"), T("weather", "Current weather in a city")]
    assert [t.name for t in for_prompt("weather in Oslo", tools)] == ["weather", "tell-joke"]
    assert [t.name for t in by_relevance("joke please", tools)] == ["tell-joke", "weather"]
    assert (rank("joke please", tools)[0].meaning is None) == (ranker == "words")
    embedding.reset()


@pytest.mark.parametrize("ranker", ["meaning", "words"])
def test_examples_count_as_the_tools_words(ranker, monkeypatch):
    monkeypatch.setenv(embedding.RANKER_ENV, ranker)
    embedding.reset()
    tools = [T("a", "first"), T("b", "second", examples=["Will it rain in Lisbon?"])]
    assert [t.name for t in by_relevance("rain tomorrow?", tools)] == ["b", "a"]
    embedding.reset()


def test_the_generated_option_is_not_scored_below_another_for_its_tokenisation():
    # The grammar made the model write "t" + "ell" where it rated "tell" higher than "count":
    # tell-joke must get the "tell" start too, not only the product along "t", "ell".
    tokens = generated(tok("t", 0.04, ("tell", 0.03), ("count", 0.007)), tok("ell", 0.08), tok("-", 1.0),
                       tok("joke", 1.0), tok('",', 1.0))
    scores = choice_scores(tokens, "action", ["tell-joke", "count-words"])
    assert math.isclose(scores["tell-joke"], 0.03 + 0.04 * 0.08, rel_tol=1e-6)
    assert math.isclose(scores["count-words"], 0.007, rel_tol=1e-6)


def test_a_prompt_error_at_the_dialogs_deadline_says_the_dialog_ran_out_of_time():
    import time

    from trustgraph.agent.react.prompting import _prompt_error
    from trustgraph.schema import Error

    error = Error(type="llm-error", message="text-completion did not answer: no response within 89.9s")
    assert str(_prompt_error(error, time.time() + 0.2)).startswith("The dialog ran out of time")
    assert str(_prompt_error(error, time.time() + 60)) == ("The prompt service failed: text-completion did not "
                                                            "answer: no response within 89.9s")
    assert str(_prompt_error(error, None)).startswith("The prompt service failed")


# -- the ranker's part in the judgement ----------------------------------------------------------


def test_with_the_ranker_a_sure_model_or_a_clear_ranker_decides_and_else_the_agent_asks_back():
    from trustgraph.agent.react.decisions import Switch
    unsure = {"weather": 0.30, "local-time": 0.25, "tell-joke": 0.05}     # a toss-up for the model alone
    assert judge("weather", unsure, TOOLS, Confidence(lead=0)) is not None
    # The ranker's first tool is the model's choice: taken.
    near_weather = {"weather": 0.50, "local-time": 0.20, "tell-joke": 0.0}
    assert judge("weather", unsure, TOOLS, Confidence(), meaning=near_weather) is None
    # The model unsure of local-time, the ranker clearly for the weather: the weather is called.
    got = judge("local-time", {"local-time": 0.5, "weather": 0.3, "tell-joke": 0.2}, TOOLS, Confidence(),
                meaning=near_weather)
    assert got == Switch("weather", 0.5)
    # ... but the ranker only a little ahead, and the model hardly prefers its own: asked back,
    # the ranker's first tool and the model's named.
    close = {"weather": 0.22, "local-time": 0.20, "tell-joke": 0.0}
    got = judge("local-time", {"local-time": 0.45, "weather": 0.4, "tell-joke": 0.15}, TOOLS, Confidence(), meaning=close)
    assert got is not None and got.outcome == OUTCOME_ASKED and got.candidates[:2] == ("weather", "local-time")
    # The ranker cannot tell the two apart but the model can (the first under 0.8 of its choice),
    # and its choice is near the question: the model's choice is called.
    prefers = {"local-time": 0.5, "weather": 0.3, "tell-joke": 0.2}
    near = Confidence().calibrated(embedding.calibration()).near
    close_near = {"weather": near + 0.04, "local-time": near + 0.02, "tell-joke": 0.0}
    assert judge("local-time", prefers, TOOLS, Confidence(), meaning=close_near) is None
    assert judge("local-time", prefers, TOOLS, Confidence(tie=0), meaning=close_near).outcome == OUTCOME_ASKED
    # ... but among tools all far from the question, its preference is no evidence: asked back
    # ("Write me a poem about Lisbon in Portuguese" had called spell-word, 0.23, translate-word first).
    close_far = {"weather": near - 0.02, "local-time": near - 0.04, "tell-joke": 0.0}
    got = judge("local-time", prefers, TOOLS, Confidence(), meaning=close_far)
    assert got is not None and got.outcome == OUTCOME_ASKED and got.candidates[:2] == ("weather", "local-time")
    # A model that is sure stays its own, whatever the ranker (a scripted or a big model).
    assert judge("local-time", {"local-time": 0.95, "weather": 0.03}, TOOLS, Confidence(), meaning=near_weather) is None
    # lead 0: the model's shares alone, as before (a clear lead of the model's is taken)
    assert judge("local-time", {"local-time": 0.6, "weather": 0.3}, TOOLS, Confidence(lead=0),
                 meaning=near_weather) is None
    # Arguments nobody said still ask back, with the ranker as without it.
    got = judge("weather", unsure, TOOLS, Confidence(), ["city"], meaning=near_weather)
    assert got is not None and got.outcome == OUTCOME_ASKED and got.unsaid == ("city",)


def test_no_tool_near_and_the_model_answering_itself_is_no_tool_but_a_near_tool_is_not():
    answering = {"weather": 0.0002, "local-time": 0.0001, "tell-joke": 0.0001, decision_schema.FINAL_ACTION: 0.95}
    far = {"weather": 0.03, "local-time": 0.05, "tell-joke": 0.02}
    near = {"weather": 0.02, "local-time": 0.01, "tell-joke": 0.35}
    assert judge("tell-joke", answering, TOOLS, Confidence(), meaning=far).outcome == OUTCOME_NO_TOOL
    # "Make me laugh about databases": the model would rather answer, but a joke tool is near.
    assert judge("tell-joke", answering, TOOLS, Confidence(), meaning=near) is None
    # Far from every tool and the answer likelier than the tools: no tool, whatever the share.
    mild = {"weather": 0.1, "local-time": 0.05, "tell-joke": 0.05, decision_schema.FINAL_ACTION: 0.7}
    assert judge("weather", mild, TOOLS, Confidence(), meaning=far).outcome == OUTCOME_NO_TOOL
    assert judge("weather", mild, TOOLS, Confidence(), meaning={**far, "weather": 0.3}) is None
    # Without the model's scores the choice is the model's, whatever the ranker says.
    assert judge("tell-joke", None, TOOLS, Confidence(), meaning=far) is None


def test_a_question_far_from_every_tool_is_no_tool_however_sure_the_model():
    # "Who wrote Hamlet?": every tool under 0.06; the 135M model was sure of a joke.
    sure = {"weather": 0.05, "local-time": 0.05, "tell-joke": 0.9, decision_schema.FINAL_ACTION: 0.1}
    hamlet = {"weather": 0.053, "local-time": 0.03, "tell-joke": 0.019}
    assert judge("tell-joke", sure, TOOLS, Confidence(), meaning=hamlet).outcome == OUTCOME_NO_TOOL
    assert judge("tell-joke", sure, TOOLS, Confidence(), meaning={**hamlet, "tell-joke": 0.12}) is None
    assert judge("tell-joke", None, TOOLS, Confidence(), meaning=hamlet) is None   # no scores: the model's


def test_a_sure_choice_of_a_tool_the_question_is_not_about_gives_way_to_the_rankers_clear_first():
    from trustgraph.agent.react.decisions import Switch
    ranked = Confidence(lead=0.05, no_tool_meaning=0.2, near=0.25, far=0.1)
    sure = {"weather": 0.9, "local-time": 0.05, "tell-joke": 0.05}
    # "How long, in words, is ...?": the 135M model was sure of the weather, 0.0 from the question.
    assert judge("weather", sure, TOOLS, ranked, meaning={"weather": 0.0, "local-time": 0.24, "tell-joke": 0.1}) \
        == Switch("local-time", 0.9)
    # Sure of a tool the question is about, or with no tool clearly ahead: the model's choice stands.
    assert judge("weather", sure, TOOLS, ranked, meaning={"weather": 0.2, "local-time": 0.4, "tell-joke": 0.1}) is None
    assert judge("weather", sure, TOOLS, ranked, meaning={"weather": 0.1, "local-time": 0.12, "tell-joke": 0.0}) is None
    # "How do you write 'necessary'?": spell-word at 0.16, convert-temperature 0.23: not far enough.
    assert judge("weather", sure, TOOLS, ranked, meaning={"weather": 0.16, "local-time": 0.23, "tell-joke": 0.0}) is None
    # Nor is the ranker's first about it (under ``no_tool_meaning``): no tool is. "Do I need a visa to
    # visit Canada on a UK passport?" had called public-holidays (0.14) for Canada.
    got = judge("weather", sure, TOOLS, ranked, meaning={"weather": 0.05, "local-time": 0.14, "tell-joke": 0.1})
    assert got.outcome == OUTCOME_NO_TOOL and got.candidates == ()


def test_an_ask_back_offers_the_models_choice_only_when_the_question_is_about_it():
    """Between two near tools, the ask-back names them and the model's choice; a choice the question is
    not about at all (under ``far``) gives its place to the ranker's next tool."""
    ranked = Confidence(lead=0.05, no_tool_meaning=0.2, near=0.25, far=0.1)
    tools = ["local-time", "sunrise-sunset", "time-difference", "find-synonyms"]
    unsure = {"local-time": 0.01, "sunrise-sunset": 0.01, "time-difference": 0.01, "find-synonyms": 0.05,
              "final-answer": 0.5}
    clock = {"local-time": 0.38, "sunrise-sunset": 0.35, "time-difference": 0.32, "find-synonyms": 0.01}
    got = judge("find-synonyms", unsure, tools, ranked, meaning=clock)
    assert got.outcome == OUTCOME_ASKED and got.candidates == ("local-time", "sunrise-sunset", "time-difference")
    got = judge("find-synonyms", unsure, tools, ranked, meaning={**clock, "find-synonyms": 0.2})
    assert got.outcome == OUTCOME_ASKED and got.candidates == ("local-time", "find-synonyms", "sunrise-sunset")


def test_an_ask_back_names_only_the_tools_the_ranker_could_not_tell_from_its_first():
    """"Got anything funny about giraffes?" had offered translate-word (0.14) beside the two joke
    tools (0.34, 0.33): a tool that far behind is not what the question is unsure between."""
    ranked = Confidence(lead=0.04, no_tool_meaning=0.2, near=0.3, far=0.1)
    tools = ["tell-dad-joke", "tell-joke", "translate-word", "find-synonyms"]
    unsure = {"tell-dad-joke": 0.01, "tell-joke": 0.01, "translate-word": 0.01, "find-synonyms": 0.02,
              "final-answer": 0.5}
    funny = {"tell-dad-joke": 0.343, "tell-joke": 0.331, "translate-word": 0.142, "find-synonyms": 0.05}
    got = judge("find-synonyms", unsure, tools, ranked, meaning=funny)
    assert got.outcome == OUTCOME_ASKED and got.candidates == ("tell-dad-joke", "tell-joke")
    # The model's choice of the first, a toss-up: the same two.
    got = judge("tell-dad-joke", unsure, tools, ranked, meaning={**funny, "tell-dad-joke": 0.29, "tell-joke": 0.28})
    assert got.outcome == OUTCOME_ASKED and got.candidates == ("tell-dad-joke", "tell-joke")
    # Within two leads of the first, a third is offered.
    got = judge("find-synonyms", unsure, tools, ranked, meaning={**funny, "translate-word": 0.27})
    assert got.candidates == ("tell-dad-joke", "tell-joke", "translate-word")


def test_an_unsure_choice_of_the_rankers_first_tool_stands_only_when_it_is_near_or_leads():
    """The tools are listed in the ranker's order, which a small model mostly follows: its choice of
    the first, barely near the question and barely ahead of the next, is a toss-up and asks back."""
    ranked = Confidence(lead=0.05, no_tool_meaning=0.2, near=0.3, far=0.1)
    unsure = {"weather": 0.3, "local-time": 0.3, "tell-joke": 0.4, decision_schema.FINAL_ACTION: 0.2}
    # "How do you say 'good morning' in Spanish?": local-time 0.201, a joke 0.184.
    spanish = {"local-time": 0.201, "tell-joke": 0.184, "weather": 0.15}
    got = judge("local-time", unsure, TOOLS, ranked, meaning=spanish)
    assert got is not None and got.outcome == OUTCOME_ASKED
    assert got.candidates == ("local-time", "tell-joke", "weather")
    # Near the question, or clearly ahead: the model's choice of it stands.
    assert judge("local-time", unsure, TOOLS, ranked, meaning={**spanish, "local-time": 0.31}) is None
    assert judge("local-time", unsure, TOOLS, ranked, meaning={**spanish, "local-time": 0.25}) is None
    # A sure model is taken whatever the ranker; without the model's scores, the choice is its own.
    sure = {"weather": 0.02, "local-time": 0.9, "tell-joke": 0.08}
    assert judge("local-time", sure, TOOLS, ranked, meaning=spanish) is None
    assert judge("local-time", None, TOOLS, ranked, meaning=spanish) is None


def test_an_ask_back_for_unsaid_arguments_offers_the_tool_it_names_first():
    # "What's a good tip for learning the piano?": "the likeliest tool, `play-music`, needs its
    # artist" had gone on "Did you mean `add-to-list`?", the model's likelier tools.
    near = Confidence().calibrated(embedding.calibration()).near
    meaning = {"weather": near + 0.2, "local-time": 0.0, "tell-joke": 0.0}   # the ranker's clear first
    got = judge("weather", {"weather": 0.05, "local-time": 0.5, "tell-joke": 0.45}, TOOLS, Confidence(), ["city"],
                meaning)
    assert got is not None and got.outcome == OUTCOME_ASKED and got.tool == "weather"
    assert got.candidates[0] == "weather" and len(got.candidates) <= Confidence().candidates
