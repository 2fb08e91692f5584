"""``trustgraph.agent.react.tools``: upstream 2.1.4's module path (the code: ``trustgraph.flow_compat.v214``).

Its ``*Impl`` classes are upstream's shapes (``KnowledgeQueryImpl(context,
collection)``, ``invoke(**arguments)``); ours, with their own shapes, are in
:mod:`trustgraph.catalog.implementations`, as are the table and the context
this module also names for code written against our agent's package.
"""

from trustgraph.base.tool_services.tool_service_client import ToolServiceClients
from trustgraph.catalog.implementations import BUILDERS, Builder, CallContext, ToolFailed, ToolImpl
from trustgraph.flow_compat.v214.agent import (
    Argument,
    KnowledgeQueryImpl,
    McpToolImpl,
    PromptImpl,
    RowEmbeddingsQueryImpl,
    StructuredQueryImpl,
    TextCompletionImpl,
    ToolServiceImpl,
)

__all__ = ["BUILDERS", "Argument", "Builder", "CallContext", "KnowledgeQueryImpl", "McpToolImpl", "PromptImpl",
           "RowEmbeddingsQueryImpl", "StructuredQueryImpl", "TextCompletionImpl", "ToolFailed", "ToolImpl",
           "ToolServiceClients", "ToolServiceImpl"]
