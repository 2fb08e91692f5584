"""JSON decoding within the limits (trustgraph.base.safety.limits): every failure is a ValueError."""

from __future__ import annotations

import json

import pytest
from trustgraph.base.safety import limits


def nest(levels: int, inner: str = "1") -> str:
    return "[" * levels + inner + "]" * levels


@pytest.mark.parametrize("levels", [limits.MAX_JSON_DEPTH + 1, 500, 990, 5_000, 1_000_000])
def test_too_deep_is_a_limit_error_at_any_depth(levels):
    with pytest.raises(limits.JsonLimitError, match="nested deeper than 100 levels"):
        limits.loads(nest(levels))
    with pytest.raises(limits.JsonLimitError):
        limits.raw_decode("x" + nest(levels), 1)


def test_up_to_the_limit_decodes_as_json_loads():
    text = '{"a": ' + nest(limits.MAX_JSON_DEPTH - 1) + ', "b": "[[[[[[[[[[[[[[[[[[[[[[[["}'
    assert limits.loads(text) == json.loads(text)
    assert limits.loads(text.encode()) == json.loads(text)
    assert limits.loads(text.encode("utf-16")) == json.loads(text)
    assert limits.raw_decode(text + " trailing") == (json.loads(text), len(text))


def test_mixed_nesting_counts_objects_and_arrays():
    value: object = 1
    for i in range(limits.MAX_JSON_DEPTH + 1):
        value = {"k": value} if i % 2 else [value]
    with pytest.raises(limits.JsonLimitError):
        limits.loads(json.dumps(value))
    with pytest.raises(limits.JsonLimitError):
        limits.check_depth(value)


def test_too_many_containers_is_refused_before_decoding():
    with pytest.raises(limits.JsonLimitError, match="more than 1,000,000 arrays and objects"):
        limits.loads("[" + ",".join(["{}"] * (limits.MAX_JSON_CONTAINERS + 1)) + "]")


@pytest.mark.parametrize("text", ["{nope", '"\\ud800', b"\xff\xfe\x00", "1" * 5000, "[1,]", ""])
def test_bad_text_is_a_value_error(text):
    with pytest.raises(ValueError):
        limits.loads(text)


def test_raw_decode_can_accept_raw_newlines_in_strings():
    assert limits.raw_decode('{"a": "x\ny"}', strict=False)[0] == {"a": "x\ny"}
    with pytest.raises(ValueError):
        limits.raw_decode('{"a": "x\ny"}')
