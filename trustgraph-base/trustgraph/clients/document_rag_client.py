"""Upstream's module path of :class:`DocumentRagClient` (see :mod:`.services`)."""

from .services import DocumentRagClient

__all__ = ["DocumentRagClient"]
