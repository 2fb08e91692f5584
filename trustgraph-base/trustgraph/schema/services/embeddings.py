"""Embeddings service records (2.1.4 shape: a single ``text``)."""

from dataclasses import dataclass, field

from ..core.primitives import Error


@dataclass
class EmbeddingsRequest:
    """Text to embed.  Later tags renamed this to ``texts`` (a list); 2.1.4 uses ``text``."""

    text: str = ""


@dataclass
class EmbeddingsResponse:
    """One or more embedding vectors for the request text."""

    error: Error | None = None
    vectors: list[list[float]] = field(default_factory=list)
