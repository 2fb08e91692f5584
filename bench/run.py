"""``make bench``: the tool-call, scaling and footprint tables, written to BENCHMARKS.md.

Why it is built this way:

* one embedded broker per table, and every peer of a table measured in the
  same run in alternating rounds (A B C D A B C D ...); the median of the
  rounds is reported, so the machine's drift cancels in the ratios;
* every server and client is its own process (as deployed), started through
  ``common.Procs`` so each one is stopped however a table ends;
* upstream TrustGraph 2.1.4 and the MCP SDK live in ``.interop/upstream``,
  created on first use, never in the project's venv;
* the tool-call table's RabbitMQ rows run on a node of the bench's own, started
  as the tests start theirs (``tests/rabbitmq_nodes.py``: private epmd, cookie
  and user, 127.0.0.1 only), killed when the table ends;
* nothing listens beyond 127.0.0.1 and every loop is bounded in calls or time.

The agent table is measured by ``bench/agent_bench.py``, the
agent-quality table (the embedded model's tool choice, arguments and endings on
three question sets, structured and text mode (the third: structured only),
beside a scripted stand-in that knows every answer; ``--model PATH`` runs it on a user's own GGUF instead) by
``bench/agent_quality.py``, the config-change table (one ``tg-put-config-item``
reaching every processor, with 10, 100 and 1,000 tools) by ``bench/config_bench.py``.
Hand-written analysis (what limits a missed target) is kept in
``bench/notes.md`` and copied into BENCHMARKS.md below the tables.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import http.server
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The tests' RabbitMQ nodes (tests/rabbitmq_nodes.py), one node starter for both.
sys.path.insert(1, str(Path(__file__).resolve().parent.parent / "tests"))

import pulsar  # noqa: E402
import pytest  # noqa: E402 - rabbitmq_nodes' waits fail as a test does: pytest.fail.Exception
from agent_bench import AgentBenchError, run_agent_table  # noqa: E402
from agent_quality import QualityBenchError, run_quality_table  # noqa: E402
from announce_bench import announce_table  # noqa: E402
from common import (  # noqa: E402
    BENCH,
    PEERS,
    REPO,
    UPSTREAM_PY,
    VENV_BIN,
    WORK,
    BenchError,
    ForeignCpu,
    PeakRss,
    Proc,
    Procs,
    Worker,
    background_cpu,
    ensure_upstream_venv,
    median,
    percentile,
    ready_file,
    rss_mb,
    table,
    venv_versions,
    wait_files,
)
from config_bench import run_config_table  # noqa: E402
from many_tools import run_many_tools_table  # noqa: E402
from rabbitmq_nodes import RabbitNode, RabbitSite, RabbitUnavailable  # noqa: E402
from ranker_bench import ranker_table  # noqa: E402
from trustgraph.base.launching.broker import EmbeddedBroker, free_port, wait_for_port  # noqa: E402

PY = str(VENV_BIN / "python")
TABLES = ["tool", "scaling", "footprint", "announce", "agent", "ranker", "quality", "many-tools", "config-change"]
NO_METRICS = ["--no-metrics"]


def broker(name: str) -> EmbeddedBroker:
    """A fresh broker with its data under ``bench/.work`` (one per table)."""
    data = WORK / name
    shutil.rmtree(data, ignore_errors=True)
    return EmbeddedBroker(data)


def ours_server(procs: Procs, name: str, url: str, topic: str, *, work: str = "echo",
                sid: str | None = None, concurrency: int | None = None,
                tool: str | None = None, extra: list[str] | None = None,
                tree: Path | None = None, env: dict[str, str] | None = None) -> tuple[Proc, Path]:
    """Start one replica of our bench tool service; returns it and its readiness file.

    ``extra``: more flags (a broker's); ``tree``: another source tree's service (:func:`tree_env`);
    ``env``: more environment (``OTEL_*``).
    """
    ready = ready_file(name)
    peers = PEERS if tree is None else tree / "bench" / "peers"
    args = [PY, str(peers / "ours_server.py"), "-p", url, "-t", topic, "--work", work,
            "--id", sid or topic, "-l", "WARNING", *NO_METRICS, *(extra or [])]
    if concurrency is not None:
        args += ["--concurrency", str(concurrency)]
    if tool is not None:
        args += ["--tool", tool]
    proc = procs.add(Proc(name, args, env={"TG_READY_FILE": str(ready), **tree_env(tree), **(env or {})}))
    return proc, ready


class OtlpSink:
    """An OTLP/HTTP receiver on 127.0.0.1 that takes every export and keeps nothing (a thread)."""

    def __enter__(self) -> OtlpSink:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:   # noqa: N802 (http.server's name)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def tree_env(tree: Path | None) -> dict[str, str]:
    """The environment that makes our packages come from ``tree`` (a copy of another commit, e.g.
    ``git archive``) instead of the venv's editable install: its sources first on ``PYTHONPATH``
    (``trustgraph`` is a namespace package, so the first directory holding a module wins)."""
    if tree is None:
        return {}
    return {"PYTHONPATH": os.pathsep.join(str(tree / d) for d in ("trustgraph-base", "trustgraph-flow"))}


def check_tree(tree: Path) -> None:
    """Refuse a ``--baseline`` tree whose modules would not be the ones imported (one line)."""
    code = ("import trustgraph.base.messaging.pubsub as p, trustgraph.base.tool_services as t\n"
            "print(p.__file__); print(t.__file__)")
    done = subprocess.run([PY, "-c", code], env={**os.environ, **tree_env(tree)}, capture_output=True,
                          text=True, timeout=120, cwd=str(REPO))
    files = done.stdout.split()
    if done.returncode != 0 or len(files) != 2 or not all(f.startswith(str(tree.resolve())) for f in files):
        raise BenchError(f"--baseline {tree}: our modules do not load from it ({(done.stdout + done.stderr).strip()[-300:]}); "
                         "give a whole tree (git archive COMMIT | tar -x -C DIR)")


@contextlib.contextmanager
def rabbitmq_node(name: str) -> Iterator[RabbitNode]:
    """A RabbitMQ node of the bench's own (``tests/rabbitmq_nodes.py``: its own epmd, cookie and
    user, 127.0.0.1 only, data under ``bench/.work``), killed when the block ends."""
    root = WORK / name
    shutil.rmtree(root, ignore_errors=True)
    try:
        site = RabbitSite(root)
    except RabbitUnavailable as e:
        raise BenchError(f"{e}; or leave the RabbitMQ rows out (--peers without "
                         f"{','.join(RABBITMQ_PEERS)})") from None
    try:
        try:
            node = site.start().node().start()
        except pytest.fail.Exception as e:   # a wait of rabbitmq_nodes gave up
            raise BenchError(f"the bench's RabbitMQ node did not start: {e}") from None
        yield node
    finally:
        site.close()


def wait_for_mcp_tool(url: str, name: str, timeout: float) -> None:
    """Until the MCP server at ``url`` lists ``name`` (our mcp-server learns announced tools in ms)."""
    import asyncio

    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def listed() -> bool:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return name in {t.name for t in (await session.list_tools()).tools}

    end = time.monotonic() + timeout
    while not asyncio.run(listed()):
        if time.monotonic() > end:
            raise RuntimeError(f"{url} did not list tool {name!r} within {timeout:g}s")
        time.sleep(0.1)


# ---------------------------------------------------------------------------
# Tool-call table
# ---------------------------------------------------------------------------
@dataclass
class PeerResult:
    name: str
    p50: list[float] = field(default_factory=list)
    p99: list[float] = field(default_factory=list)
    rate: list[float] = field(default_factory=list)


ALL_PEERS = ("raw", "ours", "ours-traced", "ours-mcp", "upstream", "mcp", "raw-aio-pika", "ours-rabbitmq", "floor")
#: The peers on the bench's RabbitMQ node rather than the embedded broker.
RABBITMQ_PEERS = ("raw-aio-pika", "ours-rabbitmq")


def tool_call_table(rounds: int, seq_n: int, load_n: int, inflight: int,
                    peers: tuple[str, ...] = ALL_PEERS, baseline: Path | None = None) -> dict[str, Any]:
    """Raw, ours, upstream, MCP, ours and raw on RabbitMQ, and the asyncio floor, alternating rounds.

    ``peers`` narrows the run (``--peers raw,ours`` while tuning the core);
    the written report always has them all.  ``floor`` is a diagnostic row:
    the least an asyncio service and caller can do (see peers/floor_*.py).
    ``baseline``: a copy of another commit's tree; its own service and client
    (``tree_env``) are one more peer, "before" beside today's "ours" (and beside
    "ours on RabbitMQ" too, when the tree has the RabbitMQ transport).
    """
    topic_raw, topic_ours, topic_up, topic_floor = "bench-raw", "bench-echo", "bench-upstream", "bench-floor"
    rabbit = any(p in RABBITMQ_PEERS for p in peers)
    rabbitmq_version = ""
    baseline_rabbit = (baseline is not None and "ours-rabbitmq" in peers
                       and (baseline / "trustgraph-base/trustgraph/base/messaging/rabbitmq_transport.py").exists())
    with (broker("tool-broker") as b, Procs() as procs,
          rabbitmq_node("tool-rabbitmq") if rabbit else contextlib.nullcontext() as node,
          OtlpSink() if "ours-traced" in peers else contextlib.nullcontext() as sink):
        raw_ready = ready_file("raw-server")
        raw_srv = procs.add(Proc("raw-server", [PY, str(PEERS / "raw_server.py"), b.url, topic_raw,
                                                str(raw_ready)]))
        floor_ready = ready_file("floor-server")
        floor_srv = procs.add(Proc("floor-server", [PY, str(PEERS / "floor_server.py"), b.url, topic_floor,
                                                    str(floor_ready)]))
        ours_srv, ours_ready = ours_server(procs, "ours-server", b.url, topic_ours)
        procs.add(Proc("upstream-server", [str(UPSTREAM_PY), str(PEERS / "upstream_server.py"),
                                           "-p", b.url, "-t", topic_up, *NO_METRICS]))
        mcp_port = free_port()
        mcp_srv = procs.add(Proc("mcp-server", [str(UPSTREAM_PY), str(PEERS / "mcp_server.py"), str(mcp_port)]))
        waits = [(raw_srv, raw_ready), (ours_srv, ours_ready), (floor_srv, floor_ready)]
        traced_env: dict[str, str] = {}
        if sink is not None:
            # Tracing on (docs/tracing.md): both sides record a span per call and export them over
            # OTLP/HTTP to a sink that takes and drops them, as a collector on the machine would.
            traced_env = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": sink.url}
            waits.append(ours_server(procs, "ours-traced-server", b.url, "bench-echo-traced", env=traced_env))
        ours_mcp_url = ""
        if "ours-mcp" in peers:
            # Our mcp-server in front of an echo service that announces an `echo` tool:
            # what an MCP client of this project calls.
            echo_srv, echo_ready = ours_server(procs, "ours-mcp-echo", b.url, "bench-echo-mcp",
                                               sid="bench-echo-mcp", tool="echo")
            our_mcp_port = free_port()
            our_mcp_ready = ready_file("ours-mcp-server")
            our_mcp = procs.add(Proc("ours-mcp-server", [str(VENV_BIN / "mcp-server"), "-p", b.url,
                                                         "--port", str(our_mcp_port), "-l", "WARNING",
                                                         *NO_METRICS], env={"TG_READY_FILE": str(our_mcp_ready)}))
            waits += [(echo_srv, echo_ready), (our_mcp, our_mcp_ready)]
            ours_mcp_url = f"http://127.0.0.1:{our_mcp_port}/mcp"
        rabbit_args: list[str] = []
        aiopika_args: list[str] = []
        if node is not None:
            secret = WORK / "tool-rabbitmq" / "password"
            secret.write_text(node.password)
            secret.chmod(0o600)
            rabbit_args = ["--pubsub-backend", "rabbitmq", "--rabbitmq-host", node.host, "--rabbitmq-port",
                           str(node.port), "--rabbitmq-username", node.username, "--rabbitmq-password-file",
                           str(secret)]
            aiopika_args = [node.host, str(node.port), node.username, str(secret)]
            if "ours-rabbitmq" in peers:
                waits.append(ours_server(procs, "ours-rabbitmq-server", b.url, "bench-echo-rabbitmq",
                                         extra=rabbit_args))
            if "raw-aio-pika" in peers:
                aiopika_ready = ready_file("aiopika-server")
                waits.append((procs.add(Proc("aiopika-server", [PY, str(PEERS / "aiopika_server.py"),
                                                                *aiopika_args, "bench-aiopika",
                                                                str(aiopika_ready)])), aiopika_ready))
        if baseline is not None:
            waits.append(ours_server(procs, "ours-baseline-server", b.url, "bench-echo-baseline", tree=baseline))
        if baseline_rabbit:
            waits.append(ours_server(procs, "ours-rabbitmq-baseline-server", b.url, "bench-echo-rabbitmq-baseline",
                                     extra=rabbit_args, tree=baseline))
        wait_files(waits, 60)
        wait_for_port("127.0.0.1", mcp_port, 60, mcp_srv.p)
        if ours_mcp_url:
            wait_for_mcp_tool(ours_mcp_url, "echo", 60)

        commands = {
            "raw": [PY, str(PEERS / "raw_client.py"), b.url, topic_raw],
            "ours": [PY, str(PEERS / "ours_client.py"), b.url, topic_ours],
            "ours-traced": [PY, str(PEERS / "ours_client.py"), b.url, "bench-echo-traced"],
            "upstream": [str(UPSTREAM_PY), str(PEERS / "upstream_client.py"), b.url, topic_up],
            "mcp": [str(UPSTREAM_PY), str(PEERS / "mcp_client.py"), f"http://127.0.0.1:{mcp_port}/mcp"],
            "ours-mcp": [str(UPSTREAM_PY), str(PEERS / "mcp_client.py"), ours_mcp_url],
            "floor": [PY, str(PEERS / "floor_client.py"), b.url, topic_floor],
            "raw-aio-pika": [PY, str(PEERS / "aiopika_client.py"), *aiopika_args, "bench-aiopika"],
            "ours-rabbitmq": [PY, str(PEERS / "ours_client.py"), b.url, "bench-echo-rabbitmq", *rabbit_args],
        }
        envs: dict[str, dict[str, str]] = {"ours-traced": traced_env}
        if baseline is not None:
            peers = (*peers, "ours-baseline")
            commands["ours-baseline"] = [PY, str(baseline / "bench" / "peers" / "ours_client.py"), b.url,
                                         "bench-echo-baseline"]
            envs["ours-baseline"] = tree_env(baseline)
        if baseline_rabbit:
            assert baseline is not None
            peers = (*peers, "ours-rabbitmq-baseline")
            commands["ours-rabbitmq-baseline"] = [PY, str(baseline / "bench" / "peers" / "ours_client.py"), b.url,
                                                  "bench-echo-rabbitmq-baseline", *rabbit_args]
            envs["ours-rabbitmq-baseline"] = tree_env(baseline)
        workers: dict[str, Worker] = {}
        for name in peers:
            w = Worker(f"{name}-client", commands[name], env=envs.get(name))
            procs.add(w)
            workers[name] = w
        for w in workers.values():
            w.wait_ready()

        results = {name: PeerResult(name) for name in workers}
        # One unrecorded round warms every peer (JIT-free Python still has caches,
        # connections and the broker's topic state to settle).
        for w in workers.values():
            w.ask({"op": "seq", "n": 50})
            w.ask({"op": "load", "n": 500, "inflight": inflight})
        for r in range(rounds):
            for name, w in workers.items():
                lat = w.ask({"op": "seq", "n": seq_n})["lat_ms"]
                res = w.ask({"op": "load", "n": load_n, "inflight": inflight})
                pr = results[name]
                pr.p50.append(percentile(lat, 50))
                pr.p99.append(percentile(lat, 99))
                pr.rate.append(res["calls"] / res["secs"])
            print(f"  tool-call round {r + 1}/{rounds}: " + ", ".join(
                f"{n} {results[n].rate[-1]:,.0f}/s p50 {results[n].p50[-1]:.2f} ms" for n in workers), flush=True)
        if node is not None:
            try:
                rabbitmq_version = node.ctl("version").strip()
            except RuntimeError as e:   # the figures stand without it
                print(f"  the RabbitMQ version is not known: {e}", flush=True)

    return {**tool_call_report(results, inflight, baseline), "rounds": rounds, "seq_n": seq_n,
            "load_n": load_n, "inflight": inflight, "rabbitmq": rabbitmq_version}


def rounds_range(rates: list[float]) -> str:
    """A peer's calls/s over its rounds, lowest to highest."""
    return f"{min(rates):,.0f}-{max(rates):,.0f}"


