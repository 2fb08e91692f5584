"""``trustgraph.base.tool_service``: upstream 2.1.4's tool service base (:mod:`trustgraph.compat.v214.services`)."""

from trustgraph.compat.v214.services import ToolService, default_concurrency

__all__ = ["ToolService", "default_concurrency"]
