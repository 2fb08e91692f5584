"""Upstream's module path of :class:`TriplesQueryClient` (see :mod:`.services`)."""

from .services import TriplesQueryClient

__all__ = ["TriplesQueryClient"]
