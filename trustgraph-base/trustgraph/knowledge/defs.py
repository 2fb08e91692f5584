"""The RDF vocabulary the entity classes use, and the term types."""

from __future__ import annotations

from typing import Any

from ..rdf import RDF_LABEL, RDF_TYPE, SCHEMA

IS_A = RDF_TYPE
LABEL = RDF_LABEL

_SCHEMA = SCHEMA
DIGITAL_DOCUMENT = _SCHEMA + "DigitalDocument"
PUBLICATION_EVENT = _SCHEMA + "PublicationEvent"
ORGANIZATION = _SCHEMA + "Organization"
NAME = _SCHEMA + "name"
DESCRIPTION = _SCHEMA + "description"
COPYRIGHT_NOTICE = _SCHEMA + "copyrightNotice"
COPYRIGHT_HOLDER = _SCHEMA + "copyrightHolder"
COPYRIGHT_YEAR = _SCHEMA + "copyrightYear"
LICENSE = _SCHEMA + "license"
PUBLICATION = _SCHEMA + "publication"
START_DATE = _SCHEMA + "startDate"
END_DATE = _SCHEMA + "endDate"
PUBLISHED_BY = _SCHEMA + "publishedBy"
DATE_PUBLISHED = _SCHEMA + "datePublished"
URL = _SCHEMA + "url"
IDENTIFIER = _SCHEMA + "identifier"
KEYWORD = _SCHEMA + "keywords"


class _Term:
    """What every term answers: which kind it is."""

    def is_uri(self) -> bool:
        return False

    def is_literal(self) -> bool:
        return False

    def is_triple(self) -> bool:
        return False


class Uri(str, _Term):
    """An IRI."""

    def is_uri(self) -> bool:
        return True


class Literal(str, _Term):
    """A literal value."""

    def is_literal(self) -> bool:
        return True


class QuotedTriple(_Term):
    """A statement used as a term (RDF-star); shown as ``<<s p o>>``."""

    def __init__(self, s: Any, p: Any, o: Any) -> None:
        self.s = s
        self.p = p
        self.o = o

    def is_triple(self) -> bool:
        return True

    def __str__(self) -> str:
        return f"<<{self.s} {self.p} {self.o}>>"

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QuotedTriple) and (self.s, self.p, self.o) == (other.s, other.p, other.o)

    def __hash__(self) -> int:
        return hash((self.s, self.p, self.o))


__all__ = [
    "COPYRIGHT_HOLDER", "COPYRIGHT_NOTICE", "COPYRIGHT_YEAR", "DATE_PUBLISHED", "DESCRIPTION",
    "DIGITAL_DOCUMENT", "END_DATE", "IDENTIFIER", "IS_A", "KEYWORD", "LABEL", "LICENSE", "NAME",
    "ORGANIZATION", "PUBLICATION", "PUBLICATION_EVENT", "PUBLISHED_BY", "START_DATE", "URL",
    "Literal", "QuotedTriple", "Uri",
]
