"""The API gateway (``api-gateway``): REST and websocket access to the services on the bus."""

from .service import Processor, run

__all__ = ["Processor", "run"]
