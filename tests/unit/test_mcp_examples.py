"""A tool's example questions in an MCP listing: what mcp-server writes and what the import keeps."""

from __future__ import annotations

import pytest
from trustgraph.mcp_client.examples import EXAMPLES_META, listing_meta, read_examples, with_examples


def test_what_is_written_is_read_back_whole():
    examples = ["Make me laugh about cats", "Got a pun on dogs?"]
    listed = with_examples("Tell a joke.  ", examples)
    assert listed == "Tell a joke.\n\nExamples:\n- Make me laugh about cats\n- Got a pun on dogs?"
    assert read_examples(listed, listing_meta(examples)) == ("Tell a joke.", examples, 0)
    # No description of its own: the block alone, and nothing left after it is read.
    assert read_examples(with_examples("", examples), listing_meta(examples)) == ("", examples, 0)


def test_no_examples_change_nothing():
    assert with_examples("Tell a joke", []) == "Tell a joke"
    assert listing_meta([]) is None
    assert read_examples("Tell a joke", None) == ("Tell a joke", [], 0)
    assert read_examples("Tell a joke", {"other.vendor/x": 1}) == ("Tell a joke", [], 0)


def test_a_servers_own_description_is_never_cut():
    # The block differs from what _meta holds: it is the server's text, kept as it is.
    own = "Tell a joke.\n\nExamples:\n- something else"
    assert read_examples(own, {EXAMPLES_META: ["Make me laugh"]}) == (own, ["Make me laugh"], 0)


@pytest.mark.parametrize(("value", "kept", "left_out"), [
    ("Make me laugh", [], 1),                                       # not a list
    (["Make me laugh", 3, None, "  "], ["Make me laugh"], 3),       # not strings, empty
    (["ok", "x" * 201], ["ok"], 1),                                 # over 200 characters
    ([f"q{n}" for n in range(12)], [f"q{n}" for n in range(10)], 2),   # over 10
    ([" padded "], ["padded"], 0),
])
def test_what_a_descriptor_cannot_hold_is_left_out_and_counted(value, kept, left_out):
    assert read_examples("d", {EXAMPLES_META: value}) == ("d", kept, left_out)
