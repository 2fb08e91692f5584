"""The prompt service: a template id and its variables in, text or a JSON object out.

Each term travels as JSON text; a client may send ``variables`` (any JSON
values, encoded here) instead of ``terms`` (already encoded).
"""

from __future__ import annotations

import json
from typing import Any

from trustgraph.schema import PromptRequest, PromptResponse, from_dict

from .base import JsonObject, MessageTranslator, ResponseOnly, given, json_object

__all__ = ["PromptRequestTranslator", "PromptResponseTranslator"]


class PromptRequestTranslator(MessageTranslator):
    """``id``, ``variables`` or ``terms``, ``streaming``."""

    def to_pulsar(self, data: JsonObject) -> PromptRequest:
        variables = json_object(data, "variables")
        if variables is not None:
            terms: Any = {k: json.dumps(v) for k, v in variables.items()}
        else:
            terms = given(data, "terms", {})
        return from_dict(PromptRequest, {"id": given(data, "id", ""), "terms": terms,
                                         "streaming": given(data, "streaming", False)})

    def from_pulsar(self, obj: PromptRequest) -> JsonObject:
        out: JsonObject = {}
        if obj.id:
            out["id"] = obj.id
        if obj.terms:
            out["terms"] = obj.terms
        return out


class PromptResponseTranslator(ResponseOnly):
    """``text`` and ``object`` (still JSON text) when not null, ``end_of_stream``, which ends the call."""

    def from_pulsar(self, obj: PromptResponse) -> JsonObject:
        out: JsonObject = {}
        if obj.text is not None:
            out["text"] = obj.text
        if obj.object is not None:
            out["object"] = obj.object
        out["end_of_stream"] = bool(obj.end_of_stream)
        return out

    def from_response_with_completion(self, obj: PromptResponse) -> tuple[JsonObject, bool]:
        return self.from_pulsar(obj), bool(obj.end_of_stream)
