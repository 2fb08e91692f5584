"""Upstream's module path of :class:`PromptClient` (see :mod:`.services`)."""

from .services import Definition, PromptClient, Relationship, Topic

__all__ = ["PromptClient", "Definition", "Relationship", "Topic"]