#: What a ratio line compares, by its place in a peer's medians (seq p50, seq p99, calls/s).
MEASURES = {"seq p50": 0, "calls/s": 2}


def tool_call_report(results: dict[str, PeerResult], inflight: int, baseline: Path | None) -> dict[str, Any]:
    """The tool-call table from the rounds' figures: its text, its ratio lines (the targets, then
    one line a comparison of two peers) and each peer's medians (seq p50, seq p99, calls/s)."""
    labels = {
        "raw": "raw pulsar-client (threads, listener)",
        "ours": "ours: ToolServiceClient -> DynamicToolService",
        "ours-traced": "ours, tracing on (OTLP/HTTP to a local sink)",
        "upstream": "upstream TrustGraph 2.1.4",
        "mcp": "MCP SDK, Streamable HTTP",
        "ours-mcp": "ours via MCP: SDK client -> our mcp-server -> DynamicToolService",
        "floor": "(diagnostic) asyncio floor: bare bridge both sides",
        "raw-aio-pika": "raw aio-pika RPC (reply queue, correlation ids)",
        "ours-rabbitmq": "ours on RabbitMQ: ToolServiceClient -> DynamicToolService",
        "ours-baseline": f"(baseline) ours from {baseline}",
        "ours-rabbitmq-baseline": f"(baseline) ours on RabbitMQ from {baseline}",
    }
    med = {n: (median(r.p50), median(r.p99), median(r.rate)) for n, r in results.items()}
    rows = [[labels[n], f"{p50:.2f}", f"{p99:.2f}", f"{rate:,.0f}", rounds_range(results[n].rate),
             f"{rate / med['ours'][2]:.2f}x"] for n, (p50, p99, rate) in med.items()]
    text = table(["peer", "seq p50 ms", "seq p99 ms", f"calls/s ({inflight} in flight)",
                  "calls/s range over rounds", "calls/s vs ours"], rows)
    targets = []
    if "raw" in med:
        ours_raw = med["ours"][2] / med["raw"][2]
        p50_ratio = med["ours"][0] / med["raw"][0]
        targets.append(("ours calls/s >= 0.7x raw", ours_raw, ours_raw >= 0.7))
        targets.append(("ours seq p50 <= 1.5x raw", p50_ratio, p50_ratio <= 1.5))
    if "upstream" in med:
        ours_up = med["ours"][2] / med["upstream"][2]
        targets.append(("ours calls/s >= 5x upstream", ours_up, ours_up >= 5.0))

    def ratios(a: str, b: str, measures: tuple[str, ...] = ("calls/s", "seq p50"), ranges: bool = False) -> str:
        """Peer ``a``'s medians over peer ``b``'s, e.g. "calls/s 0.92x, seq p50 1.01x"; with ``ranges``,
        the calls/s of both peers' rounds follow that ratio."""
        parts = []
        for what in measures:
            part = f"{what} {med[a][MEASURES[what]] / med[b][MEASURES[what]]:.2f}x"
            if ranges and what == "calls/s":
                part += f" (rounds {rounds_range(results[a].rate)} vs {rounds_range(results[b].rate)})"
            parts.append(part)
        return ", ".join(parts)

    compared = []
    if "ours-mcp" in med and "mcp" in med:
        compared.append(f"ours via MCP vs the MCP SDK's own server: {ratios('ours-mcp', 'mcp')} "
                        "(the extra hop: HTTP in, then the broker)")
    if "ours-traced" in med:
        compared.append("ours with tracing on vs off (each call a span on both sides, exported): "
                        f"{ratios('ours-traced', 'ours')}; off is the \"ours\" row (the trace context passed on, "
                        "nothing recorded)")
    if "ours-rabbitmq" in med:
        compared.append(f"ours on RabbitMQ vs ours on pulsar-lite: {ratios('ours-rabbitmq', 'ours', ('calls/s',))}")
        if "raw-aio-pika" in med:
            compared.append(f"ours on RabbitMQ vs raw aio-pika RPC: {ratios('ours-rabbitmq', 'raw-aio-pika')}")
    if "ours-baseline" in med:
        compared.append(f"ours vs the baseline: {ratios('ours', 'ours-baseline', ranges=True)}")
    if "ours-rabbitmq-baseline" in med:
        compared.append("ours on RabbitMQ vs its baseline: "
                        f"{ratios('ours-rabbitmq', 'ours-rabbitmq-baseline', ranges=True)}")
    if "floor" in med:
        p50_first = ("seq p50", "calls/s")
        line = f"(diagnostic) ours vs the asyncio floor: {ratios('ours', 'floor', p50_first)}"
        if "raw" in med:
            line += f"; floor vs raw: {ratios('floor', 'raw', p50_first)}"
        compared.append(line)
    # Each comparison on a line of its own after a newline, even with no target line before it.
    ratio_lines = "\n".join(f"- {what}: **{value:.2f}x** ({'met' if ok else 'MISSED'})"
                            for what, value, ok in targets) + "".join(f"\n- {line}" for line in compared)
    return {"text": text, "ratios": ratio_lines, "median": med}


