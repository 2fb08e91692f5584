"""Text-completion (LLM) service records."""

from dataclasses import dataclass

from ..core.primitives import Error


@dataclass
class TextCompletionRequest:
    """A system prompt plus a user prompt for the LLM."""

    system: str = ""
    prompt: str = ""
    streaming: bool = False


@dataclass
class TextCompletionResponse:
    """LLM output (whole, or one chunk when streaming) with token accounting."""

    error: Error | None = None
    response: str = ""
    in_token: int = 0
    out_token: int = 0
    model: str = ""
    end_of_stream: bool = False
