"""The agent table's tool service: a ``DynamicToolService`` that echoes its ``text`` argument.

Kept apart from ``bench/peers/ours_server.py`` (the tool-call table's, with
selectable workloads) so the agent table does not move when that one is
tuned.  It does no work of its own, so in the agent table the tool round
trip measures our messaging (agent -> broker -> this service -> broker ->
agent) and nothing else.  Run as a script with the usual processor flags
(``-p URL --no-metrics -t TOPIC --id ID``); readiness via ``TG_READY_FILE``.
"""

from __future__ import annotations

from typing import Any

from trustgraph.base import DynamicToolService


class Processor(DynamicToolService):
    """Returns the ``text`` argument unchanged."""

    default_topic = "bench-echo"

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> Any:
        return arguments.get("text", "")


if __name__ == "__main__":
    Processor.launch("bench-echo", __doc__)
