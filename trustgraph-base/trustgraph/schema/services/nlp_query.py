"""Natural language to GraphQL (the nlp-query service)."""

from dataclasses import dataclass, field

from ..core.primitives import Error


@dataclass
class QuestionToStructuredQueryRequest:
    """A question to turn into a GraphQL query."""

    question: str = ""
    max_results: int = 0


@dataclass
class QuestionToStructuredQueryResponse:
    """The generated query, its variables and the schemas it targets."""

    error: Error | None = None
    graphql_query: str = ""
    variables: dict[str, str] = field(default_factory=dict)
    detected_schemas: list[str] = field(default_factory=list)
    confidence: float = 0.0
