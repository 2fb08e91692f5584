"""The announce table: how soon a started service is usable, and how fast a call to a stopped one fails.

For each round a real service process (``peers/ours_server.py --tool ...``, a
``DynamicToolService`` declaring one echo tool) is started on its own topic
while a reader in this process follows the announcements as an agent does
(``ServiceDirectory`` + the catalog + ``ToolServiceClients``):

* announce -> known: the service's first announcement (its ``sent`` clock;
  one machine, one clock) to the reader's directory holding it;
* announce -> usable: to the first successful call of its tool, the catalog
  built from the announcement, through the pool;
* fail-fast: after a SIGTERM (the service says goodbye), calls to it through
  the pool, each answered with ``ServiceUnavailable``; p50 and p99 of 50 calls.

Without announcements (an upstream 2.1.4 service) a call to a stopped service
waits out its whole deadline: the agent's default is 60 s.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

from common import PEERS, Procs, median, percentile, table
from common import Proc as BenchProc
from trustgraph.base import PubSub
from trustgraph.base.tool_services.service_directory import ServiceDirectory
from trustgraph.base.tool_services.tool_service_client import ServiceUnavailable, ToolServiceClients
from trustgraph.catalog import build_catalog

FAIL_CALLS = 50


async def _until(probe: Any, what: str, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > end:
            raise RuntimeError(f"no {what} within {timeout:g}s")
        await asyncio.sleep(0.001)


async def _rounds(url: str, rounds: int, procs: Procs) -> dict[str, list[float]]:
    ps = PubSub(url, processor="bench-announce")
    directory = ServiceDirectory(ps)
    await directory.start()
    pool = ToolServiceClients(ps, name="bench", liveness=directory.live_for)
    out: dict[str, list[float]] = {"known": [], "usable": [], "fail_p50": [], "fail_p99": []}
    try:
        for r in range(rounds + 1):  # the first round warms up and is not recorded
            sid = f"bench-announce-{r}"
            proc = procs.add(BenchProc(sid, [sys.executable, str(PEERS / "ours_server.py"), "-p", url,
                                             "-t", sid, "--id", sid, "--tool", f"echo-{r}", "-l", "WARNING",
                                             "--no-metrics"]))
            await _until(lambda sid=sid: sid in directory.announced(), f"announcement of {sid}")
            known = time.time()
            sent = min(rep.sent for rep in directory.services[sid].replicas.values())
            tool = build_catalog({}, directory.announced()).tools[f"echo-{r}"]
            await pool.invoke(tool.service, "bench", {}, {"text": "hi"}, timeout=10)
            usable = time.time()
            await asyncio.to_thread(procs.stop, proc)
            await _until(lambda sid=sid: directory.live(sid) is False, f"goodbye of {sid}")
            lat = []
            for _ in range(FAIL_CALLS):
                t0 = time.perf_counter()
                try:
                    await pool.invoke(tool.service, "bench", {}, {"text": "hi"}, timeout=60)
                except ServiceUnavailable:
                    lat.append((time.perf_counter() - t0) * 1000)
                else:
                    raise RuntimeError("a call to a stopped service succeeded")
            if r:
                out["known"].append((known - sent) * 1000)
                out["usable"].append((usable - sent) * 1000)
                out["fail_p50"].append(percentile(lat, 50))
                out["fail_p99"].append(percentile(lat, 99))
            print(f"  announce round {r}/{rounds}: known {(known - sent) * 1000:.1f} ms, usable "
                  f"{(usable - sent) * 1000:.1f} ms, fail-fast p50 {percentile(lat, 50):.3f} ms", flush=True)
    finally:
        await pool.close()
        await directory.stop()
        await ps.close()
    return out


def announce_table(url: str, rounds: int = 5) -> dict[str, Any]:
    with Procs() as procs:
        got = asyncio.run(_rounds(url, rounds, procs))
    rows = [
        ["announce -> known to a reader (ms)", f"{median(got['known']):.1f}",
         f"{min(got['known']):.1f}-{max(got['known']):.1f}"],
        ["announce -> first successful call (ms)", f"{median(got['usable']):.1f}",
         f"{min(got['usable']):.1f}-{max(got['usable']):.1f}"],
        ["call to a stopped service, p50 (ms)", f"{median(got['fail_p50']):.3f}",
         f"{min(got['fail_p50']):.3f}-{max(got['fail_p50']):.3f}"],
        ["call to a stopped service, p99 (ms)", f"{median(got['fail_p99']):.3f}",
         f"{min(got['fail_p99']):.3f}-{max(got['fail_p99']):.3f}"],
    ]
    text = table(["measure", f"median of {rounds} rounds", "range"], rows)
    return {"text": text, "rounds": rounds, "median": {k: median(v) for k, v in got.items()}}
