"""The config-change table: one ``tg-put-config-item`` with 10, 100 and 1,000 tools configured.

Every push of config-svc carries the whole config (below the part size; above
it a notice, and each processor fetches it in parts), and every processor that
follows config confirms the push with config-svc before applying it
(``trustgraph.base.processors.config_follower``).  So one small change costs
every follower a decode, a digest and a round trip of something that grows with
the config.  This table shows how long a change takes to reach every
processor and what it costs each one, as the config grows.

Why it is built this way:

* one embedded broker, our config-svc (bootstrapped as ``tg-launch`` does) and
  the processors a stack runs that follow config (api-gateway, agent, mcp-server,
  mcp-tool, prompt-template), plus a tool service (joke-service) that follows
  none, each its own process through ``common.Procs``;
* the change is the real ``tg-put-config-item`` CLI, run as a subprocess
  through the gateway, putting one tool with a changed description; ``t0`` is
  taken just before it is started;
* "applied" is each processor's own ``Config version N applied`` log line (its
  clock, ms; written right after the ``config_version`` gauge is set), read
  from its log file by the bench: exact, and no scraping runs inside the
  window, so it neither delays the processors nor adds to their CPU.  Each
  processor's ``config_version`` gauge is scraped from its ``/metrics`` (fixed
  ``-P`` port) once a round has ended, and must show that version;
* config-svc's push is seen by a subscription of the bench's own on the push
  topic (the time it arrived, and every process's CPU read then), so the
  figures split into the CLI's part (start-up, its descriptor check, which
  reads the catalog's config through the gateway, the put) and the push's part
  (push -> applied everywhere);
* CPU is each process's ``sum_exec_runtime`` over all its threads
  (``/proc/<pid>/task/*/schedstat``, ns): ``utime+stime`` in ``/proc/<pid>/stat``
  counts in 10 ms ticks, coarser than a change at 10 tools.  Nothing is
  subtracted: an idle baseline over the same time is measured and shown;
* one unrecorded round per size, then ``ROUNDS`` rounds; medians.

Runner hook: ``run_config_table(...)``; standalone: ``.venv/bin/python bench/config_bench.py``.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from common import REPO, VENV_BIN, WORK, BenchError, Proc, Procs, percentile, ready_file, wait_files  # noqa: E402
from many_tools import filler_tools, put_tools  # noqa: E402

SIZES = (10, 100, 1000)
ROUNDS = 5
#: The processors that follow config, by the name the table shows (COMMANDS: their console scripts).
FOLLOWERS = ("api-gateway", "agent", "mcp-server", "mcp-tool", "prompt")
COMMANDS = {"config-svc": "config-svc", "api-gateway": "api-gateway", "agent": "agent-manager-react",
            "mcp-server": "mcp-server", "mcp-tool": "mcp-tool", "prompt": "prompt-template",
            "joke-service": "joke-service"}
#: Every process whose CPU is shown, config-svc first; joke-service follows no config.
MEASURED = ("config-svc", *FOLLOWERS, "joke-service")
BOOTSTRAP = REPO / "config-examples" / "bootstrap.json"
APPLIED = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) INFO \S+: Config version (\d+) applied")
SETTLE_TIMEOUT = 120.0
ROUND_TIMEOUT = 60.0


def thread_cpu_ns(pid: int) -> int:
    """CPU time (ns) used so far by every live thread of ``pid`` (sum_exec_runtime)."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue   # a thread that ended between the listing and the read
    return total


def tick_cpu_ms(pid: int) -> float:
    """utime+stime of ``pid`` in ms (10 ms ticks): the cross-check of :func:`thread_cpu_ns`."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")


class LogTail:
    """The ``Config version N applied`` lines of one processor's log, read as they are appended."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.partial = b""
        #: version -> epoch seconds of its first applied line.
        self.applied: dict[int, float] = {}

    def poll(self) -> None:
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        for raw in lines:
            m = APPLIED.match(raw.decode(errors="replace"))
            if m:
                stamp = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f")
                self.applied.setdefault(int(m.group(2)), stamp.timestamp())


