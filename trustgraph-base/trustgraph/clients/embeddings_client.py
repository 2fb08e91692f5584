"""Upstream's module path of :class:`EmbeddingsClient` (see :mod:`.services`)."""

from .services import EmbeddingsClient

__all__ = ["EmbeddingsClient"]
