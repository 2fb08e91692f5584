"""Which upstream TrustGraph wire a processor speaks: 2.1's (the default) or 2.11's.

Why one setting: between 2.1 and 2.11 upstream changed the queue names
(``class:topicspace:topic``), the config protocol (workspaces, notify then
fetch) and the agent's, prompt's and LLM's records, all at once and without a
version field in any message, so a processor cannot tell from what it reads
which deployment it is in.  The operator says so once: ``--wire 2.11`` (or
``$TRUSTGRAPH_WIRE``) on every processor of ours placed in a 2.11 deployment.
A processor lists the wires it speaks in ``AsyncProcessor.wires``; asked for
one it does not, it refuses to start with one line (``StartRefused``) rather
than talk past its peers.

Why an object, chosen once: what differs between the wires is a handful of
edges (topics, where a flow is assigned, how config is followed, which records
a service reads), and our code asks the processor's :class:`Wire` for them
rather than branching on the wire's name.  This module imports nothing of ours
above it (a wire names a part it does not hold as a string, imported when
asked for), so every room may ask for the wire.  This class is the 2.1 wire, ours;
2.11's is a subclass in the compatibility quarantine
(:mod:`trustgraph.compat.v211`), loaded by :func:`wire_for` only when asked for.
Parts that live outside ``trustgraph-base`` (the agent's records, config-svc's
protocol) are a wire's *components*: ``wire.component(role)`` imports the
strategy the wire names for that role, so trustgraph-base need not import
trustgraph-flow and our code need not import the quarantine.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..topics import ANNOUNCE, PROBE, SERVING, AnnounceTopics

if TYPE_CHECKING:
    from .messaging.rabbitmq_topology import Topology

WIRE_21 = "2.1"
WIRE_211 = "2.11"
#: Every wire a processor can be asked for, the default first.
WIRES = (WIRE_21, WIRE_211)
#: The environment variable that sets the default of ``--wire``.
ENV = "TRUSTGRAPH_WIRE"

#: Where each wire's object is: ``"module:attribute"``.  Only ours is imported eagerly.
_WIRE_OBJECTS: Mapping[str, str] = MappingProxyType({
    WIRE_21: "trustgraph.base.wire:NATIVE",
    WIRE_211: "trustgraph.compat.v211.wire:WIRE",
})


class Wire:
    """The 2.1 wire (ours): the edges where a processor's behaviour depends on its wire."""

    #: The wire's name, as ``--wire`` takes it.
    name: str = WIRE_21
    #: role -> ``"module:attribute"`` of this wire's strategy for a part outside trustgraph-base.
    components: Mapping[str, str] = MappingProxyType({})

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<wire {self.name}>"

    def component(self, role: str, default: Any = None) -> Any:
        """This wire's strategy for ``role`` (imported on first use).

        A wire that names none gives ``default``: a processor passes its own (2.1) strategy there
        when only another wire changes that part, so ours stays beside the code that uses it and
        no wire has to name a module of trustgraph-flow for it.  Without a default, KeyError names
        the role.
        """
        try:
            target = self.components[role]
        except KeyError:
            if default is not None:
                return default
            raise KeyError(f"wire {self.name} names no {role!r} component") from None
        return _load(target)

    def rabbitmq_topology(self) -> Topology:
        """How topics and subscriptions become RabbitMQ exchanges and queues on this wire (ours keeps
        our Pulsar topology's guarantees: :mod:`trustgraph.base.messaging.rabbitmq_topology`)."""
        from .messaging.rabbitmq_topology import OURS

        return OURS

    def announce_topics(self) -> AnnounceTopics:
        """Where a processor's tool services announce themselves, readers probe and serving notices
        go by default: in a namespace this wire's deployment has (ours: ``tg/config``)."""
        return AnnounceTopics(ANNOUNCE, PROBE, SERVING)


NATIVE = Wire()


def _load(target: str) -> Any:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def wire_for(name: str) -> Wire:
    """The wire object for ``name`` (one of :data:`WIRES`); ValueError for any other name."""
    try:
        target = _WIRE_OBJECTS[name]
    except KeyError:
        raise ValueError(f"no TrustGraph wire {name!r}: one of {', '.join(WIRES)}") from None
    return _load(target)


def unsupported(processor: str, wire: str, speaks: tuple[str, ...]) -> str:
    """The one line a processor asked for a wire it does not speak gives."""
    return (f"{processor} does not speak TrustGraph {wire}'s wire (it speaks {', '.join(speaks)}): "
            f"run it with --wire {speaks[0]} (or unset ${ENV}), or use upstream's {processor} there")
