"""schema.org Organization."""

from __future__ import annotations

from .defs import DESCRIPTION, ORGANIZATION
from .entity import Emit, Entity


class Organization(Entity):
    """A publisher or copyright holder."""

    TYPE = ORGANIZATION

    def __init__(self, id: str, name: str | None = None, description: str | None = None) -> None:  # noqa: A002
        super().__init__(id, name)
        self.description = description

    def emit(self, emit: Emit) -> None:
        """Emit this organization's triples."""
        self._head(emit)
        if self.description:
            self._triple(emit, DESCRIPTION, self.description)
