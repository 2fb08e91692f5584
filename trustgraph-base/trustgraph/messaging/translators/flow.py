"""The flow service: blueprints and flows, with kebab-case keys on the JSON side."""

from __future__ import annotations

import json

from trustgraph.schema import FlowRequest, FlowResponse, from_dict

from .base import JsonObject, MessageTranslator, ResponseOnly, json_object

__all__ = ["FlowRequestTranslator", "FlowResponseTranslator"]

# (JSON key, record field) of the request fields that pass as they are.
_REQUEST = (("operation", "operation"), ("blueprint-name", "blueprint_name"),
            ("blueprint-definition", "blueprint_definition"), ("flow-id", "flow_id"))


class FlowRequestTranslator(MessageTranslator):
    """``operation``, ``blueprint-name``, ``blueprint-definition`` (JSON text; ours: an object
    is accepted too), ``description`` (absent stays null: start-flow answers "No description"),
    ``flow-id``, ``parameters`` (an object, values passed as given)."""

    def to_pulsar(self, data: JsonObject) -> FlowRequest:
        fields = {dst: data[src] for src, dst in _REQUEST if data.get(src) is not None}
        if isinstance(fields.get("blueprint_definition"), dict):
            fields["blueprint_definition"] = json.dumps(fields["blueprint_definition"])
        fields["description"] = data.get("description")
        record = from_dict(FlowRequest, fields)
        params = json_object(data, "parameters")
        if params is not None:
            # config-svc stringifies the values when it resolves a flow's parameters.
            record.parameters = dict(params)
        return record

    def from_pulsar(self, obj: FlowRequest) -> JsonObject:
        pairs = (*((src, getattr(obj, dst)) for src, dst in _REQUEST[:3]), ("description", obj.description),
                 ("flow-id", obj.flow_id), ("parameters", obj.parameters))
        return {k: v for k, v in pairs if v is not None}


class FlowResponseTranslator(ResponseOnly):
    """Each field when not null, kebab-case."""

    def from_pulsar(self, obj: FlowResponse) -> JsonObject:
        pairs = (("blueprint-names", obj.blueprint_names), ("flow-ids", obj.flow_ids),
                 ("blueprint-definition", obj.blueprint_definition), ("flow", obj.flow),
                 ("description", obj.description), ("parameters", obj.parameters))
        return {k: v for k, v in pairs if v is not None}
