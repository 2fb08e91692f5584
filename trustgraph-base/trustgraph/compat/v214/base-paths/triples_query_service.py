"""``trustgraph.base.triples_query_service``: upstream 2.1.4's module of a triples query service's base class (:mod:`trustgraph.compat.v214.stores`)."""

from trustgraph.compat.v214.stores import TriplesQueryService

__all__ = ["TriplesQueryService"]
