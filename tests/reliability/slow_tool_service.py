"""A tool service for the scenarios: each call waits ``seconds`` and says which call it was.

Run as a process: ``python slow_tool_service.py -t TOPIC [--record FILE] --pulsar-host URL``.
With ``--record``, the argument ``n`` of every call it starts is appended to FILE (one line,
flushed at once), so a scenario can tell the calls that ran from those that never reached it.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from trustgraph.base import DynamicToolService


class Slow(DynamicToolService):
    default_topic = "slow"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.record: str | None = params.get("record")

    async def invoke(self, user: str, config: dict, arguments: dict) -> str:
        n = str(arguments.get("n", ""))
        if self.record:
            with open(self.record, "a") as f:
                f.write(n + "\n")
        await asyncio.sleep(float(arguments.get("seconds", 4)))
        return f"done {n}".strip()

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument("--record", default=None, help="append the argument n of each call run here")


if __name__ == "__main__":
    Slow.launch("slow-service", __doc__)
