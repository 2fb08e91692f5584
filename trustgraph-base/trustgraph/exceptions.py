"""Exceptions services and clients share: upstream's names (:mod:`trustgraph.clients` raises
them) and :class:`ServiceError`, the one a handler raises to answer with an error.

Nothing here imports the rest of the package, so a client can import it alone.
"""


class ServiceError(Exception):
    """Raise from a handler to answer with this message; ``type`` overrides the service's default."""

    def __init__(self, message: str, type: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.type = type


class TooManyRequests(Exception):
    """The service is rate-limited (error type ``too-many-requests``); retry later."""


class LlmError(ServiceError):
    """The LLM failed (error type ``llm-error``): raised by a backend, its message goes to the caller
    as is, and by a client that got such a reply."""


class ParseError(Exception):
    """A service could not parse what it was given or produced (error type ``ParseError``)."""


# Upstream 2.1.4's name, raised by its services; a REST client gets trustgraph.api.RequestError.
class RequestError(Exception):
    """A request was refused."""
