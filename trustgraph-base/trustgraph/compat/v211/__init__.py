"""Upstream TrustGraph 2.11's wire, for processors of ours placed in a 2.11 deployment.

Our own wire is 2.1's; ``--wire 2.11`` (``$TRUSTGRAPH_WIRE``) makes a processor
speak 2.11's instead.  Everything that differs lives here, so our own code
reads as one wire:

* :mod:`.schema`: 2.11's records and queue names where they differ from 2.1's.
* :mod:`.topics`, :mod:`.flows`, :mod:`.config_follow`: every processor's
  edges on 2.11 (``wire.announce_topics()``, the ``flow-assignment`` and
  ``config-following`` components): our announcements in ``tg/notify``, flows
  as ``processor:<id>`` items, config followed by notices and workspace fetches.
* :mod:`.tool_records`: the built-in tool types' records and implementations
  on 2.11 (the ``tools`` of 2.11's agent dialect; ours: ``trustgraph.catalog.wires``).
* :mod:`.wire`: :data:`.wire.WIRE`, the 2.11 :class:`trustgraph.base.wire.Wire`,
  which our code gets from :func:`trustgraph.base.wire.wire_for` and asks for
  each edge (topics, flow assignment, config following, and the components of
  trustgraph-flow in ``trustgraph.flow_compat.v211``).
"""
