"""Prompt-template service records."""

from dataclasses import dataclass, field

from ..core.primitives import Error


@dataclass
class PromptRequest:
    """Render template ``id``; every value in ``terms`` is JSON text."""

    id: str = ""
    terms: dict[str, str] = field(default_factory=dict)
    streaming: bool = False


@dataclass
class PromptResponse:
    """Rendered-and-completed prompt: ``text`` or ``object`` (JSON text), the other null."""

    error: Error | None = None
    text: str | None = ""
    object: str | None = ""
    end_of_stream: bool = False