# ---------------------------------------------------------------------------
# Scaling table
# ---------------------------------------------------------------------------
def scaling_table(rounds: int, secs: float, inflight: int) -> dict[str, Any]:
    """CPU-bound service over 1/2/4 replicas, I/O-bound one over concurrency 1/4/16.

    Each configuration has its own topic and its own (idle when not measured)
    processes, so the configurations alternate round by round on one broker
    without restarting anything.
    """
    configs: list[tuple[str, str, str, int, int | None]] = [
        # label, topic, work, replicas, concurrency
        ("CPU 2 ms, 1 replica", "bench-cpu1", "cpu", 1, None),
        ("CPU 2 ms, 2 replicas", "bench-cpu2", "cpu", 2, None),
        ("CPU 2 ms, 4 replicas", "bench-cpu4", "cpu", 4, None),
        ("I/O 20 ms, --concurrency 1", "bench-io1", "sleep", 1, 1),
        ("I/O 20 ms, --concurrency 4", "bench-io4", "sleep", 1, 4),
        ("I/O 20 ms, --concurrency 16", "bench-io16", "sleep", 1, 16),
    ]
    with broker("scaling-broker") as b, Procs() as procs:
        waits = []
        for _label, topic, work, replicas, conc in configs:
            for k in range(replicas):
                # Replicas share the subscription (same --id).  pulsar-lite 0.2 makes
                # replica k wait ~3*(k-1) s (consumer-id clash, see pubsub.py).
                waits.append(ours_server(procs, f"{topic}-{k}", b.url, topic, work=work,
                                         sid=topic, concurrency=conc))
        wait_files(waits, 90)
        client = procs.add(Worker("scaling-client", [PY, str(PEERS / "ours_client.py"), b.url,
                                                     *(c[1] for c in configs)]))
        assert isinstance(client, Worker)
        client.wait_ready()
        for _label, topic, *_ in configs:
            client.ask({"op": "duration", "secs": 0.5, "inflight": inflight, "topic": topic})
        rates: dict[str, list[float]] = {c[0]: [] for c in configs}
        for r in range(rounds):
            for label, topic, *_ in configs:
                res = client.ask({"op": "duration", "secs": secs, "inflight": inflight, "topic": topic})
                rates[label].append(res["calls"] / res["secs"])
            print(f"  scaling round {r + 1}/{rounds}: " + ", ".join(
                f"{lab.split(',')[1].strip()} {v[-1]:,.0f}/s" for lab, v in rates.items()), flush=True)
    rows = []
    base: dict[str, float] = {}
    for label, _topic, work, replicas, conc in configs:
        rate = median(rates[label])
        base.setdefault(work, rate)
        cores = os.cpu_count() or 1
        ideal = (f"{500 * min(replicas, cores):,} (min(replicas, {cores} cores) x 500/s)" if work == "cpu"
                 else f"{(conc or 1) * 50:,} (concurrency x 50/s)")
        rows.append([label, f"{rate:,.0f}", f"{rate / base[work]:.2f}x",
                     f"{min(rates[label]):,.0f}-{max(rates[label]):,.0f}", ideal])
    text = table(["service", "calls/s", "vs first", "range over rounds", "ideal"], rows)
    return {"text": text, "rounds": rounds, "secs": secs, "inflight": inflight}


