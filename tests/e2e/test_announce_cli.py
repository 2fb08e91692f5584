"""Services that announce themselves, as a user sees them on a launched stack: the tg-* commands."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from support import ANNOUNCING_SERVICE as SERVICE
from support import LIGHT, Proc, wait_for


@pytest.fixture(scope="module")
def stack(stack_factory):
    return stack_factory(*LIGHT)


@pytest.fixture
def service(stack, tmp_path):
    procs: list[Proc] = []

    def start(sid: str, topic: str, tool: str) -> Proc:
        ready = tmp_path / f"ready-{sid}"
        url = (stack.data_dir / "pulsar-url").read_text().strip()
        proc = Proc([sys.executable, str(SERVICE), "--id", sid, "-t", topic, "--tool", tool, "-p", url,
                     "--no-metrics"], tmp_path / f"{sid}.log", env={"TG_READY_FILE": str(ready)}).start()
        proc.wait_ready(ready)
        procs.append(proc)
        return proc

    yield start
    for p in procs:
        p.stop()


def eventually(what: str, probe, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """The first result of ``probe`` (a command run) that is not None."""
    return wait_for(what, lambda: (r := probe()) is not None and (r,), timeout)[0]


def test_a_running_service_is_listed_and_callable_with_no_config_step(stack, service):
    service("forecast-service", "forecast-e2e", "forecast")
    r = eventually("forecast call", lambda: (r := stack.cli("tg-invoke-tool-service", "-n", "forecast",
                                                            "-a", "city=Oslo")).returncode == 0 and r or None)
    assert r.stdout.strip() == "It is sunny in Oslo (metric), trustgraph."
    (table,) = [t for t in stack.cli("tg-show-tool-services").stdout.split("\n\n") if "forecast-service" in t]
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in table.splitlines()
            if line.startswith("|") and line.split("|")[1].strip()}
    assert (rows["source"], rows["live"]) == ("announced", "yes")
    assert "non-persistent://tg/request/forecast-e2e" in table
    tools = stack.cli("tg-show-tools").stdout
    assert "forecast-service/forecast" in tools and "announced (by the running service)" in tools


def test_a_configured_service_that_stopped_fails_at_once_naming_it(stack, service):
    # "announces": true lets its announcements fail its calls fast (a configured descriptor says so).
    descriptor = {"id": "alerts", "request-queue": "non-persistent://tg/request/alerts-e2e",
                  "response-queue": "non-persistent://tg/response/alerts-e2e", "announces": True}
    r = stack.cli("tg-put-config-item", "tool-service/alerts", input=json.dumps(descriptor))
    assert r.returncode == 0, r.stderr
    proc = service("alerts", "alerts-e2e", "alerts")
    eventually("configured+announced", lambda: "configured+announced" in stack.cli("tg-show-tool-services").stdout
               or None)
    proc.stop()
    eventually("alerts down", lambda: "NO (it stopped" in stack.cli("tg-show-tool-services").stdout or None)
    t0 = time.monotonic()
    r = stack.cli("tg-invoke-tool-service", "-s", "alerts", "-a", "city=Oslo", "--timeout", "60")
    took = time.monotonic() - t0
    assert r.returncode != 0 and took < 30, (took, r.stderr)
    assert r.stderr.strip() == ("tg-invoke-tool-service: error: tool-service-unavailable: tool service 'alerts' "
                                "is not running: no replica is live, so nothing serves "
                                "non-persistent://tg/request/alerts-e2e")


def test_a_configured_descriptor_wins_over_an_announced_one_and_says_so(stack, service):
    other = {"id": "clash", "request-queue": "non-persistent://tg/request/clash-configured",
             "response-queue": "non-persistent://tg/response/clash-configured"}
    assert stack.cli("tg-put-config-item", "tool-service/clash", input=json.dumps(other)).returncode == 0
    service("clash", "clash-announced", "clash-tool")
    out = eventually("the conflict", lambda: (o := stack.cli("tg-show-tools").stdout)
                     and "announces itself under this id with other queues" in o and o or None)
    warnings = out.split("Warnings:", 1)[1]
    assert ("tool-service/clash: field 'request-queue': a running service announces itself under this id with "
            "other queues (non-persistent://tg/request/clash-announced, not this descriptor's "
            "non-persistent://tg/request/clash-configured); the configured descriptor is used, so its tools' "
            "calls go where that service does not listen: make the two agree" in warnings)
