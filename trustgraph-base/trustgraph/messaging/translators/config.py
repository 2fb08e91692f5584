"""The config service: ``get``, ``list``, ``getvalues``, ``put``, ``delete``, ``config``."""

from __future__ import annotations

from trustgraph.schema import ConfigRequest, ConfigResponse, ConfigValue, from_dict

from .base import JsonObject, MessageTranslator, ResponseOnly

__all__ = ["ConfigRequestTranslator", "ConfigResponseTranslator"]


def _values(values: list[ConfigValue]) -> list[JsonObject]:
    return [{"type": v.type, "key": v.key, "value": v.value} for v in values]


class ConfigRequestTranslator(MessageTranslator):
    """``operation``, ``keys`` (``[{type, key}]``), ``type``, ``values`` (``[{type, key, value}]``)."""

    def to_pulsar(self, data: JsonObject) -> ConfigRequest:
        fields = {k: data[k] for k in ("operation", "keys", "type", "values") if data.get(k) is not None}
        return from_dict(ConfigRequest, fields)

    def from_pulsar(self, obj: ConfigRequest) -> JsonObject:
        out: JsonObject = {}
        if obj.operation is not None:
            out["operation"] = obj.operation
        if obj.type is not None:
            out["type"] = obj.type
        if obj.keys is not None:
            out["keys"] = [{"type": k.type, "key": k.key} for k in obj.keys]
        if obj.values is not None:
            out["values"] = _values(obj.values)
        return out


class ConfigResponseTranslator(ResponseOnly):
    """``version``, ``values``, ``directory``, ``config``: each when not null."""

    def from_pulsar(self, obj: ConfigResponse) -> JsonObject:
        out: JsonObject = {}
        if obj.version is not None:
            out["version"] = obj.version
        if obj.values is not None:
            out["values"] = _values(obj.values)
        if obj.directory is not None:
            out["directory"] = obj.directory
        if obj.config is not None:
            out["config"] = obj.config
        return out
