"""Choice scores from an OpenAI-compatible server's logprobs, as the openai SDK hands them over."""

from __future__ import annotations

import math
from typing import Any

import openai
import openai._exceptions
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from trustgraph.model.text_completion.openai.llm import (
    answer_scores,
    logprob_tokens,
    refuses_logprobs,
    refuses_schema,
)

CHOICES = ("action", ["convert-units", "convert-currency", "final-answer"])


def entry(token: str, p: float, *others: tuple[str, float]) -> dict[str, Any]:
    """One ``logprobs.content`` entry as OpenAI sends it (``bytes`` too; the token among the top)."""
    top = [(token, p), *others]
    return {"token": token, "logprob": math.log(p), "bytes": list(token.encode()),
            "top_logprobs": [{"token": t, "logprob": math.log(q), "bytes": list(t.encode())} for t, q in top]}


# {"action":"convert-units"} in OpenAI's tokens: "convert" or "final", then "-units" or "-currency".
CONTENT = [entry('{"', 1.0), entry("action", 1.0), entry('":"', 1.0), entry("convert", 0.9, ("final", 0.05)),
           entry("-units", 0.7, ("-currency", 0.25)), entry('"}', 1.0)]


def completion(logprobs: Any) -> ChatCompletion:
    # construct(), as the SDK builds a reply: no validation, so a server's junk arrives as sent.
    return ChatCompletion.construct(id="c", created=0, model="m", object="chat.completion", choices=[
        {"index": 0, "finish_reason": "stop", "logprobs": logprobs,
         "message": {"role": "assistant", "content": '{"action":"convert-units"}'}}])


def test_openais_logprobs_are_read_as_they_come():
    tokens = logprob_tokens(completion({"content": CONTENT, "refusal": None}).choices[0].logprobs)
    assert tokens == CONTENT          # the SDK's objects become the same dicts
    scores = answer_scores(tokens, CHOICES)
    assert scores == pytest.approx({"convert-units": 0.9 * 0.7, "convert-currency": 0.9 * 0.25,
                                    "final-answer": 0.05})


def test_streamed_chunks_add_up_to_the_same_scores():
    tokens: list[dict[str, Any]] = []
    for e in CONTENT:
        chunk = ChatCompletionChunk.construct(id="c", created=0, model="m", object="chat.completion.chunk",
                                              choices=[{"index": 0, "delta": {"content": e["token"]},
                                                        "logprobs": {"content": [e]}, "finish_reason": None}])
        tokens.extend(logprob_tokens(chunk.choices[0].logprobs))
    assert answer_scores(tokens, CHOICES) == answer_scores(CONTENT, CHOICES)


def test_no_or_unreadable_logprobs_give_no_scores():
    for none in (None, {"content": None, "refusal": None}):
        assert logprob_tokens(completion(none).choices[0].logprobs) == []
    assert answer_scores([], CHOICES) is None
    for junk in ("junk", {"content": "junk"}, {"content": [1, 2]}):
        assert logprob_tokens(completion(junk).choices[0].logprobs) is None, junk
    assert answer_scores(None, CHOICES) is None
    # Entries of the right shape holding wrong values cost the scores, never an exception.
    overflowing = [{**e, "logprob": 1e6} for e in CONTENT]
    wrong_alternatives = [{**e, "top_logprobs": 7} for e in CONTENT]
    for broken in (overflowing, wrong_alternatives):
        assert answer_scores(logprob_tokens(completion({"content": broken}).choices[0].logprobs), CHOICES) is None
    # An answer without the field: nothing to score.
    assert answer_scores([entry("Hello", 1.0)], CHOICES) is None


# The HTTP library the SDK's errors are built on (httpx, httpx2 in newer SDKs).
HTTP = getattr(openai._exceptions, "httpx2", None) or openai._exceptions.httpx


def status_error(status: int, message: str) -> openai.APIStatusError:
    response = HTTP.Response(status, request=HTTP.Request("POST", "http://127.0.0.1/v1/chat/completions"))
    return openai.APIStatusError(message, response=response, body={"error": {"message": message}})


def test_a_refusal_naming_logprobs_is_told_from_others():
    assert refuses_logprobs(status_error(400, "Unsupported parameter: 'logprobs' is not supported with this model."))
    assert refuses_logprobs(status_error(400, "Invalid 'top_logprobs': integer above maximum value."))
    assert refuses_logprobs(status_error(422, "top_logprobs must be at most 5"))
    assert not refuses_logprobs(status_error(400, "unknown parameter 'frobnicate'"))
    assert not refuses_logprobs(status_error(500, "logprobs failed"))       # a server error is retried, not dropped
    refused_format = status_error(400, "response_format json_schema is not supported")
    assert refuses_schema(refused_format) and not refuses_logprobs(refused_format)
