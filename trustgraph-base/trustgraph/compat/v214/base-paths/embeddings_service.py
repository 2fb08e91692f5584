"""``trustgraph.base.embeddings_service``: upstream 2.1.4's module of an embeddings service's base class (:mod:`trustgraph.compat.v214.data_services`)."""

from trustgraph.compat.v214.data_services import EmbeddingsService

__all__ = ["EmbeddingsService"]
