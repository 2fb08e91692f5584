"""The doors of a launched stack, and a stack that dies with its launcher.

Before the fix, with ``GATEWAY_SECRET`` set, mcp-server answered MCP
``initialize``, ``tools/list`` and ``tools/call`` without any token (it never
got the secret), and ``--host 0.0.0.0`` also put the broker, which has no
authentication, and its metrics on every interface, without a word.  And a
tg-launch killed with SIGKILL, or whose terminal closed (SIGHUP), left the
broker running: it kept its port and its store's lock, and the next start
failed with "embedded broker failed to start", the cause only in broker.log.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from support import BIN, NO_TOOL_SERVICES, alive, descendants, wait_for
from trustgraph.base.launching.broker import EmbeddedBroker, free_port
from trustgraph.mcp_client.connection import http_client

SECRET = "gw-secret-for-the-doors"
LIGHT = ("--no-llm", "--no-prompt", "--no-agent", "--no-mcp-tool")
UP = 120.0


class Launch:
    """One real ``tg-launch`` on a data directory of the test's own."""

    def __init__(self, data_dir: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.gateway_port, self.mcp_port, self.broker_port = free_port(), free_port(), free_port()
        self.log = data_dir.parent / f"tg-launch-{len(list(data_dir.parent.glob('tg-launch-*')))}.out"
        self.args = [str(BIN / "tg-launch"), "--data-dir", str(data_dir), "--broker-port", str(self.broker_port),
                     "--gateway-port", str(self.gateway_port), "--mcp-port", str(self.mcp_port), *args]
        self.env = {**{k: v for k, v in os.environ.items() if k not in ("GATEWAY_SECRET", "MCP_SERVER_TOKEN")},
                    **(env or {})}
        self.proc: subprocess.Popen | None = None

    def start(self, ready: bool = True) -> Launch:
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(self.args, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=self.env)
        if ready:
            wait_for("all components ready", lambda: "all components ready" in self.output()
                     or self.proc.poll() is not None, UP, self.output)
            assert self.proc.poll() is None, self.output()
        return self

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def descendants(self) -> set[int]:
        return descendants(self.proc.pid)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _listening(port: int) -> set[str]:
    """The local addresses a TCP socket listens on ``port`` with (from /proc/net/tcp and tcp6)."""
    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                address, hex_port = fields[1].split(":")
                if fields[3] == "0A" and int(hex_port, 16) == port:   # 0A: LISTEN
                    if width == 8:
                        found.add(".".join(str(int(address[i:i + 2], 16)) for i in (6, 4, 2, 0)))
                    else:
                        found.add("::" if set(address) == {"0"} else address)
    return found


async def _mcp(url: str, token: str | None) -> tuple[list[int], list[str], str]:
    """HTTP statuses seen, the tools listed and tell-joke's answer (empty when refused)."""
    statuses: list[int] = []
    http = http_client(headers={"Authorization": f"Bearer {token}"} if token else None)

    async def seen(response) -> None:
        statuses.append(response.status_code)
    http.event_hooks["response"].append(seen)
    try:
        async with http, streamable_http_client(url, http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            tools = sorted(t.name for t in (await session.list_tools()).tools)
            joke = await session.call_tool("tell-joke", {"topic": "cats"})
            return statuses, tools, "".join(c.text for c in joke.content)
    except Exception:  # noqa: BLE001 - the SDK's task group when the server refuses: statuses say why
        return statuses, [], ""


async def test_the_gateways_secret_guards_mcp_server_and_the_broker_stays_local(tmp_path, scenario):
    launch = Launch(tmp_path / "data", "--host", "0.0.0.0", *LIGHT, env={"GATEWAY_SECRET": SECRET}).start()
    try:
        out = launch.output()
        mcp_url = f"http://127.0.0.1:{launch.mcp_port}/mcp"
        refused, refused_tools, _ = await _mcp(mcp_url, None)
        wrong, _, _ = await _mcp(mcp_url, "not-the-secret")
        statuses, tools, joke = await _mcp(mcp_url, SECRET)
        broker_port = int((launch.data_dir / "pulsar-url").read_text().strip().rsplit(":", 1)[1])
        metrics_addr = (launch.data_dir / "broker" / "pulsar-lite.toml").read_text().split('addr = "')[1].split('"')[0]
        broker_on, metrics_on = _listening(broker_port), _listening(int(metrics_addr.rsplit(":", 1)[1]))
        gateway_on = _listening(launch.gateway_port)
    finally:
        launch.stop()
    said = [line for line in out.splitlines() if line.startswith("tg-launch: ") and "exposed" in line]
    expected_lines = [
        f"tg-launch: exposed: api-gateway on 0.0.0.0 (every interface):{launch.gateway_port}, a token required "
        f"(GATEWAY_SECRET)",
        f"tg-launch: exposed: mcp-server on 0.0.0.0 (every interface):{launch.mcp_port}, a token required "
        f"(GATEWAY_SECRET or MCP_SERVER_TOKEN)",
        "tg-launch: not exposed: the embedded broker and its metrics stay on 127.0.0.1 (--broker-host exposes them)"]
    ok = (refused == [401] and not refused_tools and wrong == [401] and "tell-joke" in tools
          and joke.startswith("Hey trustgraph!") and broker_on == {"127.0.0.1"} and metrics_on == {"127.0.0.1"}
          and said == expected_lines)
    scenario(scenario="doors: GATEWAY_SECRET and --host 0.0.0.0", load="tg-launch --host 0.0.0.0 with "
             "GATEWAY_SECRET set; MCP initialize, tools/list, tools/call",
             fault="MCP calls without a token and with a wrong one",
             expected="mcp-server answers 401 without the secret and serves with it; the broker and its "
                      "metrics listen on 127.0.0.1 only; one line per exposed thing",
             observed=f"no token: HTTP {refused}, wrong token: HTTP {wrong}, the secret: {len(tools)} tools and "
                      f"tell-joke answered; broker on {sorted(broker_on)}, its metrics on {sorted(metrics_on)}, "
                      f"gateway on {sorted(gateway_on)}; {len(said)} exposure lines",
             ok=ok)
    assert refused == [401] and wrong == [401] and not refused_tools
    assert "tell-joke" in tools and joke.startswith("Hey trustgraph!"), (statuses, tools, joke)
    assert broker_on == {"127.0.0.1"} and metrics_on == {"127.0.0.1"}
    assert gateway_on == {"0.0.0.0"}
    assert said == expected_lines, out


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGHUP], ids=["SIGKILL", "SIGHUP"])
async def test_the_broker_and_every_child_die_with_tg_launch(tmp_path, scenario, sig):
    data = tmp_path / "data"
    args = ("--no-llm", "--no-prompt", "--no-agent", "--no-mcp-tool", "--no-mcp-server", *NO_TOOL_SERVICES)
    first = Launch(data, *args).start()
    kids = first.descendants()
    assert len(kids) >= 3, first.output()   # broker, config-svc, api-gateway
    killed = time.monotonic()
    first.proc.send_signal(sig)
    first.proc.wait(60)
    # Not our children, so no wait() of ours sees them end: psutil watches them (up to 30 s).
    watched = []
    for pid in kids:
        with contextlib.suppress(psutil.NoSuchProcess):
            watched.append(psutil.Process(pid))
    psutil.wait_procs(watched, timeout=30)
    left = sorted(p for p in kids if alive(p))
    gone_s = time.monotonic() - killed
    again = Launch(data, *args)
    again.broker_port = first.broker_port   # the same port too, as `make run` again would
    again.args[again.args.index("--broker-port") + 1] = str(first.broker_port)
    try:
        again.start(ready=False)
        wait_for("the second start to come up or fail", lambda: "all components ready" in again.output()
                 or again.proc.poll() is not None, UP, again.output)
        came_up = "all components ready" in again.output()
    finally:
        again.stop()
        for pid in left:   # what the old tg-launch left behind, if anything
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    name = signal.Signals(sig).name
    scenario(scenario=f"tg-launch killed by {name}", load="a launched stack (broker, config-svc, api-gateway)",
             fault=f"{name} to tg-launch", expected="every child, the broker included, exits with it; the next "
                                                    "start on the same data and port comes up",
             observed=f"{len(kids) - len(left)} of {len(kids)} children gone after {gone_s:.1f} s; the next start "
                      + ("came up" if came_up else "failed: " + again.output()[-300:].replace("\n", " ")),
             exits=0, ok=not left and came_up)
    assert not left, f"left running after {name}: {left}"
    assert came_up, again.output()


