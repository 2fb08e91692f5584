"""Upstream's module path of :class:`AsyncBulkClient` (it lives with the sync one)."""

from .bulk_client import AsyncBulkClient

__all__ = ["AsyncBulkClient"]
