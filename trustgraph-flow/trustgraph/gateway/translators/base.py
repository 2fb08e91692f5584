"""What every kind's translation shares: the Translator, error bodies and field helpers.

A :class:`Translator` says how a JSON body becomes a request record, how a
response record becomes JSON, and when a response is the last of a call.
Request bodies go through the schema codec (``from_dict``), so a wrongly
typed field is refused with a clear message instead of becoming a malformed
message on the bus; such a refusal is a :class:`BadRequest`, answered as
upstream answers a request it cannot translate: ``{"error": {"type":
"gateway-error", "message": ...}}``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trustgraph.schema import SchemaError, from_dict

JsonObject = dict[str, Any]

DEFAULT_USER = "trustgraph"
DEFAULT_COLLECTION = "default"


class BadRequest(ValueError):
    """A request body the translator refuses (a missing or wrongly typed field); the text says what is wrong."""


def error_body(type_: str, message: str) -> JsonObject:
    """The JSON of a failed call: the schema-wide Error convention."""
    return {"error": {"type": type_ or "", "message": message or ""}}


def gateway_error(message: str) -> JsonObject:
    """A failure of the gateway itself (timeout, broker, unknown tool), not of a service."""
    return error_body("gateway-error", message)


@dataclass(frozen=True)
class Translator:
    """How one kind of service maps between gateway JSON and wire records."""

    kind: str
    request_schema: type
    response_schema: type
    encode: Callable[[JsonObject], Any]
    decode: Callable[[Any], JsonObject]
    final: Callable[[Any], bool]
    #: Message properties a request body asks for (our extensions that are not record fields).
    properties: Callable[[JsonObject], dict[str, str]] | None = None

    def request_properties(self, body: JsonObject) -> dict[str, str]:
        return self.properties(body) if self.properties is not None else {}

    def request(self, body: Any) -> Any:
        """Turn a JSON request body into the wire record, or raise :class:`BadRequest`."""
        if not isinstance(body, dict):
            raise BadRequest("Bad request: the request must be a JSON object")
        try:
            return self.encode(body)
        except SchemaError as e:
            raise BadRequest(f"Bad request: {e}") from None

    def response(self, record: Any) -> tuple[JsonObject, bool]:
        """Return ``(json, is_final)`` for one response record."""
        err = getattr(record, "error", None)
        if err is not None:
            body = error_body(err.type, err.message)
            if getattr(record, "outcome", ""):   # ours: how an agent dialog ended
                body["outcome"] = record.outcome
            return body, True
        return self.decode(record), bool(self.final(record))


# -- helpers ----------------------------------------------------------------


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
    value = body.get(key)
    if value is None:
        raise BadRequest(f"Bad request: '{key}' is required")
    return value


def json_object(body: JsonObject, key: str) -> JsonObject | None:
    value = body.get(key)
    if value is not None and not isinstance(value, dict):
        raise BadRequest(f"Bad request: '{key}' must be a JSON object")
    return value


def first(_record: Any) -> bool:
    return True


def is_end_of_stream(record: Any) -> bool:
    return bool(record.end_of_stream)


def translator(kind: str, req: type, resp: type, enc: Callable, dec: Callable, fin: Callable,
               props: Callable | None = None) -> Translator:
    """Shorthand for a table entry."""
    return Translator(kind, req, resp, enc, dec, fin, props)
