"""text-completion-llamacpp: a GGUF model run in-process by llama.cpp (xllamacpp)."""

from .llm import Processor, run

__all__ = ["Processor", "run"]
