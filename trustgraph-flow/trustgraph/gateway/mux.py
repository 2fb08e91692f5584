"""The websocket multiplexer, ``GET /api/v1/socket`` (upstream 2.1.4's frames).

A client sends frames ``{"id", "service", "flow"?, "request"}`` and gets
``{"id", "response", "complete"}`` back, one frame per service message, so a
streaming service is forwarded as it produces.  Many requests run at once on
one socket; at most :data:`MAX_IN_FLIGHT` (16, as upstream), after which the
socket stops reading until one finishes, so a client cannot make the gateway
hold an unbounded number of calls.

* an optional ``"deadline"`` (UNIX time, our extension) says when the client
  stops waiting; the call and the services behind it end by then;
* an optional ``"traceparent"`` (and ``"tracestate"``), W3C trace context (our
  extension, as the HTTP headers of that name on REST calls): the call joins
  the client's trace; a malformed one starts a new trace, as W3C says;
* no ``flow`` means a global service (``config``, ``flow``); service
  ``tool-service`` takes the body of ``POST /api/v1/tool-service`` and streams
  ``{"response": chunk, "end_of_stream": false}`` per chunk, then
  ``{"response": "", "end_of_stream": true}`` with ``complete: true``;
* service errors, timeouts included, arrive as
  ``{"id", "response": {"error": {"type", "message"}}, "complete": true}``;
  so do routing errors and malformed frames whenever the frame was readable
  far enough to have an id (type ``gateway-error``): the request's own error
  response, which upstream's clients read as they read a service error;
* a frame without a readable id gets ``{"error": "<text>"}`` (upstream's
  shape: nobody could match it to a request);
* a frame over the JSON limits (``limits``: nested deeper than 100 levels,
  more than a million arrays and objects) is answered like any malformed
  one, with its id when the frame starts with one (``{"id": ...``), and the
  socket stays open with every other call on it; only a frame over
  ``limits.MAX_BODY`` (32 MiB) closes the socket, with the protocol's code
  1009 (message too big), since it is refused before it is read.

Sends from concurrent calls are serialised, and each has a deadline: a client
that stops reading is disconnected rather than holding calls open forever.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

from aiohttp import WSMsgType, web
from trustgraph.base.messaging import deadlines, tracing
from trustgraph.base.safety import limits

from .dispatch import Dispatcher, RoutingError, SocketGone
from .tool_services import ToolServices
from .translators import BadRequest, JsonObject, gateway_error

logger = logging.getLogger(__name__)

MAX_IN_FLIGHT = 16
MAX_FRAME = limits.MAX_BODY
# The id of a frame the decoder refused, when the frame begins with it (as
# every client we know writes it), so the error still reaches its caller.
_LEADING_ID = re.compile(r'\s*\{\s*"id"\s*:\s*("(?:[^"\\\n]|\\.){0,1024}"|-?\d{1,30})\s*,')
TOOL_SERVICE = "tool-service"


def _leading_id(text: str) -> Any:
    """The id a refused frame starts with, or None."""
    m = _LEADING_ID.match(text)
    if m is None:
        return None
    try:
        return json.loads(m[1])
    except ValueError:
        return None


def _trace(frame: dict[str, Any]) -> dict[str, str]:
    """The frame's W3C trace context fields, as message properties (text only; checked where read)."""
    return {k: v for k in (tracing.TRACEPARENT, tracing.TRACESTATE) if isinstance(v := frame.get(k), str)}


def _readable_id(frame: Any) -> Any:
    """The frame's id when it has a usable one (a JSON string or number)."""
    if isinstance(frame, dict):
        rid = frame.get("id")
        if isinstance(rid, (str, int, float)) and not isinstance(rid, bool):
            return rid
    return None


