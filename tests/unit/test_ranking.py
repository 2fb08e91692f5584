"""The tool ranker (trustgraph.catalog.ranking) and its embedding model (catalog.embedding)."""

from __future__ import annotations

import logging
import shutil
import threading
from types import SimpleNamespace as T

import pytest
from trustgraph.catalog import embedding, ranking, sentence_encoder

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


def _no_encoder(monkeypatch, tmp_path):
    """The sentence encoder's files as a broken install leaves them."""
    folder = tmp_path / "minilm"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    monkeypatch.setattr(sentence_encoder, "model_folder", lambda: folder)


def test_a_model_that_cannot_load_is_one_warning_and_the_words_take_over(monkeypatch, tmp_path, caplog):
    _no_encoder(monkeypatch, tmp_path)
    weights, tokenizer = embedding.model_files()
    broken = tmp_path / "weights.safetensors"
    broken.write_bytes(b"not a safetensors file")
    monkeypatch.setattr(embedding, "model_files", lambda: (broken, tokenizer))
    with caplog.at_level(logging.WARNING, logger=embedding.__name__):
        assert names("What is the weather in Paris?")[0] == "weather"
        assert names("Tell me a joke")[0] == "tell-joke"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "ranked by shared words only" in warnings[0].getMessage()
    assert "minilm" in warnings[0].getMessage() and "wordllama" in warnings[0].getMessage()
    assert "\n" not in warnings[0].getMessage()


def test_a_missing_tokenizer_file_falls_back_too(monkeypatch, tmp_path, caplog):
    _no_encoder(monkeypatch, tmp_path)
    weights, _ = embedding.model_files()
    copy = tmp_path / "w.safetensors"
    shutil.copy(weights, copy)
    monkeypatch.setattr(embedding, "model_files", lambda: (copy, tmp_path / "missing.json"))
    with caplog.at_level(logging.WARNING, logger=embedding.__name__):
        assert ranking.rank("weather in Oslo", TOOLS)[0].meaning is None
    assert any("could not load" in r.getMessage() for r in caplog.records)


def test_a_broken_sentence_encoder_is_one_warning_and_the_static_model_ranks(monkeypatch, tmp_path, caplog):
    _no_encoder(monkeypatch, tmp_path)
    with caplog.at_level(logging.WARNING, logger=embedding.__name__):
        assert names("Make me laugh about trains")[0] == "tell-joke"
    assert isinstance(embedding.embedder(), embedding.StaticEmbedder)
    assert embedding.calibration() == embedding.WORDLLAMA_CALIBRATION
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "sentence encoder could not load" in warnings[0] and "make install" in warnings[0]


def test_by_default_the_sentence_encoder_ranks_and_each_model_can_be_chosen(monkeypatch):
    # make install installs the encoder's wheel: the default is the better model.
    assert isinstance(embedding.embedder(), sentence_encoder.SentenceEncoder)
    assert embedding.calibration() == embedding.MINILM_CALIBRATION
    monkeypatch.setenv(embedding.RANKER_ENV, embedding.WORDLLAMA)
    embedding.reset()
    assert isinstance(embedding.embedder(), embedding.StaticEmbedder)
    monkeypatch.setenv(embedding.RANKER_ENV, embedding.MINILM)
    embedding.reset()
    assert isinstance(embedding.embedder(), sentence_encoder.SentenceEncoder)


# all-MiniLM-L6-v2's sentence vectors for these texts as the reference implementation gives them
# (transformers 5.25 on PyTorch 2.13, mean pooling over the attention mask, unit length): the
# first six components of each, and their cosine similarities.
REFERENCE_TEXTS = ["Tell me a joke about cats", "The current local time in a city", "How many ounces make 3 pounds?"]
REFERENCE_HEADS = [[0.02244, 0.04064, 0.02012, 0.06901, -0.06369, -0.08047],
                   [0.09773, 0.00862, 0.07588, 0.01809, 0.04376, -0.00407],
                   [-0.01884, -0.01682, -0.0851, 0.09099, -0.04245, -0.10882]]
REFERENCE_COSINES = {(0, 1): 0.02567, (0, 2): 0.10837, (1, 2): -0.03053}


