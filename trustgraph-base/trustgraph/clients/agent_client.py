"""Upstream's module path of :class:`AgentClient` (see :mod:`.services`)."""

from .services import AgentClient

__all__ = ["AgentClient"]
