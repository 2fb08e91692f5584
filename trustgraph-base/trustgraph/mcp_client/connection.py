"""One MCP connection per server, kept open between calls and opened again when it breaks.

Upstream's ``mcp-tool`` opens a new HTTP session (``initialize`` and all) for
every call.  An :class:`McpConnection` connects on first use and keeps it:
later calls only send ``tools/call``.  It speaks the server's revision of MCP
(the SDK's ``Client``, ``mode="auto"``): it asks ``server/discover`` first,
and a server that answers it (MCP 2026-07-28) is used statelessly, with no
handshake and no session at all (each call is one request carrying the
revision); any other server gets the ``initialize`` handshake and a session
(2025-11-25 and before; the legacy SSE transport always).  When a session
breaks (the server went away, restarted and forgot the session, or the
stream failed) the next call opens a new one, so a restarted server is used
again without restarting anything of ours.  ``on_tools_changed`` hears of a
changed tool list either way: from a session's
``notifications/tools/list_changed``, or from a ``subscriptions/listen``
stream opened at connect on 2026-07-28, whose end (the server went away)
ends the connection as a broken session does.

Why a task per session: the SDK's transports and ``ClientSession`` are anyio
context managers whose cancel scopes must be entered and left by one task,
and a transport failure tears down its whole task group.  Each session
therefore lives in a task of its own (:class:`_Session`), and a call waits
for *either* its answer or the end of that task, so a server that dies
mid-call is an error at once rather than a wait for the deadline.

Every wait is bounded by the caller's timeout, and every reply by its size
while it is read (:data:`MAX_REPLY_BYTES`): the SDK reads a JSON reply whole
(``response.aread()``), so a server answering with 100 MB had it all in
memory before anything could refuse it.  Each POST's body is counted as it
arrives and cut at the limit, a ``Content-Length`` over it is refused before
reading, a compressed body (we ask for none) is refused unread, and every
server-sent event is held to the same limit; the call fails with
:class:`McpReplyTooLarge` and the session goes on.  (The legacy SSE
transport carries every reply on one shared event stream, which the SDK
holds to 1 MiB per event: an event over it ends that session, the call fails
with :class:`McpReplyTooLarge` all the same, and the next call opens a new
session.)  Tokens are never part of a message, a log line or a ``repr``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx2
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, CallToolResult, Implementation, Tool
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Seconds a connection attempt may take at most, whatever the caller allows.
CONNECT_TIMEOUT = 10.0
#: Seconds connecting (``server/discover``, else the ``initialize`` handshake) may take at most.
HANDSHAKE_TIMEOUT = 30.0
#: Bytes one reply of a server (one POST's body, one server-sent event) may hold.  A tool's
#: result travels on as one broker message of at most 5 MiB, so a bigger one could not be
#: used anyway; the margin is for the JSON-RPC envelope and escaping.
MAX_REPLY_BYTES = 8 * 1024 * 1024
#: Seconds a call whose session closed waits for the session to say why.
SESSION_END_WAIT = 1.0
#: What every refusal of an oversized reply says, so the call's error can be told apart.
_TOO_LARGE = "byte limit of one MCP reply"

CLIENT_INFO = Implementation(name="trustgraph", version="2.1")

OnToolsChanged = Callable[[], Awaitable[None]]


class McpUnavailable(Exception):
    """The server cannot be reached, or the session to it broke (nothing of the tool ran, as far as known)."""


class McpCallFailed(Exception):
    """The server answered the request with a protocol error (unknown tool, bad arguments...)."""


class McpReplyTooLarge(McpCallFailed):
    """The server's reply was over :data:`MAX_REPLY_BYTES`; it was cut while being read."""


class _ReplyTooLarge(httpx2.StreamError, httpx2.SSEError):
    """Raised inside the SDK's reading of a body: a ``StreamError`` on its JSON path and an
    ``SSEError`` on its event-stream path make both end the one request with our message."""


class _Bounded(httpx2.AsyncByteStream):
    """A response body that raises once more than ``limit`` bytes have come."""

    def __init__(self, stream: httpx2.AsyncByteStream, limit: int, refuse: str | None = None) -> None:
        self._stream = stream
        self._limit = limit
        self._refuse = refuse

    async def __aiter__(self) -> Any:
        if self._refuse is not None:
            raise _ReplyTooLarge(self._refuse)
        seen = 0
        async for chunk in self._stream:
            seen += len(chunk)
            if seen > self._limit:
                raise _ReplyTooLarge(f"the reply was cut at {self._limit:,} bytes, the {_TOO_LARGE}")
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


