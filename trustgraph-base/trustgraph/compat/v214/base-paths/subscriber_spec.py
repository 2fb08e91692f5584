"""``trustgraph.base.subscriber_spec``: upstream 2.1.4's ``SubscriberSpec`` (:mod:`trustgraph.compat.v214.pubsub`)."""

from trustgraph.compat.v214.pubsub import SubscriberSpec

__all__ = ["SubscriberSpec"]
