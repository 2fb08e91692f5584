"""kill -9 of every component mid-traffic, the broker included: every call ends, the stack recovers.

A stack launched by the real ``tg-launch`` (scripted model, the joke tool
service) on a broker of the test's own, with agent requests from several
clients through the gateway all along.  Each component in turn is killed
with SIGKILL (tg-launch restarts it; the broker the test brings back
itself), and the scenario measures the time from the kill to the first
success of a request sent after it, the requests that got no answer within
their bound (lost) and those still waiting past it (hung).

Before the fix, requests lost with a dead process held prompt-template's
and the agent's slots until their 120 s deadlines: fresh agent requests
failed for about 100 s after the LLM service came back.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time

import aiohttp
import psutil
import pytest
from recorded_calls import RecordedCalls
from support import BIN, wait_for_async
from trustgraph.base.launching.broker import EmbeddedBroker, free_port

CLIENTS = 4
BOUND = 150.0        # a request's own bound: the gateway's 120 s deadline and a margin; past it: hung
RECOVERY = 10.0      # what must hold: a fresh success within 10 s of a single crash
GIVE_UP = 90.0       # per kill, how long the scenario waits for a fresh success at all
QUESTION = "Tell me a joke about cats"
ACTION = json.dumps({"action": "tell-joke", "args": {"topic": "cats"}})
# (row name, the console script whose process is killed); the broker is the test's own.
VICTIMS = [("LLM service", "text-completion-scripted"), ("prompt-template", "prompt-template"),
           ("agent", "agent-manager-react"), ("joke tool service", "joke-service"),
           ("config-svc", "config-svc"), ("api-gateway", "api-gateway"), ("broker", None)]


def _children(pid: int) -> dict[int, list[str]]:
    """Every live descendant of ``pid`` with its command line."""
    found: dict[int, list[str]] = {}
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return found
    for child in children:
        try:
            found[child.pid] = child.cmdline()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def _pid_of(launcher: subprocess.Popen, command: str) -> int:
    for pid, argv in _children(launcher.pid).items():
        if any(a.endswith("/" + command) or a == command for a in argv[:2]):
            return pid
    raise AssertionError(f"no {command} process under tg-launch")


class Traffic(RecordedCalls):
    """Agent requests from several clients, each sent as soon as the last one ended."""

    def __init__(self, url: str) -> None:
        super().__init__()   # outcomes: ok | error | lost | hung
        self.url = url + "api/v1/flow/default/service/agent"

    async def _one(self, http: aiohttp.ClientSession) -> None:
        sent = time.monotonic()
        try:
            async with asyncio.timeout(BOUND):
                async with http.post(self.url, json={"question": QUESTION, "user": "alice"}) as r:
                    body = await r.json(content_type=None)
            err = body.get("error") if isinstance(body, dict) else "not JSON"
            if err is None and body.get("answer"):
                outcome = "ok"
            elif isinstance(err, dict) and err.get("message") == "Timeout":
                outcome = "lost"  # waited its whole deadline for nothing
            else:
                outcome = "error"
        except TimeoutError:
            outcome = "hung"
        except (aiohttp.ClientError, ValueError):
            outcome = "error"  # e.g. the gateway itself is down: refused at once
        self.record(sent, time.monotonic(), outcome)
        if outcome != "ok":
            await asyncio.sleep(0.2)  # pace retries of a failing stack (load shaping, not synchronisation)

    async def run(self) -> None:
        async with aiohttp.ClientSession() as http:
            async def client() -> None:
                while not self._stop:
                    await self._one(http)
            await asyncio.gather(*(client() for _ in range(CLIENTS)))


@pytest.mark.long
@pytest.mark.timeout(1200)
async def test_kill_9_of_every_component_mid_traffic(tmp_path, scenario):
    broker = EmbeddedBroker(tmp_path / "broker")
    broker.start()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [{"match": f"Question: {QUESTION}", "reply": ACTION}],
                                  "default": "no rule matched"}))
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    log = tmp_path / "tg-launch.out"
    with open(log, "wb") as out:
        launcher = subprocess.Popen(
            [str(BIN / "tg-launch"), "--data-dir", str(tmp_path / "data"), "-p", broker.url,
             "--gateway-port", str(port), "--llm", "scripted", "--llm-script", str(script),
             "--no-mcp-server", "--no-mcp-tool", "--no-metrics"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, "TRUSTGRAPH_URL": url})
    traffic = Traffic(url)
    runner: asyncio.Task | None = None
    rows = []
    try:
        await wait_for_async("'all components ready' from tg-launch",
                             lambda: "all components ready" in log.read_text(errors="replace"), 180,
                             detail=lambda: log.read_text(errors="replace"),
                             gone=lambda: None if launcher.poll() is None else f"tg-launch exited {launcher.poll()}",
                             every=0.2)
        runner = asyncio.ensure_future(traffic.run())
        assert await traffic.wait_fresh_success(time.monotonic() - 1, 60) is not None, "no success before faults"
        for name, command in VICTIMS:
            killed = time.monotonic()
            if command is None:
                broker.kill()
                broker.start()
            else:
                os.kill(_pid_of(launcher, command), signal.SIGKILL)
            recovery = await traffic.wait_fresh_success(killed, GIVE_UP)
            print(f"kill -9 {name}: first fresh success after {recovery} s", flush=True)
            rows.append((name, killed, recovery))
        traffic.stop()
        await asyncio.wait_for(runner, BOUND + 10)  # every request ends: answered, refused, lost or hung
    finally:
        traffic.stop()
        if runner is not None and not runner.done():
            runner.cancel()
        launcher.send_signal(signal.SIGTERM)
        try:
            launcher.wait(60)
        except subprocess.TimeoutExpired:
            launcher.kill()
            launcher.wait()
        broker.stop()
    failures = []
    kills = [killed for _, killed, _ in rows] + [float("inf")]
    for i, (name, killed, recovery) in enumerate(rows):
        # A kill's requests: those in flight when it came, and those sent before the next one.
        mine = [o for sent, ended, o in traffic.results
                if (sent < killed < ended) or (killed <= sent < kills[i + 1])]
        lost, hung, errors = (sum(1 for o in mine if o == kind) for kind in ("lost", "hung", "error"))
        ok = recovery is not None and recovery <= RECOVERY and lost == 0 and hung == 0
        scenario(scenario=f"kill -9: {name}", load=f"agent requests from {CLIENTS} clients through the gateway",
                 fault=f"SIGKILL of {name} mid-traffic" + (" (brought back at once)" if name == "broker"
                                                           else " (tg-launch restarts it)"),
                 expected=f"a fresh request succeeds within {RECOVERY:.0f} s; none lost or hung",
                 observed=(f"first fresh success after {recovery:.1f} s" if recovery is not None
                           else f"no fresh success within {GIVE_UP:.0f} s") + f"; {errors} error replies",
                 recovery_s=recovery, lost=lost, hung=hung, ok=ok)
        if not ok:
            failures.append(f"{name}: recovery {recovery}, lost {lost}, hung {hung}")
    assert not failures, failures
