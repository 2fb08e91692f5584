"""``trustgraph.base.producer_spec``: upstream 2.1.4's producer spec (:mod:`trustgraph.compat.v214.processor`)."""

from trustgraph.compat.v214.processor import ProducerSpec

__all__ = ["ProducerSpec"]
