"""mcp-tool service records."""

from dataclasses import dataclass

from ..core.primitives import Error


@dataclass
class ToolRequest:
    """Call MCP tool ``name`` (a key of config type ``mcp``); ``parameters`` is JSON text."""

    name: str = ""
    parameters: str = ""


@dataclass
class ToolResponse:
    """MCP result: ``text``, or ``object`` (JSON text) for structured content."""

    error: Error | None = None
    text: str | None = ""
    object: str | None = ""
