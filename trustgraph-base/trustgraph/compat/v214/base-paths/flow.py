"""``trustgraph.base.flow``: upstream 2.1.4's per-flow parts (:mod:`trustgraph.compat.v214.processor`)."""

from trustgraph.compat.v214.processor import Flow

__all__ = ["Flow"]
