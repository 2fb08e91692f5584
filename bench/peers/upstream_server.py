"""Upstream TrustGraph 2.1.4's ``DynamicToolService`` with the echo tool.

Runs with ``.interop/upstream/bin/python`` (``trustgraph-base==2.1.4`` from
PyPI), never with the project's interpreter.  Upstream has no readiness file:
the client's warm-up call tells us when it is subscribed.

Usage: ``upstream_server.py -p PULSAR_URL -t TOPIC --no-metrics``.
"""

from __future__ import annotations

from typing import Any

from trustgraph.base.dynamic_tool_service import DynamicToolService


class Processor(DynamicToolService):
    """Echo: returns the ``text`` argument, like ours and the raw server."""

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> Any:
        return arguments.get("text", "")


if __name__ == "__main__":
    Processor.launch("upstream-echo", __doc__)
