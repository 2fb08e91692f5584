"""Graph batches: triples, and entities with their textual context."""

from dataclasses import dataclass, field

from ..core.metadata import Metadata
from ..core.primitives import Term, Triple


@dataclass
class EntityContext:
    """An entity and the text that describes it."""

    entity: Term | None = None
    context: str = ""
    chunk_id: str = ""


@dataclass
class EntityContexts:
    """A batch of entity contexts."""

    metadata: Metadata | None = None
    entities: list[EntityContext] = field(default_factory=list)


@dataclass
class Triples:
    """A batch of triples."""

    metadata: Metadata | None = None
    triples: list[Triple] = field(default_factory=list)
