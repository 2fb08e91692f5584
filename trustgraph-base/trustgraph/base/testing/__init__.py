"""Test helpers: an in-memory transport and a started processor on it, no broker needed.

* :class:`MemoryBroker` / :func:`memory_pubsub`: pulsar-client's objects in
  memory under the real PubSub, Producer and Consumer (see :mod:`.memory`).
"""

from .memory import MemoryBroker, MemoryClient, MemoryMessage, memory_pubsub

__all__ = ["MemoryBroker", "MemoryClient", "MemoryMessage", "memory_pubsub"]
