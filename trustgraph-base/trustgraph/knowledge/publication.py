"""schema.org PublicationEvent."""

from __future__ import annotations

from .defs import DESCRIPTION, END_DATE, PUBLICATION_EVENT, PUBLISHED_BY, START_DATE
from .entity import Emit, Entity
from .organization import Organization


class PublicationEvent(Entity):
    """When and by whom something was published; emits its organization too."""

    TYPE = PUBLICATION_EVENT

    def __init__(self, id: str, organization: Organization | None = None, name: str | None = None,  # noqa: A002
                 description: str | None = None, start_date: str | None = None,
                 end_date: str | None = None) -> None:
        super().__init__(id, name)
        self.organization = organization
        self.description = description
        self.start_date = start_date
        self.end_date = end_date

    def emit(self, emit: Emit) -> None:
        """Emit this event's triples, then its organization's."""
        self._head(emit)
        if self.description:
            self._triple(emit, DESCRIPTION, self.description)
        if self.organization:
            self._triple(emit, PUBLISHED_BY, self.organization.id, is_uri=True)
            self.organization.emit(emit)
        if self.start_date:
            self._triple(emit, START_DATE, self.start_date)
        if self.end_date:
            self._triple(emit, END_DATE, self.end_date)
