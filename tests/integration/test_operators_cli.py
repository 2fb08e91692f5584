"""tg-init-trustgraph and tg-verify-system-status as processes, against Apache Pulsar's admin
REST API (a stand-in HTTP server on 127.0.0.1 answering its tenants and namespaces endpoints as
Pulsar documents them) and against a real pulsar-lite broker with config-svc.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest
from support import BIN
from trustgraph.base.launching.broker import free_port
from trustgraph.clients.config_client import ConfigClient


class PulsarAdminStandIn:
    """Apache Pulsar's admin API, the calls tg-init-trustgraph makes: clusters, tenants, namespaces.

    ``unavailable``: how many cluster listings answer 503 first (a broker still starting);
    ``token``: the bearer token every call must carry (401 without).
    """

    def __init__(self, unavailable: int = 0, token: str | None = None) -> None:
        self.unavailable = unavailable
        self.token = token
        self.tenants: dict[str, dict] = {}
        self.namespaces: dict[str, dict] = {}
        self.calls: list[tuple[str, str]] = []
        stand_in = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self, status: int, body: object = None) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                if data:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _route(self) -> None:
                stand_in.calls.append((self.command, self.path))
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                if stand_in.token and self.headers.get("Authorization") != f"Bearer {stand_in.token}":
                    return self._answer(401, {"reason": "Authentication required"})
                parts = self.path.strip("/").split("/")
                if parts == ["admin", "v2", "clusters"]:
                    if stand_in.unavailable > 0:
                        stand_in.unavailable -= 1
                        return self._answer(503, {"reason": "Service unavailable"})
                    return self._answer(200, ["standalone"])
                if parts[:3] == ["admin", "v2", "tenants"] and len(parts) == 4:
                    return self._resource(stand_in.tenants, parts[3], body)
                if parts[:3] == ["admin", "v2", "namespaces"] and len(parts) == 5:
                    if parts[3] not in stand_in.tenants:
                        return self._answer(404, {"reason": "Tenant does not exist"})
                    return self._resource(stand_in.namespaces, f"{parts[3]}/{parts[4]}", body)
                return self._answer(404, {"reason": "Not found"})

            def _resource(self, store: dict, name: str, body: object) -> None:
                if self.command == "GET":
                    return self._answer(200, store[name]) if name in store else self._answer(404, {"reason": "Not found"})
                if name in store:
                    return self._answer(409, {"reason": "Already exists"})
                store[name] = body
                return self._answer(204)

            do_GET = do_PUT = _route

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def writes(self) -> list[tuple[str, str]]:
        return [c for c in self.calls if c[0] == "PUT"]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def pulsar_admin():
    servers: list[PulsarAdminStandIn] = []

    def make(**kw: object) -> PulsarAdminStandIn:
        servers.append(PulsarAdminStandIn(**kw))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def run(command: str, *args: str, tmp_path: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """The real command, with no running stack or broker variables to find instead."""
    env = {**os.environ, "TRUSTGRAPH_DATA": str(tmp_path / "no-stack"), "PULSAR_ADMIN_URL": "",
           "PULSAR_HOST": "", "PULSAR_API_KEY": ""}
    return subprocess.run([str(BIN / command), *args], capture_output=True, text=True, timeout=timeout, env=env)


def test_init_creates_the_tenant_and_namespaces_once_and_verify_sees_them(pulsar_admin, tmp_path):
    admin = pulsar_admin()
    closed = f"http://127.0.0.1:{free_port()}/"
    verify = ("tg-verify-system-status", "--pulsar-url", admin.url, "-u", closed, "--skip-ui",
              "--global-timeout", "1", "--retry-delay", "0.2")
    before = run(*verify, tmp_path=tmp_path)
    assert before.returncode == 1
    assert (f"FAIL  Pulsar: Apache Pulsar at {admin.url}, cluster(s) standalone, has no tenant tg: create it with "
            f"tg-init-trustgraph -p {admin.url}") in before.stdout.splitlines(), before.stdout

    first = run("tg-init-trustgraph", "-p", admin.url, tmp_path=tmp_path)
    assert (first.returncode, first.stderr) == (0, "")
    assert first.stdout.splitlines() == [
        f"Initialising with the broker at {admin.url} (from the command line)",
        f"Broker: Apache Pulsar at {admin.url}, cluster(s) standalone",
        "Tenant tg: created",
        "Namespace tg/flow: created (the broker's default policies)",
        "Namespace tg/request: created (the broker's default policies)",
        "Namespace tg/response: created (retention 3 min, unlimited size; idle subscriptions expire after 30 min)",
        "Namespace tg/config: created (retention unlimited time, 10 MB; idle subscriptions expire after 5 min)",
        "Config: no initial config given (-c/-C); nothing loaded",
        "Initialisation complete.",
    ]
    assert admin.tenants == {"tg": {"adminRoles": [], "allowedClusters": ["standalone"]}}
    assert admin.namespaces == {
        "tg/flow": {}, "tg/request": {},
        "tg/response": {"retention_policies": {"retentionTimeInMinutes": 3, "retentionSizeInMB": -1},
                        "subscription_expiration_time_minutes": 30},
        "tg/config": {"retention_policies": {"retentionTimeInMinutes": -1, "retentionSizeInMB": 10},
                      "subscription_expiration_time_minutes": 5},
    }

    writes = len(admin.writes())
    again = run("tg-init-trustgraph", "-p", admin.url, "-t", "tg", tmp_path=tmp_path)
    assert (again.returncode, again.stderr) == (0, "")
    assert "Tenant tg: exists, left as it is" in again.stdout
    assert again.stdout.count(": exists, left as it is") == 5
    assert len(admin.writes()) == writes   # the second run wrote nothing

    after = run(*verify, tmp_path=tmp_path)
    lines = after.stdout.splitlines()
    assert (f"OK    Pulsar: Apache Pulsar at {admin.url}, cluster(s) standalone, tenant tg and its namespaces in "
            "place") in lines, after.stdout
    # The gateway is not there: its line says how to start it, and what needs it is not tried.
    assert any(x.startswith(f"FAIL  API Gateway: cannot connect to {closed}api/v1/health: connection refused")
               for x in lines), after.stdout
    assert "FAIL  Flows: not checked: the API gateway does not answer" in lines
    assert after.returncode == 1
    assert after.stderr.splitlines() == [after.stderr.strip()] and "checks failed" in after.stderr


def test_init_retries_a_starting_broker_a_bounded_number_of_times(pulsar_admin, tmp_path):
    starting = pulsar_admin(unavailable=2)
    r = run("tg-init-trustgraph", "-p", starting.url, "--attempts", "3", "--retry-delay", "0.1", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    failures = r.stderr.splitlines()
    assert len(failures) == 2 and all(f"attempt {i} of 3 failed: listing the clusters: HTTP 503" in line
                                      for i, line in zip((1, 2), failures, strict=True)), r.stderr
    assert "Initialisation complete." in r.stdout

    down = pulsar_admin(unavailable=1000)
    started = time.monotonic()
    r = run("tg-init-trustgraph", "-p", down.url, "--attempts", "3", "--retry-delay", "0.1", tmp_path=tmp_path)
    assert time.monotonic() - started < 30
    lines = r.stderr.splitlines()
    assert r.returncode == 1 and len(lines) == 3, r.stderr
    assert lines[-1].startswith("tg-init-trustgraph: error: gave up after 3 attempt(s): listing the clusters: HTTP 503")
    assert "give its admin URL with -p" in lines[-1]
    assert down.calls.count(("GET", "/admin/v2/clusters")) == 3


def test_a_refused_token_or_a_url_that_is_no_brokers_ends_at_once(pulsar_admin, tmp_path):
    secured = pulsar_admin(token="s3cret")
    r = run("tg-init-trustgraph", "-p", secured.url, "--attempts", "5", tmp_path=tmp_path)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [r.stderr.strip()], r.stderr   # no retry: one line
    assert "HTTP 401" in r.stderr and "--pulsar-api-key" in r.stderr
    assert len(secured.calls) == 1
    r = run("tg-init-trustgraph", "-p", secured.url, "--pulsar-api-key", "s3cret", tmp_path=tmp_path)
    assert r.returncode == 0 and "Tenant tg: created" in r.stdout, r.stderr
    assert "s3cret" not in r.stdout + r.stderr

    r = run("tg-init-trustgraph", "-p", "http://127.0.0.1:1", "-c", "{not json", tmp_path=tmp_path)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.startswith("tg-init-trustgraph: error: the initial config (-c) is not JSON")


def test_on_pulsar_lite_nothing_is_created_and_the_config_goes_only_into_an_empty_store(own_broker, spawn,
                                                                                       tmp_path):
    spawn("config-svc", "--store", str(tmp_path / "config.db"), broker=own_broker)
    initial = tmp_path / "initial.json"
    initial.write_text(json.dumps({"greeting": {"hello": "Hello"}, "widget": {"w1": {"size": 3}}}))
    args = ("tg-init-trustgraph", "-p", own_broker.admin_url, "--pulsar-host", own_broker.url, "-C", str(initial))
    first = run(*args, tmp_path=tmp_path)
    assert (first.returncode, first.stderr) == (0, "")
    lines = first.stdout.splitlines()
    assert re.fullmatch(rf"pulsar-lite \S+ at {re.escape(own_broker.admin_url)}, tg-launch's embedded broker: "
                        r"nothing to create there \(it has no tenants or namespaces, and creates topics on "
                        r"first use\)", lines[1]), first.stdout
    assert lines[2:] == ["Config: loaded 2 item(s) of 2 type(s) (greeting, widget) into the empty store",
                         "Initialisation complete."]
    client = ConfigClient(pulsar_host=own_broker.url)
    try:
        config, version = client.config(timeout=30)
    finally:
        client.close()
    assert config["greeting"] == {"hello": '"Hello"'} and json.loads(config["widget"]["w1"]) == {"size": 3}

    initial.write_text(json.dumps({"greeting": {"hello": "Changed"}}))
    again = run(*args, tmp_path=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (f"Config: config-svc already holds config version {version}; nothing loaded (the initial config goes "
            "only into an empty store; tg-import-config merges a file into this one)") in again.stdout
