"""``trustgraph.base.triples_store_service``: upstream 2.1.4's module of a triple store's base class (:mod:`trustgraph.compat.v214.stores`)."""

from trustgraph.compat.v214.stores import TriplesStoreService

__all__ = ["TriplesStoreService"]
