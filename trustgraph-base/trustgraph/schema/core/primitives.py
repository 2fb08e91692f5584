"""Records embedded in many service messages."""

from dataclasses import dataclass


@dataclass
class Error:
    """Failure report carried in the ``error`` field of service responses.

    ``type`` is a short machine-readable class (``agent-error``,
    ``config-error``, ...); ``message`` is for humans.
    """

    type: str = ""
    message: str = ""
