"""Small text helpers every layer needs: a value as text, a response's text or JSON, code fences.

Kept in one module so that "what a tool's result looks like as an
observation" or "how a fenced answer is read" is decided once.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..safety import limits


def as_text(value: Any) -> str:
    """``value`` as text: a string unchanged, anything else JSON-encoded (``str()`` if it cannot be).

    The one contract of every tool (docs/tool-services.md, "Write your own tool service"): a result that is not a string
    reaches the caller JSON-encoded.
    """
    if value.__class__ is str or isinstance(value, str):
        return value
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return str(value)


def text_or_json(text: str | None, obj: str | None) -> str:
    """A response's ``text``, else its ``object`` (JSON text) re-encoded compactly.

    Prompt and mcp-tool responses carry either a text or a JSON object; as an
    observation both become one string.  An ``object`` that is not valid
    JSON is passed on as it is rather than lost.
    """
    if text:
        return text
    if not obj:
        return ""
    try:
        return json.dumps(limits.loads(obj))
    except ValueError:
        return obj


def json_or_text(text: str | None) -> Any:
    """A JSON-string field decoded for a client; text that is not JSON is passed on as it is."""
    try:
        return limits.loads(text)
    except (TypeError, ValueError):
        return text


_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.S)


def strip_fences(text: str, *, first_block: bool = False) -> str:
    """Text without the Markdown code fence a model wrapped it in.

    By default only a fence around the *whole* text is dropped (the closing
    one only if it was opened): a ReAct reply may hold fenced code inside
    its final answer, which must stay.  With ``first_block`` the body of the
    first fenced block anywhere is returned (a JSON answer after a sentence
    of preamble).  Either way a fence that is opened but never closed
    (output cut at the token limit) loses its opening line, so the lines
    before the cut can still be read.
    """
    t = text.strip()
    if first_block:
        m = _FENCE.search(t)
        if m:
            return m.group(1).strip()
    if t.startswith("```"):
        nl = t.find("\n")
        t = "" if nl < 0 else t[nl + 1:].rstrip()
        if t.endswith("```"):
            t = t[:-3]
    return t.strip()
