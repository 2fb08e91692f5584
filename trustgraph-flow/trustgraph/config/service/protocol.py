"""Where config-svc's behaviour depends on its wire: the hooks, and our (2.1) wire's answers to them.

config-svc serves the same store on every wire, but a wire may add to what it
serves: records of its own on the shared config topic, queues of its own, a
notice of each change, bookkeeping a new store starts with.  The processor
chooses one :class:`ConfigProtocol` when it is made, from its wire
(``wire.component("config-service", ConfigProtocol)``), and calls it at those
edges instead of asking which wire it is on.

This class is the 2.1 wire's, ours, and does nothing beyond what the processor
does itself: it is the default rather than a component our wire names, so it
stays here, beside the code that calls it, and trustgraph-base's wire names no
module of trustgraph-flow.  A wire whose config protocol differs names a
subclass as its ``config-service`` component.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from trustgraph.base.messaging.pubsub import Message
from trustgraph.base.messaging.serving import Reply
from trustgraph.schema import ConfigRequest

from .store import Change

if TYPE_CHECKING:
    from .service import Processor

__all__ = ["ROLE", "ConfigProtocol"]

#: The role a wire names its config-svc strategy under (:meth:`trustgraph.base.wire.Wire.component`).
ROLE = "config-service"


class ConfigProtocol:
    """config-svc's wire-dependent edges, as our wire has them: none beyond the shared topics."""

    #: The record config-svc decodes a request on its config request topic as.
    request_schema: type = ConfigRequest

    def __init__(self, service: Processor, params: Mapping[str, Any]) -> None:
        """``params`` are the processor's: a wire's strategy may read flags of its own there."""
        self.service = service

    async def open(self) -> None:
        """At start, before the first push: open what the wire sends on, and write what a new
        store starts with on this wire."""

    async def serve(self) -> None:
        """At start, once the shared topics are served and the first push has gone out: serve the
        wire's own queues."""

    async def answer(self, msg: Message, reply: Reply) -> bool:
        """Answer a request on the config request topic that is in the wire's own shape; False
        when it is not, and the processor answers it as a 2.1 request."""
        return False

    async def changed(self, version: int, changes: list[Change]) -> None:
        """After each push (under the write lock, so in version order): tell the wire's followers
        that ``changes``, what the store applied since the last push, made ``version``."""
