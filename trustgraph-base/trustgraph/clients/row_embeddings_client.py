"""Upstream's module path of :class:`RowEmbeddingsClient` (see :mod:`.services`)."""

from .services import RowEmbeddingsClient

__all__ = ["RowEmbeddingsClient"]
