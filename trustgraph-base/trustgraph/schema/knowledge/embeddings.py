"""Embedding batches: of graph entities, document chunks, objects and row indexes."""

from dataclasses import dataclass, field

from ..core.metadata import Metadata
from ..core.primitives import Term


@dataclass
class EntityEmbeddings:
    """The vectors of one graph entity, and the chunk it came from."""

    entity: Term | None = None
    vectors: list[list[float]] = field(default_factory=list)
    chunk_id: str = ""


@dataclass
class GraphEmbeddings:
    """A batch of entity embeddings."""

    metadata: Metadata | None = None
    entities: list[EntityEmbeddings] = field(default_factory=list)


@dataclass
class ChunkEmbeddings:
    """The vectors of one document chunk."""

    chunk_id: str = ""
    vectors: list[list[float]] = field(default_factory=list)


@dataclass
class DocumentEmbeddings:
    """A batch of chunk embeddings."""

    metadata: Metadata | None = None
    chunks: list[ChunkEmbeddings] = field(default_factory=list)


@dataclass
class ObjectEmbeddings:
    """Vectors keyed by an object's primary key."""

    metadata: Metadata | None = None
    vectors: list[list[float]] = field(default_factory=list)
    name: str = ""
    key_name: str = ""
    id: str = ""


@dataclass
class StructuredObjectEmbedding:
    """An object's vectors, with one vector per field as well."""

    metadata: Metadata | None = None
    vectors: list[list[float]] = field(default_factory=list)
    schema_name: str = ""
    object_id: str = ""
    field_embeddings: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class RowIndexEmbedding:
    """One row's embedding for one index (the indexed field names and their values)."""

    index_name: str = ""
    index_value: list[str] = field(default_factory=list)
    text: str = ""
    vectors: list[list[float]] = field(default_factory=list)


@dataclass
class RowEmbeddings:
    """A batch of row index embeddings of one schema."""

    metadata: Metadata | None = None
    schema_name: str = ""
    embeddings: list[RowIndexEmbedding] = field(default_factory=list)
