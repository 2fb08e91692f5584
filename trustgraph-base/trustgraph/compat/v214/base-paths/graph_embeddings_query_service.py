"""``trustgraph.base.graph_embeddings_query_service``: upstream 2.1.4's module of an entity vector search's base class (:mod:`trustgraph.compat.v214.stores`)."""

from trustgraph.compat.v214.stores import GraphEmbeddingsQueryService

__all__ = ["GraphEmbeddingsQueryService"]
