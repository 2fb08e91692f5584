"""How many tokens the embedded model may generate: a plain completion gets fewer than a shaped one."""

from __future__ import annotations

import pytest
from trustgraph.base.testing.memory import MemoryBroker, memory_pubsub
from trustgraph.model.text_completion.llamacpp.llm import Processor


def llm(**params: object) -> Processor:
    # Not started: nothing is loaded, only the request it would send is looked at.
    return Processor(id="llm", metrics=False, follow_config=False, pubsub=memory_pubsub(MemoryBroker(), "llm"),
                     **params)


@pytest.mark.parametrize("shape, limit", [
    ({}, 128),                                             # tg-invoke-llm, a prompt template
    ({"prefix": "Answer:"}, 512),                          # a continuation (the agent's text form)
    ({"schema": {"type": "object"}}, 512),                 # a structured decision
    ({"schema": {"type": "object"}, "scored": True}, 512),
])
def test_a_plain_completion_is_bounded_tighter_than_a_shaped_one(shape, limit):
    request = llm()._request("", "Say hello", 0.0, [], shape.get("prefix", ""), shape.get("schema"),
                             scored=shape.get("scored", False))
    assert request["max_tokens"] == limit


def test_both_bounds_have_flags_and_the_tighter_one_wins():
    assert llm(max_plain_output=40)._request("", "Say hello", 0.0, [], "")["max_tokens"] == 40
    assert llm(max_output=20)._request("", "Say hello", 0.0, [], "")["max_tokens"] == 20
    assert llm(max_output=20, max_plain_output=40)._request("", "q", 0.0, [], "", {})["max_tokens"] == 20


class _Engine:
    """Stands in for llama.cpp: records each request and says how much of its prompt it reused."""

    name = "stand-in"

    def __init__(self) -> None:
        self.requests: list[dict] = []

    def run(self, request: dict, emit, cancel) -> None:
        self.requests.append(request)
        emit({"choices": [{"delta": {"content": "ok"}}]})
        emit({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 1,
                                       "prompt_tokens_details": {"cached_tokens": 9 if request["cache_prompt"] else 0}}})


async def test_the_prompt_served_last_is_reused_under_another_schema_and_no_other():
    # The agent asks its decision's prompt again under a narrower schema (the ranker's tool's
    # arguments, the model's own answer): that reuses llama.cpp's computed prompt.  The same request
    # again, or any other prompt, starts afresh, so its output stays byte-identical to the first time.
    processor = llm()
    processor.engine = engine = _Engine()
    tools, one = {"anyOf": [{"type": "object"}, {"type": "string"}]}, {"type": "object"}
    asked = [("sys", "decide", "", tools), ("sys", "decide", "", one), ("sys", "decide", "", one),
             ("sys", "decide", "{", tools), ("other", "decide", "{", tools), ("other", "decide", "{", None),
             ("sys", "next question", "", None)]
    for system, prompt, prefix, schema in asked:
        await processor.generate(system, prompt, "m", 0.0, [], prefix, schema=schema)
    assert [r["cache_prompt"] for r in engine.requests] == [False, True, False, False, False, True, False]
    assert processor.reused == 0

    await processor.generate("sys", "next question", "m", 0.0, [], "", choices=("action", ["a", "b"]))
    assert processor.reused == 9


async def test_cache_prompt_reuses_every_prompt():
    processor = llm(cache_prompt=True)
    processor.engine = engine = _Engine()
    for prompt in ("one", "two"):
        await processor.generate("", prompt, "m", 0.0, [], "")
    assert [r["cache_prompt"] for r in engine.requests] == [True, True]
