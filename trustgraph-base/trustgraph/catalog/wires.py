"""Which records the built-in tool types speak to the flow's services, and which implementation calls each.

Why a table per wire: a processor is told its wire once (``--wire``), and a
tool type's implementation is picked once per registry build, so the
implementations stay free of ``if wire``.  A processor gets its wire's table
with the wire's component that uses it (the agent: its dialect's ``tools``,
``wire.component("agent-dialect")``): the flow clients to register and the
implementation of each tool type.  :data:`TOOLS` is ours, upstream 2.1's
records with :mod:`.implementations`; another wire's table is in that wire's
compatibility package (2.11's: ``trustgraph.compat.v211.tool_records``).
The wire object itself names none: the catalog stands on ``trustgraph.base``,
not the reverse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..base.wire import WIRE_21
from .implementations import BUILDERS, FLOW_CLIENTS, Builder


@dataclass(frozen=True)
class ToolWire:
    """One wire's flow clients (prefix -> request and response records) and tool implementations."""

    wire: str
    clients: Mapping[str, tuple[type, type]]
    builders: Mapping[str, Builder]


#: The built-in tool types on our wire (2.1's): the ``tools`` of our agent dialect.
TOOLS = ToolWire(WIRE_21, FLOW_CLIENTS, BUILDERS)
