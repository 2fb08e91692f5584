"""Text completion (an LLM): ``system`` and ``prompt`` in, the text (streamed or whole) out."""

from __future__ import annotations

from trustgraph.schema import TextCompletionRequest, TextCompletionResponse, from_dict

from .base import JsonObject, MessageTranslator, ResponseOnly, given, required

__all__ = ["TextCompletionRequestTranslator", "TextCompletionResponseTranslator"]


class TextCompletionRequestTranslator(MessageTranslator):
    """``prompt`` (required), ``system`` (ours: "" when absent), ``streaming``."""

    def to_pulsar(self, data: JsonObject) -> TextCompletionRequest:
        return from_dict(TextCompletionRequest, {"system": given(data, "system", ""),
                                                 "prompt": required(data, "prompt"),
                                                 "streaming": given(data, "streaming", False)})

    def from_pulsar(self, obj: TextCompletionRequest) -> JsonObject:
        return {"system": obj.system, "prompt": obj.prompt}


class TextCompletionResponseTranslator(ResponseOnly):
    """``response`` always (an empty last chunk too), the token counts and model when set,
    ``end_of_stream``, which ends the call."""

    def from_pulsar(self, obj: TextCompletionResponse) -> JsonObject:
        out: JsonObject = {"response": obj.response}
        if obj.in_token:
            out["in_token"] = obj.in_token
        if obj.out_token:
            out["out_token"] = obj.out_token
        if obj.model:
            out["model"] = obj.model
        out["end_of_stream"] = bool(obj.end_of_stream)
        return out

    def from_response_with_completion(self, obj: TextCompletionResponse) -> tuple[JsonObject, bool]:
        return self.from_pulsar(obj), bool(obj.end_of_stream)
