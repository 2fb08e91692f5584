"""``trustgraph.base.dynamic_tool_service``: kept because it is upstream 2.1.4's module of the service base class.

A tool service written for upstream may import ``DynamicToolService`` from this
path (as ``bench/peers/upstream_server.py`` does); it lives in
:mod:`trustgraph.base.tool_services.dynamic_tool_service`.
"""

from .tool_services.dynamic_tool_service import DynamicToolService

__all__ = ["DynamicToolService"]
