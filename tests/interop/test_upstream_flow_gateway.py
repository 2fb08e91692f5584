"""Upstream trustgraph-flow 2.1.4's api-gateway, run on our trustgraph-base (the flow-on-ours venv).

The gateway is upstream's code from PyPI, unchanged: its requestors are a ``Publisher`` of
requests and a ``Subscriber`` of responses on ``get_pubsub()``'s backend, and its config receiver
a ``Consumer`` of the config push.  Under it everything is ours (trustgraph.compat.v214's
publishers and subscribers on our PubSub), and it talks to our config-svc.
"""

from __future__ import annotations

import socket

import pytest
import requests
from support import BIN, Proc, wait_for

pytestmark = [pytest.mark.interop, pytest.mark.long, pytest.mark.timeout(900)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_upstream_api_gateway_calls_our_config_svc_on_our_base(flow_on_ours, own_broker, tmp_path, row):
    url = own_broker.url
    procs: list[Proc] = []
    try:
        ready = tmp_path / "config-svc.ready"
        procs.append(Proc([str(BIN / "config-svc"), "--no-metrics", "-p", url, "--store", str(tmp_path / "c.db")],
                          tmp_path / "config-svc.log", env={"TG_READY_FILE": str(ready)}).start())
        procs[-1].wait_ready(ready, timeout=60)
        port = free_port()
        gateway = Proc([str(flow_on_ours.bin("api-gateway")), "--no-metrics", "-p", url, "--port", str(port)],
                       tmp_path / "gateway.log").start()
        procs.append(gateway)
        api = f"http://127.0.0.1:{port}/api/v1/"

        def put() -> dict | None:
            # Upstream's gateway has no readiness signal: the first call that answers is it.
            try:
                r = requests.post(api + "config", json={"operation": "put", "values": [
                    {"type": "interop", "key": "k", "value": "v"}]}, timeout=10)
            except requests.RequestException:
                return None
            return r.json() if r.status_code == 200 else None

        first = wait_for("upstream's gateway answers a config put", put, 120, detail=gateway.output,
                         gone=gateway.exited)
        got = requests.post(api + "config", json={"operation": "get", "keys": [{"type": "interop", "key": "k"}]},
                            timeout=30).json()
        flows = requests.post(api + "flow", json={"operation": "list-flows"}, timeout=30).json()
        ok = ("error" not in first and got.get("values") == [{"type": "interop", "key": "k", "value": "v"}]
              and "error" not in flows)
        row("upstream api-gateway 2.1.4 on our trustgraph-base",
            "its Publisher/Subscriber requestors and config Consumer on our messaging -> our config-svc", ok,
            "" if ok else f"{first} {got} {flows}"[:160])
        assert ok, (first, got, flows, gateway.output())
    finally:
        for proc in procs:
            proc.stop()
