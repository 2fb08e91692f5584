"""``trustgraph.base.tool_client``: upstream 2.1.4's MCP tool client and spec (:mod:`trustgraph.compat.v214.client_specs`)."""

from trustgraph.compat.v214.client_specs import ToolClient, ToolClientSpec

__all__ = ["ToolClient", "ToolClientSpec"]