def bound_reply(response: httpx2.Response, limit: int = MAX_REPLY_BYTES) -> None:
    """Make a POST's body raise past ``limit`` bytes as it is read (an httpx ``response`` hook)."""
    if response.request.method != "POST":   # the long-lived event stream: its events are bounded
        return
    refuse = None
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    length = response.headers.get("content-length", "")
    if encoding not in ("", "identity"):
        refuse = (f"the reply came compressed ({encoding}), which was not asked for: its size is unknown "
                  f"until it is unpacked, so it is refused (the {_TOO_LARGE} is {limit:,})")
    elif length.isdigit() and int(length) > limit:
        refuse = f"the reply is {int(length):,} bytes, over the {limit:,}-{_TOO_LARGE}"
    response.stream = _Bounded(response.stream, limit, refuse)


def http_client(headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
    """An HTTP client for the SDK's transports, with the SDK's own defaults: 30 s to connect,
    write or wait for the pool, 300 s to read (a server may hold an event stream open), and
    redirects not followed (the transports follow those within the server's origin themselves).
    The SDK's factory for it lives in a private module, so this is ours."""
    return httpx2.AsyncClient(headers=headers, auth=auth,
                              timeout=timeout if timeout is not None else httpx2.Timeout(30.0, read=300.0))


def _message(exc: BaseException) -> str:
    exc = root_cause(exc)
    return (exc.error.message if isinstance(exc, MCPError) else str(exc)) or ""


def _too_large(exc: BaseException) -> bool:
    """Whether a failed request's error is one of our size refusals, or the SDK's own limit on one
    server-sent event (the legacy SSE transport's shared stream, which that ends)."""
    message = _message(exc)
    return _TOO_LARGE in message or "byte limit." in message


def _size_detail(exc: BaseException, limit: int) -> str:
    message = _message(exc)
    if _TOO_LARGE in message:
        return f"over the {limit:,}-{_TOO_LARGE}, cut while being read"
    return f"{message.removeprefix('SSE stream failed: ')} (the SDK's limit on one event of the SSE transport)"


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
    """One connected SDK ``Client`` (a session, or none on 2026-07-28), held by a task of its own
    until :meth:`close`."""

    def __init__(self, address: ServerAddress, on_tools_changed: OnToolsChanged | None,
                 max_reply: int = MAX_REPLY_BYTES) -> None:
        self.address = address
        self.max_reply = max_reply
        self.on_tools_changed = on_tools_changed
        self.ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self.error: BaseException | None = None
        self.used = False
        self.refused: int | None = None
        #: The revision of MCP spoken, once connected.
        self.revision: str | None = None
        self._stop = asyncio.Event()
        self.task = asyncio.create_task(self._run(), name=f"mcp-session {address.url}")

    @property
    def dead(self) -> bool:
        return self.task.done()

    def _client(self, headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
        """The SDK's HTTP client, asking for uncompressed replies and bounding each one (see the module)."""
        client = http_client(headers={**(headers or {}), "Accept-Encoding": "identity"},
                                        timeout=timeout, auth=auth)
        client.event_hooks["response"].append(self._on_response)
        return client

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        timeout = httpx2.Timeout(CONNECT_TIMEOUT, read=300.0)
        if self.address.transport == "sse":
            return sse_client(self.address.url, headers=self.address.headers(), timeout=CONNECT_TIMEOUT,
                              httpx_client_factory=self._client)
        client = self._client(self.address.headers(), timeout)
        return _owning(client, streamable_http_client(self.address.url, http_client=client,
                                                      max_sse_event_size=self.max_reply))

    async def _on_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method == "notifications/tools/list_changed" and self.on_tools_changed is not None:
            await self.on_tools_changed()
        elif isinstance(message, Exception):
            logger.debug("MCP stream from %s reported: %s", self.address.url, describe(message))

    async def _run(self) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                client = await stack.enter_async_context(Client(
                    self._transport(), mode="legacy" if self.address.transport == "sse" else "auto",
                    read_timeout_seconds=HANDSHAKE_TIMEOUT, message_handler=self._on_message,
                    client_info=CLIENT_INFO, cache=None))
                self.revision = client.protocol_version
                events = None
                if self.on_tools_changed is not None and self.revision in MODERN_PROTOCOL_VERSIONS:
                    events = await self._listen(stack, client)
                self.ready.set_result(client)
                if events is None:
                    await self._stop.wait()
                else:
                    await self._follow(events)
        except asyncio.CancelledError:
            self._fail(McpUnavailable("the session was closed while it opened"))
            raise
        except Exception as e:   # the SDK's task groups: whatever broke the session
            self.error = e
            self._fail(e)
            logger.debug("MCP session to %s ended: %s", self.address.url, self.explain(e))
        finally:
            self._fail(McpUnavailable("the server closed the session"))

    async def _listen(self, stack: contextlib.AsyncExitStack, client: Client) -> Any:
        """A ``subscriptions/listen`` stream of tool-list changes, acknowledged; None if refused."""
        try:
            return await stack.enter_async_context(client.listen(tools_list_changed=True))
        except MCPError as e:
            logger.debug("%s follows no tool-list changes: %s", self.address.url, describe(e))
            return None

    async def _follow(self, events: Any) -> None:
        """Tell ``on_tools_changed`` of each change until :meth:`close`; the stream's end ends us."""
        stop = asyncio.ensure_future(self._stop.wait())
        changes = aiter(events)
        try:
            while True:
                change = asyncio.ensure_future(anext(changes))
                await asyncio.wait({change, stop}, return_when=asyncio.FIRST_COMPLETED)
                if not change.done():
                    change.cancel()
                    return
                try:
                    change.result()
                except StopAsyncIteration:
                    raise McpUnavailable("the server closed its change stream") from None
                if self.on_tools_changed is not None:
                    await self.on_tools_changed()
        finally:
            stop.cancel()

    def _fail(self, exc: BaseException) -> None:
        if not self.ready.done():
            self.ready.set_exception(exc)
            self.ready.exception()   # retrieved: a session nobody waited for is not an asyncio warning

    async def _on_response(self, response: httpx2.Response) -> None:
        if response.status_code in (401, 403):
            self.refused = response.status_code
        bound_reply(response, self.max_reply)

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

    def __init__(self, address: ServerAddress, *, on_tools_changed: OnToolsChanged | None = None,
                 max_reply: int = MAX_REPLY_BYTES) -> None:
        self.address = address
        self.on_tools_changed = on_tools_changed
        self.max_reply = max_reply
        self._session: _Session | None = None
        self._retired: set[asyncio.Task] = set()

    @property
    def url(self) -> str:
        return self.address.url

    async def _open(self, timeout: float) -> _Session:
        current = self._session
        if current is None or current.dead:
            current = self._session = _Session(self.address, self.on_tools_changed, self.max_reply)
        try:
            await asyncio.wait_for(asyncio.shield(current.ready), max(timeout, 0.001))
        except TimeoutError:
            raise TimeoutError(f"MCP server {self.url} did not complete the handshake in time") from None
        except McpUnavailable:
            raise
        except Exception as e:
            raise McpUnavailable(f"cannot open an MCP session to {self.url}: {current.explain(e)}") from e
        return current

    async def _on_session(self, work: Callable[[Client], Awaitable[T]], timeout: float) -> T:
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

    async def _call(self, current: _Session, work: Callable[[Client], Awaitable[T]], timeout: float) -> T:
        # When the transport dies the SDK ends every pending request ("Connection
        # closed"), so waiting for the answer alone does not outlive the session.
        try:
            return await asyncio.wait_for(work(current.ready.result()), max(timeout, 0.001))
        except TimeoutError:
            raise TimeoutError(f"MCP server {self.url} did not answer in time") from None
        except MCPError as e:
            if e.error.code == CONNECTION_CLOSED and not current.dead:
                # The SDK ends the pending requests first; what broke the session is known once
                # its task has ended, a moment later.
                await asyncio.wait({current.task}, timeout=SESSION_END_WAIT)
            if _too_large(e) or (current.error is not None and _too_large(current.error)):
                raise McpReplyTooLarge(f"{self.url} answered with a reply too large to read: "
                                       f"{_size_detail(current.error or e, self.max_reply)}") from e
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
        async def work(client: Client) -> CallToolResult:
            return await client.call_tool(name, arguments, read_timeout_seconds=timeout,
                                          progress_callback=on_progress)
        return await self._on_session(work, timeout)

    async def list_tools(self, timeout: float) -> list[Tool]:
        """Every tool of the server (all pages of ``tools/list``)."""
        async def work(client: Client) -> list[Tool]:
            tools: list[Tool] = []
            cursor: str | None = None
            for _page in range(100):   # a server whose cursor never ends cannot hang us
                result = await client.list_tools(cursor=cursor)
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
    def revision(self) -> str | None:
        """The revision of MCP the current connection speaks (None before one is made)."""
        return self._session.revision if self._session is not None else None

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
