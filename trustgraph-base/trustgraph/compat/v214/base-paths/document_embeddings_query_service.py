"""``trustgraph.base.document_embeddings_query_service``: upstream 2.1.4's module of a chunk vector search's base class (:mod:`trustgraph.compat.v214.stores`)."""

from trustgraph.compat.v214.stores import DocumentEmbeddingsQueryService

__all__ = ["DocumentEmbeddingsQueryService"]