class PushWatch:
    """The bench's own subscription to config-svc's push topic: when each version arrived,
    and every measured process's CPU at that moment."""

    def __init__(self, url: str, pids: dict[str, int]) -> None:
        import pulsar
        from trustgraph.topics import CONFIG_PUSH

        self.pids = pids
        self.seen: dict[int, tuple[float, dict[str, int], int]] = {}
        self.cond = threading.Condition()
        self.client = pulsar.Client(url, io_threads=1, message_listener_threads=1,
                                    logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Warn))
        self.consumer = self.client.subscribe(
            CONFIG_PUSH, f"config-bench-{os.getpid()}", consumer_type=pulsar.ConsumerType.Exclusive,
            initial_position=pulsar.InitialPosition.Latest, message_listener=self._on_push)

    def _on_push(self, consumer: Any, msg: Any) -> None:
        at = time.time()
        cpu = {name: thread_cpu_ns(pid) for name, pid in self.pids.items()}
        data = msg.data()
        consumer.acknowledge(msg)
        # The version is the record's first field: no need to decode megabytes here.
        m = re.match(rb'\s*\{\s*"version"\s*:\s*(\d+)', data[:64])
        if m is None:
            return
        with self.cond:
            self.seen.setdefault(int(m.group(1)), (at, cpu, len(data)))
            self.cond.notify_all()

    def wait(self, version: int, timeout: float) -> tuple[float, dict[str, int], int]:
        with self.cond:
            if not self.cond.wait_for(lambda: version in self.seen, timeout):
                raise BenchError(f"config-svc's push of version {version} not seen within {timeout:.0f} s")
            return self.seen[version]

    def latest(self) -> int:
        with self.cond:
            return max(self.seen, default=0)

    def close(self) -> None:
        try:
            self.consumer.close()
        finally:
            self.client.close()


def scrape_version(port: int) -> int | None:
    """The ``config_version`` gauge on ``127.0.0.1:port/metrics`` (None when absent)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    m = re.search(r'^config_version\{processor="[^"]*"\} ([0-9.e+]+)$', text, re.M)
    return int(float(m.group(1))) if m else None


@dataclass
class Round:
    """One measured change."""

    version: int
    t0: float
    cli_secs: float
    push_at: float
    push_bytes: int
    applied: dict[str, float]
    cpu_to_push: dict[str, float]      # ms, t0 -> push seen
    cpu_after_push: dict[str, float]   # ms, push seen -> applied everywhere
    ticks_ms: dict[str, float]         # ms, t0 -> applied everywhere, utime+stime


@dataclass
class SizeResult:
    size: int
    rounds: list[Round] = field(default_factory=list)
    idle_ms_per_s: dict[str, float] = field(default_factory=dict)


class ConfigStack:
    """The broker's processes of the table, their ports, logs and readiness."""

    def __init__(self, procs: Procs, url: str, admin_url: str, workdir: Path) -> None:
        from trustgraph.base.launching.broker import free_port

        self.procs = procs
        self.url = url
        self.gateway_port = free_port()
        self.metrics_ports = {name: free_port() for name in MEASURED}
        self.started: dict[str, Proc] = {}
        store = workdir / "config.db"
        self.extra = {
            "config-svc": ["--store", str(store)],
            "api-gateway": ["--port", str(self.gateway_port), "--host", "127.0.0.1",
                            "--pulsar-admin-url", admin_url],
            "agent": ["--pulsar-admin-url", admin_url],
            "mcp-server": ["--port", str(free_port()), "--host", "127.0.0.1", "--pulsar-admin-url", admin_url],
            "mcp-tool": ["--pulsar-admin-url", admin_url],
            "prompt": ["--pulsar-admin-url", admin_url],
            "joke-service": [],
        }

    @property
    def gateway(self) -> str:
        return f"http://127.0.0.1:{self.gateway_port}/"

    def start(self, names: tuple[str, ...], timeout: float = 90.0) -> None:
        waits = []
        for name in names:
            ready = ready_file(f"config-{name}")
            args = [str(VENV_BIN / COMMANDS[name]), "-p", self.url, "-l", "INFO",
                    "-P", str(self.metrics_ports[name]), *self.extra[name]]
            proc = self.procs.add(Proc(f"config-{name}", args, env={"TG_READY_FILE": str(ready)}))
            self.started[name] = proc
            waits.append((proc, ready))
        wait_files(waits, timeout)

    def pids(self) -> dict[str, int]:
        return {name: self.started[name].pid for name in MEASURED}

    def check_alive(self) -> None:
        for proc in self.started.values():
            proc.check_alive()


