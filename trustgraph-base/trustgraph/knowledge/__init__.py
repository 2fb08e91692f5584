"""Describing documents as RDF: terms, identifiers, and schema.org entities that emit triples.

``Uri`` and ``Literal`` are ``str`` subclasses that say which kind of term
they are; ``DigitalDocument``, ``PublicationEvent`` and ``Organization``
``emit`` their description as ``{"s", "p", "o"}`` dicts (what
``Api.flow().id(...).load_document(metadata=...)`` sends), and ``hash``
makes the content-derived document ids upstream makes, so the same file gets
the same id from either package.
"""

from .defs import *  # noqa: F403 - upstream exposes the vocabulary flat
from .defs import __all__ as _defs
from .document import DigitalDocument
from .identifier import PREF_DOC, PREF_ORG, PREF_PUBEV, hash, to_uri
from .organization import Organization
from .publication import PublicationEvent

__all__ = [*_defs, "DigitalDocument", "Organization", "PREF_DOC", "PREF_ORG", "PREF_PUBEV",
           "PublicationEvent", "hash", "to_uri"]
