"""Which tools a question is most likely about, and which of them a prompt has room for.

The agent lists its tools most relevant first (a small model mostly picks
the one listed first among similar tools), and neither it nor the prompt
service may put thousands of tools into one prompt: a model's context holds
a few dozen at most, and rendering them all took the template past its
budget, failing every question.  So both rank the tools by the words they
share with the question and keep the best ones that fit
(:func:`for_prompt`).  Both shapes of a tool work: a catalog tool (``name``,
``description``, ``arguments``, ``examples`` attributes) or the dict the
``agent-react`` template's ``tools`` variable holds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

_WORD = re.compile(r"\w+")

# Words that say nothing about which tool fits.
_COMMON = frozenset("""a about an and are as at be by can do for from give given how i in is it me my of on
or please tell that the this to what when where which who with you your""".split())

#: At most this many tools are shown to the model in one prompt (``for_prompt``).
MAX_PROMPT_TOOLS = 24
#: And at most this many characters of their descriptions (about 2,000 tokens): the
#: embedded model's context is 4,096 tokens, prompt and answer.
MAX_PROMPT_TOOL_CHARS = 8_000


def _field(tool: Any, name: str, default: Any = None) -> Any:
    if isinstance(tool, dict):
        return tool.get(name, default)
    return getattr(tool, name, default)


def _arguments(tool: Any) -> list[tuple[str, str]]:
    out = []
    for arg in _field(tool, "arguments", None) or []:
        out.append((str(_field(arg, "name", "") or ""), str(_field(arg, "description", "") or "")))
    return out


def content_words(text: str) -> set[str]:
    """The words of ``text`` that can tell tools apart (lower case, common words left out)."""
    return {w.lower() for w in _WORD.findall(text.replace("-", " ").replace("_", " "))} - _COMMON


def tool_words(tool: Any) -> set[str]:
    """Every content word of a tool: its name, description, arguments and example questions."""
    parts = [str(_field(tool, "name", "") or ""), str(_field(tool, "description", "") or "")]
    parts += [f"{name} {description}" for name, description in _arguments(tool)]
    parts += [str(e) for e in _field(tool, "examples", None) or []]
    return content_words(" ".join(parts))


def by_relevance(question: str, tools: Sequence[Any]) -> list[Any]:
    """``tools`` with those sharing most words with ``question`` first (ties: the more specific tool).

    Measured with the embedded 135M model (make bench, agent quality):
    between similar tools it mostly picks the one listed first, so two
    joke tools were told apart about half the time in config order and
    every time in this order.  A stable sort: tools that share no word
    with the question keep their order, after the others.
    """
    asked = content_words(question)

    def key(tool: Any) -> tuple[int, int]:
        shared = len(asked & tool_words(tool))
        own = content_words(f"{_field(tool, 'name', '')} {_field(tool, 'description', '') or ''}")
        return (-shared, len(own) if shared else 0)

    return sorted(tools, key=key)


def _size(tool: Any) -> int:
    described = tool if isinstance(tool, dict) else {
        "name": _field(tool, "name", ""), "description": _field(tool, "description", ""),
        "arguments": _arguments(tool), "examples": _field(tool, "examples", None) or []}
    return len(json.dumps(described, ensure_ascii=False, default=str))


def for_prompt(question: str, tools: Sequence[Any], *, max_tools: int = MAX_PROMPT_TOOLS,
               max_chars: int = MAX_PROMPT_TOOL_CHARS) -> list[Any]:
    """The tools to show the model for ``question``: the most relevant first, as many as fit.

    At most ``max_tools``, and their descriptions within ``max_chars``
    (the first tool always, however long: a prompt without tools would be
    no help).  Fewer tools than both limits are all kept, in relevance order.
    """
    ranked = by_relevance(question, tools)
    kept: list[Any] = []
    used = 0
    for tool in ranked:
        if len(kept) >= max_tools:
            break
        size = _size(tool)
        if kept and used + size > max_chars:
            continue   # a shorter one further down may still fit
        kept.append(tool)
        used += size
    return kept
