"""What an MCP ``CallToolResult`` is for us: a text, an object, or the tool's own error.

As upstream 2.1.4's mcp-tool reads it: ``structuredContent`` when present (sent as JSON in
``ToolResponse.object``), else the text of the content items joined.
Upstream ignores ``isError``, so a failing tool reads as a success to the
agent; here it is a :class:`McpToolError` carrying the server's text.
Content that is not text (an image, audio, a resource link) cannot become
an observation: it is named, not dropped silently.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


class McpToolError(Exception):
    """The tool ran and reported a failure (``isError``); the message is the server's text."""


@dataclass(frozen=True)
class ToolOutput:
    """A successful result: ``obj`` (JSON text) for structured content, else ``text``."""

    text: str | None = None
    obj: str | None = None


def _item_text(item: Any) -> str:
    kind = getattr(item, "type", "")
    if kind == "text":
        return getattr(item, "text", "") or ""
    resource = getattr(item, "resource", None)
    if kind == "resource" and isinstance(getattr(resource, "text", None), str):
        return resource.text
    if kind == "resource_link":
        return f"[resource {getattr(item, 'uri', '')}]"
    mime = getattr(item, "mime_type", None) or getattr(item, "mimeType", None)
    return f"[{kind or 'unknown'} content{f' ({mime})' if mime else ''}]"


def content_text(result: Any) -> str:
    """The text of every content item, joined as upstream joins them."""
    return "".join(_item_text(item) for item in (getattr(result, "content", None) or []))


def read_result(result: Any) -> ToolOutput:
    """The output of a ``CallToolResult``; :class:`McpToolError` when it is flagged ``isError``.

    A structured result that cannot be encoded as JSON raises ``ValueError``
    (a malformed result: the caller reports it instead of sending nonsense).
    """
    if getattr(result, "is_error", False):
        raise McpToolError(content_text(result) or "the tool reported an error and gave no text")
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        try:
            return ToolOutput(obj=json.dumps(structured))
        except (TypeError, ValueError) as e:
            raise ValueError(f"the tool's structuredContent is not JSON: {e}") from None
    return ToolOutput(text=content_text(result))
