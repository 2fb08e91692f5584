"""Process, venv and statistics helpers shared by the bench tables.

Every process the bench starts goes through :class:`Procs`, a context manager
that stops them all (SIGTERM, then SIGKILL after a grace period) however the
table ends, so a failed run never leaves a broker or a server behind.
"""

from __future__ import annotations

import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
PEERS = BENCH / "peers"
WORK = BENCH / ".work"
VENV_BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO))
from interop.venvs import UPSTREAM, VenvError  # noqa: E402 - the one module that makes upstream venvs

UPSTREAM_VENV = UPSTREAM.path
UPSTREAM_PY = UPSTREAM.python


class BenchError(RuntimeError):
    """A peer did not start or answer; the message says which and shows its log."""


# -- the comparison venv -------------------------------------------------------
def venv_versions(python: Path, names: list[str]) -> dict[str, str]:
    """Installed versions of ``names`` in the venv of ``python`` (missing ones absent)."""
    code = ("import importlib.metadata as m, json, sys\n"
            "out = {}\n"
            "for n in sys.argv[1:]:\n"
            "    try: out[n] = m.version(n)\n"
            "    except m.PackageNotFoundError: pass\n"
            "print(json.dumps(out))")
    r = subprocess.run([str(python), "-c", code, *names], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return {}
    return json.loads(r.stdout)


def ensure_upstream_venv() -> dict[str, str]:
    """The upstream 2.1.4 venv (shared with the interop suite: ``interop/venvs.py``), created if needed.

    A separate venv because upstream's ``trustgraph-base`` would replace ours in
    the project's venv (same distribution name and namespace).
    """
    try:
        UPSTREAM.ensure()
    except VenvError as e:
        raise BenchError(str(e)) from None
    return venv_versions(UPSTREAM_PY, ["trustgraph-base", "mcp", "pulsar-client"])


# -- processes ------------------------------------------------------------------
class Proc:
    """A child process with its output in a log file under ``bench/.work``."""

    def __init__(self, name: str, args: list[str], env: dict[str, str] | None = None,
                 pipes: bool = False) -> None:
        self.name = name
        self.args = args
        self.log = WORK / "logs" / f"{name}.log"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log, "wb")
        self.started = time.perf_counter()  # spawn time, for cold starts
        try:
            self.p = subprocess.Popen(
                args, env={**os.environ, **(env or {})}, stderr=log,
                stdout=subprocess.PIPE if pipes else log,
                stdin=subprocess.PIPE if pipes else subprocess.DEVNULL,
                text=pipes, bufsize=1 if pipes else -1, cwd=str(REPO),
            )
        finally:
            log.close()

    @property
    def pid(self) -> int:
        return self.p.pid

    def tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def check_alive(self) -> None:
        if self.p.poll() is not None:
            raise BenchError(f"{self.name} exited with {self.p.returncode}:\n{self.tail()}")

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM, then SIGKILL if it has not exited after ``grace`` seconds."""
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(grace)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        for f in (self.p.stdin, self.p.stdout):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass


class Worker(Proc):
    """A client worker speaking the JSON-lines protocol of ``peers/_driver.py``."""

    def __init__(self, name: str, args: list[str], env: dict[str, str] | None = None) -> None:
        super().__init__(name, args, env, pipes=True)
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _next(self, timeout: float) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise BenchError(f"{self.name}: no answer within {timeout:.0f}s:\n{self.tail()}") from None
        if line is None:
            self.p.wait(5)
            raise BenchError(f"{self.name} exited with {self.p.returncode}:\n{self.tail()}")
        return json.loads(line)

    def wait_ready(self, timeout: float = 90.0) -> None:
        msg = self._next(timeout)
        if not msg.get("ready"):
            raise BenchError(f"{self.name}: unexpected first line {msg}")

    def ask(self, cmd: dict[str, Any], timeout: float = 180.0) -> dict[str, Any]:
        assert self.p.stdin is not None
        self.p.stdin.write(json.dumps(cmd) + "\n")
        self.p.stdin.flush()
        msg = self._next(timeout)
        if "error" in msg:
            raise BenchError(f"{self.name}: {msg['error']}")
        return msg

    def stop(self, grace: float = 10.0) -> None:
        if self.p.poll() is None and self.p.stdin is not None:
            try:
                self.p.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.p.stdin.flush()
                self.p.wait(grace)
            except (OSError, subprocess.TimeoutExpired):
                pass
        super().stop(grace)


class Procs:
    """Owns the processes of one table and stops them all on exit, newest first."""

    def __init__(self) -> None:
        self.procs: list[Proc] = []

    def add(self, proc: Proc) -> Proc:
        self.procs.append(proc)
        return proc

    def stop(self, proc: Proc) -> None:
        proc.stop()
        if proc in self.procs:
            self.procs.remove(proc)

    def __enter__(self) -> Procs:
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in reversed(self.procs):
            try:
                proc.stop()
            except Exception as e:  # noqa: BLE001 - keep stopping the others
                print(f"warning: stopping {proc.name} failed: {e}", file=sys.stderr)
        self.procs.clear()


def wait_files(procs: list[tuple[Proc, Path]], timeout: float) -> None:
    """Wait until every process has written its readiness file."""
    deadline = time.monotonic() + timeout
    pending = list(procs)
    while pending:
        for proc, path in list(pending):
            if path.exists():
                pending.remove((proc, path))
            else:
                proc.check_alive()
        if not pending:
            return
        if time.monotonic() > deadline:
            names = ", ".join(p.name for p, _ in pending)
            raise BenchError(f"not ready after {timeout:.0f}s: {names}\n{pending[0][0].tail()}")
        time.sleep(0.05)


def ready_file(name: str) -> Path:
    path = WORK / "ready" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    return path


# -- measurements -----------------------------------------------------------------
def rss_mb(pid: int) -> float:
    """Resident set size of ``pid`` in MB (VmRSS), 0 when it has gone."""
    try:
        return psutil.Process(pid).memory_info().rss / 2**20
    except psutil.NoSuchProcess:
        return 0.0


class PeakRss:
    """Samples the RSS of some processes every 50 ms in a thread; keeps the peak."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.peak = {name: 0.0 for name in pids}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            for name, pid in self.pids.items():
                self.peak[name] = max(self.peak[name], rss_mb(pid))

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _cpu_times() -> tuple[int, int]:
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def background_cpu(seconds: float = 1.0) -> float:
    """Share of the machine's CPU (0-1) busy while the bench itself is idle.

    Other work on the machine lowers every absolute figure (the ratios less,
    since peers alternate), so each table records what was running beside it.
    """
    busy0, total0 = _cpu_times()
    time.sleep(seconds)
    busy1, total1 = _cpu_times()
    return (busy1 - busy0) / max(1, total1 - total0)


