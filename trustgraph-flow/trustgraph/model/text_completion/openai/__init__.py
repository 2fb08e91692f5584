"""text-completion-openai: OpenAI or any OpenAI-compatible server."""

from .llm import Processor, run

__all__ = ["Processor", "run"]