async def test_a_broker_left_running_on_the_data_is_named_at_the_next_start(tmp_path, scenario):
    data = tmp_path / "data"
    stale = EmbeddedBroker(data / "broker")   # what an older tg-launch killed with SIGKILL left behind
    stale.start()
    pid = stale.proc.pid
    try:
        launch = Launch(data, "--no-llm", "--no-prompt", "--no-agent", "--no-mcp-tool", "--no-mcp-server",
                        *NO_TOOL_SERVICES)
        t0 = time.monotonic()
        launch.start(ready=False)
        code = launch.proc.wait(UP)
        took = time.monotonic() - t0
    finally:
        stale.stop()
    errors = [line for line in launch.output().splitlines() if line.startswith("tg-launch: error:")]
    expected = (f"tg-launch: error: the embedded broker's store in {data / 'broker'} is held by process "
                f"{pid} (pulsar-lite): a broker left running by an earlier start; stop it (kill {pid}) and "
                f"start again")
    ok = code == 1 and errors == [expected]
    scenario(scenario="a stale broker at the next start", load="tg-launch on a data directory",
             fault="a broker left running on that data (its store locked)",
             expected="refused at once with one line naming the process and what to do",
             observed=f"exit {code} after {took:.1f} s: {errors[0] if errors else launch.output()[-200:]}", ok=ok)
    assert code == 1 and errors == [expected], launch.output()
