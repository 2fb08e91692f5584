"""The gateway's HTTP surface: routes, middlewares and REST handlers.

REST answers are HTTP 200 with a JSON body even when the call failed, as
upstream's (clients look for an ``error`` key): a routing problem or a body
that is not JSON is ``{"error": "<text>"}``, a body that cannot be
translated ``{"error": {"type": "gateway-error", "message": ...}}`` (the
shapes upstream's gateway gives); only authentication failures
are 401, and requests the server cannot take at all (unknown path, wrong
method, a body over ``limits.MAX_BODY``, 32 MiB: 413; a body that does not
keep to its pace, ``connections.BodyPace``: 408) get their HTTP status with a
JSON body.  A body nested deeper than ``limits.MAX_JSON_DEPTH``
levels, or with more than ``limits.MAX_JSON_CONTAINERS`` arrays and
objects, is not JSON this gateway reads: ``{"error": "Bad request: ..."}``
like any unreadable body.  No failure, expected or not, is answered with a
traceback.

Endpoints (all need the token when one is set, except health):

* ``POST /api/v1/{kind}``: global services ``config``, ``flow``, ``librarian``,
  ``knowledge``, ``collection-management``;
* ``POST /api/v1/flow/{flow}/service/{kind}``: flow services (translators/),
  the one-way ``text-load`` and ``document-load`` included;
* ``GET /api/v1/socket``: the websocket multiplexer (mux.py);
* ``GET /api/v1/flow/{flow}/import/{kind}``, ``.../export/{kind}``,
  ``POST /api/v1/import-core``, ``GET /api/v1/export-core``: bulk streams (bulk.py);
* ``POST /api/v1/tool-service``: call a tool or a tool service (tool_services.py);
* ``GET /api/v1/tool-catalog``: the tool catalog of the current config
  (every tool, usable or not, with its arguments, service and problems);
* ``GET /api/v1/tool-services``: every tool service known from config or
  from its announcements, with its queues, replicas and last heartbeat;
* ``GET /api/v1/tool-service/errors``: the catalog's descriptor problems
  alone, a JSON list of strings;
* ``GET /api/v1/health``: liveness and readiness, see below;
* ``GET /api/v1/config/{type}/{key}``: one config item, ``{"type", "key", "value"
  (null when absent), "version"}``; tg-delete-config-item asks it first, since
  the wire's ``delete`` does not say whether the item was there;
* ``GET /api/v1/broker/consumers``: ``{"consumers": {"tenant/namespace/topic": n},
  "source": url}``, the broker's count of consumers per topic (its transport's
  ``consumer_counts``: on Pulsar, broker_consumers.py), when the gateway was given
  ``--pulsar-admin-url``; else 404 with an ``error``;
* ``GET /api/metrics/{path}``: proxied to ``{prometheus}/api/v1/{path}``.

``/api/v1/health`` answers ``{"status": "ok", "config-service": bool,
"version": int|null, "tool-services": ...}``: the gateway is up, whether
config-svc answered a 2-second probe, the config version it reported, and
the tool services: as ``/api/v1/tool-services`` lists them to a caller that
may see them (authentication off, or the token given), else only how many
are live and how many down.  Under tg-launch (``--stack-status``) it also
has ``components``: each process's state as the launcher's supervisor sees
it (``up``, ``starting``, ``restarting``, ``given-up``, with restart count,
reason and log), ``given-up``, the names of those it gave up on, and
``starting``, the names of those not up for the first time yet.  Any given
up makes ``status`` ``"degraded"``; any starting makes it ``"starting"``,
answered with HTTP 503, so a readiness probe (or a script that waits for the
stack) asks its first question only once every component can answer.  It is
left open so that load balancers and ``tg-launch`` can probe without the
secret; without it, it reveals only liveness and counters (``components``:
how many in each state), never config content, names, paths or the token.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web
from trustgraph.base.messaging import deadlines, tracing
from trustgraph.base.messaging.transport import Transport, TransportError
from trustgraph.base.safety import limits
from trustgraph.base.safety.connections import BodyPace, BodyTooSlow, ConnectionGuard

from . import bulk
from .auth import SOCKET_PATH, TokenAuth
from .connections import answer_and_close, busy_middleware, read_body
from .dispatch import Dispatcher, RoutingError
from .mux import socket_handler
from .tool_services import ToolServices
from .translators import BadRequest, gateway_error

logger = logging.getLogger(__name__)

MAX_BODY = limits.MAX_BODY


@dataclass
class Parts:
    """What the handlers need from the processor."""

    dispatcher: Dispatcher
    tools: ToolServices
    auth: TokenAuth
    timeout: float
    prometheus_url: str
    health: Callable[[bool], Awaitable[dict[str, Any]]]
    pulsar_admin_url: str | None = None
    transport: Transport | None = None     # the gateway's broker transport: its consumer counts
    guard: ConnectionGuard | None = None   # the server's connections (connections.py)
    pace: BodyPace = BodyPace()            # how fast a request body must arrive


def _json(body: Any, status: int = 200) -> web.Response:
    return web.json_response(body, status=status)


@web.middleware
async def _errors(request: web.Request, handler: Callable) -> web.StreamResponse:
    """Every failure as JSON: HTTP errors keep their status, bugs become a bare 500."""
    try:
        return await handler(request)
    except web.HTTPRequestEntityTooLarge:
        return _json({"error": f"Request body over the limit of {MAX_BODY:,} bytes"}, 413)
    except BodyTooSlow as e:
        logger.debug("%s %s: %s", request.method, request.path, e)
        return await answer_and_close(request, _json({"error": str(e)}, 408))
    except web.HTTPException as e:
        if e.status < 400:
            raise
        return _json({"error": e.reason}, e.status)
    except asyncio.CancelledError:
        raise
    except Exception:
        logger.exception("Unhandled error on %s %s", request.method, request.path)
        return _json({"error": "Internal error"}, 500)


def _auth_middleware(auth: TokenAuth) -> Callable:
    @web.middleware
    async def check(request: web.Request, handler: Callable) -> web.StreamResponse:
        if not auth.allows(request):
            logger.debug("Unauthorized %s %s", request.method, request.path)
            return _json({"error": "Unauthorized"}, 401)
        return await handler(request)
    return check


def _deadline(request: web.Request) -> float | None:
    """The caller's deadline, from our ``TrustGraph-Deadline`` header (absent: the gateway's own)."""
    return deadlines.parse(request.headers.get(deadlines.HEADER))


async def _read_json(request: web.Request, pace: BodyPace) -> Any:
    """The request body (read at ``pace``) as JSON, or raise :class:`RoutingError` saying what is wrong."""
    raw = await read_body(request, pace)
    try:
        return limits.loads(raw)
    except limits.JsonLimitError as e:
        raise RoutingError(f"Bad request: {e}") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
        raise RoutingError(f"Bad request: body is not valid JSON ({e})") from None


class Handlers:
    """The REST handlers, bound to the processor's parts."""

    def __init__(self, parts: Parts) -> None:
        self.p = parts
        self.sockets: set[web.WebSocketResponse] = set()
        self._http: aiohttp.ClientSession | None = None

    async def global_service(self, request: web.Request) -> web.Response:
        """``POST /api/v1/{kind}``: config and flow management."""
        return await self._service(request, request.match_info["kind"], None)

    async def flow_service(self, request: web.Request) -> web.Response:
        """``POST /api/v1/flow/{flow}/service/{kind}``: only the final message is returned."""
        return await self._service(request, request.match_info["kind"], request.match_info["flow"])

    async def _service(self, request: web.Request, kind: str, flow: str | None) -> web.Response:
        # A W3C traceparent header makes the call part of the caller's trace (tracing.py).
        with tracing.served(f"gateway {kind}", request.headers, trustgraph_service=kind, trustgraph_flow=flow):
            try:
                body = await _read_json(request, self.p.pace)
                return _json(await self.p.dispatcher.call(kind, flow, body, deadline=_deadline(request)))
            except RoutingError as e:
                return _json({"error": str(e)})
            except BadRequest as e:
                return _json(gateway_error(str(e)))

    async def tool_service(self, request: web.Request) -> web.Response:
        """``POST /api/v1/tool-service``: streamed chunks come back joined."""
        with tracing.served("gateway tool-service", request.headers, trustgraph_service="tool-service"):
            try:
                body = await _read_json(request, self.p.pace)
            except RoutingError as e:
                return _json({"error": str(e)})
            return _json(await self.p.tools.call(body, deadline=_deadline(request)))

    async def tool_service_errors(self, _request: web.Request) -> web.Response:
        """``GET /api/v1/tool-service/errors``: what is wrong with the descriptors."""
        return _json(self.p.tools.errors)

    async def tool_catalog(self, _request: web.Request) -> web.Response:
        """``GET /api/v1/tool-catalog``: every tool and its problems, for tg-show-tools."""
        return _json(self.p.tools.catalog_json())

    async def tool_services(self, _request: web.Request) -> web.Response:
        """``GET /api/v1/tool-services``: every known service and its replicas, for tg-show-tool-services."""
        return _json(self.p.tools.services_json())

    async def health(self, request: web.Request) -> web.Response:
        """``GET /api/v1/health``: open to all (see the module docstring); 503 while starting."""
        body = await self.p.health(self.p.auth.authorized(request))
        return _json(body, 503 if body.get("status") == "starting" else 200)

    async def socket(self, request: web.Request) -> web.StreamResponse:
        """``GET /api/v1/socket``: the multiplexer; authentication happened in the middleware."""
        return await socket_handler(request, self.p.dispatcher, self.p.tools,
                                    self.p.timeout, self.sockets)

    async def import_socket(self, request: web.Request) -> web.StreamResponse:
        """``GET /api/v1/flow/{flow}/import/{kind}``."""
        return await bulk.import_socket(request, self.p.dispatcher)

    async def export_socket(self, request: web.Request) -> web.StreamResponse:
        """``GET /api/v1/flow/{flow}/export/{kind}``."""
        return await bulk.export_socket(request, self.p.dispatcher, self.p.timeout)

    async def import_core(self, request: web.Request) -> web.StreamResponse:
        """``POST /api/v1/import-core``."""
        return await bulk.import_core(request, self.p.dispatcher)

    async def export_core(self, request: web.Request) -> web.StreamResponse:
        """``GET /api/v1/export-core``."""
        return await bulk.export_core(request, self.p.dispatcher)

    async def config_item(self, request: web.Request) -> web.Response:
        """``GET /api/v1/config/{type}/{key}``: a ``get`` of one item."""
        ctype, key = request.match_info["type"], request.match_info["key"]
        try:
            reply = await self.p.dispatcher.call(
                "config", None, {"operation": "get", "keys": [{"type": ctype, "key": key}]})
        except (RoutingError, BadRequest) as e:
            return _json({"error": str(e)})
        if reply.get("error"):
            return _json(reply)
        values = reply.get("values") or [{}]
        return _json({"type": ctype, "key": key, "value": values[0].get("value"),
                      "version": reply.get("version")})

    async def broker_consumers(self, _request: web.Request) -> web.Response:
        """``GET /api/v1/broker/consumers``: who consumes what, as the broker counts it."""
        transport = self.p.transport
        try:
            counts = await transport.consumer_counts() if transport is not None else None
        except TransportError as e:
            logger.info("Broker consumer counts unavailable: %s", e)
            return _json({"error": str(e)}, 502)
        if counts is None:
            return _json({"error": "the gateway was not given the broker's --pulsar-admin-url"}, 404)
        admin = self.p.pulsar_admin_url
        source = f"{admin.rstrip('/')}/metrics" if admin else transport.capabilities.name
        return _json({"consumers": dict(counts), "source": source})

    def _session(self) -> aiohttp.ClientSession:
        if self._http is None:
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.p.timeout))
        return self._http

    async def metrics(self, request: web.Request) -> web.Response:
        """Proxy a Prometheus API query, so dashboards need only the gateway's address."""
        path = request.match_info["path"]
        if ".." in path.split("/"):
            return _json({"error": "Bad metrics path"}, 400)
        url = f"{self.p.prometheus_url.rstrip('/')}/api/v1/{path}"
        try:
            async with self._session().get(url, params=request.query) as resp:
                body = await resp.read()
                return web.Response(body=body, status=resp.status,
                                    content_type=resp.content_type or "application/json")
        except (aiohttp.ClientError, TimeoutError) as e:
            logger.warning("Metrics proxy to %s failed: %s", url, e)
            return _json({"error": f"Prometheus not reachable: {type(e).__name__}"}, 502)

    async def on_shutdown(self, _app: web.Application) -> None:
        """Tell socket clients we are going (1001) rather than dropping the connection."""
        for ws in list(self.sockets):
            await ws.close(code=aiohttp.WSCloseCode.GOING_AWAY, message=b"Gateway shutting down")
        if self._http is not None:
            await self._http.close()


