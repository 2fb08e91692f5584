"""The exceptions of :mod:`trustgraph.api`, one per service error type.

A service's ``{"type", "message"}`` error becomes the class mapped to its
type (``agent-error`` -> :class:`AgentError`, ...; unknown types ->
:class:`UnexpectedError`), so callers can catch the service that failed.
Transport and format problems are :class:`ProtocolException`.
"""

from __future__ import annotations

from typing import Any, NoReturn


class ProtocolException(Exception):
    """The gateway could not be talked to, or answered something unreadable."""


class TrustGraphException(Exception):
    """A service reported an error; ``error_type`` is its wire type."""

    def __init__(self, message: str, error_type: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.error_type = error_type


class AgentError(TrustGraphException):
    """The agent failed."""


class ConfigError(TrustGraphException):
    """The config service failed."""


class DocumentRagError(TrustGraphException):
    """Document RAG failed."""


class FlowError(TrustGraphException):
    """Flow management failed."""


class GatewayError(TrustGraphException):
    """The API gateway itself failed (routing, timeout, bad request)."""


class GraphRagError(TrustGraphException):
    """Graph RAG failed."""


class LLMError(TrustGraphException):
    """The LLM failed."""


class LoadError(TrustGraphException):
    """Loading data failed."""


class LookupError(TrustGraphException):  # noqa: A001 - upstream's public name
    """A lookup failed."""


class NLPQueryError(TrustGraphException):
    """The nlp-query service failed."""


class RowsQueryError(TrustGraphException):
    """The rows (GraphQL) service failed."""


# Upstream 2.1.4's name for request-error at the REST client; services raise trustgraph.exceptions.RequestError.
class RequestError(TrustGraphException):
    """A request was refused."""


class StructuredQueryError(TrustGraphException):
    """The structured-query service failed."""


class UnexpectedError(TrustGraphException):
    """An error of a type this library does not know."""


#: The wire error type of each exception class.
ERROR_TYPE_MAPPING: dict[str, type[TrustGraphException]] = {
    "agent-error": AgentError,
    "config-error": ConfigError,
    "document-rag-error": DocumentRagError,
    "flow-error": FlowError,
    "gateway-error": GatewayError,
    "graph-rag-error": GraphRagError,
    "llm-error": LLMError,
    "load-error": LoadError,
    "lookup-error": LookupError,
    "nlp-query-error": NLPQueryError,
    "rows-query-error": RowsQueryError,
    "request-error": RequestError,
    "structured-query-error": StructuredQueryError,
    "unexpected-error": UnexpectedError,
}

#: The name older code catches.
ApplicationException = TrustGraphException


def raise_from_error_dict(error_dict: Any) -> NoReturn:
    """Raise the exception for a gateway ``error`` value.

    A ``{"type", "message"}`` object raises its mapped class; a bare string
    (a routing error, e.g. "Invalid flow") raises :class:`GatewayError`.
    """
    if isinstance(error_dict, dict):
        error_type = error_dict.get("type") or "unexpected-error"
        message = error_dict.get("message") or "Unknown error"
        raise ERROR_TYPE_MAPPING.get(error_type, UnexpectedError)(message, error_type)
    raise GatewayError(str(error_dict), "gateway-error")


def check_error(response: dict[str, Any]) -> None:
    """Raise :class:`ApplicationException` ``"type: message"`` when a REST reply carries an error."""
    if "error" not in response:
        return
    error = response["error"]
    if isinstance(error, dict) and "type" in error and "message" in error:
        raise ApplicationException(f"{error['type']}: {error['message']}", error["type"])
    raise ApplicationException(str(error))
