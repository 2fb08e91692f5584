"""The load driver every client worker shares (standard library only).

Each peer's client is a separate process speaking one tiny protocol on
stdin/stdout, so the orchestrator (``bench/run.py``) can alternate peers round
by round without restarting them, and so the clients of upstream and MCP can run
in their own virtual environment.  Protocol, one JSON object per line:

* the worker prints ``{"ready": true}`` once its first call has succeeded
  (which also proves the server is subscribed);
* ``{"op": "seq", "n": N}`` -> ``{"lat_ms": [...]}``: N calls one after another;
* ``{"op": "load", "n": N, "inflight": K}`` -> ``{"calls": N, "secs": t}``;
* ``{"op": "duration", "secs": s, "inflight": K}`` -> ``{"calls": c, "secs": t}``:
  calls for a fixed time (slow services: a call count would take too long);
* ``{"op": "quit"}`` ends the worker.

Any op may carry ``"topic"``, for workers that serve several targets.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str], Awaitable[Any]]

# The protocol gets a private copy of stdout, and fd 1 is pointed at stderr (the
# worker's log): pulsar-client's C++ logger writes to stdout and would otherwise
# interleave its lines with ours.  Import this module before pulsar.
_protocol = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr


def emit(obj: dict[str, Any]) -> None:
    """One result line for the orchestrator."""
    _protocol.write(json.dumps(obj) + "\n")
    _protocol.flush()


async def warm_up(call: Callable[[str, float], Awaitable[Any]], topic: str,
                  deadline_s: float = 60.0) -> None:
    """Call until one call succeeds: the server may not have subscribed yet.

    Non-persistent topics drop what nobody consumes, so a short per-call
    timeout and a retry is the only way to know the server is there.
    """
    end = time.monotonic() + deadline_s
    last: BaseException | None = None
    while time.monotonic() < end:
        try:
            await call(topic, 0.5)
            return
        except Exception as e:  # noqa: BLE001 - any failure means "not yet"
            last = e
            await asyncio.sleep(0.05)
    raise RuntimeError(f"no answer from {topic} within {deadline_s}s: {last!r}")


async def sequential(call: Call, topic: str, n: int) -> list[float]:
    """Round-trip latencies in ms of ``n`` calls made one after another."""
    lat: list[float] = []
    for _ in range(n):
        t = time.perf_counter()
        await call(topic)
        lat.append((time.perf_counter() - t) * 1000.0)
    return lat


async def load(call: Call, topic: str, n: int, inflight: int) -> tuple[int, float]:
    """``n`` calls with ``inflight`` workers each making calls back to back."""
    remaining = [n]

    async def worker() -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            await call(topic)

    t = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(inflight)))
    return n, time.perf_counter() - t


async def for_duration(call: Call, topic: str, secs: float, inflight: int) -> tuple[int, float]:
    """Calls completed in ``secs`` seconds with ``inflight`` workers (calls in flight then finish)."""
    done = [0]
    end = time.perf_counter() + secs

    async def worker() -> None:
        while time.perf_counter() < end:
            await call(topic)
            done[0] += 1

    t = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(inflight)))
    return done[0], time.perf_counter() - t


async def serve(call: Call, default_topic: str) -> None:
    """Answer the orchestrator's commands until ``quit`` or end of input."""
    loop = asyncio.get_running_loop()
    emit({"ready": True})
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return
        cmd = json.loads(line)
        op = cmd["op"]
        topic = cmd.get("topic", default_topic)
        if op == "quit":
            return
        if op == "seq":
            emit({"lat_ms": await sequential(call, topic, int(cmd["n"]))})
        elif op == "load":
            calls, secs = await load(call, topic, int(cmd["n"]), int(cmd["inflight"]))
            emit({"calls": calls, "secs": secs})
        elif op == "duration":
            calls, secs = await for_duration(call, topic, float(cmd["secs"]), int(cmd["inflight"]))
            emit({"calls": calls, "secs": secs})
        else:
            emit({"error": f"unknown op {op}"})
