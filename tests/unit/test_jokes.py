"""The joke service's collection and picker."""

from __future__ import annotations

import random

import pytest
from trustgraph.tool_service.joke.jokes import (
    DEFAULT_STYLE,
    FALLBACK_TOPIC,
    JOKES,
    STYLES,
    TOPICS,
    match_topic,
    normalise_style,
    pick_joke,
)

REQUIRED_TOPICS = {
    "programming", "cats", "dogs", "science", "math", "music",
    "food", "space", "coffee", "work", "general",
}


def test_styles_exported() -> None:
    assert STYLES == ("pun", "dad-joke", "one-liner")
    assert DEFAULT_STYLE == "pun"
    assert set(JOKES) == set(STYLES)


def test_collection_size_and_topics() -> None:
    total = sum(len(jokes) for by_topic in JOKES.values() for jokes in by_topic.values())
    assert total >= 45
    assert REQUIRED_TOPICS <= set(TOPICS)
    assert FALLBACK_TOPIC == "general"


@pytest.mark.parametrize("style", STYLES)
def test_every_style_covers_every_topic(style: str) -> None:
    assert set(JOKES[style]) == set(TOPICS)
    for topic in TOPICS:
        jokes = JOKES[style][topic]
        assert len(jokes) >= 2, (style, topic)
        for joke in jokes:
            assert isinstance(joke, str) and joke.strip() == joke and joke


def test_jokes_are_unique() -> None:
    every = [j for by_topic in JOKES.values() for jokes in by_topic.values() for j in jokes]
    assert len(every) == len(set(every))


def test_dad_jokes_are_question_and_answer() -> None:
    for jokes in JOKES["dad-joke"].values():
        for joke in jokes:
            assert "? " in joke, joke


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("topic", sorted(REQUIRED_TOPICS))
def test_pick_from_the_right_bucket(style: str, topic: str) -> None:
    used, joke = pick_joke(topic, style, random.Random(1))
    assert used == style
    assert joke in JOKES[style][topic]


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("programmer", "programming"),
        ("coding", "programming"),
        ("Python", "programming"),
        ("software", "programming"),
        ("computers", "programming"),
        ("kitten", "cats"),
        ("Cat", "cats"),
        ("my cat's hairballs", "cats"),
        ("puppies", "dogs"),
        ("dog", "dogs"),
        ("physics", "science"),
        ("Chemistry", "science"),
        ("biology", "science"),
        ("mathematics", "math"),
        ("maths", "math"),
        ("algebra homework", "math"),
        ("guitars", "music"),
        ("pizza", "food"),
        ("astronauts", "space"),
        ("the Moon", "space"),
        ("espresso", "coffee"),
        ("my boss", "work"),
        ("Mondays", "work"),
        ("  SPACE  ", "space"),
        ("Python programming", "programming"),
    ],
)
def test_synonyms(text: str, topic: str) -> None:
    assert match_topic(text) == topic
    _, joke = pick_joke(text, "pun", random.Random(0))
    assert joke in JOKES["pun"][topic]


@pytest.mark.parametrize("text", ["", "   ", "quantum bureaucracy of llamas", "zzz", None])
def test_unknown_topic_falls_back_to_general(text: str | None) -> None:
    assert match_topic(text) == FALLBACK_TOPIC
    for style in STYLES:
        used, joke = pick_joke(text, style, random.Random(3))  # type: ignore[arg-type]
        assert used == style
        assert joke in JOKES[style]["general"]


def test_missing_topic_bucket_falls_back_to_general(monkeypatch: pytest.MonkeyPatch) -> None:
    sparse = {style: dict(by_topic) for style, by_topic in JOKES.items()}
    del sparse["one-liner"]["cats"]
    monkeypatch.setattr("trustgraph.tool_service.joke.jokes.JOKES", sparse)
    used, joke = pick_joke("cats", "one-liner", random.Random(0))
    assert used == "one-liner"
    assert joke in JOKES["one-liner"]["general"]


@pytest.mark.parametrize("style", ["", "   ", None])
def test_empty_style_is_pun(style: str | None) -> None:
    used, joke = pick_joke("cats", style, random.Random(0))  # type: ignore[arg-type]
    assert used == "pun"
    assert joke in JOKES["pun"]["cats"]


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("PUN", "pun"),
        ("Dad Joke", "dad-joke"),
        ("dad_joke", "dad-joke"),
        ("dad", "dad-joke"),
        ("one_liner", "one-liner"),
        ("One-Liner", "one-liner"),
        ("puns", "pun"),
    ],
)
def test_style_variants(given: str, canonical: str) -> None:
    assert normalise_style(given) == canonical
    used, _ = pick_joke("dogs", given, random.Random(0))
    assert used == canonical


@pytest.mark.parametrize("style", ["limerick", "knock-knock", "sarcastic"])
def test_unknown_style_lists_valid_styles(style: str) -> None:
    with pytest.raises(ValueError) as info:
        pick_joke("cats", style)
    message = str(info.value)
    assert repr(style) in message
    for valid in STYLES:
        assert valid in message


def test_non_string_style_rejected() -> None:
    with pytest.raises(ValueError, match="pun, dad-joke, one-liner"):
        pick_joke("cats", 3)  # type: ignore[arg-type]


def test_seeded_rng_is_deterministic() -> None:
    first = [pick_joke("coffee", "one-liner", random.Random(42)) for _ in range(5)]
    assert len(set(first)) == 1

    a, b = random.Random(7), random.Random(7)
    seq_a = [pick_joke("space", "dad-joke", a)[1] for _ in range(20)]
    seq_b = [pick_joke("space", "dad-joke", b)[1] for _ in range(20)]
    assert seq_a == seq_b


def test_default_rng_varies() -> None:
    seen = {pick_joke("general", "pun")[1] for _ in range(200)}
    assert len(seen) > 1
    assert seen <= set(JOKES["pun"]["general"])


def test_a_topic_with_no_jokes_is_told_apart_from_one_asked_for_loosely() -> None:
    from trustgraph.tool_service.joke.jokes import known_topic
    assert known_topic("coffees") and known_topic("my cat's hairballs") and known_topic("Python programming")
    assert known_topic("") and known_topic("anything") and known_topic("general")
    assert not known_topic("penguins") and not known_topic("topic-of-the-week")


async def test_the_service_says_when_it_has_no_joke_on_the_topic() -> None:
    from trustgraph.tool_service.joke.service import Processor
    service = Processor.__new__(Processor)   # invoke needs no broker
    told = await service.invoke("ada", {"style": "dad-joke"}, {"topic": "penguins"})
    head, joke = told.split("\n\n", 1)
    assert head == ("Hey ada! I have no dad-joke about penguins (my topics: programming, cats, dogs, science, "
                    "math, music, food, space, coffee, work), so here's a general one:")
    assert joke in JOKES["dad-joke"]["general"]
    told = await service.invoke("ada", {"style": "dad-joke"}, {"topic": "coffees"})
    assert told.startswith("Hey ada! Here's a dad-joke for you:\n\n")


def test_the_declared_tools_are_the_bootstrap_descriptors() -> None:
    """Announced and configured, the joke tools must say the same (an upstream agent reads config only)."""
    import json
    from pathlib import Path

    from trustgraph.tool_service.joke.service import Processor

    examples = Path(__file__).resolve().parents[2] / "config-examples"
    for declared in Processor.tools:
        configured = json.loads((examples / f"{declared['name']}.json").read_text())
        assert {k: v for k, v in configured.items() if k not in ("type", "service")} == declared
        assert (configured["type"], configured["service"]) == ("tool-service", "joke-service")
