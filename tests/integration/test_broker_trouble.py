"""A real processor (joke-service) facing broker trouble: one line, quiet retries, killable.

Every child gets its own ``$TRUSTGRAPH_DATA`` and no ``$PULSAR_HOST``, so a
stack a developer runs in the checkout never leaks in.
"""

from __future__ import annotations

import http.server
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from support import BIN, wait_for
from trustgraph.base.launching.broker import free_port
from trustgraph.base.launching.stack import RunFiles

# Lines that would mean the user sees more than our one line.
NOISE = ("ClientConnection", "ClientImpl", "Traceback", "CRITICAL")


class Service:
    """joke-service as a child, with stdout and stderr kept apart."""

    def __init__(self, tmp: Path, *args: str, data: Path | None = None) -> None:
        self.out, self.err = tmp / "out.log", tmp / "err.log"
        self.ready = tmp / "ready"
        env = {k: v for k, v in os.environ.items() if k != "PULSAR_HOST"}
        env.update(TRUSTGRAPH_DATA=str(data or tmp / "no-stack"), TG_READY_FILE=str(self.ready))
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.p = subprocess.Popen([str(BIN / "joke-service"), "--no-metrics", *args], stdout=out,
                                      stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=tmp)

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def stdout(self) -> str:
        return self.out.read_text(errors="replace")

    def lines(self, word: str) -> list[str]:
        return [ln for ln in self.stderr().splitlines() if word in ln]

    def wait_for(self, what: str, probe: Callable[[], object], timeout: float = 60.0) -> None:
        """``support.wait_for``, failing at once if this process exits, with its stderr."""
        wait_for(what, probe, timeout, detail=self.stderr,
                 gone=lambda: None if self.p.poll() is None else f"exited {self.p.poll()}")

    def stop_with(self, sig: signal.Signals, within: float = 30.0) -> int:
        """Send ``sig`` and return the exit code; it must come within ``within`` seconds."""
        self.p.send_signal(sig)
        try:
            return self.p.wait(within)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            pytest.fail(f"{sig.name} did not stop joke-service within {within:.0f}s:\n{self.stderr()}")

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


@pytest.fixture
def services():
    made: list[Service] = []
    yield made
    for s in made:
        s.kill()


def quiet(svc: Service) -> None:
    """Nothing but our own log lines, and exactly one of them above INFO."""
    text = svc.stderr()
    assert not [n for n in NOISE if n in text], text
    assert svc.stdout() == ""
    loud = [ln for ln in text.splitlines() if " WARNING " in ln or " ERROR " in ln]
    assert len(loud) == 1, text
    assert "still unreachable" not in text, text   # retries are DEBUG


@pytest.mark.parametrize("sig, with_stack", [(signal.SIGTERM, False), (signal.SIGINT, True)])
def test_closed_port_is_one_line_and_the_signal_stops_it(tmp_path, services, sig, with_stack):
    port = free_port()
    data = tmp_path / "data"
    stack = RunFiles(data)
    if with_stack:  # this test process poses as the running stack, with another broker
        stack.acquire(gateway="http://localhost:1/")
        stack.set_pulsar_url(f"pulsar://127.0.0.1:{free_port()}")
    try:
        svc = Service(tmp_path, "-p", f"pulsar://127.0.0.1:{port}", data=data)
        services.append(svc)
        svc.wait_for("warning line", lambda: svc.lines(" WARNING "))
        line = svc.lines(" WARNING ")[0]
        assert f"cannot reach the broker at pulsar://127.0.0.1:{port}: connection refused" in line
        if with_stack:
            assert f"the stack running in {data} uses pulsar://127.0.0.1:" in line
            assert str(data / "pulsar-url") in line
        else:
            assert f"no stack is running in {data}" in line and "make run" in line
            # The URL was given with -p: the line does not ask for it again.
            assert "check that a broker listens there" in line and "give the broker URL" not in line
        # Still retrying (in the back-off after that line) when the signal comes; each retry
        # is DEBUG, unseen at the default level (the unit tests count them).
        assert svc.p.poll() is None
        assert svc.stop_with(sig) == 0
        quiet(svc)
    finally:
        stack.release()


def test_an_http_url_is_told_apart(tmp_path, services):
    class NotPulsar(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotPulsar)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/"
        svc = Service(tmp_path, "-p", url)
        services.append(svc)
        svc.wait_for("warning line", lambda: svc.lines(" WARNING "))
        line = svc.lines(" WARNING ")[0]
        assert f"cannot reach the broker at {url}: it answers HTTP but not as a Pulsar lookup" in line
        assert "HTTP 404" in line and "-u/--api-url" in line and "pulsar://host:6650" in line
        assert svc.stop_with(signal.SIGTERM) == 0
        quiet(svc)
    finally:
        server.shutdown()
        server.server_close()