# ---------------------------------------------------------------------------
# Footprint table
# ---------------------------------------------------------------------------
PROCESSORS = ["config-svc", "api-gateway", "joke-service", "prompt-template",
              "text-completion-scripted", "agent-manager-react", "text-completion-llamacpp"]


def _processor_args(name: str, url: str) -> list[str] | None:
    """Command line of one processor for the idle-RSS row, or None when not installed."""
    exe = VENV_BIN / name
    if not exe.exists():
        return None
    args = [str(exe), "-p", url, "-l", "WARNING", *NO_METRICS]
    if name == "config-svc":
        args += ["--store", str(WORK / "footprint-config.db")]
    elif name == "api-gateway":
        args += ["--host", "127.0.0.1", "--port", str(free_port())]
    elif name == "text-completion-scripted":
        script = WORK / "scripted.json"
        script.write_text(json.dumps({"rules": [], "default": "ok"}))
        args += ["--script", str(script)]
    return args


class ColdStartProbe:
    """Measures process spawn -> first call served, from outside the process.

    A raw pulsar-client (neutral to ours and upstream) sends a tool request
    every 5 ms from the moment the process is spawned; non-persistent topics
    drop requests nobody has subscribed to yet, so the first reply marks the
    moment the service could serve a caller.
    """

    def __init__(self, url: str) -> None:
        self.client = pulsar.Client(url, io_threads=1, message_listener_threads=1,
                                    logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Warn))
        self.first: float | None = None
        self.lock = threading.Lock()
        self.got = threading.Event()

    def _on_reply(self, consumer: Any, msg: Any) -> None:
        consumer.acknowledge(msg)
        with self.lock:
            if self.first is None:
                self.first = time.perf_counter()
                self.got.set()

    def measure(self, topic: str, proc_factory: Any, arguments: dict[str, str],
                timeout: float = 30.0) -> float:
        """Seconds from spawning ``proc_factory()`` to the first reply on ``topic``."""
        consumer = self.client.subscribe(f"non-persistent://tg/response/{topic}",
                                         f"cold-probe-{uuid.uuid4()}",
                                         consumer_type=pulsar.ConsumerType.Shared,
                                         message_listener=self._on_reply)
        producer = self.client.create_producer(f"non-persistent://tg/request/{topic}",
                                               batching_enabled=False)
        payload = json.dumps({"user": "bench", "config": "{}",
                              "arguments": json.dumps(arguments)}).encode()
        self.first = None
        self.got.clear()
        proc: Proc = proc_factory()
        try:
            start = proc.started
            deadline = start + timeout
            while not self.got.wait(0.005):
                proc.check_alive()
                if time.perf_counter() > deadline:
                    raise BenchError(f"{proc.name}: no reply within {timeout}s\n{proc.tail()}")
                producer.send_async(payload, None, properties={"id": str(uuid.uuid4())})
            assert self.first is not None
            return self.first - start
        finally:
            proc.stop()
            consumer.close()
            producer.close()

    def close(self) -> None:
        self.client.close()


