"""``trustgraph.base.pubsub``: upstream 2.1.4's ``get_pubsub`` and ``PulsarClient`` (:mod:`trustgraph.compat.v214.backends`).

Upstream's gateway, ``tg-dump-queues`` and its ``trustgraph.clients`` base import ``get_pubsub`` here.
"""

from trustgraph.compat.v214.backends import PulsarClient, get_pubsub

__all__ = ["PulsarClient", "get_pubsub"]