def test_a_url_without_scheme_is_one_line_and_exit_2(tmp_path, services):
    svc = Service(tmp_path, "-p", "127.0.0.1:6650")
    services.append(svc)
    assert svc.p.wait(60) == 2
    err = svc.stderr().strip().splitlines()
    assert err == ["joke-service: error: malformed broker URL '127.0.0.1:6650': it needs a scheme; "
                   "did you mean pulsar://127.0.0.1:6650?"], svc.stderr()


def test_without_p_a_processor_uses_the_running_stacks_broker(tmp_path, services, broker):
    data = tmp_path / "data"
    stack = RunFiles(data)
    stack.acquire(gateway="http://localhost:1/")
    stack.set_pulsar_url(broker.url)
    try:
        svc = Service(tmp_path, "-t", f"joke-{os.getpid()}-{free_port()}", data=data)
        services.append(svc)
        svc.wait_for("readiness", svc.ready.exists)
        said = svc.lines("Processor joke-service: broker")
        assert said and f"broker {broker.url} (the running stack's, from {data / 'pulsar-url'})" in said[0]
        assert svc.stop_with(signal.SIGTERM) == 0
    finally:
        stack.release()


def test_a_lost_broker_is_one_line_each_way(tmp_path, services, own_broker):
    svc = Service(tmp_path, "-p", own_broker.url, "-t", f"joke-{free_port()}")
    services.append(svc)
    svc.wait_for("readiness", svc.ready.exists)
    own_broker.stop()
    svc.wait_for("lost-connection line", lambda: svc.lines("Lost the connection"))
    assert f"to the broker at {own_broker.url}: connection refused" in svc.lines("Lost the connection")[0]
    own_broker.start()  # same port and data
    svc.wait_for("reconnected line", lambda: svc.lines("Reconnected to the broker"), timeout=60)
    assert svc.stop_with(signal.SIGTERM) == 0
    quiet(svc)


def test_a_broker_killed_and_back_at_once_is_seen_every_time(tmp_path, services, own_broker):
    # pulsar-lite killed and started again is back within 0.1 s, the time pulsar-client waits before
    # it reconnects a part. Read every 0.25 s, about half such losses went unseen by a process, and
    # a request sent into its consumer's resubscription waited out its deadline (make reliability).
    svc = Service(tmp_path, "-p", own_broker.url, "-t", f"joke-{free_port()}")
    services.append(svc)
    svc.wait_for("readiness", svc.ready.exists)
    for n in range(1, 4):
        own_broker.kill()
        own_broker.start()  # same port and data, at once
        svc.wait_for(f"loss {n} seen and over", lambda n=n: len(svc.lines("Reconnected to the broker")) >= n,
                     timeout=30)
    assert len(svc.lines("Lost the connection")) == 3, svc.stderr()
    assert svc.stop_with(signal.SIGTERM) == 0


def test_processors_started_by_hand_get_their_own_metrics_port_quietly(tmp_path, broker):
    """No -P: port 8000 when free, else any free one; never a warning, always on 127.0.0.1."""
    procs = []
    try:
        for n in range(2):
            (tmp_path / str(n)).mkdir()
            err = tmp_path / str(n) / "err.log"
            ready = tmp_path / str(n) / "ready"
            env = {**os.environ, "TG_READY_FILE": str(ready), "TRUSTGRAPH_DATA": str(tmp_path / "none")}
            with open(err, "wb") as f:
                procs.append((subprocess.Popen(
                    [str(BIN / "joke-service"), "-p", broker.url, "-t", f"joke-{free_port()}"],
                    stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env), err, ready))
        ports = []
        for p, err, ready in procs:
            wait_for("joke-service ready", ready.exists, 60, detail=err.read_text,
                     gone=lambda p=p: None if p.poll() is None else f"joke-service exited {p.poll()}")
            text = err.read_text()
            assert " WARNING " not in text and " ERROR " not in text, text
            found = [ln.split("http://127.0.0.1:")[1].split("/")[0] for ln in text.splitlines()
                     if "Metrics on http://127.0.0.1:" in ln]
            assert found, text
            ports.append(int(found[0]))
        assert len(set(ports)) == 2
    finally:
        for p, _, _ in procs:
            p.terminate()
            p.wait(10)
