"""The tool ranker (trustgraph.catalog.ranking) and its embedding model (catalog.embedding)."""

from __future__ import annotations

import logging
import shutil
from types import SimpleNamespace as T

import pytest
from trustgraph.catalog import embedding, ranking

JOKE = T(name="tell-joke", description="Tell a joke on a given topic",
         arguments=[T(name="topic", description="The topic for the joke")], examples=())
WEATHER = T(name="weather", description="Current weather in a city",
            arguments=[T(name="city", description="The city")], examples=())
MONEY = T(name="convert-currency", description="Convert an amount of US dollars to another currency",
          arguments=[T(name="amount", description="How many US dollars"),
                     T(name="to", description="The currency to convert to, e.g. EUR")], examples=())
COUNT = T(name="count-words", description="Count the words in a text",
          arguments=[T(name="text", description="The text whose words to count")], examples=())
TOOLS = [COUNT, WEATHER, MONEY, JOKE]


@pytest.fixture(autouse=True)
def fresh_model(monkeypatch):
    monkeypatch.delenv(embedding.RANKER_ENV, raising=False)
    embedding.reset()
    yield
    embedding.reset()


def names(question, tools=TOOLS):
    return [r.tool.name for r in ranking.rank(question, tools)]


@pytest.mark.parametrize(("question", "right"), [
    ("Make me laugh about trains", "tell-joke"),
    ("What would 40 bucks be in yen?", "convert-currency"),
    ("Is it going to be chilly in Oslo?", "weather"),
])
def test_a_paraphrase_that_shares_no_word_with_its_tool_ranks_it_first(question, right):
    # Shared words alone cannot: the question has none of the tool's words.
    assert names(question)[0] == right
    ranked = ranking.rank(question, TOOLS)
    assert ranked[0].meaning is not None and ranked[0].words == 0.0


def test_without_the_model_shared_words_rank_and_meaning_is_none(monkeypatch):
    monkeypatch.setenv(embedding.RANKER_ENV, embedding.WORDS)
    embedding.reset()
    ranked = ranking.rank("What is the weather in Paris?", TOOLS)
    assert ranked[0].tool is WEATHER and all(r.meaning is None for r in ranked)
    # A paraphrase without a shared word keeps the given order: nothing tells the tools apart.
    assert names("Make me laugh about trains") == [t.name for t in TOOLS]


def test_a_model_that_cannot_load_is_one_warning_and_the_words_take_over(monkeypatch, tmp_path, caplog):
    weights, tokenizer = embedding.model_files()
    broken = tmp_path / "weights.safetensors"
    broken.write_bytes(b"not a safetensors file")
    monkeypatch.setattr(embedding, "model_files", lambda: (broken, tokenizer))
    with caplog.at_level(logging.WARNING, logger=embedding.__name__):
        assert names("What is the weather in Paris?")[0] == "weather"
        assert names("Tell me a joke")[0] == "tell-joke"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "ranked by shared words only" in warnings[0].getMessage()
    assert "\n" not in warnings[0].getMessage()


def test_a_missing_tokenizer_file_falls_back_too(monkeypatch, tmp_path, caplog):
    weights, _ = embedding.model_files()
    copy = tmp_path / "w.safetensors"
    shutil.copy(weights, copy)
    monkeypatch.setattr(embedding, "model_files", lambda: (copy, tmp_path / "missing.json"))
    with caplog.at_level(logging.WARNING, logger=embedding.__name__):
        assert ranking.rank("weather in Oslo", TOOLS)[0].meaning is None
    assert any("could not load" in r.getMessage() for r in caplog.records)


def test_an_unknown_ranker_setting_says_so_and_ranks_by_meaning(monkeypatch, caplog):
    monkeypatch.setenv(embedding.RANKER_ENV, "bogus")
    embedding.reset()
    with caplog.at_level(logging.WARNING, logger=embedding.__name__):
        assert ranking.rank("weather in Oslo", TOOLS)[0].meaning is not None
    assert any("bogus" in r.getMessage() for r in caplog.records)


