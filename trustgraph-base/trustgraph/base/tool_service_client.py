"""The caller's side of a tool service: ``await client.call(user, config, arguments)``.

Built on the one request/response client, so it inherits the whole-call
deadline, the bound on calls in flight and the cleanup of waiters.  A service
that streams is handled by both methods: ``call`` joins the chunks,
``call_streaming`` also hands each one to a callback as it arrives.
"""

from __future__ import annotations

import inspect
import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from ..schema import ToolServiceRequest, ToolServiceResponse
from .pubsub import PubSub
from .request_response import RequestResponseClient

ChunkCallback = Callable[[str], "Awaitable[None] | None"]


class ToolServiceError(Exception):
    """The service answered with an error; ``type`` and ``message`` are the wire Error's."""

    def __init__(self, type: str, message: str) -> None:
        super().__init__(f"{type}: {message}" if type else message)
        self.type = type
        self.message = message


def _as_json(value: Any, what: str) -> str:
    if value is None or (value.__class__ is dict and not value):
        return "{}"
    if isinstance(value, str):
        return value or "{}"
    try:
        return json.dumps(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"tool-service {what} must be JSON-serialisable: {e}") from e


class ToolServiceClient(RequestResponseClient):
    """Calls one tool service (one request topic, one response topic)."""

    def __init__(self, pubsub: PubSub, *, request_topic: str, response_topic: str,
                 subscription: str | None = None, timeout: float = 60.0,
                 max_in_flight: int = 256, name: str | None = None, **_: Any) -> None:
        super().__init__(
            pubsub, request_topic=request_topic, response_topic=response_topic,
            request_schema=ToolServiceRequest, response_schema=ToolServiceResponse,
            subscription=subscription or f"{pubsub.processor or 'client'}--tool-service--{uuid.uuid4()}",
            timeout=timeout, max_in_flight=max_in_flight, name=name,
        )

    async def call(self, user: str, config: Any, arguments: Any, timeout: float | None = None) -> str:
        """Invoke the tool and return its observation text (chunks joined)."""
        return await self.call_streaming(user, config, arguments, None, timeout=timeout)

    async def call_streaming(self, user: str, config: Any, arguments: Any,
                             callback: ChunkCallback | None, timeout: float | None = None) -> str:
        """Invoke the tool, pass each chunk to ``callback``, return the joined text.

        Raises :class:`ToolServiceError` when the service reports an error and
        :class:`~trustgraph.base.request_response.RequestTimeout` when the
        whole call outlives ``timeout``.
        """
        request = ToolServiceRequest(
            user=user or "", config=_as_json(config, "config"),
            arguments=_as_json(arguments, "arguments"),
        )
        parts: list[str] = []

        def collect(resp: ToolServiceResponse) -> bool:
            # Plain function when there is no callback: no coroutine per response.
            if resp.error is not None:
                raise ToolServiceError(resp.error.type or "tool-service-error", resp.error.message or "")
            if resp.response:
                parts.append(resp.response)
            return bool(resp.end_of_stream)

        async def deliver(resp: ToolServiceResponse) -> bool:
            if resp.error is not None:
                raise ToolServiceError(resp.error.type or "tool-service-error", resp.error.message or "")
            if resp.response:
                parts.append(resp.response)
                done = callback(resp.response)
                if inspect.isawaitable(done):
                    await done
            return bool(resp.end_of_stream)

        await self.request(request, timeout=timeout, recipient=collect if callback is None else deliver)
        return "".join(parts)
