"""``trustgraph.base.graph_rag_client``: upstream 2.1.4's graph RAG client and spec (:mod:`trustgraph.compat.v214.client_specs`)."""

from trustgraph.compat.v214.client_specs import GraphRagClient, GraphRagClientSpec

__all__ = ["GraphRagClient", "GraphRagClientSpec"]
