"""The example joke tool service (command ``joke-service``)."""

from .service import Processor, run

__all__ = ["Processor", "run"]
