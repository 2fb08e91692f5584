"""``trustgraph.base.backend``: upstream 2.1.4's pub/sub backend protocols (:mod:`trustgraph.compat.v214.backends`)."""

from trustgraph.compat.v214.backends import BackendConsumer, BackendProducer, Message, PubSubBackend

__all__ = ["BackendConsumer", "BackendProducer", "Message", "PubSubBackend"]
