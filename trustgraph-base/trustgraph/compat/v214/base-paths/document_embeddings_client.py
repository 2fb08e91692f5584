"""``trustgraph.base.document_embeddings_client``: upstream 2.1.4's chunk vector search client and spec (:mod:`trustgraph.compat.v214.client_specs`)."""

from trustgraph.compat.v214.client_specs import DocumentEmbeddingsClient, DocumentEmbeddingsClientSpec

__all__ = ["DocumentEmbeddingsClient", "DocumentEmbeddingsClientSpec"]