def test_example_questions_bring_a_tool_near_how_people_ask():
    plain = T(name="lookup", description="Look up a record", arguments=[], examples=())
    taught = T(name="lookup", description="Look up a record", arguments=[],
               examples=("Is it going to rain in Lisbon tomorrow?",))
    other = T(name="other", description="Something else entirely", arguments=[], examples=())
    question = "Will it be raining in Porto?"
    assert ranking.rank(question, [other, taught])[0].tool is taught
    assert ranking.rank(question, [plain])[0].meaning < ranking.rank(question, [taught])[0].meaning


def test_both_shapes_of_a_tool_rank_alike():
    as_dicts = [{"name": t.name, "description": t.description,
                 "arguments": [{"name": a.name, "description": a.description} for a in t.arguments]}
                for t in TOOLS]
    question = "What would 40 bucks be in yen?"
    assert [r.tool["name"] for r in ranking.rank(question, as_dicts)] == names(question)


def test_a_tool_without_a_description_or_arguments_is_ranked_not_refused():
    bare = T(name="mystery", description=None, arguments=None, examples=None)
    ranked = ranking.rank("Tell me a joke", [bare, JOKE])
    assert ranked[0].tool is JOKE and {r.tool.name for r in ranked} == {"mystery", "tell-joke"}


def test_ten_thousand_tools_rank_and_the_prompt_keeps_what_fits():
    tools = [T(name=f"tool-{i}", description=f"Look up record {i} of shop {i % 97}", arguments=[], examples=())
             for i in range(10_000)] + [WEATHER]
    kept = ranking.for_prompt("What is the weather in Paris?", tools)
    assert kept[0] is WEATHER and len(kept) == ranking.MAX_PROMPT_TOOLS


def test_an_empty_question_or_no_tools_rank_without_the_model():
    assert ranking.rank("Hello", []) == []
    ranked = ranking.rank("   ", TOOLS)
    assert [r.tool for r in ranked] == TOOLS and all(r.meaning is None for r in ranked)


def test_a_text_is_embedded_once_however_often_it_is_ranked(monkeypatch):
    seen: list[str] = []
    real = embedding.embedder()

    class Counting:
        def embed(self, texts):
            seen.extend(texts)
            return real.embed(texts)

    embedding.reset(Counting(), loaded=True)
    monkeypatch.setattr(ranking, "_vectors", ranking._Vectors())
    tools = [T(name="alpha-tool", description="first of its kind", arguments=[], examples=()),
             T(name="beta-tool", description="second of its kind", arguments=[], examples=())]
    for _ in range(3):
        ranking.rank("which kind?", tools)
        ranking.rank("which kind?", list(tools))   # a new list of the same tools
    assert sorted(seen) == sorted(["which kind?", "alpha tool. first of its kind", "beta tool. second of its kind"])


def test_a_list_that_fits_one_prompt_needs_no_ranking_to_be_cut():
    assert ranking.all_fit(TOOLS)
    many = [T(name=f"t{i}", description="x", arguments=[], examples=()) for i in range(ranking.MAX_PROMPT_TOOLS + 1)]
    assert not ranking.all_fit(many)
    long = [T(name="t", description="y" * ranking.MAX_PROMPT_TOOL_CHARS, arguments=[], examples=())]
    assert not ranking.all_fit(long)


def test_a_tool_the_question_names_comes_first():
    many = [T(name=f"tool-{i}", description="Look up a record", arguments=[], examples=()) for i in range(50)]
    assert ranking.rank("what does tool-7 do?", many)[0].tool.name == "tool-7"
    assert ranking.rank("use the weather tool for Oslo", [COUNT, MONEY, JOKE, WEATHER])[0].tool is WEATHER


def test_a_pathological_text_is_clipped_before_it_is_tokenised():
    assert embedding.clipped("a " + "x" * 100 + " b") == "a " + "x" * embedding.MAX_WORD + " b"
    assert len(embedding.clipped("word " * 1000)) == embedding.MAX_CHARS
    # 2,000 tools of one 2,400-letter word each: ranked, and the named one first
    odd = [{"name": f"tool-{i}", "description": "x" * 2400, "arguments": []} for i in range(2000)]
    assert ranking.for_prompt("what does tool-7 do?", odd)[0]["name"] == "tool-7"
