"""The embeddings and row-embeddings query records as upstream TrustGraph 2.11 writes them.

Why 2.11 copies: 2.11 renamed the fields a 2.1 caller fills, so 2.11's
services read a 2.1 request as an empty one (its decoder drops unknown keys
and defaults missing ones) and answer it without an error.
``EmbeddingsRequest`` embeds a list, ``texts`` (2.1: one ``text``), and the
response has one vector per text; ``RowEmbeddingsRequest`` takes one
``vector`` (2.1: ``vectors``) and no ``user`` (the flow's workspace is the
tenancy), and a match carries the row's ``attributes``.  Read from
trustgraph-base 2.11.1's ``schema/embeddings.py``.  2.11's
``EmbeddingsResponse`` is 2.1's (``error``, ``vectors``).

``attributes`` values are a string or a list of strings in 2.11
(``str | list[str]``); the codec has no such union, so they are typed ``Any``
here and passed through as they come.
"""

from dataclasses import dataclass, field
from typing import Any

from trustgraph.schema.core.primitives import Error


@dataclass
class EmbeddingsRequest:
    """Texts to embed, one vector back for each."""

    texts: list[str] = field(default_factory=list)


@dataclass
class RowIndexMatch:
    """One row index that matched, with its score and the row's attributes."""

    index_name: str = ""
    index_value: list[str] = field(default_factory=list)
    text: str = ""
    score: float = 0.0
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class RowEmbeddingsRequest:
    """Rows of ``schema_name`` in the flow's workspace whose indexed values are nearest to ``vector``."""

    vector: list[float] = field(default_factory=list)
    limit: int = 10
    collection: str = ""
    schema_name: str = ""
    index_name: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class RowEmbeddingsResponse:
    """The matches, best first."""

    error: Error | None = None
    matches: list[RowIndexMatch] = field(default_factory=list)
