"""mcp-tool: calls tools on MCP servers for the agent (and anyone on the flow's mcp-tool queues).

Serves ``ToolRequest{name, parameters}`` on each flow's ``request`` topic and
answers ``ToolResponse`` on ``response``, as upstream 2.1.4's does.  ``name`` is a
key of config type ``mcp``, whose entry says where the server is (``url``),
the tool's name there (``remote-name``, default the key), an optional
``auth-token`` (sent as ``Authorization: Bearer ...``) and our ``transport``
(``streamable-http``, the default, or ``sse``).  A result with
``structuredContent`` is sent as ``object`` (JSON text), else the text of its
content, joined.

Where it differs from upstream 2.1.4 (same topics, records and config):

* one connection per server, kept between calls (upstream opens a session
  per call, ``initialize`` included) and opened again when it breaks, so a
  restarted server is used again without restarting this service; it speaks
  the server's revision of MCP: 2026-07-28 statelessly (no handshake, no
  session) where the server answers ``server/discover``, else the session
  era's handshake (``mcp_client.connection``);
* a result flagged ``isError`` is a ``tool-error`` with the server's text
  (upstream passes it on as if the tool had succeeded);
* every call is bounded by the request's deadline (at most ``--timeout``):
  a server that is down or slow is a ``tool-error`` before the caller gives
  up, never a hang;
* ``mcp`` entries are checked by the tool catalog's model; a bad one is
  logged and answered with what is wrong, and the others keep working;
* ``-c/--concurrency`` defaults to 8 (calls share the server's connection);
* a reply over 8 MiB (``mcp_client.connection.MAX_REPLY_BYTES``) is cut while
  it is read and answered with a ``tool-error`` saying so (upstream reads any
  size whole).
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Mapping
from typing import Any

from trustgraph.base.messaging.pubsub import Message
from trustgraph.base.messaging.serving import Replies, Reply, ServiceError
from trustgraph.base.processors.flow_processor import ConsumerSpec, Flow, FlowProcessor, ProducerSpec
from trustgraph.base.safety import limits
from trustgraph.catalog import McpServer, build_catalog
from trustgraph.mcp_client.connection import (
    McpCallFailed,
    McpConnection,
    McpReplyTooLarge,
    McpUnavailable,
    ServerAddress,
)
from trustgraph.mcp_client.results import McpToolError, read_result
from trustgraph.schema import ToolRequest, ToolResponse

logger = logging.getLogger(__name__)

default_ident = "mcp-tool"
default_concurrency = 8
default_timeout = 60.0
ERROR_TYPE = "tool-error"

REPLIES = Replies(
    error_record=lambda error: ToolResponse(error=error, text=None, object=None),
    error_type=ERROR_TYPE,
    describe=lambda e: str(e) or type(e).__name__,
)


def address_of(server: McpServer) -> ServerAddress:
    """The session key: entries naming one server with one token and transport share a session."""
    return ServerAddress(server.url, server.transport, server.auth_token)


def parameters_of(raw: str | None) -> dict[str, Any]:
    """``ToolRequest.parameters`` (JSON text) as the tool's arguments; empty means none."""
    try:
        return limits.loads_object(raw, "parameters", verb="are")
    except ValueError as e:
        raise ServiceError(str(e)) from None


