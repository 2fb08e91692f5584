"""The mcp-server processor (command ``mcp-server``): every tool of the catalog, offered to MCP clients."""

from .service import Processor, run

__all__ = ["Processor", "run"]
