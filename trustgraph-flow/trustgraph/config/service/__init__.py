"""config-svc: the configuration and flow service."""

from .service import Processor, run

__all__ = ["Processor", "run"]
