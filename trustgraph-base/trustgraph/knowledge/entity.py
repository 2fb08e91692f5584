"""The base of the schema.org entities: emitting triples about one subject."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .defs import IS_A, LABEL, NAME, Literal, Uri

#: What ``emit`` is given: one ``{"s", "p", "o"}`` dict per triple.
Emit = Callable[[dict[str, Any]], None]


class Entity:
    """An entity with an id (an IRI), a type and optional name; subclasses add properties."""

    TYPE = ""

    def __init__(self, id: str, name: str | None = None) -> None:  # noqa: A002
        self.id = id
        self.name = name

    def _triple(self, emit: Emit, predicate: str, value: str, is_uri: bool = False,
                subject: str | None = None) -> None:
        emit({"s": Uri(self.id if subject is None else subject), "p": Uri(predicate),
              "o": Uri(value) if is_uri else Literal(value)})

    def _head(self, emit: Emit) -> None:
        """The type triple, and the name as both label and schema.org name."""
        self._triple(emit, IS_A, self.TYPE, is_uri=True)
        if self.name:
            self._triple(emit, LABEL, self.name)
            self._triple(emit, NAME, self.name)