class Processor(FlowProcessor):
    """The MCP invoker: flows from ``active-flow[<id>]``, servers from config type ``mcp``."""

    def __init__(self, **params: Any) -> None:
        params["concurrency"] = params.get("concurrency") or default_concurrency
        super().__init__(**params)
        self.timeout = float(params.get("timeout") or default_timeout)
        self.servers: Mapping[str, McpServer] = {}
        self.problems: dict[str, str] = {}
        self.raw: dict[str, str] = {}
        self.connections: dict[ServerAddress, McpConnection] = {}
        # The SDK logs a whole traceback at ERROR each time a server is unreachable;
        # our tool-error already says so in one line.
        quiet = logging.DEBUG if logger.isEnabledFor(logging.DEBUG) else logging.CRITICAL
        for name in ("mcp.client.streamable_http", "mcp.client.sse"):
            logging.getLogger(name).setLevel(quiet)
        self.register_config_handler(self.on_mcp_config, types=["mcp"])
        self.register_specification(ConsumerSpec("request", ToolRequest, self.on_request, replies=REPLIES))
        self.register_specification(ProducerSpec("response", ToolResponse))

    async def on_mcp_config(self, config: dict[str, dict[str, str]], version: int) -> None:
        """Swap in the new entries; sessions no entry uses any more are closed."""
        section = dict(config.get("mcp") or {})
        catalog = build_catalog({"mcp": section})
        problems = {e.key: str(e) for e in catalog.errors if e.kind == "mcp"}
        for key, problem in problems.items():
            if self.problems.get(key) != problem:
                logger.warning("MCP entry skipped: %s", problem)
        self.servers, self.problems, self.raw = catalog.mcp, problems, section
        logger.info("MCP entries: %s (%d with problems)", ", ".join(sorted(self.servers)) or "none",
                    len(problems))
        used = {address_of(s) for s in self.servers.values()}
        for address in [a for a in self.connections if a not in used]:
            await self.connections.pop(address).close()

    def _server(self, name: str) -> McpServer:
        server = self.servers.get(name)
        if server is not None:
            return server
        if name in self.problems:
            try:
                has_url = "url" in limits.loads(self.raw.get(name) or "{}")
            except (ValueError, TypeError, AttributeError):
                has_url = True
            if not has_url:
                raise ServiceError(f"MCP service {name} URL not defined")   # upstream's words
            raise ServiceError(f"MCP service {name} is misconfigured: {self.problems[name]}")
        raise ServiceError(f"MCP service {name} not known")   # upstream's words

    def connection(self, server: McpServer) -> McpConnection:
        address = address_of(server)
        conn = self.connections.get(address)
        if conn is None:
            conn = self.connections[address] = McpConnection(address)
        return conn

    async def on_request(self, msg: Message, flow: Flow, reply: Reply) -> None:
        """Call the tool; every failure becomes a ``tool-error`` saying what to fix."""
        request: ToolRequest = msg.value
        name = request.name or ""
        server = self._server(name)
        arguments = parameters_of(request.parameters)
        remote = server.remote_name or name
        # A margin kept back from the caller's deadline: the error of a call that ran out of time
        # must reach the caller while it still waits.
        timeout = reply.for_work(self.timeout)
        if timeout <= 0:
            raise ServiceError("the caller's deadline passed before the call started")
        logger.debug("Calling %s on %s (%.1fs)", remote, server.url, timeout)
        try:
            result = await self.connection(server).call_tool(remote, arguments, timeout)
            output = read_result(result)
        except McpToolError as e:
            raise ServiceError(f"MCP tool {remote} failed: {e}") from None
        except McpUnavailable as e:
            raise ServiceError(f"MCP service {name}: {e}") from None
        except McpReplyTooLarge as e:
            raise ServiceError(f"MCP service {name}: the result of {remote} is too large to use: {e}") from None
        except McpCallFailed as e:
            raise ServiceError(f"MCP service {name}: {server.url} refused the call to {remote}: {e}") from None
        except TimeoutError:
            raise ServiceError(f"MCP service {name}: tool {remote} at {server.url} did not answer within "
                               f"{timeout:.1f}s") from None
        except ValueError as e:
            raise ServiceError(f"MCP service {name}: tool {remote} gave a malformed result: {e}") from None
        await reply.send(ToolResponse(error=None, text=output.text, object=output.obj))

    async def stop(self) -> None:
        for conn in list(self.connections.values()):
            await conn.close()
        self.connections.clear()
        await super().stop()

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument("-c", "--concurrency", type=int, default=default_concurrency,
                            help="calls handled at once per flow (default %(default)s)")
        parser.add_argument("--timeout", type=float, default=default_timeout,
                            help="seconds one call may take at most; a request's own deadline is kept "
                                 "when it is sooner (default %(default)s)")


def run() -> None:
    """Console script ``mcp-tool``."""
    Processor.launch(default_ident, __doc__)
