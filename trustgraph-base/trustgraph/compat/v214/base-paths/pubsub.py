"""``trustgraph.base.pubsub``: kept because upstream 2.1.4 code imports ``get_pubsub`` from here.

Upstream's ``tg-dump-queues``, its gateway and its ``trustgraph.clients`` base
import this path; our transport lives in :mod:`trustgraph.base.messaging.pubsub`.
"""

from .messaging.pulsar_backend import get_pubsub

__all__ = ["get_pubsub"]
