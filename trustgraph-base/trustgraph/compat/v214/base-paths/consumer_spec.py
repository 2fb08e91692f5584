"""``trustgraph.base.consumer_spec``: upstream 2.1.4's consumer spec (:mod:`trustgraph.compat.v214.processor`)."""

from trustgraph.compat.v214.processor import ConsumerSpec

__all__ = ["ConsumerSpec"]
