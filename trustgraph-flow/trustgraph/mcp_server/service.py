"""mcp-server: every tool of the catalog, offered to any MCP client over Streamable HTTP.

Serves ``http://127.0.0.1:8089/mcp`` (``--host``, ``--port``, ``--path``) with
the official MCP SDK's low-level server.  The tools are the catalog's (see
:mod:`trustgraph.catalog`): configured and announced tool services, and the
other types the agent can call, each with its argument schema as its input
schema; the list follows config pushes and the services that announce
themselves (:class:`~trustgraph.base.tool_services.catalog_feed.CatalogFeed`), and every
connected client is told when it changes (``notifications/tools/list_changed``).

A call is made as the agent makes it (``tools.py``): tool services through
the shared client pool (fail-fast for a service that stopped, retries for
idempotent ones), the other types through the flow's clients (``--flow``,
default ``default``: the processor's entry ``mcp-server:{id}`` in the flow
blueprint holds the same client keys as the agent's).  Calls are made as
``--user`` (MCP has no user of its own).  Errors come back as results
flagged ``isError``; a streaming tool service's chunks as progress
notifications.

Every request needs ``Authorization: Bearer <token>`` with the gateway's
token (``--api-token``, default ``$GATEWAY_SECRET``, as the gateway's) or
mcp-server's own (``--token``, default ``$MCP_SERVER_TOKEN``), whichever are
set: a deployment that protects its gateway protects its MCP server too.
With neither, anything that can reach the port can call every tool, so it
listens on this machine only: an address beyond 127.0.0.1 (``--host
0.0.0.0``) without a token is refused at start.

It speaks both eras of MCP (``revisions.py``): the session era (2024-11-05
to 2025-11-25, ``initialize`` and an ``Mcp-Session-Id``) and 2026-07-28
(stateless: each request carries its revision and capabilities, and
``server/discover`` says what is served); a request of any other revision
gets the protocol's UnsupportedProtocolVersion error and changes nothing.
A call that ``tool-policy/approval`` holds for a person (as the agent does) is
not made until a 2026-07-28 client's user approves it through
``input_required``; other clients are told they cannot approve it
(``approval.py``).
To a 2026-07-28 client that takes tasks, a call still running after
``--task-after`` seconds (2) is answered with a task it polls or cancels
(``tasks.py``).

Sessions end after ``--session-idle-timeout`` (30 minutes) with nothing in
flight, and at most ``--max-sessions`` (1,000) are held: at the cap the least
recently used idle one is ended to make room (``sessions.py``).  Connections
are held to the same limits as the gateway's (``connections.py``:
``--max-connections``, ``--idle-timeout``, ``--header-timeout``, the body pace).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Iterator, Mapping
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import NotificationOptions, Server
from trustgraph.base.command_line import MCP_SERVER_HEADER, number
from trustgraph.base.launching.listening import is_loopback
from trustgraph.base.processors.async_processor import StartRefused, env_default
from trustgraph.base.processors.flow_processor import FlowProcessor, RequestResponseSpec
from trustgraph.base.safety.connections import (
    ConnectionGuard,
    ServerLimits,
    add_limit_arguments,
    positive_count,
    positive_seconds,
    quiet_accept_errors,
)
from trustgraph.base.safety.secrets import token_argument
from trustgraph.base.tool_services.catalog_feed import CatalogFeed
from trustgraph.base.tool_services.tool_service_client import ToolServiceClients
from trustgraph.catalog import build_catalog
from trustgraph.catalog.implementations import FLOW_CLIENTS

from .approval import Approvals
from .auth import bearer_only
from .connections import guarded_protocol
from .notify import ChangeNotifier
from .revisions import revision_gate
from .sessions import MAX_SESSIONS, SESSION_IDLE_TIMEOUT, SessionKeeper
from .tasks import EXTENSION, TASK_AFTER, TaskBoard, UpdateTaskParams, takes_tasks
from .tools import ToolTable

logger = logging.getLogger(__name__)

default_ident = "mcp-server"
default_port = 8089
default_timeout = 60.0
DEFAULT_USER = "trustgraph"


class _Server(Server):
    """The SDK's server, saying in its capabilities that the tool list may change."""

    def create_initialization_options(self, notification_options: Any = None, *args: Any, **kw: Any) -> Any:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True), *args, **kw)


