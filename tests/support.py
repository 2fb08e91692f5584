"""Helpers the tests share: where our commands are and how a test runs a process.

They live here, not in a conftest.py, because there are several conftest.py
files and ``from support import`` finds whichever pytest loaded last; a test
imports these as ``from support import BIN, Proc``.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import psutil
import pytest
from trustgraph.base.launching.broker import free_port
from trustgraph.launch.tool_services import registered

T = TypeVar("T")

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
#: tg-launch flags for a stack without the LLM, prompt, agent and MCP parts (starts in seconds).
LIGHT = ("--no-llm", "--no-prompt", "--no-agent", "--no-mcp-tool", "--no-mcp-server")
#: tg-launch flags that leave out every registered tool service (the joke service among them).
NO_TOOL_SERVICES = tuple(f"--no-{s.name}" for s in registered())
#: ... every one but the joke service, for a test whose dialogs or listings are about its tools:
#: a service added in-tree then changes neither what the model is shown nor what is listed.
ONLY_JOKE_SERVICE = tuple(f"--no-{s.name}" for s in registered() if s.name != "joke-service")
#: A DynamicToolService that announces itself (``--id``, ``-t``, ``--tool``), run as a process.
ANNOUNCING_SERVICE = REPO / "tests" / "integration" / "announcing_service.py"


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
        wait_for(f"{self.args[0]} ready file", ready_file.exists, timeout, detail=self.output,
                 gone=self.exited)

    def exited(self) -> str | None:
        """Why this process can no longer become ready (it exited), or None while it runs."""
        if self.p is not None and self.p.poll() is not None:
            return f"{self.args[0]} exited {self.p.returncode}"
        return None

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

    def __init__(self, log: Path, token: str | None = None, transport: str = "streamable-http",
                 revision: str = "both") -> None:
        self.port = free_port()
        self.token = token
        self.transport = transport
        self.revision = revision
        self.log = log
        self.proc: Proc | None = None
        path = "/sse" if transport == "sse" else "/mcp"
        self.url = f"http://127.0.0.1:{self.port}{path}"

    def start(self, timeout: float = 60.0) -> McpStandIn:
        from trustgraph.base.launching.broker import wait_for_port
        args = [sys.executable, str(self.SCRIPT), str(self.port), "--transport", self.transport,
                "--revision", self.revision]
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


#: Starts tried when a port picked free was taken by another process before tg-launch bound it.
PORT_TRIES = 3


class Stack:
    """A whole stack started by the real ``tg-launch`` (its own data directory and free ports)."""

    def __init__(self, data_dir: Path, extra: list[str], env: dict[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.extra = list(extra)
        #: Variables set for tg-launch (and so for every process it starts) beside this one's.
        self.env = dict(env or {})
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
            except pytest.fail.Exception as e:
                # The child's bind error, or tg-launch's own check of the gateway's port.
                if attempt == PORT_TRIES or "already in use" not in str(e):
                    raise
                self._pick_ports()

    def _start_once(self, timeout: float) -> None:
        out = open(self.log, "wb")
        self.proc = subprocess.Popen(self.args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env={**os.environ, **self.env} if self.env else None)
        out.close()
        try:
            wait_for("'all components ready' from tg-launch", lambda: "all components ready" in self.output(),
                     timeout, detail=lambda: f"{self.output()}\n{self.child_logs()}", gone=self.exited)
        except BaseException:
            self.stop()
            raise

    def exited(self) -> str | None:
        """Why the stack can no longer come up (tg-launch exited), or None while it runs."""
        if self.proc is not None and self.proc.poll() is not None:
            return f"tg-launch exited {self.proc.returncode}"
        return None

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



def bounded_llm(directory: Path, max_tokens: int) -> list[str]:
    """tg-launch flags that run the embedded model with at most ``max_tokens`` per answer.

    A real-model answer's length is the model's choice (up to the service's default of 512
    tokens); on a loaded machine an unbounded one can outlast a client's timeout.  The
    launcher's own ``llm`` component, with ``--max-output`` added, through its test hook
    ``--extra-components``: everything else about it (the status line, ``--model``) is
    what a user gets.
    """
    import dataclasses
    import json

    from trustgraph.launch.components import COMPONENTS
    llm = next(c for c in COMPONENTS if c.name == "llm" and c.llm == "embedded")
    item = {**dataclasses.asdict(llm), "args": [*llm.args, "--max-output", str(max_tokens)]}
    path = directory / f"llm-max-{max_tokens}.json"
    path.write_text(json.dumps([item]))
    return ["--extra-components", str(path)]


def status_line(output: str, name: str, start: str) -> bool:
    """Whether tg-launch's ``output`` has the status line of ``name`` starting with ``start``,
    whatever the column width (as wide as the longest component name shown)."""
    import re
    return re.search(rf"^  {re.escape(name)} +{re.escape(start)}", output, re.M) is not None


def launched(*flags: str) -> list[str]:
    """The components tg-launch starts with ``flags``: its own choice, so that a tool service
    registered later is counted without a test naming it."""
    from trustgraph.launch.launcher import Launcher, parse_args
    return [c.name for c in Launcher(parse_args([*flags, "--data-dir", "unused"])).selected()]


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid``, so a test can check none is left."""
    try:
        return {child.pid for child in psutil.Process(pid).children(recursive=True)}
    except psutil.NoSuchProcess:
        return set()


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# How often a wait looks again: often enough that a test ends soon after its event, rarely
# enough that the looking costs nothing beside a loaded machine's real work.
POLL_EVERY = 0.05


