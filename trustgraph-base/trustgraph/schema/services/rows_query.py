"""GraphQL over stored rows (the rows service)."""

from dataclasses import dataclass, field
from typing import Any

from ..core.primitives import Error


@dataclass
class GraphQLError:
    """A field-level GraphQL error."""

    message: str = ""
    path: list[str] = field(default_factory=list)
    extensions: dict[str, str] = field(default_factory=dict)


@dataclass
class RowsQueryRequest:
    """A GraphQL query against a user's collection.

    ``variables`` values may be any JSON value: upstream declares them
    ``dict[str, str]`` but its gateway and clients pass GraphQL variables on
    as given (numbers, booleans, objects), and its rows service reads them so.
    """

    user: str = ""
    collection: str = ""
    query: str = ""
    variables: dict[str, Any] = field(default_factory=dict)
    operation_name: str | None = None


@dataclass
class RowsQueryResponse:
    """GraphQL result: ``data`` is JSON text."""

    error: Error | None = None
    data: str = ""
    errors: list[GraphQLError] = field(default_factory=list)
    extensions: dict[str, str] = field(default_factory=dict)
