"""tg-launch keeps its processes up: real tg-launch, real children, real kills.

The children are stand-ins (``launch_stand_in.py``) added through tg-launch's
hidden ``--extra-components`` hook, next to a real broker and config-svc;
the broker test uses the real stack.  Each test has its own stack.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
import support
from support import Stack, alive, descendants
from trustgraph.base.launching.stack import read_components
from trustgraph.launch.supervisor import RestartPolicy

STAND_IN = Path(__file__).with_name("launch_stand_in.py")
# Only the broker and config-svc of the real stack, unless a test wants more.
MINIMAL = ("--no-llm", "--no-prompt", "--no-agent", "--no-api-gateway", *support.NO_TOOL_SERVICES,
           "--no-bootstrap")
T = TypeVar("T")


def wait_for(what: str, probe: Callable[[], T], stack: Stack, timeout: float = 60.0) -> T:
    """support.wait_for, failing with the stack's output and errors."""
    return support.wait_for(what, probe, timeout, detail=lambda: f"{stack.output()}\n{stack.errors()}")


class Launch(Stack):
    """A Stack whose tg-launch stderr is kept apart, to check what goes there."""

    def __init__(self, tmp: Path, extra: list[str], env: dict[str, str] | None = None) -> None:
        super().__init__(tmp / "data", extra)
        self.err = tmp / "tg-launch.err"
        self.env = {**os.environ, **(env or {})}

    def start(self, timeout: float = 120.0) -> None:
        with open(self.log, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(self.args, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                         env=self.env)
        wait_for("'all components ready'", lambda: "all components ready" in self.output()
                 or self.proc.poll() is not None, self, timeout)
        assert self.proc.poll() is None, f"tg-launch exited:\n{self.output()}\n{self.errors()}"

    def errors(self) -> str:
        return self.err.read_text(errors="replace") if self.err.exists() else ""

    def line(self, name: str) -> str:
        """The status line of ``name`` as printed at start-up (it must be there)."""
        found = [ln for ln in self.output().splitlines() if ln.startswith(f"  {name} ")]
        assert found, self.output()
        return found[0]

    def shown(self, name: str) -> int:
        return self.output().splitlines().count(self.line(name))


class StandIn:
    """One stand-in component: its definition and the pids of its starts."""

    def __init__(self, tmp: Path, name: str, *args: str, essential: bool = False) -> None:
        self.name = name
        self.runs_file = tmp / f"{name}.runs"
        self.go = tmp / f"{name}.go"
        self.definition = {"name": name, "command": sys.executable, "essential": essential,
                           "listens": f"stand-in {name}",
                           "args": [str(STAND_IN), "--runs", str(self.runs_file), *args]}

    def pids(self) -> list[int]:
        return [int(p) for p in self.runs_file.read_text().split()] if self.runs_file.exists() else []

    def kill(self) -> None:
        os.kill(self.pids()[-1], signal.SIGKILL)


def launch(tmp: Path, stand_ins: list[StandIn], *flags: str, env: dict[str, str] | None = None) -> Launch:
    components = tmp / "components.json"
    components.write_text(json.dumps([s.definition for s in stand_ins]))
    stack = Launch(tmp, [*flags, "--extra-components", str(components)], env)
    stack.start()
    return stack


def started_at(pid: int) -> float:
    """When ``pid`` was started, in seconds since boot (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[19]) / os.sysconf("SC_CLK_TCK")


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.fixture
def stacks():
    made: list[Launch] = []
    yield made
    for s in made:
        s.stop()


def test_children_killed_together_come_back_in_parallel_and_show_once_ready(tmp_path, stacks):
    a = StandIn(tmp_path, "stand-in-a", "--hold", str(tmp_path / "stand-in-a.go"))
    b = StandIn(tmp_path, "stand-in-b", "--hold", str(tmp_path / "stand-in-b.go"))
    s = launch(tmp_path, [a, b], *MINIMAL, "--backoff", "4")
    stacks.append(s)
    assert (s.shown(a.name), s.shown(b.name)) == (1, 1)
    a.kill()
    b.kill()
    wait_for("restart of both", lambda: len(a.pids()) == 2 and len(b.pids()) == 2, s)
    for x in (a, b):
        assert f"tg-launch: {x.name} was killed by SIGKILL; restart 1/5 in 4s" in s.output()
    # Both back-offs ran at once: one after the other would start them 4 s or more apart
    # (the margin is for a loaded machine, where the two starts may drift apart).
    assert abs(started_at(a.pids()[1]) - started_at(b.pids()[1])) < 3
    # Running is not ready: neither is shown again until it serves.
    assert (s.shown(a.name), s.shown(b.name)) == (1, 1)
    b.go.touch()
    wait_for(f"{b.name} shown again", lambda: s.shown(b.name) == 2, s)
    assert s.shown(a.name) == 1
    a.go.touch()
    wait_for(f"{a.name} shown again", lambda: s.shown(a.name) == 2, s)
    assert s.proc.poll() is None and s.stop() == 0


def test_sigterm_during_a_back_off_stops_at_once(tmp_path, stacks):
    a = StandIn(tmp_path, "stand-in")
    s = launch(tmp_path, [a], *MINIMAL, "--backoff", "30")
    stacks.append(s)
    kids = descendants(s.proc.pid)
    a.kill()
    wait_for("restart notice", lambda: "restart 1/5 in 30s" in s.output(), s)
    began = time.monotonic()
    s.proc.send_signal(signal.SIGTERM)
    # A back-off that blocked the launcher would hold the stop for 30 s.
    assert s.proc.wait(timeout=60) == 0
    assert time.monotonic() - began < 15, s.output()
    assert len(a.pids()) == 1
    wait_for("every child gone", lambda: not [p for p in kids if alive(p)], s)


def test_give_up_is_loud_and_an_essential_one_stops_the_stack(tmp_path, stacks):
    steady = StandIn(tmp_path, "steady")
    flaky = StandIn(tmp_path, "flaky", "--up-runs", "1", "--fail", "after-ready")
    vital = StandIn(tmp_path, "vital", "--up-runs", "1", "--fail", "before-ready", essential=True)
    stable = 3.0
    s = launch(tmp_path, [steady, flaky, vital], *MINIMAL, "--max-restarts", "2", "--backoff", "0.5",
               "--stable-after", str(stable))
    stacks.append(s)
    kids = descendants(s.proc.pid)

    # flaky comes back ready but dies at once, each time: not stable, so given up on.
    flaky.kill()
    steady.kill()
    gave_up = wait_for("give-up line", lambda: [ln for ln in s.errors().splitlines()
                                                if "giving up on flaky" in ln], s)
    assert len(gave_up) == 1
    assert "after 2 restarts" in gave_up[0] and str(s.data_dir / "logs" / "flaky.log") in gave_up[0]
    assert "the rest keeps running" in gave_up[0]
    assert s.proc.poll() is None and len(flaky.pids()) == 3

    # steady, up for the stable period after its restart, starts its count again.
    wait_for("steady shown again", lambda: s.shown(steady.name) == 2, s)
    back = time.monotonic()
    time.sleep(max(0.0, back + stable + 0.5 - time.monotonic()))  # the period itself is under test
    steady.kill()
    wait_for("steady shown a third time", lambda: s.shown(steady.name) == 3, s)
    notices = [ln for ln in s.output().splitlines() if ln.startswith("tg-launch: steady ")]
    assert len(notices) == 2 and all("restart 1/2 " in ln for ln in notices), notices

    # vital never comes back: the launcher stops everything and fails.
    vital.kill()
    wait_for("tg-launch exit", lambda: s.proc.poll() is not None, s)
    assert s.proc.returncode != 0
    gave_up = [ln for ln in s.errors().splitlines() if "giving up on vital" in ln]
    assert len(gave_up) == 1 and "after 2 restarts" in gave_up[0] and "stopping the stack" in gave_up[0]
    assert "(it exited with code 3 before it was ready)" in gave_up[0]
    assert len(vital.pids()) == 3 and "tg-launch: stopping" in s.output()
    wait_for("every child gone", lambda: not [p for p in kids if alive(p)], s)


def test_broker_killed_is_restarted_on_its_port_and_the_stack_recovers(tmp_path, stacks):
    s = Launch(tmp_path, ["--no-llm", "--no-prompt", "--no-agent"])
    s.start()
    stacks.append(s)
    first = s.line("broker")
    brokers = [p for p in descendants(s.proc.pid) if b"pulsar-lite" in cmdline(p)]
    assert len(brokers) == 1
    os.kill(brokers[0], signal.SIGKILL)
    wait_for("broker shown again", lambda: s.shown("broker") == 2, s)
    assert "tg-launch: broker was killed by SIGKILL; restart 1/5 in 2s" in s.output()
    # Same line: same port and data directory.  The dead one is reaped, not a zombie.
    assert [ln for ln in s.output().splitlines() if ln.startswith("  broker ")] == [first, first]
    assert brokers[0] not in descendants(s.proc.pid)
    # The processors reconnect by themselves: a call through gateway and joke-service works.
    # A call sent before joke-service has subscribed again is lost (non-persistent
    # topic), hence short calls, retried.
    wait_for("a tool call through the restarted broker",
             lambda: s.cli("tg-invoke-tool-service", "-n", "tell-joke", "-a", "topic=cats",
                           "--timeout", "3").returncode == 0, s)
    assert s.stop() == 0


SERVED_FOR = 15.0


def test_a_broker_that_came_back_and_served_is_not_counted_twice(tmp_path, stacks):
    """Killed again after it came back and served, the broker starts its count again: counted over
    a minute, two kills within it once stood at 4 of 5, one death from stopping the whole stack,
    though it had served in between (issue 35)."""
    assert RestartPolicy.stable_after < SERVED_FOR
    s = Launch(tmp_path, [f for f in MINIMAL if f != "--no-api-gateway"])
    s.start()
    stacks.append(s)

    def served() -> bool:
        try:
            return s.cli("tg-show-config", timeout=20).returncode == 0
        except subprocess.TimeoutExpired:
            return False

    for kill in (1, 2):
        brokers = [p for p in descendants(s.proc.pid) if b"pulsar-lite" in cmdline(p)]
        assert len(brokers) == 1
        os.kill(brokers[0], signal.SIGKILL)
        wait_for(f"broker shown again after kill {kill}", lambda k=kill: s.shown("broker") == k + 1, s)
        back = time.monotonic()
        wait_for("config through the gateway and the restarted broker", served, s)
        if kill == 1:
            # Up and serving for 15 s, well within a minute: the period itself is under test.
            time.sleep(max(0.0, back + SERVED_FOR - time.monotonic()))
    notices = [ln for ln in s.output().splitlines() if ln.startswith("tg-launch: broker ")]
    assert len(notices) == 2 and all("; restart 1/5 in 2s " in ln for ln in notices), notices
    states = read_components(s.data_dir / "run" / "components.json")
    assert states is not None and states["broker"]["state"] == "up" and states["broker"]["restarts"] == 1, states
    assert s.stop() == 0


def health(stack: Launch, token: str | None = None) -> dict:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(stack.url + "api/v1/health", headers=headers)
    with urllib.request.urlopen(request, timeout=30) as resp:
        return json.loads(resp.read())


def test_the_health_endpoint_shows_restarts_and_a_component_given_up_on(tmp_path, stacks):
    held = StandIn(tmp_path, "held", "--hold", str(tmp_path / "held.go"))
    flaky = StandIn(tmp_path, "flaky", "--up-runs", "1", "--fail", "before-ready")
    with_gateway = [f for f in MINIMAL if f != "--no-api-gateway"]
    s = launch(tmp_path, [held, flaky], *with_gateway, "--max-restarts", "1", "--backoff", "0.2",
               env={"GATEWAY_SECRET": "health-token"})
    stacks.append(s)
    first = health(s, "health-token")
    assert first["status"] == "ok" and first["given-up"] == []
    assert {name: c["state"] for name, c in first["components"].items()} == {
        name: "up" for name in ("broker", "config-svc", "api-gateway", "mcp-tool", "mcp-server", "held", "flaky")}

    # A restart that is not ready yet shows as restarting, with why it restarts.
    held.kill()
    wait_for("held restarted", lambda: len(held.pids()) == 2, s)
    during = health(s, "health-token")["components"]["held"]
    assert during["state"] == "restarting" and during["reason"] == "was killed by SIGKILL", during
    held.go.touch()
    wait_for("held up again", lambda: health(s, "health-token")["components"]["held"]["state"] == "up", s)

    # Given up on: printed on stderr, and the health endpoint says so until tg-launch stops.
    flaky.kill()
    wait_for("give-up line", lambda: "giving up on flaky" in s.errors(), s)
    after = health(s, "health-token")
    assert after["status"] == "degraded" and after["given-up"] == ["flaky"], after
    gone = after["components"]["flaky"]
    assert gone["state"] == "given-up" and gone["restarts"] == 1
    assert gone["reason"] == "exited with code 3 before it was ready"
    assert gone["log"] == str(s.data_dir / "logs" / "flaky.log")
    # Without the token: the verdict and counts, no names or paths.
    anonymous = health(s)
    assert anonymous["status"] == "degraded" and "given-up" not in anonymous
    assert anonymous["components"] == {"given-up": 1, "up": 6}
    assert s.proc.poll() is None and s.stop() == 0
    assert not (s.data_dir / "run" / "components.json").exists()


@pytest.mark.parametrize("to", ["the group", "make alone"])
def test_ctrl_c_during_start_up_through_make_run_is_a_clean_stop(tmp_path, to):
    """A stop asked for while the stack starts is no error: one line, and tg-launch exits 0 (so
    make has no "Error" to print; make itself then ends as interrupted, as for any Ctrl-C).  It
    comes as a terminal's Ctrl-C does (SIGINT to the process group: the children get it too) or
    as a script's ``kill -INT`` of make's own pid (which make passes on to nobody)."""
    slow = StandIn(tmp_path, "slow", "--never-ready")
    components = tmp_path / "components.json"
    components.write_text(json.dumps([slow.definition]))
    ports = Launch(tmp_path, [*MINIMAL, "--extra-components", str(components)])
    out, err = tmp_path / "make.out", tmp_path / "make.err"
    # The project's own `make run`, without its install step, with this test's venv.
    argv = ["make", "-s", "--no-print-directory", "-C", str(support.REPO), "-o", ".venv/.installed-stamp",
            "run", f"BIN={support.BIN}", f"ARGS={shlex.join(ports.args[1:])}"]
    with open(out, "wb") as o, open(err, "wb") as e:
        # SIGINT as a terminal's shell leaves it to make (default): a suite started in the background
        # of a non-interactive shell inherits it ignored, and make then ignores a Ctrl-C.
        make = subprocess.Popen(argv, stdout=o, stderr=e, stdin=subprocess.DEVNULL, start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        support.wait_for("the slow component's start", slow.pids, 120,
                         gone=lambda: None if make.poll() is None else f"make exited {make.returncode}",
                         detail=lambda: out.read_text() + err.read_text())
        kids = descendants(make.pid)
        began = time.monotonic()
        if to == "the group":
            os.killpg(make.pid, signal.SIGINT)
        else:
            make.send_signal(signal.SIGINT)
        assert make.wait(timeout=60) == -signal.SIGINT
        took = time.monotonic() - began
    finally:
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGKILL)
            make.wait()
    reason = "SIGINT" if to == "the group" else "SIGINT to make"
    assert out.read_text().splitlines()[-1] == f"tg-launch: stopping ({reason}) before all components were ready"
    assert err.read_text() == ""
    assert took < 10, took
    support.wait_for("every child gone", lambda: not [p for p in kids if alive(p)], 30)


def health_answer(stack: Launch, token: str | None = None) -> tuple[int, dict] | None:
    """The health endpoint's status and body, whatever the status; None while nothing answers."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(stack.url + "api/v1/health", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
    except (urllib.error.URLError, ConnectionError):
        return None


def test_health_says_starting_with_503_until_every_component_has_come_up(tmp_path, stacks):
    """Item 14: health said "ok" while prompt, llm and agent were still starting, and a question
    asked then (as a readiness probe lets it) waited 90 s for its dialog to run out of time."""
    slow = StandIn(tmp_path, "slow-model", "--hold-start", str(tmp_path / "slow-model.go"))
    components = tmp_path / "components.json"
    components.write_text(json.dumps([slow.definition]))
    with_gateway = [f for f in MINIMAL if f != "--no-api-gateway"]
    s = Launch(tmp_path, [*with_gateway, "--extra-components", str(components)], env={"GATEWAY_SECRET": "tok"})
    stacks.append(s)
    with open(s.log, "wb") as out, open(s.err, "wb") as err:   # not waiting for "all components ready"
        s.proc = subprocess.Popen(s.args, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=s.env)
    wait_for("the gateway answering, and slow-model started",
             lambda: health_answer(s, "tok") is not None and slow.pids(), s)
    status, body = health_answer(s, "tok")
    assert (status, body["status"]) == (503, "starting"), body
    assert "slow-model" in body["starting"] and body["components"]["slow-model"]["state"] == "starting"
    status, anonymous = health_answer(s)             # without the token: no names
    assert (status, anonymous["status"]) == (503, "starting") and "starting" not in anonymous
    assert anonymous["components"]["starting"] >= 1
    assert "all components ready" not in s.output()

    slow.go.touch()
    wait_for("'all components ready'", lambda: "all components ready" in s.output(), s)
    status, body = health_answer(s, "tok")
    assert (status, body["status"], body["starting"]) == (200, "ok", []), body
