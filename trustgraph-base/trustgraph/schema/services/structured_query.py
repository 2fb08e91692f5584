"""Structured (natural language to rows) query records."""

from dataclasses import dataclass, field

from ..core.primitives import Error


@dataclass
class StructuredQueryRequest:
    """A natural-language question against a collection's structured data."""

    question: str = ""
    user: str = ""
    collection: str = ""


@dataclass
class StructuredQueryResponse:
    """Query result as JSON text in ``data``, plus any query-level errors."""

    error: Error | None = None
    data: str = ""
    errors: list[str] = field(default_factory=list)