def _cli_startup(rounds: int) -> tuple[float, float]:
    """Median seconds of the CLI's start-up: ``tg-put-config-item --help`` (the interpreter and
    the command's module), and the interpreter importing what a tool put loads (the catalog,
    pydantic, requests), which ``--help`` never imports."""
    commands = ([str(VENV_BIN / "tg-put-config-item"), "--help"],
                [str(VENV_BIN / "python"), "-c", "import trustgraph.cli.put_config_item, trustgraph.catalog"])
    out = []
    for command in commands:
        times = []
        for _ in range(rounds):
            t = time.perf_counter()
            subprocess.run(command, capture_output=True, check=True, timeout=60)
            times.append(time.perf_counter() - t)
        out.append(statistics.median(times))
    return out[0], out[1]


def _settle(stack: ConfigStack, tails: dict[str, LogTail], version: int, timeout: float) -> None:
    """Until every follower's log says it applied ``version`` (or a later one)."""
    end = time.monotonic() + timeout
    while True:
        stack.check_alive()
        for tail in tails.values():
            tail.poll()
        if all(max(t.applied, default=-1) >= version for t in tails.values()):
            return
        if time.monotonic() > end:
            behind = {n: max(t.applied, default=None) for n, t in tails.items()}
            raise BenchError(f"not every processor applied config version {version} within {timeout:.0f} s: "
                             f"{behind}")
        time.sleep(0.05)


