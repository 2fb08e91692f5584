"""The running stack of the agent-quality table, and how the table talks to it.

* :class:`Stack`: the real ``tg-launch`` (the repo's bootstrap, at most
  :data:`MAX_ITERATIONS` steps per dialog, an LLM chosen by its flags: the
  embedded model, a user's GGUF with ``--model PATH``, or the scripted stand-in)
  on a fresh data directory with free ports, and the tool services of
  ``bench/agent/quality_services.py`` started beside it as a user starts the
  weather example of docs/tool-services.md (``-p <the stack's broker> --no-metrics``);
* :func:`ask`: one question over the gateway's websocket, streaming, as
  ``tg-invoke-agent -v`` asks (``show_actions``, so each tool call is seen);
* :func:`wait_tools`: until the gateway's catalog and the agent both have a
  set's tools (and none that the set must not see);
* :func:`warm_up`: unrecorded dialogs until a mode is in effect after a
  template push (and the model and the agent's clients are warm).

Every wait has a deadline, every process is stopped by :meth:`Stack.stop`
(the caller's ``finally``), and everything listens on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import aiohttp
import psutil
from quality_scoring import Dialog

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SERVICES_PY = BENCH / "agent" / "quality_services.py"
BOOTSTRAP = REPO / "config-examples" / "bootstrap.json"
STRUCTURED_TEMPLATE = REPO / "config-examples" / "prompt-agent-react.json"
TEXT_TEMPLATE = REPO / "config-examples" / "prompt-agent-react-text.json"
#: How the table names the LLMs of its rows (a user's model: its file name).
EMBEDDED = "SmolLM2-135M (embedded)"
SCRIPTED = "scripted (right answers)"
MAX_ITERATIONS = 6
FLOW = "default"
USER = "bench"
DIALOG_TIMEOUT = 120.0   # the gateway's own deadline for a call is 120 s
STACK_TIMEOUT = 240.0    # tg-launch to "all components ready" (loads the model)


def _venv_bin() -> Path:
    """Where the console scripts are: beside this interpreter, else the checkout's .venv."""
    here = Path(sys.executable).parent
    return here if (here / "tg-launch").exists() else REPO / ".venv" / "bin"


VENV_BIN = _venv_bin()


class QualityBenchError(RuntimeError):
    """A process did not start or the stack did not get ready; says which, with its log."""


# -- processes ---------------------------------------------------------------------------
def free_port() -> int:
    from trustgraph.base.launching.broker import free_port as _free
    return _free()


def _descendants(pid: int) -> list[int]:
    """Every live process below ``pid``, children first."""
    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


class Child:
    """One process the bench started, its output in ``log``; :meth:`stop` ends it and what it started."""

    def __init__(self, name: str, args: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.log = log
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "wb") as out:
            self.p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      cwd=str(REPO), env={**os.environ, **(env or {})})

    def output(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self, grace: float) -> None:
        """SIGTERM and ``grace`` seconds to exit; then SIGKILL, it and the processes it left."""
        if self.p.poll() is not None:
            return
        self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(grace)
        except subprocess.TimeoutExpired:
            print(f"  warning: {self.name} did not stop within {grace:g} s; killing it", flush=True)
            below = _descendants(self.p.pid)  # still its children: only what it started, by pid
            self.p.kill()
            for pid in below:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.p.wait()


