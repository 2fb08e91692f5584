"""The knowledge service: stored knowledge cores (triples plus graph embeddings).

Operations: ``list-kg-cores`` (user), ``get-kg-core`` (id; streamed back as
triples and graph-embeddings messages, then one with ``eos``),
``put-kg-core``, ``delete-kg-core``, ``load-kg-core`` (into a flow and
collection), ``unload-kg-core``.
"""

from dataclasses import dataclass, field

from ...topics import topic
from ..core.primitives import Error
from .embeddings import GraphEmbeddings
from .graph import Triples


@dataclass
class KnowledgeRequest:
    """One knowledge-core operation."""

    operation: str = ""
    user: str = ""
    id: str = ""
    flow: str = ""
    collection: str = ""
    triples: Triples | None = None
    graph_embeddings: GraphEmbeddings | None = None


@dataclass
class KnowledgeResponse:
    """A list of core ids, one streamed part of a core, or the end marker ``eos``."""

    error: Error | None = None
    ids: list[str] | None = field(default_factory=list)
    eos: bool = False
    triples: Triples | None = None
    graph_embeddings: GraphEmbeddings | None = None


knowledge_request_queue = topic("knowledge", qos="q0", namespace="request")
knowledge_response_queue = topic("knowledge", qos="q0", namespace="response")
