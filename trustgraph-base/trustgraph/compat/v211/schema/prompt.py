"""The prompt service's response as upstream TrustGraph 2.11 writes it.

Why only the response: 2.11's ``PromptRequest`` is 2.1's (``id``, ``terms``,
``streaming``), so the 2.1 record is the 2.11 request too; the response
gained the token counts of the completion behind it, and 2.11's
prompt-template writes ``text`` or ``object`` as null when it fills the
other.  Read from trustgraph-base 2.11.1's ``schema/llm.py``.
"""

from dataclasses import dataclass

from trustgraph.schema.core.primitives import Error


@dataclass
class PromptResponse:
    """A rendered-and-completed prompt: ``text`` or ``object`` (JSON text), with its token usage."""

    error: Error | None = None
    text: str | None = ""
    object: str | None = ""
    end_of_stream: bool = False
    in_token: int | None = None
    out_token: int | None = None
    model: str | None = None
