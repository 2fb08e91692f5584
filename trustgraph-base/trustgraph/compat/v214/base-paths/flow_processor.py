"""``trustgraph.base.flow_processor``: upstream 2.1.4's flow processor base (:mod:`trustgraph.compat.v214.processor`)."""

from trustgraph.compat.v214.processor import FlowProcessor

__all__ = ["FlowProcessor"]
