"""The gateway's connections under a :class:`~trustgraph.base.safety.connections.ConnectionGuard`.

aiohttp alone holds a connection that never sends a request for an hour
(``keepalive_timeout``'s 3,630 s), has no deadline for headers or bodies, and
accepts until the process runs out of file descriptors.  Here:

* :class:`GuardedSite` listens like ``web.TCPSite``, but each connection is a
  :class:`_Handler` (aiohttp's own ``RequestHandler``) that tells the guard
  when it opens, receives bytes and closes, and is refused with a 503 when the
  guard has no room;
* :func:`busy_middleware` tells the guard when a request is in progress: from
  its handler's start to its response written (the task aiohttp runs each
  request in), a websocket's whole life included;
* :func:`read_body` and :func:`body_chunks` read a request body at the guard's
  :class:`~trustgraph.base.safety.connections.BodyPace`, raising
  :class:`~trustgraph.base.safety.connections.BodyTooSlow` (answered 408 by the
  endpoints' error middleware).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from aiohttp import web
from trustgraph.base.safety import limits
from trustgraph.base.safety.connections import BodyPace, BodyTooSlow, ConnectionGuard, busy_response

#: Bytes read from a body at a time.
READ_CHUNK = 128 * 1024


def refusal(guard: ConnectionGuard) -> bytes:
    """The whole HTTP response a connection beyond the cap gets before it is closed."""
    body = json.dumps(
        {
            "error": f"The gateway holds its limit of {guard.cap:,} connections, each with a "
            "request in progress: try again shortly"
        }
    ).encode()
    return busy_response(body)


class _Handler(web.RequestHandler):
    """aiohttp's connection handler, reporting to the guard."""

    def __init__(self, manager: web.Server, guard: ConnectionGuard, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._guard = guard
        self._refused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if not self._guard.opened(self):
            self._refused = True
            transport.write(refusal(self._guard))  # type: ignore[attr-defined]
            transport.close()
            return
        super().connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self._guard.receiving(self)
        super().data_received(data)

    def connection_lost(self, exc: BaseException | None) -> None:
        self._guard.closed(self)
        if not self._refused:
            super().connection_lost(exc)

    def close_now(self) -> None:
        """The guard's way to close this connection (idle, or its headers late)."""
        self.force_close()


class GuardedSite(web.BaseSite):
    """``web.TCPSite``'s listening, with every connection kept by ``guard``.

    ``handler_args``: aiohttp's ``RequestHandler`` keywords (``access_log``,
    ``keepalive_timeout``, ...), as ``web.AppRunner`` would pass them.
    """

    def __init__(
        self,
        runner: web.BaseRunner,
        host: str,
        port: int,
        guard: ConnectionGuard,
        *,
        backlog: int = 128,
        **handler_args: Any,
    ) -> None:
        super().__init__(runner, backlog=backlog)
        self._host = host
        self._port = port
        self._guard = guard
        self._handler_args = handler_args

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        server = self._runner.server
        assert server is not None, "the runner must be set up first"
        guard, args = self._guard, self._handler_args

        def connection() -> _Handler:
            return _Handler(server, guard, loop=loop, **args)

        self._server = await loop.create_server(
            connection, self._host, self._port, backlog=self._backlog, reuse_address=True
        )
        guard.start()

    async def stop(self) -> None:
        await super().stop()
        await self._guard.stop()


def busy_middleware(guard: ConnectionGuard) -> Callable:
    """The middleware (outermost) that marks a connection busy while a request is in progress:
    until the task aiohttp runs the request in is over, which is after the response is written."""

    @web.middleware
    async def busy(request: web.Request, handler: Callable) -> web.StreamResponse:
        conn = request.protocol
        task = asyncio.current_task()
        if isinstance(conn, _Handler) and task is not None:
            guard.started(conn)
            task.add_done_callback(lambda _task: guard.finished(conn))
        return await handler(request)

    return busy


async def answer_and_close(request: web.Request, response: web.Response) -> web.Response:
    """Send ``response`` now and close the connection behind it: for a body that stopped
    coming, which aiohttp would otherwise wait for (``lingering_time``, 10 s) before closing."""
    response.force_close()
    await response.prepare(request)
    await response.write_eof()
    request.protocol.force_close()  # the transport sends what it holds, then closes
    return response


async def body_chunks(
    request: web.Request, pace: BodyPace = BodyPace(), size: int = READ_CHUNK
) -> AsyncIterator[bytes]:
    """The request body as it arrives, held to ``pace``; :class:`BodyTooSlow` when it lags
    (the caller's work between two chunks is not counted)."""
    loop = asyncio.get_running_loop()
    waited = 0.0
    received = 0
    while True:
        began = loop.time()
        try:
            async with asyncio.timeout(max(pace.time_left(waited, received), 0.0)):
                chunk = await request.content.read(size)
        except TimeoutError:
            raise BodyTooSlow(received, waited + loop.time() - began, pace) from None
        waited += loop.time() - began
        if not chunk:
            return
        received += len(chunk)
        yield chunk


async def read_body(request: web.Request, pace: BodyPace = BodyPace(), limit: int = limits.MAX_BODY) -> bytes:
    """The whole request body, held to ``pace`` and at most ``limit`` bytes (413 past it)."""
    declared = request.content_length
    if declared is not None and declared > limit:
        raise web.HTTPRequestEntityTooLarge(max_size=limit, actual_size=declared)
    body = bytearray()
    async for chunk in body_chunks(request, pace):
        body += chunk
        if len(body) > limit:
            raise web.HTTPRequestEntityTooLarge(max_size=limit, actual_size=len(body))
    return bytes(body)
