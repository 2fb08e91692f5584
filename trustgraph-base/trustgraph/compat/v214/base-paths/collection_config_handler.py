"""``trustgraph.base.collection_config_handler``: upstream 2.1.4's collection-following mixin
(:mod:`trustgraph.compat.v214.collection_config`)."""

from trustgraph.compat.v214.collection_config import CollectionConfigHandler

__all__ = ["CollectionConfigHandler"]
