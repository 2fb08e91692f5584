"""``trustgraph.base.row_embeddings_query_client``: upstream 2.1.4's row vector search client and spec (:mod:`trustgraph.compat.v214.client_specs`)."""

from trustgraph.compat.v214.client_specs import RowEmbeddingsQueryClient, RowEmbeddingsQueryClientSpec

__all__ = ["RowEmbeddingsQueryClient", "RowEmbeddingsQueryClientSpec"]
