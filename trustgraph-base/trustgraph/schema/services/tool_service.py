"""Dynamic tool-service records (e.g. the joke service)."""

from dataclasses import dataclass

from ..core.primitives import Error


@dataclass
class ToolServiceRequest:
    """Invocation of a tool service; ``config`` and ``arguments`` hold JSON text."""

    user: str = ""
    config: str = ""
    arguments: str = ""


@dataclass
class ToolServiceResponse:
    """Tool-service result; ``response`` is text (non-strings are JSON-encoded)."""

    error: Error | None = None
    response: str = ""
    end_of_stream: bool = False
