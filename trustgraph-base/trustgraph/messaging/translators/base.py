"""What every translator shares: the three base classes upstream 2.1.4 names, and the field helpers.

A translator turns the JSON a client speaks into a wire record
(:meth:`Translator.to_pulsar`) and a record back into that JSON
(:meth:`Translator.from_pulsar`).  Upstream's API gateway, its reverse
gateway and any processor written against ``trustgraph.messaging`` call
them by these names, and so does our gateway: one set of rules for both.

Ours is stricter about what comes in: a request body goes through the schema
codec (``from_dict``), so a field of the wrong JSON type is refused with a
:class:`~trustgraph.schema.SchemaError` naming it, and a missing required
field or a malformed value is a :class:`BadRequest` (both are
``ValueError``), instead of a ``KeyError`` or a malformed message on the bus.
A ``null`` field is taken as absent, so it gets the same default.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from trustgraph.schema import Error, from_dict

__all__ = ["BadRequest", "MessageTranslator", "SendTranslator", "Translator", "handle_optional_fields"]

JsonObject = dict[str, Any]

DEFAULT_USER = "trustgraph"
DEFAULT_COLLECTION = "default"


class BadRequest(ValueError):
    """A body a translator refuses (a missing or malformed field); the text says what is wrong."""


class Translator(ABC):
    """Both directions between one kind of wire record and its client JSON."""

    @abstractmethod
    def to_pulsar(self, data: JsonObject) -> Any:
        """The record for a JSON body (``BadRequest`` or ``SchemaError`` when it cannot be one)."""

    @abstractmethod
    def from_pulsar(self, obj: Any) -> Any:
        """The client JSON of a record."""


class MessageTranslator(Translator):
    """A request or response of a service; a response says whether it ends the call."""

    def from_response_with_completion(self, obj: Any) -> tuple[JsonObject, bool]:
        """``(json, is_final)``: by default every response is the only one."""
        return self.from_pulsar(obj), True


class SendTranslator(Translator):
    """A one-way message (a document sent for loading): only the JSON -> record direction is used."""

    def from_pulsar(self, obj: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} translates into records only")


class ResponseOnly(MessageTranslator):
    """A response translator: services make responses, clients only read them."""

    def to_pulsar(self, data: JsonObject) -> Any:
        raise NotImplementedError(f"{type(self).__name__} translates responses into JSON only")


def handle_optional_fields(obj: Any, fields: list[str]) -> JsonObject:
    """The named attributes of ``obj`` that are not None, as a dict."""
    out: JsonObject = {}
    for name in fields:
        value = getattr(obj, name, None)
        if value is not None:
            out[name] = value
    return out


# -- helpers of this package -------------------------------------------------------------------


def build(cls: type, fields: JsonObject) -> Any:
    """A record from snake_case fields, type-checked; absent and null fields take the defaults."""
    return from_dict(cls, {k: v for k, v in fields.items() if v is not None})


def as_object(value: Any, what: str) -> JsonObject:
    """``value`` when it is a JSON object ({} for null), else a :class:`BadRequest` naming ``what``."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRequest(f"Bad request: {what} must be a JSON object")
    return value


def given(body: JsonObject, key: str, default: Any = None) -> Any:
    """``body[key]``, with null treated as absent (clients send both)."""
    value = body.get(key)
    return default if value is None else value


def required(body: JsonObject, key: str) -> Any:
    """``body[key]``, or a :class:`BadRequest` saying it is required."""
    value = body.get(key)
    if value is None:
        raise BadRequest(f"Bad request: '{key}' is required")
    return value


def json_object(body: JsonObject, key: str) -> JsonObject | None:
    """``body[key]`` when it is an object or absent; anything else is a :class:`BadRequest`."""
    value = body.get(key)
    if value is not None and not isinstance(value, dict):
        raise BadRequest(f"Bad request: '{key}' must be a JSON object")
    return value


def whole_number(body: JsonObject, key: str, default: int) -> int:
    """``body[key]`` as an int, as upstream reads limits (``int(...)``: ``"5"`` is 5); else a
    :class:`BadRequest` naming the field."""
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool):
        raise BadRequest(f"Bad request: '{key}' must be a whole number")
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise BadRequest(f"Bad request: '{key}' must be a whole number") from None


def error_json(error: Error | None) -> JsonObject | None:
    """A record's Error as JSON (``type``, ``message``), or None without one."""
    if error is None:
        return None
    return {"type": error.type, "message": error.message}


def list_of(value: Any, what: str) -> list[Any]:
    """``value`` when it is a JSON array ([] for null), else a :class:`BadRequest`."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadRequest(f"Bad request: {what} must be a JSON array")
    return value

