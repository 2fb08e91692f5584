"""Upstream's module path of :class:`GraphEmbeddingsClient` (see :mod:`.services`)."""

from .services import GraphEmbeddingsClient

__all__ = ["GraphEmbeddingsClient"]
