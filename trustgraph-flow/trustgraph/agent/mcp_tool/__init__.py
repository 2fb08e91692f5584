"""The mcp-tool service (command ``mcp-tool``): the agent's calls to tools on MCP servers."""

from .service import Processor, run

__all__ = ["Processor", "run"]
