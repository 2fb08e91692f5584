"""``trustgraph.base.document_embeddings_store_service``: upstream 2.1.4's module of a chunk vector store's base class (:mod:`trustgraph.compat.v214.stores`)."""

from trustgraph.compat.v214.stores import DocumentEmbeddingsStoreService

__all__ = ["DocumentEmbeddingsStoreService"]
