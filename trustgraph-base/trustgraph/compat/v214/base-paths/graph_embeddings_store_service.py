"""``trustgraph.base.graph_embeddings_store_service``: upstream 2.1.4's module of an entity vector store's base class (:mod:`trustgraph.compat.v214.stores`)."""

from trustgraph.compat.v214.stores import GraphEmbeddingsStoreService

__all__ = ["GraphEmbeddingsStoreService"]
