"""Structured-data diagnosis: a sample in, its type, a descriptor or the matching schemas out."""

from __future__ import annotations

from trustgraph.base.formats.text import json_or_text
from trustgraph.schema import StructuredDataDiagnosisRequest, StructuredDataDiagnosisResponse

from .base import JsonObject, MessageTranslator, ResponseOnly, build, given, required

__all__ = ["StructuredDataDiagnosisRequestTranslator", "StructuredDataDiagnosisResponseTranslator"]


class StructuredDataDiagnosisRequestTranslator(MessageTranslator):
    """``operation`` and ``sample`` (required), ``type``, ``schema-name``, ``options``."""

    def to_pulsar(self, data: JsonObject) -> StructuredDataDiagnosisRequest:
        return build(StructuredDataDiagnosisRequest, {
            "operation": required(data, "operation"), "sample": required(data, "sample"),
            "type": given(data, "type", ""), "schema_name": given(data, "schema-name", ""),
            "options": given(data, "options", {})})

    def from_pulsar(self, obj: StructuredDataDiagnosisRequest) -> JsonObject:
        out: JsonObject = {"operation": obj.operation, "sample": obj.sample}
        if obj.type:
            out["type"] = obj.type
        if obj.schema_name:
            out["schema-name"] = obj.schema_name
        if obj.options:
            out["options"] = obj.options
        return out


class StructuredDataDiagnosisResponseTranslator(ResponseOnly):
    """``operation``, and what it found: ``detected-type``, ``confidence``, ``descriptor`` (decoded),
    ``metadata``, ``schema-matches`` (always for a schema selection, even empty)."""

    def from_pulsar(self, obj: StructuredDataDiagnosisResponse) -> JsonObject:
        out: JsonObject = {"operation": obj.operation}
        if obj.detected_type:
            out["detected-type"] = obj.detected_type
        if obj.confidence is not None:
            out["confidence"] = obj.confidence
        if obj.descriptor:
            out["descriptor"] = json_or_text(obj.descriptor)
        if obj.metadata:
            out["metadata"] = obj.metadata
        if obj.operation == "schema-selection" or obj.schema_matches:
            out["schema-matches"] = obj.schema_matches
        return out
