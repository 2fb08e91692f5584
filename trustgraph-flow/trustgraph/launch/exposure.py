"""What a launch exposes beyond this machine, said in one line per thing before anything starts.

``--host`` is where the gateway, mcp-server and the components' metrics
servers listen (127.0.0.1 by default); the embedded broker and its metrics
have a flag of their own, ``--broker-host``, because pulsar-lite has no
authentication at all: anything that reaches its port reads and sends every
message, config pushes included, so ``--host 0.0.0.0`` never takes it along.
mcp-server listens beyond this machine only with a token
(``GATEWAY_SECRET`` or ``MCP_SERVER_TOKEN``): without one it stays on
127.0.0.1 (and says so), since it would refuse to start otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from trustgraph.base.launching.listening import is_loopback

GATEWAY_SECRET = "GATEWAY_SECRET"
MCP_SERVER_TOKEN = "MCP_SERVER_TOKEN"
LOCAL = "127.0.0.1"


@dataclass(frozen=True)
class Exposure:
    """The addresses a launch would listen on, and who may use them."""

    host: str                       # --host
    broker_host: str | None         # --broker-host, or None when the broker is external
    gateway: bool                   # api-gateway is started
    mcp_server: bool                # mcp-server is started
    metrics: bool                   # --metrics
    environ: Mapping[str, str]

    @property
    def gateway_token(self) -> bool:
        return bool(self.environ.get(GATEWAY_SECRET))

    @property
    def mcp_token(self) -> bool:
        return self.gateway_token or bool(self.environ.get(MCP_SERVER_TOKEN))

    @property
    def mcp_host(self) -> str:
        """Where mcp-server listens: ``--host``, unless that reaches beyond this machine without a token."""
        return self.host if self.mcp_token or is_loopback(self.host) else LOCAL

    def lines(self, gateway_port: int, mcp_port: int, broker_port: int | None = None,
              broker_metrics_port: int | None = None) -> list[str]:
        """One line per thing reachable from other machines (and per thing kept from them that
        ``--host`` would have exposed before), or none when everything stays local."""
        out: list[str] = []
        where = _where(self.host)
        if not is_loopback(self.host):
            if self.gateway:
                auth = ("a token required (GATEWAY_SECRET)" if self.gateway_token else
                        "WITHOUT AUTHENTICATION: anyone who reaches it can call every service and change "
                        "the config; set GATEWAY_SECRET")
                out.append(f"exposed: api-gateway on {where}:{gateway_port}, {auth}")
            if self.mcp_server:
                if self.mcp_token:
                    out.append(f"exposed: mcp-server on {where}:{mcp_port}, a token required "
                               f"(GATEWAY_SECRET or MCP_SERVER_TOKEN)")
                else:
                    out.append(f"not exposed: mcp-server stays on {LOCAL}: it listens on {self.host} only "
                               f"with GATEWAY_SECRET or MCP_SERVER_TOKEN set")
            if self.metrics:
                out.append(f"exposed: the metrics of every component on {where} (ports in the status "
                           f"lines), WITHOUT AUTHENTICATION")
        if self.broker_host is not None:
            if not is_loopback(self.broker_host):
                out.append(f"exposed: the embedded broker on {_where(self.broker_host)}:{broker_port} and its "
                           f"metrics on port {broker_metrics_port}, WITHOUT AUTHENTICATION: anything that "
                           f"reaches it reads and sends every message")
            elif not is_loopback(self.host):
                out.append(f"not exposed: the embedded broker and its metrics stay on {self.broker_host} "
                           f"(--broker-host exposes them)")
        return out


def _where(host: str) -> str:
    return f"{host} (every interface)" if host in ("0.0.0.0", "::", "") else host
