"""Upstream's module path of :class:`DocumentEmbeddingsClient` (see :mod:`.services`)."""

from .services import DocumentEmbeddingsClient

__all__ = ["DocumentEmbeddingsClient"]
