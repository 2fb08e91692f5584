"""Exceptions the Pulsar clients (:mod:`trustgraph.clients`) raise, as upstream names them."""


class TooManyRequests(Exception):
    """The service is rate-limited (error type ``too-many-requests``); retry later."""


class LlmError(Exception):
    """The LLM failed (error type ``llm-error``)."""


class ParseError(Exception):
    """A service could not parse what it was given or produced (error type ``ParseError``)."""


class RequestError(Exception):
    """A request was refused."""
