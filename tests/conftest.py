"""Shared fixtures: a real pulsar-lite broker on 127.0.0.1 and helpers to run processes.

Each test session (each xdist worker) starts its own broker on a free port with
its own data directory, so parallel runs never collide.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from trustgraph.base.broker import EmbeddedBroker, free_port

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedBroker:
    """One broker per test session; tests keep their topics apart by unique names."""
    b = EmbeddedBroker(tmp_path_factory.mktemp("broker"))
    b.start()
    yield b
    b.stop()


@pytest.fixture
def own_broker(tmp_path: Path) -> EmbeddedBroker:
    """A broker of this test alone, for tests that restart or kill it."""
    b = EmbeddedBroker(tmp_path / "broker")
    b.start()
    yield b
    b.stop()


class Proc:
    """A child process of a test: started with output to a log file, always reaped."""

    def __init__(self, args: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.args = args
        self.log = log
        self.env = {**os.environ, **(env or {})}
        self.p: subprocess.Popen | None = None

    def start(self) -> "Proc":
        with open(self.log, "ab") as f:
            self.p = subprocess.Popen(self.args, stdout=f, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, env=self.env)
        return self

    def wait_ready(self, ready_file: Path, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not ready_file.exists():
            if self.p.poll() is not None:
                raise RuntimeError(f"{self.args[0]} exited {self.p.returncode}:\n{self.output()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.args[0]} not ready in {timeout}s:\n{self.output()}")
            time.sleep(0.05)

    def output(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-5000:]
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> int | None:
        if self.p is None or self.p.poll() is not None:
            return self.p.returncode if self.p else None
        self.p.terminate()
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return self.p.wait()

    def kill(self) -> None:
        if self.p is not None and self.p.poll() is None:
            self.p.kill()
            self.p.wait()


@pytest.fixture
def spawn(tmp_path: Path):
    """Start a console script of ours as a child process and wait until it is ready.

    ``spawn("config-svc", "--store", path)`` passes ``--pulsar-host`` itself when
    given ``broker=``; every process is stopped when the test ends.
    """
    procs: list[Proc] = []
    counter = [0]

    def _spawn(command: str, *args: str, broker: EmbeddedBroker | None = None,
               wait: bool = True, timeout: float = 30.0, env: dict[str, str] | None = None) -> Proc:
        counter[0] += 1
        n = counter[0]
        ready = tmp_path / f"ready-{command}-{n}"
        full = [str(BIN / command), *args, "--no-metrics"]
        if broker is not None:
            full += ["--pulsar-host", broker.url]
        proc = Proc(full, tmp_path / f"{command}-{n}.log",
                    env={"TG_READY_FILE": str(ready), **(env or {})})
        proc.ready_file = ready
        proc.start()
        procs.append(proc)
        if wait:
            proc.wait_ready(ready, timeout)
        return proc

    yield _spawn
    for p in procs:
        p.stop()


__all__ = ["free_port", "Proc", "REPO", "BIN"]


class McpStandIn:
    """The test MCP server (``tests/integration/mcp_stand_in.py``, the official SDK) as a process.

    ``kill()`` then ``start()`` restarts it on the same port, as a server that
    crashed and came back would be.
    """

    SCRIPT = REPO / "tests" / "integration" / "mcp_stand_in.py"

    def __init__(self, log: Path, token: str | None = None, transport: str = "streamable-http") -> None:
        self.port = free_port()
        self.token = token
        self.transport = transport
        self.log = log
        self.proc: Proc | None = None
        path = "/sse" if transport == "sse" else "/mcp"
        self.url = f"http://127.0.0.1:{self.port}{path}"

    def start(self, timeout: float = 60.0) -> McpStandIn:
        from trustgraph.base.broker import wait_for_port
        args = [sys.executable, str(self.SCRIPT), str(self.port), "--transport", self.transport]
        if self.token:
            args += ["--token", self.token]
        self.proc = Proc(args, self.log).start()
        wait_for_port("127.0.0.1", self.port, timeout, self.proc.p)
        return self

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()


@pytest.fixture
def mcp_stand_in(tmp_path: Path):
    """``mcp_stand_in(token=None, transport="streamable-http")``: a started test MCP server."""
    servers: list[McpStandIn] = []

    def make(token: str | None = None, transport: str = "streamable-http") -> McpStandIn:
        server = McpStandIn(tmp_path / f"mcp-{len(servers)}.log", token, transport).start()
        servers.append(server)
        return server

    yield make
    for s in servers:
        s.stop()