def test_the_sentence_encoder_computes_the_published_models_vectors():
    import numpy as np

    model = sentence_encoder.SentenceEncoder(sentence_encoder.model_folder())
    vectors = model.embed(REFERENCE_TEXTS)
    assert vectors.shape == (3, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # int8 weights: components within 0.005, similarities within 0.01 of the float32 model's.
    assert np.allclose(vectors[:, :6], REFERENCE_HEADS, atol=0.005)
    for (i, j), cosine in REFERENCE_COSINES.items():
        assert abs(float(vectors[i] @ vectors[j]) - cosine) < 0.01
    # A batch gives each text what it gets alone (padding is masked out).
    alone = model.embed([REFERENCE_TEXTS[2]])[0]
    assert float(alone @ vectors[2]) > 0.9999


def test_a_config_of_another_shape_is_refused_in_one_error(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "bert", "hidden_size": 768}')
    with pytest.raises(ValueError, match="not the model this encoder runs"):
        sentence_encoder.SentenceEncoder(folder)


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


def test_each_of_a_tools_texts_is_embedded_apart_and_none_is_empty():
    tool = T(name="count-letters", description="Count the letters in a word",
             arguments=[T(name="word", description="The word whose letters to count")],
             examples=("How long is 'banana'?",))
    assert ranking.tool_texts(tool) == ["Count the letters in a word", "count letters",
                                        "count letters. Count the letters in a word. The word whose letters to count",
                                        "How long is 'banana'?"]
    bare = T(name="ping", description="", arguments=[], examples=())
    assert ranking.tool_texts(bare) == ["ping"]
    assert ranking.tool_texts({"name": "", "description": ""}) == [""]     # still one text to rank by


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
    assert sorted(seen) == sorted(["which kind?", "first of its kind", "alpha tool", "alpha tool. first of its kind",
                                   "second of its kind", "beta tool", "beta tool. second of its kind"])


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


def test_among_many_tools_the_encoder_reads_only_a_shortlist_and_the_rest_rank_after_it(monkeypatch):
    assert isinstance(embedding.embedder(), sentence_encoder.SentenceEncoder)
    read: list[str] = []
    real = embedding.embedder()

    class Counting:
        calibration = real.calibration

        def embed(self, texts):
            read.extend(texts)
            return real.embed(texts)

    embedding.reset(Counting(), loaded=True)
    monkeypatch.setattr(ranking, "_vectors", ranking._Vectors())
    shops = [T(name=f"shop-{i}", description=f"Look up the stock of shop number {i}", arguments=[], examples=())
             for i in range(4 * ranking.SHORTLIST)]
    tools = shops[:100] + [WEATHER] + shops[100:]
    ranked = ranking.rank("Is it going to be chilly in Oslo?", tools)
    assert ranked[0].tool is WEATHER
    assert len(read) == 3 * ranking.SHORTLIST + 1      # the shortlist's three texts each, and the question
    whole = [r for r in ranked if r.meaning is not None]
    assert len(whole) == ranking.SHORTLIST and ranked[:ranking.SHORTLIST] == whole
    assert min(r.score for r in whole) > max(r.score for r in ranked[ranking.SHORTLIST:])
    # A tool the question names is read whatever the glance says of it.
    assert ranking.rank("what does shop-150 do?", tools)[0].tool.name == "shop-150"


def test_preload_loads_the_model_in_a_thread_of_its_own_before_any_question(monkeypatch):
    from support import wait_for
    loading = []
    real = embedding._load
    monkeypatch.setattr(embedding, "_load", lambda: (loading.append(threading.current_thread().name), real())[1])
    embedding.preload()
    wait_for("the model loaded", lambda: embedding._loaded)
    assert loading == ["ranker-model-load"]
    assert isinstance(embedding.embedder(), sentence_encoder.SentenceEncoder) and len(loading) == 1
    embedding.preload()   # already tried: no second load, no thread
    assert len(loading) == 1


LIGHTS = T(name="switch-lights", description="Turn the lights in a room on or off",
           arguments=[T(name="room", description="The room")], examples=())
HEAT = T(name="set-thermostat", description="Set the heating in the house to a temperature",
         arguments=[T(name="temperature", description="The temperature in degrees")], examples=())


def test_a_misspelt_word_of_the_tools_is_ranked_as_spelled_right():
    # "turn off the hallway lihgts" was 0.34 near switching lights, 0.62 spelled right.
    tools = [HEAT, LIGHTS, JOKE]
    typed, spelled = ranking.rank("turn off the hallway lihgts", tools), ranking.rank("turn off the hallway lights", tools)
    assert typed[0].tool is LIGHTS and typed[0].meaning == pytest.approx(spelled[0].meaning, abs=1e-5)
    assert typed[0].words == spelled[0].words > 0
    model = embedding.embedder()
    vocabulary = ranking._index(tools).vocabulary
    # A slip of one letter, each kind; not a word the model knows, one two letters off, nor one that
    # two of the tools' words are a slip from.
    assert ranking.mended("Set the bedrom heeting, pls", vocabulary, model) == "Set the bedrom heating, pls"
    for question in ("the heating in the bedroom", "a hallway lihgt", "xlights on"):   # "lights" is two off
        assert ranking.mended(question, vocabulary, model) == question
    assert ranking.mended("turn the lihgts on", vocabulary | {"lihgt"}, model) == "turn the lihgts on"
    assert ranking.mended("a slihgt tarn", frozenset({"slight", "flight"}), model) == "a slight tarn"
    assert ranking.mended("the tempreature", frozenset({"temperature"}), model) == "the temperature"
    assert ranking.mended("the tempreature", frozenset({"temperature", "tempreatures"}), model) == "the tempreature"
    # Without a model that knows its words (the static model, or none), the question is ranked as typed.
    assert ranking.mended("turn off the lihgts", vocabulary, None) == "turn off the lihgts"