class Stack:
    """``tg-launch`` on a fresh data directory, with free ports, and the bench's tool services.

    ``llm_args`` are tg-launch's flags for the LLM: none for the embedded
    model, ``--model PATH`` for a user's own GGUF, ``--llm scripted
    --llm-script FILE`` for the stand-in.
    """

    def __init__(self, work: Path, llm_args: Iterable[str] = ()) -> None:
        self.work = work
        self.data = work / "data"
        self.llm_args = list(llm_args)
        self.gateway_port = free_port()
        self.gateway = f"http://127.0.0.1:{self.gateway_port}/"
        self.args = [str(VENV_BIN / "tg-launch"), "--data-dir", str(self.data),
                     "--broker-port", str(free_port()), "--gateway-port", str(self.gateway_port),
                     "--mcp-port", str(free_port()), "--max-iterations", str(MAX_ITERATIONS),
                     "--bootstrap", str(BOOTSTRAP), *self.llm_args]
        self.launch: Child | None = None
        self.services: list[Child] = []

    @property
    def command(self) -> str:
        """The tg-launch command line, as the notes show it (ports and paths generic)."""
        llm = []
        for arg in self.llm_args:   # a path is shown by its file name only
            llm.append(Path(arg).name if os.sep in arg else arg)
        return " ".join(["tg-launch --data-dir <temp dir> --broker-port <free> --gateway-port <free>",
                         f"--mcp-port <free> --max-iterations {MAX_ITERATIONS}",
                         "--bootstrap config-examples/bootstrap.json", *llm])

    def start(self, timeout: float = STACK_TIMEOUT) -> None:
        self.launch = Child("tg-launch", self.args, self.work / "tg-launch.out")
        deadline = time.monotonic() + timeout
        while "all components ready" not in self.launch.output():
            if self.launch.p.poll() is not None:
                raise QualityBenchError(f"tg-launch {' '.join(self.llm_args)} exited with "
                                        f"{self.launch.p.returncode}:\n{self.launch.output()[-3000:]}")
            if time.monotonic() > deadline:
                raise QualityBenchError(f"tg-launch not ready after {timeout:.0f} s:\n"
                                        f"{self.launch.output()[-3000:]}\n{self.child_logs()}")
            time.sleep(0.1)

    def check_alive(self) -> None:
        """Raise :class:`QualityBenchError` when tg-launch or a service has exited under the run."""
        for child in ([self.launch] if self.launch else []) + self.services:
            if child.p.poll() is not None:
                raise QualityBenchError(f"{child.name} exited with {child.p.returncode} during the run:\n"
                                        f"{child.output()[-3000:]}")

    def broker_url(self) -> str:
        return (self.data / "pulsar-url").read_text().strip()

    def child_logs(self) -> str:
        logs = self.data / "logs"
        return "\n".join(f"== {p.name}\n{p.read_text(errors='replace')[-1500:]}"
                         for p in sorted(logs.glob("*.log"))) if logs.exists() else ""

    def start_services(self, names: Iterable[str], timeout: float = 60.0) -> None:
        """Services of quality_services.py (``--service`` names), as a user starts one; until each is ready."""
        url = self.broker_url()
        ready: list[tuple[Child, Path]] = []
        for name in names:
            flag = self.work / "ready" / name
            flag.parent.mkdir(parents=True, exist_ok=True)
            flag.unlink(missing_ok=True)
            child = Child(f"{name}-service", [sys.executable, str(SERVICES_PY), "--service", name,
                                              "-p", url, "--no-metrics"],
                          self.work / "logs" / f"{name}-service.log", env={"TG_READY_FILE": str(flag)})
            self.services.append(child)
            ready.append((child, flag))
        deadline = time.monotonic() + timeout
        for child, flag in ready:
            while not flag.exists():
                if child.p.poll() is not None:
                    raise QualityBenchError(f"{child.name} exited with {child.p.returncode}:\n"
                                            f"{child.output()[-3000:]}")
                if time.monotonic() > deadline:
                    raise QualityBenchError(f"{child.name} not ready after {timeout:.0f} s:\n"
                                            f"{child.output()[-3000:]}")
                time.sleep(0.05)

    def _tools_line(self) -> tuple[str, int] | None:
        """The agent's last ``Tools: a, b (N tool(s), ...)`` log line: its list and its count."""
        try:
            text = (self.data / "logs" / "agent.log").read_text(errors="replace")
        except OSError:
            return None
        lines = re.findall(r"Tools: (.*) \((\d+) tool\(s\), \d+ announced", text)
        return (lines[-1][0], int(lines[-1][1])) if lines else None

    def agent_tools(self) -> set[str]:
        """The tools the agent last said it has."""
        line = self._tools_line()
        return {t.strip() for t in line[0].split(",")} if line else set()

    def agent_tool_count(self) -> int:
        """How many tools the agent last said it has (the list itself is cut in a long log line)."""
        line = self._tools_line()
        return line[1] if line else 0

    def stop(self) -> None:
        for child in reversed(self.services):
            child.stop(10.0)
        self.services = []
        if self.launch is not None:
            self.launch.stop(60.0)
            self.launch = None


