"""``trustgraph.base.async_processor``: upstream 2.1.4's processor base (:mod:`trustgraph.compat.v214.processor`)."""

from trustgraph.compat.v214.processor import AsyncProcessor, default_config_queue

__all__ = ["AsyncProcessor", "default_config_queue"]
