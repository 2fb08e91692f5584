"""agent-manager-react: the ReAct agent with tool services (see service.py)."""

from .service import Processor, run

__all__ = ["Processor", "run"]
