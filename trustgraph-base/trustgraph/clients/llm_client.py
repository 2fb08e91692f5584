"""Upstream's module path of :class:`LlmClient` (see :mod:`.services`)."""

from .services import LlmClient

__all__ = ["LlmClient"]
