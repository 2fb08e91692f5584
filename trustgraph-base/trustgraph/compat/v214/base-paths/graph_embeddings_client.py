"""``trustgraph.base.graph_embeddings_client``: upstream 2.1.4's entity vector search client and spec (:mod:`trustgraph.compat.v214.client_specs`)."""

from trustgraph.compat.v214.client_specs import GraphEmbeddingsClient, GraphEmbeddingsClientSpec, to_value

__all__ = ["GraphEmbeddingsClient", "GraphEmbeddingsClientSpec", "to_value"]
