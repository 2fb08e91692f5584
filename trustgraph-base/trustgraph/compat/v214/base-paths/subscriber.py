"""``trustgraph.base.subscriber``: upstream 2.1.4's ``Subscriber`` (:mod:`trustgraph.compat.v214.pubsub`).

Upstream's gateway, its ``tg-dump-queues`` and its request/response clients import it here.
"""

from trustgraph.compat.v214.pubsub import Subscriber
from trustgraph.compat.v214.pubsub import SubscriberTimeout as TimeoutError  # upstream's name here

__all__ = ["Subscriber", "TimeoutError"]
