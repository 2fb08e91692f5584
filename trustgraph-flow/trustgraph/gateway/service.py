"""api-gateway: the HTTP and websocket front door to the services on the bus.

Serves TrustGraph 2.1's REST API and websocket multiplexer (upstream 2.1.4's
routes, JSON and auth) on ``--port`` (8088), plus endpoints of ours: ``GET /api/v1/health``,
``POST /api/v1/tool-service`` (call a tool or tool service by name or id),
``GET /api/v1/tool-catalog``, ``GET /api/v1/tool-services``,
``GET /api/v1/tool-service/errors`` and ``GET /api/v1/broker/consumers``.
See endpoints.py for the list and tool_services.py for the tool-service call.

It listens on 127.0.0.1 unless ``--host`` says otherwise: authentication is
off unless a token is set, so the network at large is opt-in.

Flows and tool descriptors are learned from config pushes.  Every call has
one deadline, ``--timeout`` seconds (120): a service that does not answer
gives ``{"error": {"type": "gateway-error", "message": "Timeout"}}``.  With
``--api-token`` (or ``$GATEWAY_SECRET``) set, requests need
``Authorization: Bearer <token>`` (the websocket also takes ``?token=``).

Its connections are held to the limits of a public-facing server
(``trustgraph.base.safety.connections``, ``connections.py``): at most
``--max-connections`` (4,096, always below the open-file limit; beyond it the
longest idle connection is closed, or the new one refused with a 503 when all
are busy), ``--idle-timeout`` (60 s) without a request in progress,
``--header-timeout`` (10 s) for a request's headers, and a body must arrive
within 20 s plus 1 s per 32 KiB (408 otherwise).  A request in progress (an
agent dialog, a websocket) is never cut by these.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from aiohttp import web
from trustgraph.base.launching.stack import read_components, stack_starting
from trustgraph.base.messaging.unserved import UnservedTopics
from trustgraph.base.processors.async_processor import AsyncProcessor, env_default
from trustgraph.base.safety.connections import (
    ConnectionGuard,
    ServerLimits,
    add_limit_arguments,
    quiet_accept_errors,
)
from trustgraph.base.safety.secrets import token_argument
from trustgraph.base.tool_services.catalog_feed import CatalogFeed
from trustgraph.schema import (
    knowledge_request_queue,
    knowledge_response_queue,
    librarian_request_queue,
    librarian_response_queue,
)
from trustgraph.topics import FLOW_REQUEST, FLOW_RESPONSE

from .auth import TokenAuth
from .connections import GuardedSite
from .dispatch import Dispatcher
from .endpoints import Parts, build_app
from .tool_services import ToolServices

logger = logging.getLogger(__name__)

default_ident = "api-gateway"
DEFAULT_PORT = 8088
DEFAULT_HOST = "127.0.0.1"
DEFAULT_TIMEOUT = 120.0
HEALTH_PROBE_TIMEOUT = 2.0


class Processor(AsyncProcessor):
    """The gateway: an aiohttp server in front of request/response clients."""

    def __init__(self, **params: Any) -> None:
        params.setdefault("id", default_ident)
        super().__init__(**params)
        self.host: str = params.get("host") or DEFAULT_HOST
        self.port: int = DEFAULT_PORT if params.get("port") is None else int(params["port"])
        self.timeout: float = float(params.get("timeout") or DEFAULT_TIMEOUT)
        self.prometheus_url: str = params.get("prometheus_url") or "http://prometheus:9090"
        self.pulsar_admin_url: str | None = params.get("pulsar_admin_url") or None
        self.stack_status: str | None = params.get("stack_status") or None
        self.auth = TokenAuth(params.get("api_token") or None)
        self.limits = ServerLimits.from_params(params)
        self.guard: ConnectionGuard | None = None
        self.dispatcher = Dispatcher(
            self.pubsub, timeout=self.timeout,
            config_topics=(self.config_request_queue, self.config_response_queue),
            flow_topics=(params.get("flow_request_queue") or FLOW_REQUEST,
                         params.get("flow_response_queue") or FLOW_RESPONSE),
            other_topics={
                "librarian": (params.get("librarian_request_queue") or librarian_request_queue,
                              params.get("librarian_response_queue") or librarian_response_queue),
                "knowledge": (params.get("knowledge_request_queue") or knowledge_request_queue,
                              params.get("knowledge_response_queue") or knowledge_response_queue),
            },
            unserved=UnservedTopics(self.pubsub.transport, starting=stack_starting(self.stack_status)),
        )
        self.feed = CatalogFeed(self, self._on_tools)
        self.tools = ToolServices(self.pubsub, timeout=self.timeout, directory=self.feed.directory,
                                  unserved=self.dispatcher.unserved)
        self.register_config_handler(self._on_flows, types=["flow"])
        self._runner: web.AppRunner | None = None
        self._probe: asyncio.Future | None = None

    async def _on_flows(self, config: dict[str, dict[str, str]], version: int) -> None:
        self.dispatcher.update_flows(config.get("flow") or {})

    async def _on_tools(self, config: dict[str, dict[str, str]], announced: Mapping[str, Any]) -> None:
        self.tools.update(config, announced)

    async def health(self, detailed: bool = True) -> dict[str, Any]:
        """The body of ``GET /api/v1/health``; ``detailed``: the caller may see service names.

        ``status`` is ``"starting"`` (answered 503: not ready) while a component of the
        tg-launch stack has not come up yet: before, it said ``"ok"`` as soon as the gateway
        listened, and a question asked then, by a script polling health as a readiness probe
        does, waited 90 s for a prompt service that was not there yet.

        Concurrent health checks share one probe: the endpoint is open to
        anyone, and a flood of probes must not take the config client's
        in-flight slots from real calls.
        """
        if self._probe is None or self._probe.done():
            self._probe = asyncio.ensure_future(self.dispatcher.probe_config(HEALTH_PROBE_TIMEOUT))
        answered, version = await asyncio.shield(self._probe)
        services = self.tools.services_json()
        if not detailed:
            services = {"live": sum(1 for s in services if s["live"]),
                        "down": sum(1 for s in services if s["live"] is False)}
        body: dict[str, Any] = {"status": "ok", "config-service": answered,
                                "version": version if answered else None, "tool-services": services}
        components = read_components(self.stack_status) if self.stack_status else None
        if components is not None:
            given_up = sorted(name for name, c in components.items() if c.get("state") == "given-up")
            # Not up for the first time yet: a question asked now could need it (the agent, the
            # prompt service, the model), so the stack is not ready, whatever the gateway can do.
            starting = sorted(name for name, c in components.items() if c.get("state") == "starting")
            if given_up:
                body["status"] = "degraded"
            if starting:
                body["status"] = "starting"
            if detailed:
                body["components"] = components
                body["given-up"] = given_up
                body["starting"] = starting
            else:
                body["components"] = {state: sum(1 for c in components.values() if c.get("state") == state)
                                      for state in sorted({str(c.get("state")) for c in components.values()})}
        return body

    async def start(self) -> None:
        """Open the bus side, then listen: readiness is only signalled once the port is open."""
        await self.feed.start()
        await super().start()
        await self.dispatcher.start()
        self.dispatcher.unserved.start(self.pubsub.calls)
        self.guard = guard = ConnectionGuard("api-gateway", self.limits)
        quiet_accept_errors(asyncio.get_running_loop(), "api-gateway",
                            lambda: f"{len(guard):,} connections open, at most {guard.cap:,}")
        app = build_app(Parts(dispatcher=self.dispatcher, tools=self.tools, auth=self.auth,
                              timeout=self.timeout, prometheus_url=self.prometheus_url,
                              health=self.health, pulsar_admin_url=self.pulsar_admin_url,
                              transport=self.pubsub.transport, guard=guard))
        # Closing the clients fails the calls still waiting, so they answer at
        # once instead of holding the shutdown until their deadline.
        app.on_shutdown.append(self._release_clients)
        # No access log: aiohttp's would print the websocket's ?token= query.
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=5.0)
        await self._runner.setup()
        await GuardedSite(self._runner, self.host, self.port, guard, access_log=None,
                          keepalive_timeout=self.limits.idle_timeout).start()
        logger.info("API gateway listening on http://%s:%d (authentication %s, timeout %gs, at most %d "
                    "connections)", self.host, self.port, "on" if self.auth.enabled else "off", self.timeout,
                    guard.cap)

    async def _release_clients(self, _app: web.Application) -> None:
        await self.dispatcher.stop()
        await self.tools.stop()

    async def stop(self) -> None:
        """Stop taking connections, close open sockets and clients, then the bus."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        await self.dispatcher.stop()
        await self.dispatcher.unserved.stop()
        await self.tools.stop()
        await self.feed.stop()
        await super().stop()

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                            help="HTTP port (default %(default)s)")
        parser.add_argument("--host", default=DEFAULT_HOST,
                            help="address to listen on (default %(default)s; 0.0.0.0 for every "
                                 "interface, with --api-token set)")
        parser.add_argument("--api-token", default=env_default("GATEWAY_SECRET", ""),
                            type=token_argument("--api-token or GATEWAY_SECRET"),
                            help="bearer token clients must send (env GATEWAY_SECRET; empty: no auth)")
        parser.add_argument("-m", "--prometheus-url",
                            default=env_default("PROMETHEUS_URL", "http://prometheus:9090"),
                            help="Prometheus for /api/metrics (env PROMETHEUS_URL; default %(default)s)")
        parser.add_argument("--pulsar-admin-url", default=env_default("PULSAR_ADMIN_URL"),
                            help="the broker's admin/metrics URL (Apache Pulsar: http://pulsar:8080), "
                                 "read for GET /api/v1/broker/consumers (env PULSAR_ADMIN_URL)")
        parser.add_argument("--stack-status", default=None,
                            help="the component states tg-launch writes (run/components.json), "
                                 "reported by GET /api/v1/health (tg-launch passes it)")
        parser.add_argument("--timeout", type=_positive, default=DEFAULT_TIMEOUT,
                            help="deadline of each call in seconds (default %(default)s)")
        add_limit_arguments(parser)
        # --config-request-queue and --config-response-queue: every processor's (AsyncProcessor).
        parser.add_argument("--flow-request-queue", default=FLOW_REQUEST)
        parser.add_argument("--flow-response-queue", default=FLOW_RESPONSE)
        # Upstream's knowledge and librarian services are not in this fork, but the
        # gateway routes to them where they run.
        parser.add_argument("--knowledge-request-queue", default=knowledge_request_queue)
        parser.add_argument("--knowledge-response-queue", default=knowledge_response_queue)
        parser.add_argument("--librarian-request-queue", default=librarian_request_queue)
        parser.add_argument("--librarian-response-queue", default=librarian_response_queue)


def _positive(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def run() -> None:
    """Console-script entry point of ``api-gateway``."""
    Processor.launch(default_ident, __doc__)
