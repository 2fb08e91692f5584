"""A tool's example questions in an MCP tool listing, written by mcp-server and read back on import.

MCP's ``Tool`` has no field for example questions.  Its ``annotations`` are a
fixed set of behaviour hints (read-only, destructive, idempotent, open-world,
title) that the SDK drops unknown keys from, and clients are told not to
choose tools by them.  So a listing carries them twice:

* at the end of the ``description``, as an ``Examples:`` block with one
  question per line: the description is what an MCP client's model reads
  when it picks a tool, and that is what examples are for;
* in the tool's ``_meta`` under :data:`EXAMPLES_META` (a key under a prefix
  of our own, as MCP asks of ``_meta`` keys), as a list of strings, so
  ``tg-import-mcp-tools`` gets them back exactly and can take the block off
  the description it imports.

Nothing else in MCP holds example *questions*: an input schema's JSON-Schema
``examples`` are example argument values (``{"city": "Paris"}``), not what a
user asks, so they are not read as examples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trustgraph.base.descriptors.models import MAX_EXAMPLE_CHARS, MAX_EXAMPLES

#: The ``_meta`` key of a listed tool's example questions.
EXAMPLES_META = "ai.trustgraph/examples"

_HEAD = "Examples:"


def _block(examples: Sequence[str]) -> str:
    return "\n".join((_HEAD, *(f"- {e}" for e in examples)))


def with_examples(description: str, examples: Sequence[str]) -> str:
    """``description`` with the examples after it (unchanged when there are none)."""
    if not examples:
        return description
    description = description.rstrip()
    return f"{description}\n\n{_block(examples)}" if description else _block(examples)


def listing_meta(examples: Sequence[str]) -> dict[str, Any] | None:
    """The ``_meta`` of a listed tool with these examples (None when there are none)."""
    return {EXAMPLES_META: list(examples)} if examples else None


def read_examples(description: str | None, meta: Mapping[str, Any] | None
                  ) -> tuple[str | None, list[str], int]:
    """``(description, examples, left_out)`` of a listed tool.

    ``examples`` are those of ``_meta`` that a descriptor may hold (a
    non-empty string of at most ``MAX_EXAMPLE_CHARS`` characters, the first
    ``MAX_EXAMPLES``), ``left_out`` how many others the server sent: a server
    that is not ours may send anything, and an optional extra must not stop
    its tool from being imported.  The description loses the ``Examples:``
    block only when it is exactly the one :func:`with_examples` writes for
    what ``_meta`` holds, so a description of the server's own is never cut.
    """
    raw = meta.get(EXAMPLES_META) if isinstance(meta, Mapping) else None
    if raw is None:
        return description, [], 0
    if not isinstance(raw, list):
        return description, [], 1
    usable = [e.strip() for e in raw if isinstance(e, str) and e.strip()
              and len(e.strip()) <= MAX_EXAMPLE_CHARS]
    kept = usable[:MAX_EXAMPLES]
    if description and raw and all(isinstance(e, str) for e in raw):
        block = _block(raw)
        if description == block:
            description = ""
        elif description.endswith(f"\n\n{block}"):
            description = description[: -len(block) - 2]
    return description, kept, len(raw) - len(kept)