def footprint_table(load_n: int, inflight: int, cold_trials: int) -> dict[str, Any]:
    """Idle RSS of each processor, RSS under load, cold start."""
    idle_rows: list[list[str]] = []
    missing: list[str] = []
    with broker("footprint-broker") as b, Procs() as procs:
        started: list[tuple[str, Proc, Path]] = []
        for name in PROCESSORS:
            args = _processor_args(name, b.url)
            if args is None:
                missing.append(name)
                continue
            ready = ready_file(f"idle-{name}")
            started.append((name, procs.add(Proc(f"idle-{name}", args, env={"TG_READY_FILE": str(ready)})),
                            ready))
        ours_echo, ours_echo_ready = ours_server(procs, "idle-ours-echo", b.url, "bench-idle-echo")
        up_echo = procs.add(Proc("idle-upstream-echo", [str(UPSTREAM_PY), str(PEERS / "upstream_server.py"),
                                                        "-p", b.url, "-t", "bench-idle-up", *NO_METRICS]))
        wait_files([(p, r) for _, p, r in started] + [(ours_echo, ours_echo_ready)], 60)
        time.sleep(3.0)  # let start-up garbage settle; upstream has no readiness file
        for name, proc, _ in started:
            mb = rss_mb(proc.pid)
            idle_rows.append([name, f"{mb:.1f}", "yes" if mb < 80 else "NO"])
        idle_rows.append(["(bench echo tool service, ours)", f"{rss_mb(ours_echo.pid):.1f}",
                          "yes" if rss_mb(ours_echo.pid) < 80 else "NO"])
        idle_rows.append(["(upstream 2.1.4 echo DynamicToolService, reference)",
                          f"{rss_mb(up_echo.pid):.1f}", "-"])
        for _, proc, _ in started:
            procs.stop(proc)
        procs.stop(ours_echo)
        procs.stop(up_echo)

        # RSS under the 32-in-flight load, ours and upstream, sampled every 50 ms.
        load_rows: list[list[str]] = []
        ours_srv, ours_ready = ours_server(procs, "load-ours-server", b.url, "bench-load-echo")
        wait_files([(ours_srv, ours_ready)], 60)
        up_srv = procs.add(Proc("load-upstream-server", [str(UPSTREAM_PY), str(PEERS / "upstream_server.py"),
                                                         "-p", b.url, "-t", "bench-load-up", *NO_METRICS]))
        ours_cli = procs.add(Worker("load-ours-client", [PY, str(PEERS / "ours_client.py"), b.url,
                                                         "bench-load-echo"]))
        up_cli = procs.add(Worker("load-upstream-client", [str(UPSTREAM_PY), str(PEERS / "upstream_client.py"),
                                                           b.url, "bench-load-up"]))
        assert isinstance(ours_cli, Worker) and isinstance(up_cli, Worker)
        ours_cli.wait_ready()
        up_cli.wait_ready()
        for label, srv, cli in (("ours", ours_srv, ours_cli), ("upstream 2.1.4", up_srv, up_cli)):
            with PeakRss({"server": srv.pid, "client": cli.pid}) as peak:
                cli.ask({"op": "load", "n": load_n, "inflight": inflight})
                cli.ask({"op": "load", "n": load_n, "inflight": inflight})
            load_rows.append([f"{label} tool service (echo)", f"{peak.peak['server']:.1f}"])
            load_rows.append([f"{label} client (ToolServiceClient)", f"{peak.peak['client']:.1f}"])

    # Cold start: each trial on a fresh process, kinds alternating.
    with broker("coldstart-broker") as b, Procs() as procs:
        probe = ColdStartProbe(b.url)
        try:
            trial = [0]

            def sid(base: str) -> str:
                # A fresh subscription per trial: the broker may still hold the
                # previous trial's consumer, and pulsar-lite 0.2 refuses a second
                # consumer with the same id on one subscription.
                trial[0] += 1
                return f"{base}-{trial[0]}"

            kinds = {
                "ours joke-service": ("joke", lambda: procs.add(Proc(
                    "cold-joke", [str(VENV_BIN / "joke-service"), "-p", b.url, "-l", "WARNING",
                                  "--id", sid("cold-joke"), *NO_METRICS])), {"topic": "cats"}),
                "ours echo DynamicToolService": ("bench-cold-echo", lambda: procs.add(Proc(
                    "cold-ours-echo", [PY, str(PEERS / "ours_server.py"), "-p", b.url, "-t",
                                       "bench-cold-echo", "--id", sid("cold-ours"), "-l", "WARNING",
                                       *NO_METRICS])), {"text": "hi"}),
                "upstream 2.1.4 echo DynamicToolService": ("bench-cold-up", lambda: procs.add(Proc(
                    "cold-upstream-echo", [str(UPSTREAM_PY), str(PEERS / "upstream_server.py"), "-p",
                                           b.url, "-t", "bench-cold-up", "--id", sid("cold-up"),
                                           *NO_METRICS])), {"text": "hi"}),
            }
            cold: dict[str, list[float]] = {k: [] for k in kinds}
            for _ in range(cold_trials):
                for kind, (topic, factory, arguments) in kinds.items():
                    cold[kind].append(probe.measure(topic, factory, arguments) * 1000.0)
        finally:
            probe.close()
    cold_rows = [[k, f"{median(v):.0f}", f"{min(v):.0f}-{max(v):.0f}",
                  ("yes" if median(v) < 300 else "NO") if k.startswith("ours joke") else "-"]
                 for k, v in cold.items()]
    return {
        "idle": table(["processor", "idle RSS MB", "< 80 MB"], idle_rows),
        "missing": missing,
        "load": table(["process", f"peak RSS MB ({inflight} in flight, 2x{load_n} calls)"], load_rows),
        "cold": table(["service", "spawn -> first reply ms (median)", "range", "< 300 ms"], cold_rows),
        "cold_trials": cold_trials,
    }


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------
def machine(upstream_versions: dict[str, str], rabbitmq: str) -> str:
    mem_kb = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    ours = venv_versions(Path(PY), ["trustgraph-base", "trustgraph-flow", "pulsar-client", "pulsar-lite",
                                    "aio-pika"])
    if rabbitmq:
        ours["RabbitMQ"] = rabbitmq
    return "\n".join([
        f"- nproc: {os.cpu_count()}; memory: {mem_kb / 1024 / 1024:.1f} GiB; CPU: {cpu or 'unknown'}",
        f"- OS: {platform.platform()}",
        f"- Python: {platform.python_version()} ({sys.executable})",
        "- ours (.venv, and the RabbitMQ server): " + ", ".join(f"{k} {v}" for k, v in ours.items()),
        "- comparison venv (.interop/upstream): " + ", ".join(f"{k} {v}" for k, v in upstream_versions.items()),
    ])


