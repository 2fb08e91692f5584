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
