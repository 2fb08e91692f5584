"""Retrieval-augmented generation records: graph RAG and document RAG."""

from dataclasses import dataclass

from ..core.primitives import Error


@dataclass
class GraphRagQuery:
    """A question answered over the knowledge graph; zero limits mean service defaults."""

    query: str = ""
    user: str = ""
    collection: str = ""
    entity_limit: int = 0
    triple_limit: int = 0
    max_subgraph_size: int = 0
    max_path_length: int = 0
    streaming: bool = False


@dataclass
class GraphRagResponse:
    """Graph-RAG answer (whole, or one chunk when streaming)."""

    error: Error | None = None
    response: str = ""
    end_of_stream: bool = False


@dataclass
class DocumentRagQuery:
    """A question answered from the documents nearest to it."""

    query: str = ""
    user: str = ""
    collection: str = ""
    doc_limit: int = 0
    streaming: bool = False


@dataclass
class DocumentRagResponse:
    """Document-RAG answer (whole, or one chunk when streaming)."""

    error: Error | None = None
    response: str = ""
    end_of_stream: bool = False
