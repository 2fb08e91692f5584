"""How each type of tool is called: moved to :mod:`trustgraph.catalog.implementations`.

Every caller of a tool (the agent, the MCP server, the gateway) uses that
module through :mod:`trustgraph.catalog.calling`; these names stay
importable from here for code written against the agent's package.
"""

from trustgraph.base.tool_services.tool_service_client import ToolServiceClients
from trustgraph.catalog.implementations import (
    BUILDERS,
    Builder,
    CallContext,
    KnowledgeQueryImpl,
    McpToolImpl,
    PromptImpl,
    RowEmbeddingsQueryImpl,
    StructuredQueryImpl,
    TextCompletionImpl,
    ToolFailed,
    ToolImpl,
    ToolServiceImpl,
)

__all__ = ["BUILDERS", "Builder", "CallContext", "KnowledgeQueryImpl", "McpToolImpl", "PromptImpl",
           "RowEmbeddingsQueryImpl", "StructuredQueryImpl", "TextCompletionImpl", "ToolFailed", "ToolImpl",
           "ToolServiceClients", "ToolServiceImpl"]
