"""The agent: a question in, thoughts, observations and an answer out.

A response is final by upstream 2.1.4's rule: a streamed message (one with a
``chunk_type``) at ``end_of_dialog``; otherwise the one whose ``answer`` is
not null, even an empty one, which is why a thought or observation carries
an explicit ``"answer": null`` on the wire.  A streamed message shows its
``chunk_type`` and ``content``; the others their non-empty ``answer``,
``thought`` and ``observation``.

Ours: a question that is empty or only whitespace is refused (there is
nothing to answer; upstream's model answers nothing with a guess), and the
last message says how the dialog ended (``outcome``, ``candidates``, and for a
dialog paused for approval ``approval``: the tool, its arguments, the token
and when it expires), which upstream's agents never set and its clients ignore.
"""

from __future__ import annotations

from typing import Any

from trustgraph.schema import AgentRequest, AgentResponse, from_dict, to_dict
from trustgraph.schema.services.agent import EMPTY_QUESTION

from .base import (
    DEFAULT_USER,
    BadRequest,
    JsonObject,
    MessageTranslator,
    ResponseOnly,
    error_json,
    given,
    required,
)

__all__ = ["AgentRequestTranslator", "AgentResponseTranslator"]


class AgentRequestTranslator(MessageTranslator):
    """``question`` (required), ``state``, ``group`` (null: the default groups), ``history``,
    ``user`` (default ``trustgraph``), ``streaming``."""

    def to_pulsar(self, data: JsonObject) -> AgentRequest:
        record = from_dict(AgentRequest, {
            "question": required(data, "question"),
            "state": data.get("state"),
            "group": data.get("group"),
            "history": given(data, "history", []),
            "user": given(data, "user", DEFAULT_USER),
            "streaming": given(data, "streaming", False),
        })
        if isinstance(record.question, str) and not record.question.strip():
            raise BadRequest(f"Bad request: {EMPTY_QUESTION}")
        return record

    def from_pulsar(self, obj: AgentRequest) -> JsonObject:
        return {"question": obj.question, "state": obj.state, "group": obj.group,
                "history": [to_dict(step) for step in obj.history or []], "user": obj.user,
                "streaming": obj.streaming}


class AgentResponseTranslator(ResponseOnly):
    """One message of a dialog."""

    def from_pulsar(self, obj: AgentResponse) -> JsonObject:
        out: JsonObject = {}
        if obj.chunk_type:
            out["chunk_type"] = obj.chunk_type
            if obj.content:
                out["content"] = obj.content
        else:
            for name in ("answer", "thought", "observation"):
                value = getattr(obj, name)
                if value:
                    out[name] = value
        out["end_of_message"] = bool(obj.end_of_message)
        out["end_of_dialog"] = bool(obj.end_of_dialog)
        if obj.error is not None and obj.error.message:
            out["error"] = error_json(obj.error)
        if obj.outcome:
            out["outcome"] = obj.outcome
        if obj.candidates:
            out["candidates"] = list(obj.candidates)
        if obj.approval is not None:
            out["approval"] = to_dict(obj.approval)
        return out

    def from_response_with_completion(self, obj: AgentResponse) -> tuple[JsonObject, bool]:
        return self.from_pulsar(obj), is_final(obj)


def is_final(obj: Any) -> bool:
    """Whether an agent message ends the call (the module docstring's rule)."""
    if obj.chunk_type:
        return bool(obj.end_of_dialog)
    return obj.answer is not None
