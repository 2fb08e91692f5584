"""``trustgraph.base.tool_service_client``: kept because upstream 2.1.4's agent imports it.

Upstream's ``agent/react/tools.py`` imports ``ToolServiceClient`` from this
path; it lives in :mod:`trustgraph.base.tool_services.tool_service_client`.
"""

from .tool_services.tool_service_client import ToolServiceClient

__all__ = ["ToolServiceClient"]
