"""Helpers the tests share: where our commands are and how a test runs a process.

They live here, not in a conftest.py, because there are several conftest.py
files and ``from support import`` finds whichever pytest loaded last; a test
imports these as ``from support import BIN, Proc``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from trustgraph.base.launching.broker import free_port

T = TypeVar("T")

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


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
        from trustgraph.base.launching.broker import wait_for_port
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


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc), so a test can check none is left."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(what: str, probe: Callable[[], T], timeout: float = 60.0,
             detail: Callable[[], str] | None = None) -> T:
    """Poll ``probe`` until it returns something truthy and return that: a wait for an event
    another process makes visible (a file, a log line, a count), never a pause; past
    ``timeout`` the test fails naming ``what``, with ``detail()`` (e.g. the processes' output)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {timeout:.0f}s" + (f"\n{detail()}" if detail else ""))
        time.sleep(0.05)


def bootstrap_prompts() -> Any:
    """The prompt config tg-launch loads from config-examples/bootstrap.json, as a ``PromptSet``."""
    import json

    from trustgraph.prompt.template.templates import PromptSet
    examples = REPO / "config-examples"
    boot = json.loads((examples / "bootstrap.json").read_text())
    values = {k: json.dumps(v) for k, v in boot["config"]["prompt"].items()}
    for key, name in boot["files"].items():
        if key.startswith("prompt/"):
            values[key.split("/", 1)[1]] = (examples / name).read_text()
    prompts = PromptSet.from_config(values)
    assert prompts.errors == {}
    return prompts


def outside_data_blocks(text: str, open_tag: str = "<tool-data>", close_tag: str = "</tool-data>") -> str:
    """``text`` with every block between ``open_tag`` and ``close_tag`` left out (the tags too).

    Fails the test when the tags do not pair up: a block opened inside
    another, a close with no open, or a block never closed (what a forged
    tag in a tool's text would do to a prompt).
    """
    outside: list[str] = []
    at = 0
    while True:
        start, stray = text.find(open_tag, at), text.find(close_tag, at)
        if stray != -1 and (start == -1 or stray < start):
            pytest.fail(f"{close_tag} without {open_tag} at {stray}: {text[max(0, stray - 80):stray + 80]!r}")
        if start == -1:
            outside.append(text[at:])
            return "".join(outside)
        outside.append(text[at:start])
        end = text.find(close_tag, start + len(open_tag))
        nested = text.find(open_tag, start + len(open_tag))
        if end == -1 or (nested != -1 and nested < end):
            pytest.fail(f"{open_tag} at {start} not closed before the next: {text[start:start + 160]!r}")
        at = end + len(close_tag)


__all__ = ["free_port", "Proc", "McpStandIn", "REPO", "BIN", "wait_for", "descendants", "alive",
           "outside_data_blocks", "bootstrap_prompts"]
