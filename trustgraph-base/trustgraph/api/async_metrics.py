"""Upstream's module path of :class:`AsyncMetrics`."""

from .metrics import AsyncMetrics

__all__ = ["AsyncMetrics"]