def _missed(what: str, timeout: float, detail: Callable[[], str] | None, why: str | None) -> NoReturn:
    reason = f"no {what}: {why}" if why else f"no {what} within {timeout:g}s"
    pytest.fail(reason + (f"\n{detail()}" if detail else ""))


def wait_for(what: str, probe: Callable[[], T], timeout: float = 60.0,
             detail: Callable[[], str] | None = None, gone: Callable[[], str | None] | None = None,
             every: float = POLL_EVERY) -> T:
    """Poll ``probe`` until it returns something truthy and return that.

    A wait for an event another process makes visible (a file, a log line, a count),
    never a pause: the test goes on the moment the event is there, so a slow machine
    only makes it slower, never wrong.  ``timeout`` is a bound on a hang, not a
    performance figure: past it the test fails naming ``what``, with ``detail()``
    (e.g. the processes' output).  ``gone()`` returns why the event can no longer come
    (the process that would make it exited), failing at once instead of at the timeout.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        why = gone() if gone else None
        if why or time.monotonic() > deadline:
            _missed(what, timeout, detail, why)
        time.sleep(every)


async def wait_for_async(what: str, probe: Callable[[], T | Awaitable[T]], timeout: float = 60.0,
                         detail: Callable[[], str] | None = None,
                         gone: Callable[[], str | None] | None = None, every: float = POLL_EVERY) -> T:
    """``wait_for`` inside an event loop: ``probe`` may be a plain or an async callable, and
    the loop keeps running between looks (so the event, when it is made in this process,
    can happen).  A probe that awaits a call (e.g. "until the service answers") should
    bound that call itself and return a falsy value when it times out."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        why = gone() if gone else None
        if why or time.monotonic() > deadline:
            _missed(what, timeout, detail, why)
        await asyncio.sleep(every)



async def answers_again(client: Any, what: str, timeout: float = 90.0,
                        detail: Callable[[], str] | None = None) -> str:
    """The response of the first call of ``client`` (a tool-service request/response client) that
    is answered, a fresh call (user ``after``, 5 s each) every half second for up to ``timeout``: a
    caller that must be answered again after its broker went and came back, or moved nodes.  On a
    miss the message says how the last call ended, then ``detail()``."""
    from trustgraph.schema import ToolServiceRequest

    last: list[str] = ["no call ended"]

    async def answered() -> str | None:
        try:
            return (await client.request(ToolServiceRequest(user="after"), timeout=5)).response
        except Exception as e:
            last[0] = f"{type(e).__name__}: {e}"
            return None

    def said() -> str:
        return f"the last call: {last[0]}" + (f"\n{detail()}" if detail else "")

    return await wait_for_async(what, answered, timeout, detail=said, every=0.5)


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


#: Our three distributions' ``trustgraph`` directories, whose sources the layout tests read.
SOURCE_ROOTS = [REPO / "trustgraph-base" / "trustgraph", REPO / "trustgraph-flow" / "trustgraph",
                REPO / "trustgraph-cli" / "trustgraph"]


def imported(source: str, package: str) -> Iterator[str]:
    """The absolute name of every module ``source`` imports, anywhere in it (a function's too), with
    relative imports resolved against ``package`` (``from .. import x`` names ``parent.x``)."""
    parts = package.split(".")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = parts[:len(parts) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            yield module
            yield from (f"{module}.{alias.name}" for alias in node.names)


def imports_of(path: Path) -> set[str]:
    """Every module the source file ``path`` (under one of :data:`SOURCE_ROOTS`) imports (:func:`imported`)."""
    root = next(r for r in SOURCE_ROOTS if path.is_relative_to(r))
    return set(imported(path.read_text(), ".".join(["trustgraph", *path.relative_to(root).parent.parts])))


__all__ = ["free_port", "Proc", "Stack", "LIGHT", "NO_TOOL_SERVICES", "ONLY_JOKE_SERVICE", "status_line", "launched", "ANNOUNCING_SERVICE", "McpStandIn", "REPO", "BIN", "wait_for", "wait_for_async", "POLL_EVERY", "descendants", "alive",
           "outside_data_blocks", "bootstrap_prompts", "bounded_llm", "SOURCE_ROOTS", "imported", "imports_of"]


def modules_after_import(*modules: str) -> set[str]:
    """The modules a fresh interpreter holds after importing ``modules``: for tests that a process
    does not carry a package it need not (its import cost, its memory)."""
    code = f"import sys, {', '.join(modules)}; print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())