def _one_change(stack: ConfigStack, tails: dict[str, LogTail], watch: PushWatch, key: str,
                descriptor: dict[str, Any], version: int) -> Round:
    """Put ``descriptor`` as tool ``key`` with the CLI; the change is expected at ``version``."""
    pids = stack.pids()
    before = {n: thread_cpu_ns(p) for n, p in pids.items()}
    ticks_before = {n: tick_cpu_ms(p) for n, p in pids.items()}
    t0 = time.time()
    cli = subprocess.Popen([str(VENV_BIN / "tg-put-config-item"), "-u", stack.gateway, "--type", "tool",
                            "--key", key, "--value", json.dumps(descriptor)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + ROUND_TIMEOUT
    cli_secs: float | None = None
    while True:
        if cli_secs is None and cli.poll() is not None:
            cli_secs = time.time() - t0
            out, err = cli.communicate()
            if cli.returncode != 0:
                raise BenchError(f"tg-put-config-item exited {cli.returncode}: {err.strip()[-500:]}")
        for tail in tails.values():
            tail.poll()
        if all(version in t.applied for t in tails.values()):
            break
        stack.check_alive()
        if time.monotonic() > end:
            missing = [n for n, t in tails.items() if version not in t.applied]
            raise BenchError(f"config version {version} not applied within {ROUND_TIMEOUT:.0f} s by {missing}")
        time.sleep(0.01)
    after = {n: thread_cpu_ns(p) for n, p in pids.items()}
    ticks_after = {n: tick_cpu_ms(p) for n, p in pids.items()}
    if cli_secs is None:
        cli.wait(ROUND_TIMEOUT)
        cli_secs = time.time() - t0
        if cli.returncode != 0:
            raise BenchError(f"tg-put-config-item exited {cli.returncode}: {cli.stderr.read()[-500:]}")  # type: ignore[union-attr]
    push_at, at_push, push_bytes = watch.wait(version, ROUND_TIMEOUT)
    for name in FOLLOWERS:
        shown = scrape_version(stack.metrics_ports[name])
        if shown is None or shown < version:
            raise BenchError(f"{name} logged config version {version} applied, but its config_version "
                             f"gauge shows {shown}")
    return Round(
        version=version, t0=t0, cli_secs=cli_secs, push_at=push_at, push_bytes=push_bytes,
        applied={n: tails[n].applied[version] for n in FOLLOWERS},
        cpu_to_push={n: (at_push[n] - before[n]) / 1e6 for n in pids},
        cpu_after_push={n: (after[n] - at_push[n]) / 1e6 for n in pids},
        ticks_ms={n: ticks_after[n] - ticks_before[n] for n in pids},
    )


def _idle(stack: ConfigStack, secs: float) -> dict[str, float]:
    """CPU ms per second of each process with nothing changing (heartbeats, announcements, lease checks)."""
    pids = stack.pids()
    before = {n: thread_cpu_ns(p) for n, p in pids.items()}
    t = time.monotonic()
    time.sleep(secs)
    wall = time.monotonic() - t
    return {n: (thread_cpu_ns(p) - before[n]) / 1e6 / wall for n, p in pids.items()}


async def _bulk(gateway: str, tools: dict[str, dict[str, Any]], remove: list[str]) -> int:
    """Put ``tools`` and delete ``remove`` (100 a request); config-svc's version after."""
    async with aiohttp.ClientSession() as session:
        await put_tools(session, gateway, tools, remove)
        async with session.post(gateway + "api/v1/config", json={"operation": "get", "keys": []},
                                timeout=aiohttp.ClientTimeout(total=60)) as r:
            return int((await r.json(content_type=None))["version"])


def _measure(stack: ConfigStack, watch: PushWatch, rounds: int, idle_secs: float) -> list[SizeResult]:
    tails = {n: LogTail(stack.started[n].log) for n in FOLLOWERS}
    results = []
    present: list[str] = []
    for size in SIZES:
        tools = filler_tools(size)
        version = asyncio.run(_bulk(stack.gateway, tools, [k for k in present if k not in tools]))
        present = list(tools)
        _settle(stack, tails, version, SETTLE_TIMEOUT)
        result = SizeResult(size)
        result.idle_ms_per_s = _idle(stack, idle_secs)
        key = next(iter(tools))
        for r in range(rounds + 1):     # round 0 is the unrecorded warm-up
            descriptor = dict(tools[key], description=f"{tools[key]['description']} (change {r})")
            version += 1
            one = _one_change(stack, tails, watch, key, descriptor, version)
            if r:
                result.rounds.append(one)
            slowest = max(one.applied.values()) - one.t0
            print(f"  config-change {size} tools {'warm-up' if not r else f'round {r}/{rounds}'}: "
                  f"applied everywhere {slowest * 1000:.0f} ms after t0, "
                  f"{(max(one.applied.values()) - one.push_at) * 1000:.0f} ms after the push "
                  f"({one.push_bytes:,} bytes)", flush=True)
        results.append(result)
    return results


def _ms(v: float) -> str:
    return f"{v:,.0f}" if v >= 10 else f"{v:.1f}"


def markdown(results: list[SizeResult], rounds: int, cli_start: tuple[float, float], command: str) -> str:
    med = statistics.median
    head = ["tools configured", "bytes per push", "t0 -> applied everywhere, ms (median)", "p90",
            "t0 -> push, ms", "push -> applied everywhere, ms", "slowest processor (push -> applied, ms)",
            "CLI run, ms",
            *(f"CPU ms per change: {n}" for n in MEASURED)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    each = ["| tools configured | " + " | ".join(FOLLOWERS) + " |", "|" + "---|" * (len(FOLLOWERS) + 1)]
    idle_lines = []
    for res in results:
        rs = res.rounds
        everywhere = [(max(r.applied.values()) - r.t0) * 1000 for r in rs]
        after_push = [(max(r.applied.values()) - r.push_at) * 1000 for r in rs]
        per_proc = {n: med([(r.applied[n] - r.push_at) * 1000 for r in rs]) for n in FOLLOWERS}
        slow = max(per_proc, key=lambda n: per_proc[n])
        cpu = {n: med([r.cpu_to_push[n] + r.cpu_after_push[n] for r in rs]) for n in MEASURED}
        push_cpu = {n: med([r.cpu_after_push[n] for r in rs]) for n in MEASURED}
        lines.append("| " + " | ".join([
            f"{res.size:,}", f"{statistics.median([r.push_bytes for r in rs]):,.0f}",
            _ms(med(everywhere)), _ms(percentile(everywhere, 90)),
            _ms(med([(r.push_at - r.t0) * 1000 for r in rs])), _ms(med(after_push)),
            f"{slow} ({_ms(per_proc[slow])})", _ms(med([r.cli_secs * 1000 for r in rs])),
            *(f"{_ms(cpu[n])} ({_ms(push_cpu[n])})" for n in MEASURED)]) + " |")
        each.append("| " + " | ".join([f"{res.size:,}", *(
            f"{_ms(per_proc[n])} ({_ms(max((r.applied[n] - r.push_at) * 1000 for r in rs))})"
            for n in FOLLOWERS)]) + " |")
        window = med([max(r.applied.values()) - r.t0 for r in rs])
        idle_lines.append(f"{res.size:,} tools: " + ", ".join(
            f"{n} {_ms(res.idle_ms_per_s[n] * window)}" for n in MEASURED))
    return "\n".join(lines) + "\n\nPush -> applied, per processor, ms: median (slowest round):\n\n" + \
        "\n".join(each) + f"""

{rounds} measured rounds per size (after one unrecorded), medians; p90 by nearest rank over the
rounds. t0 is taken just before `tg-put-config-item` starts, so "t0 -> applied everywhere"
includes the CLI's own run ("t0 -> push" is that part): its start-up (`tg-put-config-item --help`
takes {cli_start[0] * 1000:.0f} ms here; importing what a tool put needs, the catalog and pydantic,
{cli_start[1] * 1000:.0f} ms), its descriptor check (it reads the catalog's config types through
the gateway and builds the catalog) and the put; "CLI run" ends when it exits. "push -> applied everywhere" starts when config-svc's push reaches a
subscriber of the bench's own. A CPU cell is the whole change, t0 -> applied everywhere, with the
part after the push in brackets; config-svc's share before the push is answering the CLI's
reads and writing the put. joke-service follows no config (a tool service): its figure is what a
process costs that only holds its connections. Idle CPU over the same time (ms, nothing
changing; heartbeats and announcements): {'; '.join(idle_lines)}.

Command: `{command}`."""


def run_config_table(workdir: Path = WORK / "config-change", rounds: int = ROUNDS,
                     command: str = ".venv/bin/python bench/run.py --only config-change") -> dict[str, Any]:
    """The table (markdown and rows); every process stopped however it ends."""
    from trustgraph.base.launching.broker import EmbeddedBroker
    from trustgraph.launch.bootstrap import bootstrap

    t0 = time.monotonic()
    workdir = Path(workdir)
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    cli_start = _cli_startup(3)
    with EmbeddedBroker(workdir / "broker") as b, Procs() as procs:
        stack = ConfigStack(procs, b.url, b.admin_url, workdir)
        stack.start(("config-svc",))
        asyncio.run(bootstrap(b.url, BOOTSTRAP))
        stack.start((*FOLLOWERS, "joke-service"))
        watch = PushWatch(b.url, stack.pids())
        try:
            results = _measure(stack, watch, rounds, idle_secs=2.0)
        finally:
            watch.close()
    rows = [{"size": r.size, "idle_ms_per_s": r.idle_ms_per_s,
             "rounds": [vars(x) for x in r.rounds]} for r in results]
    return {"markdown": markdown(results, rounds, cli_start, command), "rows": rows,
            "secs": time.monotonic() - t0}


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main() -> int:
    """Run the table alone and print it (nothing is written)."""
    # A SIGTERM runs the same finally blocks as Ctrl-C: every process stopped.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        result = run_config_table(command=".venv/bin/python bench/config_bench.py")
    except BenchError as e:
        print(f"config-change bench failed: {e}", file=sys.stderr)
        return 1
    print(result["markdown"])
    print(f"\n(config-change table took {result['secs']:.0f} s; logs in {WORK / 'logs'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
