"""A whole stack started by the real ``tg-launch`` command, shared by a test module."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support import BIN, alive, descendants  # noqa: F401 - re-exported for the e2e tests
from trustgraph.base.launching.broker import free_port

#: Starts tried when a port picked free was taken by another process before tg-launch bound it.
PORT_TRIES = 3


class Stack:
    def __init__(self, data_dir: Path, extra: list[str]) -> None:
        self.data_dir = data_dir
        self.extra = list(extra)
        self.log = data_dir.parent / "tg-launch.out"
        self._pick_ports()
        self.proc: subprocess.Popen | None = None

    def _pick_ports(self) -> None:
        self.gateway_port = free_port()
        self.url = f"http://127.0.0.1:{self.gateway_port}/"
        self.mcp_port = free_port()
        self.mcp_url = f"http://127.0.0.1:{self.mcp_port}/mcp"
        self.args = [str(BIN / "tg-launch"), "--data-dir", str(self.data_dir),
                     "--broker-port", str(free_port()), "--gateway-port", str(self.gateway_port),
                     "--mcp-port", str(self.mcp_port), *self.extra]

    def start(self, timeout: float = 120.0) -> None:
        # A port found free can be taken by another test's process before tg-launch binds it
        # (parallel workers): then the start is tried again on new ports.
        for attempt in range(1, PORT_TRIES + 1):
            try:
                self._start_once(timeout)
                return
            except RuntimeError as e:
                if attempt == PORT_TRIES or "Address already in use" not in str(e):
                    raise
                self._pick_ports()

    def _start_once(self, timeout: float) -> None:
        out = open(self.log, "wb")
        self.proc = subprocess.Popen(self.args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        out.close()
        deadline = time.monotonic() + timeout
        while "all components ready" not in self.output():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"tg-launch did not come up:\n{self.output()}\n{self.child_logs()}")
            time.sleep(0.1)

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def broker_url(self) -> str:
        """The running stack's broker, as tg-launch wrote it for others to find."""
        return (self.data_dir / "pulsar-url").read_text().strip()

    def child_logs(self) -> str:
        logs = self.data_dir / "logs"
        return "\n".join(f"== {p.name}\n{p.read_text(errors='replace')[-3000:]}"
                         for p in sorted(logs.glob("*.log"))) if logs.exists() else ""

    def cli(self, command: str, *args: str, input: str | None = None, timeout: float = 60,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        full_env = {**os.environ, "TRUSTGRAPH_URL": self.url, **(env or {})}
        return subprocess.run([str(BIN / command), *args], input=input, capture_output=True, text=True,
                              timeout=timeout, env=full_env)

    def stop(self) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


@pytest.fixture(scope="module")
def stack_factory(tmp_path_factory):
    stacks: list[Stack] = []

    def make(*extra: str) -> Stack:
        s = Stack(tmp_path_factory.mktemp("stack") / "data", list(extra))
        s.start()
        stacks.append(s)
        return s

    yield make
    for s in stacks:
        s.stop()