def build_app(parts: Parts) -> web.Application:
    """The aiohttp application: fixed routes first, so ``{kind}`` never captures them."""
    middlewares = [_errors, _auth_middleware(parts.auth)]
    if parts.guard is not None:
        middlewares.insert(0, busy_middleware(parts.guard))
    app = web.Application(middlewares=middlewares, client_max_size=MAX_BODY)
    h = Handlers(parts)
    app.on_shutdown.append(h.on_shutdown)
    app.router.add_get("/api/v1/health", h.health)
    app.router.add_get(SOCKET_PATH, h.socket)
    app.router.add_post("/api/v1/tool-service", h.tool_service)
    app.router.add_get("/api/v1/tool-service/errors", h.tool_service_errors)
    app.router.add_get("/api/v1/tool-catalog", h.tool_catalog)
    app.router.add_get("/api/v1/tool-services", h.tool_services)
    app.router.add_get("/api/v1/broker/consumers", h.broker_consumers)
    app.router.add_get("/api/v1/config/{type}/{key:.+}", h.config_item)
    app.router.add_post("/api/v1/flow/{flow}/service/{kind}", h.flow_service)
    app.router.add_get("/api/v1/flow/{flow}/import/{kind}", h.import_socket)
    app.router.add_get("/api/v1/flow/{flow}/export/{kind}", h.export_socket)
    app.router.add_post("/api/v1/import-core", h.import_core)
    app.router.add_get("/api/v1/export-core", h.export_core)
    app.router.add_post("/api/v1/{kind}", h.global_service)
    app.router.add_get("/api/metrics/{path:.+}", h.metrics)
    return app