class _Uvicorn(uvicorn.Server):
    """uvicorn inside a processor: the processor owns SIGINT/SIGTERM, not uvicorn."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class Processor(FlowProcessor):
    """The MCP face of the catalog: an HTTP server in the processor's own event loop."""

    def __init__(self, **params: Any) -> None:
        host: str = params.get("host") or "127.0.0.1"
        tokens = [t for t in (params.get("token"), params.get("api_token")) if t]
        if not tokens and not is_loopback(host):
            raise StartRefused(
                f"will not listen on {host} without a token: anything that reaches it could "
                "call every tool; set MCP_SERVER_TOKEN (or GATEWAY_SECRET), or keep --host 127.0.0.1")
        super().__init__(**params)
        self.host = host
        self.tokens: list[str] = tokens
        self.port = int(params.get("port") if params.get("port") is not None else default_port)
        self.path: str = params.get("path") or "/mcp"
        self.flow_name: str = params.get("flow") or "default"
        self.user: str = params.get("user") or DEFAULT_USER
        self.timeout = float(params.get("timeout") or default_timeout)
        self.limits = ServerLimits.from_params(params)
        self.session_idle_timeout = float(params.get("session_idle_timeout") or SESSION_IDLE_TIMEOUT)
        self.max_sessions = int(params.get("max_sessions") or MAX_SESSIONS)
        self.guard: ConnectionGuard | None = None
        self.sessions: SessionKeeper | None = None
        groups = params.get("group")
        self.groups: list[str] | None = list(groups) if groups else None
        self.feed = CatalogFeed(self, self.on_catalog)
        self.clients = ToolServiceClients(self.pubsub, name=self.id, liveness=self.feed.directory.live_for)
        self.table = ToolTable({})
        self.notifier = ChangeNotifier()
        after = params.get("task_after")
        self.tasks = TaskBoard(after=TASK_AFTER if after is None else float(after))
        # A 2026-07-28 call's Mcp-Param headers are checked against the tool's schema: looked
        # up here (the SDK would otherwise run the whole tools/list for every call).
        self.mcp = _Server("trustgraph", version="2.1", instructions="The tools of a TrustGraph deployment.",
                           on_list_tools=self._list_tools, on_call_tool=self._call_tool,
                           on_subscriptions_listen=self.notifier.listen,
                           get_tool_input_schema=self._input_schema)
        self.mcp.middleware.append(self.notifier)
        # Seals the state of an approval asked with input_required, and checks it on the retry.
        self.approvals = Approvals()
        self.mcp.middleware.append(self.approvals.boundary)
        self.mcp.extensions[EXTENSION] = {}
        self.mcp.add_request_handler("tasks/get", types.GetTaskRequestParams, self.tasks.get)
        self.mcp.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, self.tasks.cancel)
        self.mcp.add_request_handler("tasks/update", UpdateTaskParams, self.tasks.update)
        self._http: _Uvicorn | None = None
        self._serving: asyncio.Task | None = None
        self.bound_port: int | None = None
        for prefix, (req, resp) in FLOW_CLIENTS.items():
            self.register_specification(RequestResponseSpec(
                f"{prefix}-request", req, f"{prefix}-response", resp, timeout=self.timeout))

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.bound_port or self.port}{self.path}"

    # -- the catalog -----------------------------------------------------------------
    async def on_catalog(self, config: dict[str, dict[str, str]], announced: Mapping[str, Any]) -> None:
        """Swap in the new tools; tell the clients when what they see changed."""
        catalog = build_catalog(config, announced)
        table = ToolTable.build(catalog, self.clients, self.groups)
        before = self.table.signature()
        self.table = table
        await self.clients.keep(catalog.service_queue_pairs)
        if table.signature() != before:
            logger.info("MCP tools: %s", ", ".join(table.tools) or "none")
            await self.notifier.tools_changed()

    # -- MCP handlers ----------------------------------------------------------------
    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.table.listing())

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        tool = self.table.tools.get(name)
        return dict(tool.schema) if tool is not None else None

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams
                         ) -> types.CallToolResult | types.InputRequiredResult | dict:
        sent = 0
        inline = [True]   # false once the call is a task: its response was sent

        async def progress(chunk: str) -> None:
            nonlocal sent
            if not inline[0]:
                return
            sent += 1
            with contextlib.suppress(Exception):   # a client gone mid-call must not fail the call
                await ctx.session.report_progress(sent, None, chunk)

        table = self.table   # the tools and the policy of one catalog, for the check and the call alike

        def call() -> Any:
            return table.call(params.name, params.arguments, user=self.user,
                              flow=self.flows.get(self.flow_name), timeout=self.timeout, progress=progress)

        tool = table.tools.get(params.name)
        if tool is not None and (instead := self.approvals.check(ctx, params, tool, table.approval)) is not None:
            return instead
        if takes_tasks(ctx):
            return await self.tasks.call(ctx, call, inline)
        return await call()

    # -- lifecycle ---------------------------------------------------------------------
    def _bind(self) -> socket.socket:
        # IPPROTO_TCP named, not left 0: asyncio sets TCP_NODELAY only on sockets that say they are
        # TCP, and without it a JSON reply's body waited for the client's delayed ACK (44 ms for
        # every MCP 2026-07-28 request; 1.7 ms with it).
        sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM,
                             socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as e:
            sock.close()
            raise RuntimeError(f"mcp-server cannot listen on {self.host}:{self.port}: {e.strerror or e}; "
                               "give another --port") from None
        sock.listen(128)
        sock.setblocking(False)
        self.bound_port = sock.getsockname()[1]
        return sock

    async def start(self) -> None:
        sock = self._bind()
        app: Any = self.mcp.streamable_http_app(streamable_http_path=self.path, host=self.host,
                                                session_idle_timeout=self.session_idle_timeout,
                                                max_sessions=self.max_sessions)
        self.sessions = app = SessionKeeper(app, max_sessions=self.max_sessions,
                                            idle_timeout=self.session_idle_timeout)
        app = revision_gate(app)
        if self.tokens:
            app = bearer_only(app, *self.tokens)
        self.guard = guard = ConnectionGuard("mcp-server", self.limits)
        quiet_accept_errors(asyncio.get_running_loop(), "mcp-server",
                            lambda: f"{len(guard):,} connections open, at most {guard.cap:,}")
        # The Server header names us, so that a tg-* command pointed here (8089 for the
        # gateway's 8088) can say which port it hit (trustgraph.base.command_line.not_found_hint).
        self._http = _Uvicorn(uvicorn.Config(app, log_level="warning", lifespan="on",
                                             headers=[("server", MCP_SERVER_HEADER)],
                                             http=guarded_protocol(guard)))
        await self.feed.start()
        await super().start()
        guard.start()
        self._serving = asyncio.ensure_future(self._http.serve(sockets=[sock]))
        while not self._http.started:
            if self._serving.done():
                self._serving.result()
                raise RuntimeError("mcp-server's HTTP server stopped while starting")
            await asyncio.sleep(0.02)
        logger.info("MCP server on %s (%s)", self.url, "bearer token required" if self.tokens else "no token")

    async def stop(self) -> None:
        if self._http is not None and self._serving is not None:
            self._http.should_exit = True
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._serving, 10)
        if self.guard is not None:
            await self.guard.stop()
        await self.tasks.stop()
        await self.feed.stop()
        await self.clients.close()
        await super().stop()

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument("--host", default="127.0.0.1",
                            help="address to listen on (default %(default)s: this machine only)")
        parser.add_argument("--port", type=int, default=default_port, help="port (default %(default)s)")
        parser.add_argument("--path", default="/mcp", help="the MCP endpoint's path (default %(default)s)")
        parser.add_argument("--token", default=os.environ.get("MCP_SERVER_TOKEN"),
                            type=token_argument("--token or MCP_SERVER_TOKEN"),
                            help="a bearer token that opens the endpoint (default $MCP_SERVER_TOKEN)")
        parser.add_argument("--api-token", default=env_default("GATEWAY_SECRET", ""),
                            type=token_argument("--api-token or GATEWAY_SECRET"),
                            help="the gateway's token, which opens the endpoint too (default "
                                 "$GATEWAY_SECRET); with neither token set there is no auth, and only "
                                 "a loopback --host is allowed")
        parser.add_argument("--flow", default="default",
                            help="flow whose services the non-tool-service tools call (default %(default)s)")
        parser.add_argument("--user", default=DEFAULT_USER, help="user tool services are called as")
        parser.add_argument("--group", nargs="+", default=None,
                            help="offer only tools of these groups (default: every tool)")
        parser.add_argument("--timeout", type=float, default=default_timeout,
                            help="seconds one tool call may take (default %(default)s)")
        parser.add_argument("--task-after", type=number(float, 0, exclusive=False), default=TASK_AFTER,
                            help="seconds a call of an MCP 2026-07-28 client that takes tasks may run before it "
                                 "is answered with a task to poll (0: every such call, inf: none; default %(default)s)")
        parser.add_argument("--session-idle-timeout", type=positive_seconds, default=SESSION_IDLE_TIMEOUT,
                            help="seconds an MCP session may have nothing in flight before it ends; its "
                                 "client then opens a new one (default %(default)s)")
        parser.add_argument("--max-sessions", type=positive_count, default=MAX_SESSIONS,
                            help="MCP sessions held at most; at the limit the least recently used idle one "
                                 "ends to make room, and a new one is refused (503) only when every one is "
                                 "busy (default %(default)s)")
        add_limit_arguments(parser)


def run() -> None:
    """Console script ``mcp-server``."""
    Processor.launch(default_ident, __doc__)
