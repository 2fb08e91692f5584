"""What the extraction prompts pull out of text."""

from dataclasses import dataclass


@dataclass
class Definition:
    """A term and its definition."""

    name: str = ""
    definition: str = ""


@dataclass
class Topic:
    """A topic and its definition."""

    name: str = ""
    definition: str = ""


@dataclass
class Relationship:
    """Subject, predicate, object; ``o_entity`` says the object is an entity, not a literal."""

    s: str = ""
    p: str = ""
    o: str = ""
    o_entity: bool = False


@dataclass
class Fact:
    """A plain subject-predicate-object statement."""

    s: str = ""
    p: str = ""
    o: str = ""
