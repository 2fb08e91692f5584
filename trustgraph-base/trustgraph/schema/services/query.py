"""Store queries: graph embeddings, triples, document embeddings, row embeddings."""

from dataclasses import dataclass, field

from ...topics import topic
from ..core.primitives import Error, Term, Triple


@dataclass
class GraphEmbeddingsRequest:
    """The entities nearest to some vectors."""

    vectors: list[list[float]] = field(default_factory=list)
    limit: int = 0
    user: str = ""
    collection: str = ""


@dataclass
class GraphEmbeddingsResponse:
    """Matching entities, nearest first."""

    error: Error | None = None
    entities: list[Term] | None = field(default_factory=list)


@dataclass
class TriplesQueryRequest:
    """Triples matching a pattern (None matches anything; ``g`` "*" means every graph)."""

    user: str = ""
    collection: str = ""
    s: Term | None = None
    p: Term | None = None
    o: Term | None = None
    g: str | None = None
    limit: int = 0


@dataclass
class TriplesQueryResponse:
    """The matching triples."""

    error: Error | None = None
    triples: list[Triple] = field(default_factory=list)


@dataclass
class DocumentEmbeddingsRequest:
    """The chunks nearest to some vectors."""

    vectors: list[list[float]] = field(default_factory=list)
    limit: int = 0
    user: str = ""
    collection: str = ""


@dataclass
class DocumentEmbeddingsResponse:
    """Ids of the matching chunks."""

    error: Error | None = None
    chunk_ids: list[str] | None = field(default_factory=list)


@dataclass
class RowIndexMatch:
    """One row index that matched a semantic search, with its score."""

    index_name: str = ""
    index_value: list[str] = field(default_factory=list)
    text: str = ""
    score: float = 0.0


@dataclass
class RowEmbeddingsRequest:
    """Rows of ``schema_name`` whose indexed values are nearest to some vectors."""

    vectors: list[list[float]] = field(default_factory=list)
    limit: int = 10
    user: str = ""
    collection: str = ""
    schema_name: str = ""
    index_name: str | None = None


@dataclass
class RowEmbeddingsResponse:
    """The matches, best first."""

    error: Error | None = None
    matches: list[RowIndexMatch] | None = field(default_factory=list)


document_embeddings_request_queue = topic("document-embeddings-request", qos="q0", tenant="trustgraph")
document_embeddings_response_queue = topic("document-embeddings-response", qos="q0", tenant="trustgraph")
row_embeddings_request_queue = topic("row-embeddings-request", qos="q0", tenant="trustgraph")
row_embeddings_response_queue = topic("row-embeddings-response", qos="q0", tenant="trustgraph")
