"""Which MCP revisions mcp-server speaks, and the answer to a request of any other.

The SDK serves both eras of MCP on one endpoint and picks the era of each
HTTP request by its ``MCP-Protocol-Version`` header:

* the session era, 2024-11-05 to 2025-11-25: an ``initialize`` handshake,
  then requests on the ``Mcp-Session-Id`` it opened (``sessions.py`` keeps
  those sessions);
* 2026-07-28: no handshake and no session; each request carries its revision
  and the client's capabilities in ``_meta`` (and the revision in the
  header), and ``server/discover`` says what the server speaks.

:func:`revision_gate` answers, in front of the SDK and of the session
keeper, a request that names a revision neither era knows (in the header, or
in the ``_meta`` of a request that has no header and no session): HTTP 400
with the protocol's own error, UnsupportedProtocolVersion (-32022), whose
data lists every revision we speak and the one asked for.  Nothing else
happens: no session is opened or ended to make room, no tool is called.
Left to the SDK, a session-era request with an unknown header went to its
2026 path, which answered with a complaint about the missing 2026 envelope,
and an enveloped request without the header was told its session id was
missing; both named only 2026-07-28 as supported.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import (
    PROTOCOL_VERSION_META_KEY,
    UNSUPPORTED_PROTOCOL_VERSION,
    UnsupportedProtocolVersionErrorData,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from .auth import Asgi

#: Every revision mcp-server answers, oldest first.
SPOKEN = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
#: Bytes of a body read to find the revision it names (the SDK's own limit on a request body).
MAX_BODY = 4 * 1024 * 1024

_VERSION_HEADER = b"mcp-protocol-version"
_SESSION_HEADER = b"mcp-session-id"


def header(scope: dict[str, Any], name: bytes) -> str | None:
    """A request header's value (the first), or None."""
    for key, value in scope.get("headers") or []:
        if key.lower() == name:
            try:
                return value.decode("latin-1")
            except (AttributeError, UnicodeDecodeError):
                return None
    return None


def is_modern(scope: dict[str, Any]) -> bool:
    """Whether the SDK serves this request on its 2026-07-28 path (which never opens a session)."""
    version = header(scope, _VERSION_HEADER)
    return version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS


def refusal(requested: str) -> dict[str, Any]:
    """The JSON-RPC error for a request of revision ``requested`` (without its id)."""
    data = UnsupportedProtocolVersionErrorData(supported=list(SPOKEN), requested=requested)
    return {"code": UNSUPPORTED_PROTOCOL_VERSION,
            "message": f"Unsupported protocol version {requested!r}: this server speaks MCP "
                       f"{', '.join(MODERN_PROTOCOL_VERSIONS)} (stateless) and {', '.join(HANDSHAKE_PROTOCOL_VERSIONS)} "
                       "(with initialize); send one of them",
            "data": data.model_dump(mode="json")}


def revision_gate(app: Asgi) -> Asgi:
    """``app`` behind the answer to requests of a revision we do not speak (see the module)."""

    async def gate(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await app(scope, receive, send)
            return
        version = header(scope, _VERSION_HEADER)
        if version is not None:
            if version in SPOKEN:
                await app(scope, receive, send)
                return
            body = await _body(receive) if scope.get("method") == "POST" else b""
            await _refuse(send, version, _request_id(body))
            return
        if scope.get("method") != "POST" or header(scope, _SESSION_HEADER) is not None:
            await app(scope, receive, send)
            return
        # No header and no session: an initialize, or a 2026 request that left out its header.
        body = await _body(receive)
        named = _enveloped_version(body)
        if named is not None and named not in SPOKEN:
            await _refuse(send, named, _request_id(body))
            return
        await app(scope, _replay(body, receive), send)

    return gate


async def _body(receive: Any) -> bytes:
    """The request's body, read whole up to :data:`MAX_BODY` bytes (what is beyond is not read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message.get("type") != "http.request":
            break
        chunk = message.get("body") or b""
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_BODY or not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Any) -> Any:
    """A ``receive`` that gives ``body`` whole first, then what the client sends after it."""
    given = False

    async def again() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


def _decoded(body: bytes) -> Any:
    try:
        return json.loads(body) if body and len(body) <= MAX_BODY else None
    except (ValueError, RecursionError):
        return None


def _request_id(body: bytes) -> str | int | None:
    decoded = _decoded(body)
    rid = decoded.get("id") if isinstance(decoded, dict) else None
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None


def _enveloped_version(body: bytes) -> str | None:
    """The revision a request's ``params._meta`` names (2026-07-28's envelope), or None."""
    decoded = _decoded(body)
    params = decoded.get("params") if isinstance(decoded, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    named = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    return named if isinstance(named, str) else None


async def _refuse(send: Any, requested: str, rid: str | int | None) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "error": refusal(requested)}).encode()
    await send({"type": "http.response.start", "status": 400,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
