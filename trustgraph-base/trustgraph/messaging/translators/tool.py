"""The mcp-tool service: a tool name and its parameters in, text or a JSON object out."""

from __future__ import annotations

import json

from trustgraph.base.formats.text import json_or_text
from trustgraph.schema import ToolRequest, ToolResponse, from_dict

from .base import JsonObject, MessageTranslator, ResponseOnly, given

__all__ = ["ToolRequestTranslator", "ToolResponseTranslator"]


class ToolRequestTranslator(MessageTranslator):
    """``name``, ``parameters`` (any JSON, encoded here).

    Ours: no parameters is a call without arguments, ``"{}"``, where upstream
    sends null, which an MCP invoker cannot parse.
    """

    def to_pulsar(self, data: JsonObject) -> ToolRequest:
        params = data.get("parameters")
        return from_dict(ToolRequest, {"name": given(data, "name", ""),
                                       "parameters": json.dumps({} if params is None else params)})

    def from_pulsar(self, obj: ToolRequest) -> JsonObject:
        out: JsonObject = {}
        if obj.name:
            out["name"] = obj.name
        if obj.parameters is not None:
            out["parameters"] = json_or_text(obj.parameters)
        return out


class ToolResponseTranslator(ResponseOnly):
    """``text`` when set, ``object`` decoded when set (text that is not JSON is passed on as it is)."""

    def from_pulsar(self, obj: ToolResponse) -> JsonObject:
        out: JsonObject = {}
        if obj.text:
            out["text"] = obj.text
        if obj.object:
            out["object"] = json_or_text(obj.object)
        return out
