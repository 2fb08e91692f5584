"""``trustgraph.base.producer``: upstream 2.1.4's ``Producer`` (:mod:`trustgraph.compat.v214.pubsub`)."""

from trustgraph.compat.v214.pubsub import Producer

__all__ = ["Producer"]
