"""The words a question shares with a tool: the ranker's fallback and one of its signals.

``ranking.py`` ranks tools by meaning with an embedding model, and adds how
many of the question's words a tool's text has; without the model, shared
words alone decide.  The argument check (``agent/react/grounding.py``) uses
the same list of words too common to tell anything apart.
"""

from __future__ import annotations

import re
from typing import Any

_WORD = re.compile(r"\w+")

#: Words too common to tell tools (or a tool's argument values) apart.
COMMON_WORDS = frozenset("""a about an and are as at be by can do for from give given how i in is it me my of on
or please tell that the this to what when where which who with you your""".split())


def field_of(tool: Any, name: str, default: Any = None) -> Any:
    """A field of a catalog tool (an attribute) or of a tool as the prompt lists it (a key)."""
    if isinstance(tool, dict):
        return tool.get(name, default)
    return getattr(tool, name, default)


def _arguments(tool: Any) -> list[tuple[str, str]]:
    out = []
    for arg in field_of(tool, "arguments", None) or []:
        out.append((str(field_of(arg, "name", "") or ""), str(field_of(arg, "description", "") or "")))
    return out


def content_words(text: str) -> set[str]:
    """The words of ``text`` that can tell tools apart (lower case, common words left out)."""
    return {w.lower() for w in _WORD.findall(text.replace("-", " ").replace("_", " "))} - COMMON_WORDS


def tool_words(tool: Any) -> set[str]:
    """Every content word of a tool: its name, description, arguments and example questions."""
    parts = [str(field_of(tool, "name", "") or ""), str(field_of(tool, "description", "") or "")]
    parts += [f"{name} {description}" for name, description in _arguments(tool)]
    parts += [str(e) for e in field_of(tool, "examples", None) or []]
    return content_words(" ".join(parts))
