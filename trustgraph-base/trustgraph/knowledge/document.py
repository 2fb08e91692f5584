"""schema.org DigitalDocument."""

from __future__ import annotations

from .defs import (
    COPYRIGHT_HOLDER,
    COPYRIGHT_NOTICE,
    COPYRIGHT_YEAR,
    DESCRIPTION,
    DIGITAL_DOCUMENT,
    IDENTIFIER,
    KEYWORD,
    LICENSE,
    PUBLICATION,
    URL,
)
from .entity import Emit, Entity
from .publication import PublicationEvent


class DigitalDocument(Entity):
    """A document's bibliographic description; emits its publication event too."""

    TYPE = DIGITAL_DOCUMENT

    def __init__(self, id: str, name: str | None = None, description: str | None = None,  # noqa: A002
                 copyright_notice: str | None = None, copyright_holder: str | None = None,
                 copyright_year: str | None = None, license: str | None = None,  # noqa: A002
                 identifier: str | None = None, publication: PublicationEvent | None = None,
                 url: str | None = None, keywords: list[str] | None = None) -> None:
        super().__init__(id, name)
        self.description = description
        self.copyright_notice = copyright_notice
        self.copyright_holder = copyright_holder
        self.copyright_year = copyright_year
        self.license = license
        self.identifier = identifier
        self.publication = publication
        self.url = url
        self.keywords = list(keywords or [])

    def emit(self, emit: Emit) -> None:
        """Emit this document's triples (keywords one each), then its publication's."""
        self._head(emit)
        if self.identifier:
            self._triple(emit, IDENTIFIER, self.identifier)
        for predicate, value in ((DESCRIPTION, self.description),
                                 (COPYRIGHT_NOTICE, self.copyright_notice),
                                 (COPYRIGHT_HOLDER, self.copyright_holder),
                                 (COPYRIGHT_YEAR, self.copyright_year), (LICENSE, self.license)):
            if value:
                self._triple(emit, predicate, value)
        for keyword in self.keywords:
            self._triple(emit, KEYWORD, keyword)
        if self.publication:
            self._triple(emit, PUBLICATION, self.publication.id, is_uri=True)
            self.publication.emit(emit)
        if self.url:
            self._triple(emit, URL, self.url, is_uri=True)
