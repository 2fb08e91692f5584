"""``trustgraph.base.publisher``: upstream 2.1.4's ``Publisher`` (:mod:`trustgraph.compat.v214.pubsub`)."""

from trustgraph.compat.v214.pubsub import Publisher

__all__ = ["Publisher"]
