"""``trustgraph.base.consumer``: upstream 2.1.4's ``Consumer`` (:mod:`trustgraph.compat.v214.consumer`)."""

from trustgraph.compat.v214.consumer import Consumer
from trustgraph.compat.v214.pubsub import SubscriberTimeout as TimeoutError  # upstream's name here

__all__ = ["Consumer", "TimeoutError"]
