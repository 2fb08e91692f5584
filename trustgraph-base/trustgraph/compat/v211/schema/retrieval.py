"""Graph-RAG's records as upstream TrustGraph 2.11 writes them.

Why a 2.11 copy: 2.11's ``GraphRagQuery`` has no ``user`` (the workspace of
the flow is the tenancy) and gained retrieval options, and its service
answers one query with several messages: ``explain`` messages (provenance,
``response`` empty) as retrieval goes, then the answer in ``chunk`` messages,
the last with ``end_of_session``.  A 2.1 caller that takes the first reply
reads an explain message's empty ``response``.  Read from trustgraph-base
2.11.1's ``schema/retrieval.py`` and trustgraph-flow 2.11.1's
``retrieval/graph_rag/rag.py``.
"""

from dataclasses import dataclass, field
from typing import Any

from trustgraph.schema.core.primitives import Error, Triple

#: ``GraphRagResponse.message_type`` of a provenance message (no answer text in it).
EXPLAIN = "explain"
#: ``GraphRagResponse.message_type`` of (part of) the answer.
CHUNK = "chunk"


@dataclass
class TraversalStep:
    """One hop of a caller's traversal instructions (ours never sends any)."""

    types: list[str] = field(default_factory=list)
    relationships: list[str] = field(default_factory=list)
    graphs: list[str] = field(default_factory=list)


@dataclass
class GraphRagQuery:
    """A question over the knowledge graph of the flow's workspace; zero limits mean the service's defaults.

    ``user_context`` is 2.11's IAM record of the asking user: the agent sends
    null, as 2.11.1's own agent does, so it is kept as a plain mapping here
    rather than copying 2.11's eight IAM records.
    """

    query: str = ""
    collection: str = ""
    entity_limit: int = 0
    triple_limit: int = 0
    max_subgraph_size: int = 0
    max_path_length: int = 0
    edge_score_limit: int = 0
    edge_limit: int = 0
    max_reranker_input: int = 0
    streaming: bool = False
    parent_uri: str = ""
    user_context: dict[str, Any] | None = None
    grounding_seeds: list[str] = field(default_factory=list)
    graph_seeds: list[str] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)
    traversal_instructions: list[TraversalStep] = field(default_factory=list)
    graph: str | None = None


@dataclass
class Source:
    """A document the answer drew on (on the last message)."""

    uri: str = ""
    title: str = ""


@dataclass
class GraphRagResponse:
    """One message of an answer: ``explain`` (provenance) or ``chunk`` (answer text)."""

    error: Error | None = None
    response: str = ""
    end_of_stream: bool = False
    explain_id: str | None = None
    explain_graph: str | None = None
    explain_triples: list[Triple] = field(default_factory=list)
    message_type: str = ""
    end_of_session: bool = False
    in_token: int | None = None
    out_token: int | None = None
    model: str | None = None
    sources: list[Source] = field(default_factory=list)
