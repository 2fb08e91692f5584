"""``trustgraph.base.chunking_service``: upstream 2.1.4's module of a chunker's base class (:mod:`trustgraph.compat.v214.data_services`).

``Consumer`` and ``Producer`` are names of upstream's module that upstream's
chunker tests patch here; the base class itself does not use them.
"""

from trustgraph.base import Consumer, Producer
from trustgraph.compat.v214.data_services import ChunkingService

__all__ = ["ChunkingService", "Consumer", "Producer"]
