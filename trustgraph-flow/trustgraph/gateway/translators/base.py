"""What every kind's translation shares in the gateway: the Translator and error bodies.

The per-kind rules live in :mod:`trustgraph.messaging` (upstream 2.1.4's
translators, at its path), shared with upstream's gateway when it runs on
our base.  A :class:`Translator` here pairs a kind's two translators with
its records and turns their refusals into :class:`BadRequest`, which the
gateway answers as upstream answers a request it cannot translate:
``{"error": {"type": "gateway-error", "message": ...}}``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trustgraph.messaging.translators.base import (
    DEFAULT_COLLECTION,
    DEFAULT_USER,
    BadRequest,
    JsonObject,
    MessageTranslator,
)
from trustgraph.schema import SchemaError

__all__ = ["DEFAULT_COLLECTION", "DEFAULT_USER", "BadRequest", "JsonObject", "Translator", "error_body",
           "gateway_error"]


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
    #: JSON body -> request record (``to_pulsar``).
    requests: MessageTranslator
    #: Response record -> JSON, and whether it ends the call (``from_response_with_completion``).
    responses: MessageTranslator
    #: Message properties a request body asks for (our extensions that are not record fields).
    properties: Callable[[JsonObject], dict[str, str]] | None = None

    def request_properties(self, body: JsonObject) -> dict[str, str]:
        return self.properties(body) if self.properties is not None else {}

    def request(self, body: Any) -> Any:
        """Turn a JSON request body into the wire record, or raise :class:`BadRequest`."""
        if not isinstance(body, dict):
            raise BadRequest("Bad request: the request must be a JSON object")
        try:
            return self.requests.to_pulsar(body)
        except SchemaError as e:
            raise BadRequest(f"Bad request: {e}") from None

    def response(self, record: Any) -> tuple[JsonObject, bool]:
        """Return ``(json, is_final)`` for one response record; an error is always final."""
        err = getattr(record, "error", None)
        if err is not None:
            body = error_body(err.type, err.message)
            if getattr(record, "outcome", ""):   # ours: how an agent dialog ended
                body["outcome"] = record.outcome
            return body, True
        return self.responses.from_response_with_completion(record)
