"""One MCP session per server, kept open between calls and opened again when it breaks.

Upstream's ``mcp-tool`` opens a new HTTP session (``initialize`` and all) for
every call.  An :class:`McpConnection` opens one on first use and keeps it:
later calls only send ``tools/call``.  When the session breaks (the server
went away, restarted and forgot the session, or the stream failed) the next
call opens a new one, so a restarted server is used again without restarting
anything of ours.

Why a task per session: the SDK's transports and ``ClientSession`` are anyio
context managers whose cancel scopes must be entered and left by one task,
and a transport failure tears down its whole task group.  Each session
therefore lives in a task of its own (:class:`_Session`), and a call waits
for *either* its answer or the end of that task, so a server that dies
mid-call is an error at once rather than a wait for the deadline.

Every wait is bounded by the caller's timeout.  Tokens are never part of a
message, a log line or a ``repr``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx2
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, CallToolResult, Implementation, PaginatedRequestParams, Tool

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Seconds a connection attempt may take at most, whatever the caller allows.
CONNECT_TIMEOUT = 10.0
#: Seconds the ``initialize`` handshake may take at most.
HANDSHAKE_TIMEOUT = 30.0

CLIENT_INFO = Implementation(name="trustgraph", version="2.1")

OnToolsChanged = Callable[[], Awaitable[None]]


class McpUnavailable(Exception):
    """The server cannot be reached, or the session to it broke (nothing of the tool ran, as far as known)."""


class McpCallFailed(Exception):
    """The server answered the request with a protocol error (unknown tool, bad arguments...)."""


@dataclass(frozen=True)
class ServerAddress:
    """Where an MCP server is and how to talk to it; the token is left out of ``repr``."""

    url: str
    transport: str = "streamable-http"
    token: str | None = field(default=None, repr=False)

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


def root_cause(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (the SDK's task groups wrap what went wrong)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    """One line for what went wrong talking to a server, without headers or tokens."""
    exc = root_cause(exc)
    if isinstance(exc, httpx2.HTTPStatusError):
        status = exc.response.status_code
        if status in (401, 403):
            return f"HTTP {status}: the server refused the credentials (check the entry's auth-token)"
        return f"HTTP {status} {exc.response.reason_phrase}"
    if isinstance(exc, MCPError):
        return exc.error.message or f"MCP error {exc.error.code}"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _never_delivered(exc: BaseException) -> bool:
    """Whether a failed call certainly did not reach the tool, so sending it again is safe."""
    exc = root_cause(exc)
    if isinstance(exc, httpx2.ConnectError):
        return True
    if isinstance(exc, MCPError):   # the SDK's words for a 404: the server forgot the session
        message = (exc.error.message or "").lower()
        return "session" in message and ("terminated" in message or "not found" in message)
    return False


class _Session:
    """One open ``ClientSession``, held by a task of its own until :meth:`close`."""

    def __init__(self, address: ServerAddress, on_tools_changed: OnToolsChanged | None) -> None:
        self.address = address
        self.on_tools_changed = on_tools_changed
        self.ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
        self.error: BaseException | None = None
        self.used = False
        self.refused: int | None = None
        self._stop = asyncio.Event()
        self.task = asyncio.create_task(self._run(), name=f"mcp-session {address.url}")

    @property
    def dead(self) -> bool:
        return self.task.done()

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        timeout = httpx2.Timeout(CONNECT_TIMEOUT, read=300.0)
        if self.address.transport == "sse":
            return sse_client(self.address.url, headers=self.address.headers(), timeout=CONNECT_TIMEOUT)
        client = create_mcp_http_client(headers=self.address.headers(), timeout=timeout)
        client.event_hooks["response"].append(self._on_response)
        return _owning(client, streamable_http_client(self.address.url, http_client=client))

    async def _on_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method == "notifications/tools/list_changed" and self.on_tools_changed is not None:
            await self.on_tools_changed()
        elif isinstance(message, Exception):
            logger.debug("MCP stream from %s reported: %s", self.address.url, describe(message))

    async def _run(self) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                streams = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(ClientSession(
                    streams[0], streams[1], read_timeout_seconds=HANDSHAKE_TIMEOUT,
                    message_handler=self._on_message, client_info=CLIENT_INFO))
                await session.initialize()
                self.ready.set_result(session)
                await self._stop.wait()
        except asyncio.CancelledError:
            self._fail(McpUnavailable("the session was closed while it opened"))
            raise
        except Exception as e:   # the SDK's task groups: whatever broke the session
            self.error = e
            self._fail(e)
            logger.debug("MCP session to %s ended: %s", self.address.url, self.explain(e))
        finally:
            self._fail(McpUnavailable("the server closed the session"))

    def _fail(self, exc: BaseException) -> None:
        if not self.ready.done():
            self.ready.set_exception(exc)
            self.ready.exception()   # retrieved: a session nobody waited for is not an asyncio warning

    async def _on_response(self, response: httpx2.Response) -> None:
        if response.status_code in (401, 403):
            self.refused = response.status_code

    def explain(self, exc: BaseException) -> str:
        """What went wrong, naming a refused token when the server said so (the SDK does not)."""
        if self.refused is not None:
            return f"HTTP {self.refused}: the server refused the credentials (check the entry's auth-token)"
        return describe(exc)

    async def close(self, grace: float = 2.0) -> None:
        """Leave the session (the SDK says goodbye to the server), cancelling after ``grace`` seconds."""
        self._stop.set()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(asyncio.shield(self.task), grace)
        if not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task


@contextlib.asynccontextmanager
async def _owning(client: httpx2.AsyncClient, transport: contextlib.AbstractAsyncContextManager[Any]) -> Any:
    """``transport``, with the HTTP client it was given closed after it."""
    async with client, transport as streams:
        yield streams


class McpConnection:
    """Calls to one MCP server over one session, opened on first use and again after it breaks.

    ``on_tools_changed`` is awaited when the server says its tool list
    changed (``notifications/tools/list_changed``).
    """

    def __init__(self, address: ServerAddress, *, on_tools_changed: OnToolsChanged | None = None) -> None:
        self.address = address
        self.on_tools_changed = on_tools_changed
        self._session: _Session | None = None
        self._retired: set[asyncio.Task] = set()

    @property
    def url(self) -> str:
        return self.address.url

    async def _open(self, timeout: float) -> _Session:
        current = self._session
        if current is None or current.dead:
            current = self._session = _Session(self.address, self.on_tools_changed)
        try:
            await asyncio.wait_for(asyncio.shield(current.ready), max(timeout, 0.001))
        except TimeoutError:
            raise TimeoutError(f"MCP server {self.url} did not complete the handshake in time") from None
        except McpUnavailable:
            raise
        except Exception as e:
            raise McpUnavailable(f"cannot open an MCP session to {self.url}: {current.explain(e)}") from e
        return current

    async def _on_session(self, work: Callable[[ClientSession], Awaitable[T]], timeout: float) -> T:
        """Run ``work`` on the session, within ``timeout``; retried once on a new session when the
        old one was gone before the request reached the tool."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        for attempt in (1, 2):
            current = await self._open(end - loop.time())
            reused = current.used
            current.used = True
            try:
                return await self._call(current, work, end - loop.time())
            except McpUnavailable as e:
                self._retire(current)
                if attempt == 1 and reused and _never_delivered(e.__cause__ or e):
                    logger.info("MCP session to %s was gone; opening a new one", self.url)
                    continue
                raise
        raise AssertionError("unreachable")

    async def _call(self, current: _Session, work: Callable[[ClientSession], Awaitable[T]], timeout: float) -> T:
        # When the transport dies the SDK ends every pending request ("Connection
        # closed"), so waiting for the answer alone does not outlive the session.
        try:
            return await asyncio.wait_for(work(current.ready.result()), max(timeout, 0.001))
        except TimeoutError:
            raise TimeoutError(f"MCP server {self.url} did not answer in time") from None
        except MCPError as e:
            if _never_delivered(e) or current.dead or e.error.code == CONNECTION_CLOSED:
                cause = current.error or e
                raise McpUnavailable(f"the session to {self.url} broke: {current.explain(cause)}") from e
            raise McpCallFailed(describe(e)) from e
        except (httpx2.HTTPError, OSError) as e:
            raise McpUnavailable(f"the session to {self.url} broke: {describe(e)}") from e

    def _retire(self, current: _Session) -> None:
        if self._session is current:
            self._session = None
        task = asyncio.ensure_future(current.close())
        self._retired.add(task)
        task.add_done_callback(self._retired.discard)

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float,
                        on_progress: Callable[[float, float | None, str | None], Awaitable[None]] | None = None
                        ) -> CallToolResult:
        """``tools/call``; raises :class:`McpUnavailable`, :class:`McpCallFailed` or ``TimeoutError``."""
        async def work(session: ClientSession) -> CallToolResult:
            return await session.call_tool(name, arguments, read_timeout_seconds=timeout,
                                           progress_callback=on_progress)
        return await self._on_session(work, timeout)

    async def list_tools(self, timeout: float) -> list[Tool]:
        """Every tool of the server (all pages of ``tools/list``)."""
        async def work(session: ClientSession) -> list[Tool]:
            tools: list[Tool] = []
            cursor: str | None = None
            for _page in range(100):   # a server whose cursor never ends cannot hang us
                result = await session.list_tools(
                    params=PaginatedRequestParams(cursor=cursor) if cursor else None)
                tools.extend(result.tools)
                cursor = result.next_cursor
                if not cursor:
                    break
            return tools
        return await self._on_session(work, timeout)

    async def open(self, timeout: float) -> None:
        """Open the session now (to follow notifications before any call)."""
        await self._open(timeout)

    @property
    def is_open(self) -> bool:
        return self._session is not None and not self._session.dead and self._session.ready.done() \
            and self._session.ready.exception() is None

    async def closed(self) -> None:
        """Wait until the current session ends (the server went away)."""
        if self._session is not None:
            await asyncio.wait({self._session.task})

    async def close(self) -> None:
        """Close the session and wait for retired ones."""
        current, self._session = self._session, None
        if current is not None:
            await current.close()
        await asyncio.gather(*self._retired, return_exceptions=True)
