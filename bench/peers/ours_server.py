"""Our tool service for the bench: a ``DynamicToolService`` with a selectable workload.

``--work echo`` returns the ``text`` argument (the tool-call table);
``--work cpu`` burns 2 ms of CPU first and ``--work sleep`` awaits 20 ms (the
scaling table).  Everything else (flags, readiness file, concurrency) is the
stock base class, so the figures are those a service author gets.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from trustgraph.base import DynamicToolService

CPU_SECONDS = 0.002
SLEEP_SECONDS = 0.020


def burn(seconds: float) -> None:
    """Busy-loop for ``seconds`` of this thread's CPU time.

    CPU time, not wall time: with more replicas than cores a wall-clock loop
    would count the time it was preempted as work and flatter the replicas.
    """
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class Processor(DynamicToolService):
    """Echo, CPU-bound or I/O-bound tool, chosen by ``--work``."""

    def __init__(self, **params: Any) -> None:
        if params.get("tool"):  # announce an echo tool of this name (the announce table)
            self.tools = [{"name": params["tool"], "description": "Echoes its text",
                           "arguments": [{"name": "text", "type": "string", "description": "what"}]}]
        super().__init__(**params)
        self.work: str = params.get("work") or "echo"

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> Any:
        if self.work == "cpu":
            burn(CPU_SECONDS)
        elif self.work == "sleep":
            await asyncio.sleep(SLEEP_SECONDS)
        return arguments.get("text", "")

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument("--work", choices=["echo", "cpu", "sleep"], default="echo")
        parser.add_argument("--tool", default=None, help="announce an echo tool of this name")


if __name__ == "__main__":
    Processor.launch("bench-tool", __doc__)
