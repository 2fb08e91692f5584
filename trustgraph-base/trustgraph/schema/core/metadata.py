"""Provenance header carried by every knowledge message."""

from dataclasses import dataclass, field

from .primitives import Triple


@dataclass
class Metadata:
    """Where a batch of knowledge came from: source ``id``, its own triples, owner and collection."""

    id: str = ""
    metadata: list[Triple] = field(default_factory=list)
    user: str = ""
    collection: str = ""
