"""Test helpers: an in-memory transport and a started processor on it, no broker needed.

* :class:`MemoryBroker` / :func:`memory_pubsub` (:mod:`.memory`): a broker
  in memory behind the transport seam (:class:`MemoryTransport`), under the
  real PubSub, Producer and Consumer;
* :func:`worker` (:mod:`.worker`): a started processor on that transport, with
  config handed over directly, flows opened from a definition, and requests
  sent (with or without an id) and their replies collected by id;
* :class:`Responder`, :class:`ScriptedPrompt`, :func:`action`,
  :func:`final_answer` (:mod:`.stand_ins`): stand-ins for the services a
  processor calls; they run on any PubSub, the real broker's too.
"""

from .memory import MemoryBroker, MemoryMessage, MemoryTransport, memory_pubsub
from .stand_ins import Responder, ScriptedPrompt, action, final_answer
from .worker import Inbox, Worker, worker

__all__ = ["Inbox", "MemoryBroker", "MemoryMessage", "MemoryTransport", "Responder", "ScriptedPrompt",
           "Worker", "action", "final_answer", "memory_pubsub", "worker"]
