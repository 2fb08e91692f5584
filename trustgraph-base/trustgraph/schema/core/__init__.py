"""Core wire records shared by every service, and topic naming."""

from .metadata import Metadata
from .primitives import BLANK, IRI, LITERAL, TRIPLE, Error, Field, RowSchema, Term, Triple
from .topic import topic

__all__ = ["BLANK", "IRI", "LITERAL", "TRIPLE", "Error", "Field", "Metadata", "RowSchema", "Term",
           "Triple", "topic"]
