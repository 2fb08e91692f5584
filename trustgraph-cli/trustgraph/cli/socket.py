"""One streamed call over the gateway's websocket (``GET {url}api/v1/socket``).

Commands that show output as it arrives (agent thoughts, LLM tokens, tool
chunks) use this; everything else uses the REST client in :mod:`api`.
aiohttp is imported here only, so REST-only commands start fast.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from typing import Any

from trustgraph.base.command_line import START_HINT, CliError, describe_error, normalise_url, not_found_hint
from trustgraph.base.safety.secrets import redact_url, remember, scrub

OnResponse = Callable[[dict[str, Any]], None]


def socket_url(url: str, token: str | None) -> str:
    base = normalise_url(url)
    ws = "ws" + base[4:] if base.startswith("http") else base
    ws += "api/v1/socket"
    if token:
        from urllib.parse import quote
        ws += f"?token={quote(token)}"
    return ws


async def _stream(url: str, token: str | None, service: str, request: dict[str, Any],
                  flow: str | None, on_response: OnResponse, timeout: float,
                  on_error: OnResponse | None = None) -> dict[str, Any]:
    import aiohttp

    rid = str(uuid.uuid4())
    # "deadline": our gateway ends the call, and the services behind it, when we stop waiting.
    envelope: dict[str, Any] = {"id": rid, "service": service, "request": request,
                                "deadline": round(time.time() + timeout, 3)}
    if flow:
        envelope["flow"] = flow
    target = socket_url(url, token)
    remember(token)
    try:
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(target, max_msg_size=0, heartbeat=30) as ws:
                await ws.send_str(json.dumps(envelope))
                async with asyncio.timeout(timeout):
                    async for frame in ws:
                        if frame.type != aiohttp.WSMsgType.TEXT:
                            if frame.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                                break
                            continue
                        msg = json.loads(frame.data)
                        if msg.get("id") not in (rid, None):
                            continue
                        if "error" in msg:  # routing or envelope error from the gateway
                            raise CliError(describe_error(msg["error"]))
                        response = msg.get("response") or {}
                        if isinstance(response, dict) and response.get("error"):
                            if on_error is not None:   # may raise an error of its own (another status)
                                on_error(response)
                            raise CliError(describe_error(response["error"]))
                        on_response(response)
                        if msg.get("complete"):
                            return response
                raise CliError("the gateway closed the connection before the answer was complete")
    except aiohttp.WSServerHandshakeError as e:
        if e.status == 401:
            raise CliError("unauthorized: set --token or TRUSTGRAPH_TOKEN") from None
        if e.status == 404:
            raise CliError(f"websocket to {redact_url(target)} refused: HTTP 404: "
                           f"{not_found_hint(normalise_url(url), e.headers)}") from None
        raise CliError(f"websocket to {redact_url(target)} refused: HTTP {e.status}") from None
    except aiohttp.ClientConnectorError as e:
        reason = getattr(e.os_error, "strerror", None) or str(e)
        raise CliError(f"cannot connect to {normalise_url(url)}: {reason}; {START_HINT}") from None
    except TimeoutError:
        raise CliError(f"no complete answer within {timeout:g}s") from None
    except aiohttp.ClientError as e:
        raise CliError(f"connection to the gateway failed: {scrub(str(e), [token])}") from None
    except ValueError as e:
        raise CliError(f"the gateway sent a frame that is not JSON: {e}") from None


def stream(url: str, token: str | None, service: str, request: dict[str, Any], *,
           flow: str | None = None, on_response: OnResponse = lambda r: None,
           timeout: float = 600.0, on_error: OnResponse | None = None) -> dict[str, Any]:
    """Send one request and pass every response to ``on_response``; return the last.

    An error response ends the stream with :class:`CliError`; ``on_error`` sees it first, whole,
    and may raise its own (tg-invoke-agent's exit status follows the dialog's ``outcome``, which
    travels beside the error)."""
    return asyncio.run(_stream(url, token, service, request, flow, on_response, timeout, on_error))
