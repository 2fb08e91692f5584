"""``trustgraph.base.tool_service_client``: upstream 2.1.4's tool-service client and spec (its agent imports
the client here) (:mod:`trustgraph.compat.v214.client_specs`); ours is
:class:`trustgraph.base.tool_services.tool_service_client.ToolServiceClient`, which this one extends."""

from trustgraph.compat.v214.client_specs import ToolServiceClient, ToolServiceClientSpec

__all__ = ["ToolServiceClient", "ToolServiceClientSpec"]
