"""Core wire records shared by every service, and topic naming."""

from .primitives import Error
from .topic import topic

__all__ = ["Error", "topic"]
