"""Upstream's module path of :class:`GraphRagClient` (see :mod:`.services`)."""

from .services import GraphRagClient

__all__ = ["GraphRagClient"]