def _proc_cpu() -> dict[tuple[int, int], int]:
    """CPU ticks used so far by every process but this one, keyed by (pid, start time)."""
    out: dict[tuple[int, int], int] = {}
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # After the command: state is field 3, utime 14, stime 15, starttime 22 (1-based).
        out[(int(entry.name), int(fields[19]))] = int(fields[11]) + int(fields[12])
    return out


class ForeignCpu:
    """CPU used during a table by processes that are not the bench's.

    Taken as the growth of every process's CPU time from the start of the table
    to its end, after the table has stopped all of its own processes; so it
    counts other work that ran through the table (a test suite, a model) and
    misses only foreign processes that both started and ended inside it.
    """

    def __init__(self) -> None:
        self.start = _proc_cpu()
        self.t0 = time.monotonic()

    def share(self) -> float:
        """Foreign CPU as a share (0-1) of the machine's capacity over the table."""
        end = _proc_cpu()
        ticks = sum(v - self.start.get(k, 0) for k, v in end.items())
        hz = os.sysconf("SC_CLK_TCK")
        wall = max(1e-6, time.monotonic() - self.t0)
        return ticks / hz / (wall * (os.cpu_count() or 1))


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by nearest rank."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, round(q / 100.0 * len(s) + 0.5) - 1))
    return s[k]


def median(values: list[float]) -> float:
    return statistics.median(values)


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A Markdown table (also readable as plain text on the terminal)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])