# -- talking to it ------------------------------------------------------------------------
async def ask(session: aiohttp.ClientSession, gateway: str, question: str,
              timeout: float = DIALOG_TIMEOUT) -> Dialog:
    """One question over ``GET /api/v1/socket``, streaming, as tg-invoke-agent asks it.

    The envelope's ``deadline`` tells the gateway (and the agent behind it)
    when this client stops waiting; the client itself waits 5 s longer, so a
    dialog nobody ends is cut off here and counted as a transport timeout.
    """
    rid = str(uuid.uuid4())
    envelope = {"id": rid, "service": "agent", "flow": FLOW,
                "request": {"question": question, "user": USER, "streaming": True,
                            "show_actions": True},
                "deadline": round(time.time() + timeout, 3)}
    d = Dialog(question)
    ws_url = "ws" + gateway[4:] + "api/v1/socket"
    t0 = time.perf_counter()
    try:
        async with session.ws_connect(ws_url, max_msg_size=0, heartbeat=30) as ws:
            await ws.send_str(json.dumps(envelope))
            async with asyncio.timeout(timeout + 5.0):
                async for frame in ws:
                    if frame.type != aiohttp.WSMsgType.TEXT:
                        if frame.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                            break
                        continue
                    msg = json.loads(frame.data)
                    if msg.get("id") not in (rid, None):
                        continue
                    if "error" in msg:
                        d.socket_failed(msg["error"])
                        break
                    d.feed(msg.get("response") or {})
                    if msg.get("complete"):
                        break
    except TimeoutError:
        d.no_end(timeout + 5.0)
    except aiohttp.ClientError as e:
        d.error = d.error or f"websocket: {e}"
    d.finish()
    d.secs = time.perf_counter() - t0
    return d


async def _catalog(session: aiohttp.ClientSession, gateway: str) -> dict[str, Any]:
    async with session.get(gateway + "api/v1/tool-catalog", timeout=aiohttp.ClientTimeout(total=10)) as r:
        return await r.json()


async def wait_tools(session: aiohttp.ClientSession, stack: Stack, tools: Iterable[str],
                     unwanted: Iterable[str] = (), timeout: float = 60.0) -> dict[str, dict[str, Any]]:
    """Until the gateway's catalog lists ``tools``, usable and live, and the agent has them too;
    returns each tool's catalog entry.  A tool of ``unwanted`` in either is an error (a set must
    be asked of its own tools only)."""
    tools, unwanted = list(tools), set(unwanted)
    deadline = time.monotonic() + timeout
    while True:
        try:
            body = await _catalog(session, stack.gateway)
            seen = {t.get("name"): t for t in body.get("tools", [])}
        except (aiohttp.ClientError, TimeoutError, ValueError):
            seen = {}
        extra = (set(seen) | stack.agent_tools()) & unwanted
        if extra:
            raise QualityBenchError(f"tools {sorted(extra)} are there, but this question set must be asked "
                                    f"without them (it has {tools})")
        usable = {n for n, t in seen.items() if not t.get("errors") and t.get("live") is not False
                  and isinstance(t.get("input-schema"), dict)}
        if usable >= set(tools) and stack.agent_tools() >= set(tools):
            return {n: seen[n] for n in tools}
        if time.monotonic() > deadline:
            raise QualityBenchError(
                f"the tools were not all there within {timeout:g} s: catalog has {sorted(usable)}, "
                f"agent has {sorted(stack.agent_tools())}, wanted {tools}\n{stack.child_logs()}")
        await asyncio.sleep(0.1)


async def warm_up(session: aiohttp.ClientSession, gateway: str, mode: str, question: str,
                  timeout: float = 120.0) -> int:
    """Unrecorded dialogs until one shows ``mode`` (text: its first message is a thought;
    structured: no thought at all), bounded; returns how many it took.  After a template push the
    prompt service reloads on its own time, so the first dialogs may still show the old mode."""
    deadline = time.monotonic() + timeout
    tries = 0
    while True:
        tries += 1
        d = await ask(session, gateway, question, timeout=max(5.0, min(DIALOG_TIMEOUT, deadline - time.monotonic())))
        thoughts = any(k == "thought" for k, _ in d.messages)
        if d.messages and (d.first_kind == "thought" if mode == "text" else not thoughts):
            return tries
        if time.monotonic() > deadline:
            raise QualityBenchError(f"{mode} mode not in effect within {timeout:g} s ({tries} warm-up "
                                    f"dialogs; the last: messages {d.messages[:3]!r}, error {d.error!r})")
        await asyncio.sleep(0.5)


async def put_template(stack: Stack, path: Path) -> None:
    """What a user types: ``tg-put-config-item prompt/template.agent-react --file <path>``."""
    proc = await asyncio.create_subprocess_exec(
        str(VENV_BIN / "tg-put-config-item"), "-u", stack.gateway, "prompt/template.agent-react",
        "--file", str(path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise QualityBenchError("tg-put-config-item did not finish within 60 s") from None
    if proc.returncode != 0:
        raise QualityBenchError(f"tg-put-config-item failed ({proc.returncode}): {out.decode(errors='replace')}")
