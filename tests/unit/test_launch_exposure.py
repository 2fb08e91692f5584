"""What ``tg-launch --host`` exposes, and what it never exposes unasked.

Before, ``--host 0.0.0.0`` also put the embedded broker (no authentication:
every message readable and sendable) and its metrics on every interface,
said nothing about it, and mcp-server listened there without any token
while GATEWAY_SECRET protected only the gateway.
"""

from __future__ import annotations

import pytest
from trustgraph.base.launching.listening import is_loopback, local_address
from trustgraph.launch.exposure import Exposure


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("127.0.0.2", True), ("localhost", True), ("::1", True), ("[::1]", True),
    ("0.0.0.0", False), ("::", False), ("", False), ("192.168.1.5", False), ("myhost", False),
])
def test_only_loopback_addresses_stay_on_this_machine(host, loopback):
    assert is_loopback(host) is loopback


def test_a_wildcard_is_reached_through_the_loopback():
    assert [local_address(h) for h in ("0.0.0.0", "", "::", "10.0.0.2")] == ["127.0.0.1", "127.0.0.1", "::1",
                                                                           "10.0.0.2"]


def _lines(host: str = "127.0.0.1", broker_host: str | None = "127.0.0.1", metrics: bool = False,
           **environ: str) -> list[str]:
    return Exposure(host, broker_host, True, True, metrics, environ).lines(8088, 8089, 6650, 9100)


def test_nothing_is_said_when_everything_stays_local():
    assert _lines() == []


def test_a_network_host_says_each_exposed_thing_and_keeps_the_broker_and_a_tokenless_mcp_server_local():
    lines = _lines("0.0.0.0", metrics=True)
    assert lines == [
        "exposed: api-gateway on 0.0.0.0 (every interface):8088, WITHOUT AUTHENTICATION: anyone who reaches it "
        "can call every service and change the config; set GATEWAY_SECRET",
        "not exposed: mcp-server stays on 127.0.0.1: it listens on 0.0.0.0 only with GATEWAY_SECRET or "
        "MCP_SERVER_TOKEN set",
        "exposed: the metrics of every component on 0.0.0.0 (every interface) (ports in the status lines), "
        "WITHOUT AUTHENTICATION",
        "not exposed: the embedded broker and its metrics stay on 127.0.0.1 (--broker-host exposes them)",
    ]
    assert Exposure("0.0.0.0", "127.0.0.1", True, True, False, {}).mcp_host == "127.0.0.1"


def test_the_gateway_secret_protects_and_exposes_mcp_server_too():
    exposure = Exposure("0.0.0.0", "127.0.0.1", True, True, False, {"GATEWAY_SECRET": "s3cret"})
    assert exposure.mcp_host == "0.0.0.0"
    assert exposure.lines(8088, 8089)[:2] == [
        "exposed: api-gateway on 0.0.0.0 (every interface):8088, a token required (GATEWAY_SECRET)",
        "exposed: mcp-server on 0.0.0.0 (every interface):8089, a token required (GATEWAY_SECRET or "
        "MCP_SERVER_TOKEN)"]
    assert Exposure("0.0.0.0", None, True, True, False, {"MCP_SERVER_TOKEN": "t0ken"}).mcp_host == "0.0.0.0"


def test_the_broker_is_exposed_only_when_asked_and_then_said_so():
    assert _lines(broker_host="0.0.0.0") == [
        "exposed: the embedded broker on 0.0.0.0 (every interface):6650 and its metrics on port 9100, WITHOUT "
        "AUTHENTICATION: anything that reaches it reads and sends every message"]
    assert _lines("0.0.0.0", broker_host=None, GATEWAY_SECRET="s3cret")[-1].startswith("exposed: mcp-server")
