"""prompt-template: prompt templates from config, completed by the flow's LLM.

The processor is imported on first use, so that the render worker
(``worker.py``), a process of its own, loads the templates without the
messaging stack.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Processor", "run"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import service
        return getattr(service, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
