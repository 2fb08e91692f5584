"""Records embedded in many service messages: errors, RDF terms and triples, row schemas."""

from __future__ import annotations

from dataclasses import dataclass, field

#: ``Term.type`` values: an IRI, a blank node, a literal, a quoted (RDF-star) triple.
IRI = "i"
BLANK = "b"
LITERAL = "l"
TRIPLE = "t"


@dataclass
class Error:
    """Failure report carried in the ``error`` field of service responses.

    ``type`` is a short machine-readable class (``agent-error``,
    ``config-error``, ...); ``message`` is for humans.
    """

    type: str = ""
    message: str = ""


@dataclass
class Term:
    """One RDF term; ``type`` (IRI, BLANK, LITERAL, TRIPLE) says which other fields count.

    IRIs use ``iri``, blank nodes ``id``, literals ``value`` with an optional
    ``datatype`` or ``language``, quoted triples ``triple``.
    """

    type: str = ""
    iri: str = ""
    id: str = ""
    value: str = ""
    datatype: str = ""
    language: str = ""
    triple: Triple | None = None


@dataclass
class Triple:
    """A statement (or quad: ``g`` names the graph, None for the default graph)."""

    s: Term | None = None
    p: Term | None = None
    o: Term | None = None
    g: str | None = None


@dataclass
class Field:
    """One column of a structured-data schema."""

    name: str = ""
    type: str = ""
    size: int = 0
    primary: bool = False
    description: str = ""
    required: bool = False
    enum_values: list[str] = field(default_factory=list)
    indexed: bool = False


@dataclass
class RowSchema:
    """A named table shape for structured data."""

    name: str = ""
    description: str = ""
    fields: list[Field] = field(default_factory=list)
