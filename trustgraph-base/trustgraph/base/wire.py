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
"""

from __future__ import annotations

WIRE_21 = "2.1"
WIRE_211 = "2.11"
#: Every wire a processor can be asked for, the default first.
WIRES = (WIRE_21, WIRE_211)
#: The environment variable that sets the default of ``--wire``.
ENV = "TRUSTGRAPH_WIRE"


def unsupported(processor: str, wire: str, speaks: tuple[str, ...]) -> str:
    """The one line a processor asked for a wire it does not speak gives."""
    return (f"{processor} does not speak TrustGraph {wire}'s wire (it speaks {', '.join(speaks)}): "
            f"run it with --wire {speaks[0]} (or unset ${ENV}), or use upstream's {processor} there")
