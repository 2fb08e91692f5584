"""``trustgraph.base.metrics``: upstream 2.1.4's metric classes (:mod:`trustgraph.compat.v214.metrics`)."""

from trustgraph.compat.v214.metrics import (
    ConsumerMetrics,
    ProcessorMetrics,
    ProducerMetrics,
    SubscriberMetrics,
)

__all__ = ["ConsumerMetrics", "ProcessorMetrics", "ProducerMetrics", "SubscriberMetrics"]