class SocketSession:
    """One websocket connection and the calls running on it."""

    def __init__(self, ws: web.WebSocketResponse, dispatcher: Dispatcher, tools: ToolServices,
                 *, send_timeout: float, max_in_flight: int = MAX_IN_FLIGHT) -> None:
        self.ws = ws
        self.dispatcher = dispatcher
        self.tools = tools
        self.send_timeout = send_timeout
        self._slots = asyncio.Semaphore(max_in_flight)
        self._send_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task] = set()
        self._gone = False
        self._closer: asyncio.Task | None = None

    async def run(self) -> None:
        """Read frames until the client closes, then cancel what is still running."""
        try:
            async for msg in self.ws:
                if msg.type == WSMsgType.TEXT:
                    await self._guarded(msg.data)
                elif msg.type == WSMsgType.BINARY:
                    try:
                        text = msg.data.decode("utf-8")
                    except UnicodeDecodeError:
                        await self._send({"error": "Bad message: binary frame is not UTF-8 JSON"})
                        continue
                    await self._guarded(text)
                elif msg.type == WSMsgType.ERROR:
                    logger.debug("Websocket error: %s", self.ws.exception())
                    break
                if self._gone:
                    break
        except SocketGone:
            pass
        finally:
            self._gone = True
            if self._closer is not None:
                await asyncio.gather(self._closer, return_exceptions=True)
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _guarded(self, text: str) -> None:
        """One frame; a failure of ours is that frame's error, never the end of the socket."""
        try:
            await self._on_frame(text)
        except (SocketGone, asyncio.CancelledError):
            raise
        except Exception:
            logger.exception("Websocket frame could not be handled")
            await self._send({"error": "Internal error"})

    async def _on_frame(self, text: str) -> None:
        try:
            frame = limits.loads(text)
        except limits.JsonLimitError as e:
            await self._send(self._routing_error(f"Bad message: {e}", _leading_id(text)))
            return
        except ValueError as e:
            await self._send({"error": f"Bad message: not valid JSON ({e})"})
            return
        rid = _readable_id(frame)
        problem = None
        if not isinstance(frame, dict):
            problem = "Bad message: a frame must be a JSON object"
        elif rid is None:
            problem = "Bad message: 'id' is missing (a string or number)"
        elif isinstance(rid, str) and limits.id_problem(rid):
            problem = f"Bad message: {limits.id_problem(rid)}"
        elif "request" not in frame:
            problem = "Bad message: 'request' is missing"
        elif not isinstance(frame.get("service"), str) or not frame["service"]:
            problem = "Bad message: 'service' is missing"
        elif frame.get("flow") is not None and not isinstance(frame["flow"], str):
            problem = "Bad message: 'flow' must be a string"
        if problem is not None:
            await self._send(self._routing_error(problem, rid))
            return
        # Wait for a slot here, not in the task: the socket stops reading while
        # it is full, so the backlog stays in TCP buffers rather than in memory.
        await self._slots.acquire()
        task = asyncio.ensure_future(self._serve(rid, frame["service"], frame.get("flow"), frame["request"],
                                                 deadlines.parse(frame.get("deadline")), _trace(frame)))
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        self._slots.release()
        exc = None if task.cancelled() else task.exception()
        if exc is not None and not isinstance(exc, SocketGone):
            logger.error("Websocket call failed", exc_info=exc)

    @staticmethod
    def _routing_error(text: str, rid: Any) -> JsonObject:
        if rid is None:
            return {"error": text}
        return {"id": rid, "response": gateway_error(text), "complete": True}

    async def _serve(self, rid: Any, service: str, flow: str | None, body: Any,
                     deadline: float | None = None, trace: dict[str, str] | None = None) -> None:
        logger.debug("Socket request %s: %s%s", rid, service, f" on flow {flow}" if flow else "")
        with tracing.served(f"gateway {service}", trace or {}, trustgraph_service=service, trustgraph_flow=flow):
            await self._serve_traced(rid, service, flow, body, deadline)

    async def _serve_traced(self, rid: Any, service: str, flow: str | None, body: Any,
                            deadline: float | None) -> None:
        try:
            if service == TOOL_SERVICE:
                await self._serve_tool(rid, body, deadline)
                return

            async def forward(response: JsonObject, final: bool) -> None:
                await self._send({"id": rid, "response": response, "complete": final})

            await self.dispatcher.call(service, flow, body, forward, deadline)
        except (RoutingError, BadRequest) as e:
            await self._send(self._routing_error(str(e), rid))
        except SocketGone:
            pass
        except Exception:
            logger.exception("Socket request %s (%s) failed", rid, service)
            await self._send({"id": rid, "response": gateway_error("Internal error"), "complete": True})

    async def _serve_tool(self, rid: Any, body: Any, deadline: float | None) -> None:
        async def chunk(text: str) -> None:
            await self._send({"id": rid, "response": {"response": text, "end_of_stream": False},
                              "complete": False})

        result = await self.tools.call(body, chunk, deadline)
        if "error" in result:
            await self._send({"id": rid, "response": result, "complete": True})
        else:
            await self._send({"id": rid, "response": {"response": "", "end_of_stream": True},
                              "complete": True})

    async def _send(self, message: JsonObject) -> None:
        """Send one frame; raise :class:`SocketGone` when the client cannot take it."""
        if self._gone:
            raise SocketGone()
        try:
            async with asyncio.timeout(self.send_timeout):
                async with self._send_lock:
                    await self.ws.send_str(json.dumps(message))
        except (ConnectionError, RuntimeError, TimeoutError) as e:
            if not self._gone:
                logger.debug("Websocket send failed (%s); closing the session", e)
                # Wake the reader, which may be waiting on a client that went quiet.
                self._closer = asyncio.ensure_future(self.ws.close())
            self._gone = True
            raise SocketGone() from None


async def socket_handler(request: web.Request, dispatcher: Dispatcher, tools: ToolServices,
                         send_timeout: float, sockets: set[web.WebSocketResponse]) -> web.WebSocketResponse:
    """Upgrade to a websocket and serve it until either side closes."""
    ws = web.WebSocketResponse(max_msg_size=MAX_FRAME, heartbeat=30.0)
    await ws.prepare(request)
    sockets.add(ws)
    logger.debug("Websocket opened from %s", request.remote)
    try:
        await SocketSession(ws, dispatcher, tools, send_timeout=send_timeout).run()
    finally:
        sockets.discard(ws)
        if not ws.closed:
            await ws.close()
        logger.debug("Websocket from %s closed", request.remote)
    return ws
