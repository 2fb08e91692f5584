"""text-completion-scripted: a deterministic TEST STAND-IN for an LLM, driven by a script file."""

from .llm import Processor, run

__all__ = ["Processor", "run"]
