"""``trustgraph.base.embeddings_client``: upstream 2.1.4's embeddings client and spec (:mod:`trustgraph.compat.v214.client_specs`)."""

from trustgraph.compat.v214.client_specs import EmbeddingsClient, EmbeddingsClientSpec

__all__ = ["EmbeddingsClient", "EmbeddingsClientSpec"]
