"""prompt-template: prompt templates from config, completed by the flow's LLM."""

from .service import Processor, run

__all__ = ["Processor", "run"]