def bigger_models(model: str | None) -> tuple[str, ...]:
    """The bigger local models whose rows the agent-quality table adds: those tg-fetch-model fetched
    (never fetched here); none when the table runs on a model of the user's (``--model``)."""
    from trustgraph.launch.models import KNOWN, models_dir
    if model:
        return ()
    found = []
    for known in KNOWN.values():
        path = models_dir() / known.file_name
        if path.is_file():
            found.append(str(path))
        else:
            print(f"  {known.name} is not fetched (tg-fetch-model {known.name}): its rows are left out", flush=True)
    return tuple(found)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5, help="measured rounds of the tool-call table")
    ap.add_argument("--scaling-rounds", type=int, default=3)
    ap.add_argument("--only", choices=TABLES, action="append",
                    help="run only these tables (repeatable); BENCHMARKS.md is then not written")
    ap.add_argument("--peers", default=",".join(ALL_PEERS),
                    help="tool-call peers to measure (comma-separated; ours is always one)")
    ap.add_argument("--baseline", metavar="DIR", type=Path,
                    help="also measure ours from the source tree DIR (git archive COMMIT | tar -x -C DIR), "
                         "alternating with today's in the tool-call table; BENCHMARKS.md is then not written")
    ap.add_argument("--wait-quiet", type=float, default=60.0,
                    help="seconds to wait before each table for other work on the machine to "
                         "finish (then it measures anyway and says so)")
    ap.add_argument("--output", default=str(REPO / "BENCHMARKS.md"))
    ap.add_argument("--model", metavar="PATH",
                    help="run the agent-quality table on this GGUF model (tg-launch --model PATH) instead of "
                         "the embedded one; its rows carry the file's name, and BENCHMARKS.md is not written")
    args = ap.parse_args()
    t0 = time.perf_counter()
    WORK.mkdir(parents=True, exist_ok=True)
    up_versions = ensure_upstream_venv()
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    only = set(args.only or TABLES)
    inflight = 32

    tool = scaling = foot = announce = agent = ranker = quality = many = config = None
    background: dict[str, tuple[float, float]] = {}

    def quiet(name: str) -> ForeignCpu:
        """Wait (bounded) for other work on the machine to finish; start counting it."""
        deadline = time.monotonic() + args.wait_quiet
        busy = background_cpu()
        while busy > 0.10 and time.monotonic() < deadline:
            print(f"  {busy:.0%} of the CPU busy with other work; waiting up to "
                  f"{deadline - time.monotonic():.0f} s more for it to finish...", flush=True)
            time.sleep(4.0)
            busy = background_cpu()
        background[name] = (busy, 0.0)
        return ForeignCpu()

    def record(name: str, foreign: ForeignCpu) -> None:
        during = foreign.share()
        background[name] = (background[name][0], during)
        if during > 0.05:
            print(f"  warning: other work used {during:.0%} of the machine during the {name} "
                  "table; absolute figures are low", flush=True)

    if "tool" in only:
        fc = quiet("tool-call")
        print("Tool-call table...", flush=True)
        peers = tuple(p for p in ALL_PEERS if p in args.peers.split(",") or p == "ours")
        if args.baseline is not None:
            check_tree(args.baseline)
        tool = tool_call_table(args.rounds, seq_n=300, load_n=3000, inflight=inflight, peers=peers,
                               baseline=args.baseline)
        record("tool-call", fc)
        print(tool["text"] + "\n" + tool["ratios"] + "\n", flush=True)
    if "scaling" in only:
        fc = quiet("scaling")
        print("Scaling table...", flush=True)
        scaling = scaling_table(args.scaling_rounds, secs=2.0, inflight=inflight)
        record("scaling", fc)
        print(scaling["text"] + "\n", flush=True)
    if "footprint" in only:
        fc = quiet("footprint")
        print("Footprint table...", flush=True)
        foot = footprint_table(load_n=3000, inflight=inflight, cold_trials=5)
        record("footprint", fc)
        print(foot["idle"] + "\n\n" + foot["load"] + "\n\n" + foot["cold"] + "\n", flush=True)
    if "announce" in only:
        fc = quiet("announce")
        print("Announce table...", flush=True)
        with broker("announce-broker") as b:
            announce = announce_table(b.url, rounds=5)
        record("announce", fc)
        print(announce["text"] + "\n", flush=True)
    if "agent" in only:
        fc = quiet("agent")
        print("Agent table...", flush=True)
        with broker("agent-broker") as b:
            try:
                agent = run_agent_table(b.url, WORK / "agent")
            except AgentBenchError as e:
                raise BenchError(str(e)) from e
        record("agent", fc)
        print(agent["markdown"] + "\n", flush=True)
    if "ranker" in only:
        fc = quiet("ranker")
        print("Ranker table...", flush=True)
        ranker = ranker_table()
        record("ranker", fc)
        print(ranker["markdown"] + "\n", flush=True)
    if "quality" in only:
        fc = quiet("agent quality")
        also = bigger_models(args.model)
        print(f"Agent quality table (about {20 + 15 * len(also)} minutes on a quiet machine)...", flush=True)
        try:
            quality = run_quality_table(WORK / "quality", model=args.model, extra_models=also,
                                        budget=2400.0 + 1500.0 * len(also),
                                        command=" ".join([".venv/bin/python", "bench/run.py", *sys.argv[1:]]))
        except QualityBenchError as e:
            raise BenchError(str(e)) from e
        record("agent quality", fc)
        print(quality["markdown"] + "\n", flush=True)
    if "many-tools" in only:
        fc = quiet("many tools")
        print("Many-tools table (a few minutes)...", flush=True)
        try:
            many = run_many_tools_table(WORK / "many-tools",
                                        command=" ".join([".venv/bin/python", "bench/run.py", *sys.argv[1:]]))
        except QualityBenchError as e:
            raise BenchError(str(e)) from e
        record("many tools", fc)
        print(many["markdown"] + "\n", flush=True)
    if "config-change" in only:
        fc = quiet("config-change")
        print("Config-change table (under a minute)...", flush=True)
        config = run_config_table(WORK / "config-change",
                                  command=" ".join([".venv/bin/python", "bench/run.py", *sys.argv[1:]]))
        record("config-change", fc)
        print(config["markdown"] + "\n", flush=True)
    elapsed = time.perf_counter() - t0
    print(f"make bench took {elapsed:.0f} s", flush=True)
    if args.only or args.peers != ",".join(ALL_PEERS) or args.model or args.baseline:
        return 0

    assert tool is not None and scaling is not None and foot is not None and announce is not None
    assert agent is not None and quality is not None and many is not None and config is not None
    assert ranker is not None
    load = "\n".join(f"- {k} table: {before:.0%} just before, {during:.0%} during"
                      for k, (before, during) in background.items())
    notes_path = BENCH / "notes.md"
    notes = notes_path.read_text() if notes_path.exists() else ""
    missing = (f"\nNot installed in .venv/bin, so not measured: {', '.join(foot['missing'])}.\n"
               if foot["missing"] else "")
    doc = f"""# Benchmarks

Generated by `make bench` (`.venv/bin/python bench/run.py`) on {started}; the run took
{elapsed:.0f} s. Do not edit the tables by hand: rerun the command. The analysis at the end comes
from `bench/notes.md`.

## Machine

{machine(up_versions, tool['rabbitmq'])}

Other work on the machine, as a share of its CPU. The bench waits up to {args.wait_quiet:g} s before each
table for it to stop; "during" is the CPU time used while the table ran by processes the bench did
not start. Above a few percent the absolute figures drop; the ratios hold better because peers
alternate round by round.

{load}

## Method

- One embedded `pulsar-lite` broker per table, on 127.0.0.1 (and for the tool-call table's
  RabbitMQ rows one RabbitMQ node beside it, started by the bench as the tests start theirs).
  Every server and every client is a separate process. Peers are measured in the same run in
  alternating rounds (A B C D, A B C D, ...) after one unrecorded warm-up round; each figure is
  the median of the rounds.
- Echo tool: arguments `{{"text": "hello"}}`, reply `hello`, non-persistent topics.
- Sequential: {tool['seq_n']} calls one after another per round (p50/p99 of the round). Load:
  {tool['load_n']:,} calls with {inflight} in flight per round. {tool['rounds']} rounds.
- raw = minimal pulsar-client sync echo server (message listener, `send_async`, batching off) and a
  client with {inflight} threads; ours = `ToolServiceClient` -> `DynamicToolService` (default
  `--concurrency` 16); upstream = `trustgraph-base==2.1.4` from PyPI, its `DynamicToolService`
  and `ToolServiceClient`, both in `.interop/upstream`; MCP = the official `mcp` SDK
  (`MCPServer`, the 2.x name of FastMCP) over Streamable HTTP with one `ClientSession`.
- RabbitMQ rows: ours on RabbitMQ = the same service and client with `--pubsub-backend rabbitmq`
  (our topology: a fanout exchange per topic, the service's shared request queue, an exclusive
  reply queue per client read without acks; requests published mandatory; publisher confirms on
  every channel that publishes); raw aio-pika =
  RabbitMQ's classic RPC pattern in aio-pika (requests to one queue through the default exchange,
  replies to the caller's exclusive queue by `reply_to`, matched by `correlation_id`; aio-pika's
  defaults, publisher confirms on), {inflight} calls in flight on one connection.

## Tool-call table

{tool['text']}

{tool['ratios']}

## Scaling table

Calls/s of our client with {inflight} in flight against one tool service topic, {scaling['secs']:g} s per
measurement, median of {scaling['rounds']} alternating rounds. CPU case: `invoke` burns 2 ms of CPU time
(replicas share one subscription; the broker and the client share the same 2 cores). I/O case:
`invoke` awaits `asyncio.sleep(0.02)`, one process.

{scaling['text']}

## Footprint table

Idle RSS (VmRSS) of each processor, 3 s after its readiness file appeared, all on one broker with
`--no-metrics`.
{missing}
{foot['idle']}

RSS under load (peak of 50 ms samples while the client ran its calls):

{foot['load']}

Cold start: process spawn -> first reply, probed from outside with a raw pulsar-client request
every 5 ms (the first reply marks the moment a caller is served); {foot['cold_trials']} trials per kind,
alternating. Upstream's `joke-service` lives in trustgraph-flow 2.1.4, which needs many more
dependencies, so upstream's `DynamicToolService` echo is measured instead, and ours the same way
for a like-for-like row.

{foot['cold']}

## Announce table

How soon a tool service that announces itself is usable, and how fast a call to one that stopped
fails (`bench/announce_bench.py`): a real service process per round on its own topic, a reader
in the bench process following announcements as an agent does. {announce['rounds']} rounds after
a warm-up; announce = the service's first announcement (its own clock; one machine). Without
announcements (an upstream service) a call to a stopped service waits its whole deadline (the
agent's default: 60 s).

{announce['text']}

## Agent table

{agent['markdown']}

## Ranker table

The tool ranker alone (`trustgraph.catalog.ranking`, `bench/ranker_bench.py`): the agent-quality
sets' questions ranked against their tools' descriptors, no LLM; how often the right tool comes
first by shared words, by meaning (the embedding model's cosine similarity to the nearest of a
tool's texts) and by meaning plus a weight of shared words (the agent uses 0.15); what one ranking
costs with the tools' vectors already made (each step after a catalog's first) and the first
ranking of a new catalog (the model loaded and every tool embedded); and the memory the model adds.

{ranker['markdown']}

## Agent quality table

How well the embedded model uses the tools of a running stack, and how its dialogs end, in
structured mode (the bootstrap `agent-react`) and in text mode (ReAct text), on three question sets
(the second and third paraphrased, with questions that no tool fits; the third over sixteen tools,
many easy to confuse, in structured mode only), beside a bigger local model (`tg-fetch-model
qwen2.5-coder-1.5b`, structured mode only; its rows are there when it was fetched before the run)
and a scripted stand-in that gives every right decision (`bench/agent_quality.py`).

{quality['markdown']}

## Many tools

Set 1's questions (every fifth) with 10, 100 and 1,000 tools configured: its five tools and
generated tools of other domains, each with a description of about 1,200 characters
(`bench/many_tools.py`). Each step shows the model the tools most relevant to the question that
fit 8,000 characters (at most 24), so no dialog fails because the catalog is large; "agent had
them after" is the time from the config put to the agent's catalog holding them all.

{many['markdown']}

## Config change

How long one `tg-put-config-item` (a tool's description changed) takes to reach every processor
that follows config, and the CPU it costs each, with 10, 100 and 1,000 tools configured (generated
as in the many-tools table, beside the bootstrap config) (`bench/config_bench.py`). Every push
carries the whole config (below the part size) and each processor checks it with config-svc
before applying it. One broker, config-svc, api-gateway, agent, mcp-server, mcp-tool,
prompt-template and joke-service, each its own process; the CLI runs as a subprocess through the
gateway. "Applied" is each processor's own log line written as its `config_version` gauge is set
(the gauge is scraped after each round and must agree); the push is seen by a subscription of the
bench's own; CPU is each process's `sum_exec_runtime` (all threads) over the change.

{config['markdown']}

{notes}"""
    Path(args.output).write_text(doc)
    print(f"Wrote {args.output}")
    return 0


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


if __name__ == "__main__":
    # A SIGTERM runs the same finally blocks as Ctrl-C, so every process a table started is stopped.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        sys.exit(main())
    except BenchError as e:
        print(f"bench failed: {e}", file=sys.stderr)
        sys.exit(1)
