"""The websocket side of the client: URLs, one multiplexed call, and reading its chunks.

Each call opens its own connection to ``api/v1/socket`` (as upstream's
client), sends ``{"id", "service", "flow"?, "request"}`` and reads frames
with that id until one is final (``complete``, ``end_of_stream`` or
``end_of_dialog``).  An error frame, with or without the id, raises the
exception of its type (:func:`raise_from_error_dict`); ``timeout`` bounds
each wait for the next frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import aiohttp

from ..base.safety.secrets import redact_url, scrub
from .exceptions import ProtocolException, raise_from_error_dict
from .types import AgentAnswer, AgentObservation, AgentThought, RAGChunk, StreamingChunk

MAX_FRAME = 50 * 1024 * 1024

_ids = itertools.count(1)


def to_ws_url(url: str) -> str:
    """``http(s)://`` -> ``ws(s)://``; a bare host gets ``ws://``."""
    for http, ws in (("http://", "ws://"), ("https://", "wss://")):
        if url.startswith(http):
            return ws + url[len(http):]
    return url if url.startswith(("ws://", "wss://")) else f"ws://{url}"


def endpoint(base: str, path: str, token: str | None) -> str:
    """The websocket URL of ``path`` under ``base``, with the token as ``?token=``."""
    url = f"{base.rstrip('/')}/{path.lstrip('/')}"
    return f"{url}?token={quote(token)}" if token else url


@contextlib.asynccontextmanager
async def connect(session: aiohttp.ClientSession, base: str, path: str,
                  token: str | None) -> AsyncIterator[aiohttp.ClientWebSocketResponse]:
    """The websocket at ``path``; a failure to open it is a :class:`ProtocolException` whose
    text shows the URL without the token (aiohttp's own errors quote it whole)."""
    url = endpoint(base, path, token)
    try:
        ws = await session.ws_connect(url, max_msg_size=MAX_FRAME, heartbeat=20)
    except aiohttp.WSServerHandshakeError as e:
        raise ProtocolException(f"websocket {redact_url(url)} refused: HTTP {e.status}") from None
    except aiohttp.ClientError as e:
        raise ProtocolException(f"websocket {redact_url(url)} failed: {scrub(str(e), [token])}") from None
    async with ws:
        yield ws


async def receive_json(ws: aiohttp.ClientWebSocketResponse, timeout: float) -> Any | None:
    """The next JSON frame, or None when the socket closed."""
    while True:
        try:
            msg = await asyncio.wait_for(ws.receive(), timeout)
        except TimeoutError:
            raise ProtocolException(f"No message within {timeout}s") from None
        if msg.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
            try:
                return json.loads(msg.data)
            except ValueError:
                raise ProtocolException("Message is not JSON") from None
        if msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING,
                        aiohttp.WSMsgType.ERROR):
            return None


async def call(base: str, token: str | None, timeout: float, service: str, flow: str | None,
               request: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    """Every ``response`` of one multiplexed call, up to and including the final one."""
    rid = f"req-{next(_ids)}"
    frame: dict[str, Any] = {"id": rid, "service": service, "request": request}
    if flow:
        frame["flow"] = flow
    async with aiohttp.ClientSession() as session:
        async with connect(session, base, "api/v1/socket", token) as ws:
            await ws.send_str(json.dumps(frame))
            while True:
                message = await receive_json(ws, timeout)
                if message is None:
                    raise ProtocolException("Connection closed before the response was complete")
                if not isinstance(message, dict) or message.get("id") not in (rid, None):
                    continue
                if "error" in message:
                    raise_from_error_dict(message["error"])
                response = message.get("response")
                if not isinstance(response, dict):
                    raise ProtocolException("Missing response in message")
                if "error" in response:
                    raise_from_error_dict(response["error"])
                yield response
                if message.get("complete") or response.get("end_of_stream") or response.get("end_of_dialog"):
                    return


async def final(base: str, token: str | None, timeout: float, service: str, flow: str | None,
                request: dict[str, Any]) -> dict[str, Any]:
    """The final response of a call (the only one, for services that do not stream)."""
    last: dict[str, Any] = {}
    async for response in call(base, token, timeout, service, flow, request):
        last = response
    return last


def parse_chunk(resp: dict[str, Any]) -> StreamingChunk:
    """One streamed response as a typed chunk: agent thought/observation/answer, else text."""
    eom = resp.get("end_of_message", False)
    kind = resp.get("chunk_type")
    if kind in ("thought", "action"):
        return AgentThought(content=resp.get("content", ""), end_of_message=eom)
    if kind == "observation":
        return AgentObservation(content=resp.get("content", ""), end_of_message=eom)
    if kind in ("answer", "final-answer"):
        return AgentAnswer(content=resp.get("content", ""), end_of_message=eom,
                           end_of_dialog=resp.get("end_of_dialog", False))
    # Legacy (non-streaming) agent messages.
    if resp.get("thought"):
        return AgentThought(content=resp["thought"], end_of_message=eom)
    if resp.get("observation"):
        return AgentObservation(content=resp["observation"], end_of_message=eom)
    if resp.get("answer"):
        return AgentAnswer(content=resp["answer"], end_of_message=eom,
                           end_of_dialog=resp.get("end_of_dialog", False))
    content = resp.get("response", resp.get("chunk", resp.get("text", "")))
    return RAGChunk(content=content or "", end_of_stream=resp.get("end_of_stream", False))


async def send_all(base: str, path: str, token: str | None, messages: Any, timeout: float) -> None:
    """Send every message of a (sync or async) iterable as one JSON frame on ``path``."""
    async with aiohttp.ClientSession() as session:
        async with connect(session, base, path, token) as ws:
            if hasattr(messages, "__aiter__"):
                async for message in messages:
                    await ws.send_str(json.dumps(message))
            else:
                for message in messages:
                    await ws.send_str(json.dumps(message))


async def receive_all(base: str, path: str, token: str | None) -> AsyncIterator[Any]:
    """Every JSON frame ``path`` sends, until it closes (an export runs until the caller stops)."""
    async with aiohttp.ClientSession() as session:
        async with connect(session, base, path, token) as ws:
            async for msg in ws:
                if msg.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
                    yield json.loads(msg.data)
                elif msg.type == aiohttp.WSMsgType.ERROR:
                    return
