"""Calling an upstream tool service from our client, as the interop rows do."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest
from support import wait_for_async
from trustgraph.base import PubSub, ToolServiceClient
from trustgraph.topics import tool_service_topics


async def first_answer(broker_url: str, topic: str, config: dict[str, Any], arguments: dict[str, Any], *,
                       what: str, detail: Callable[[], str], gone: Callable[[], str | None],
                       timeout: float = 120.0) -> str | None:
    """Our ToolServiceClient's answer from the tool service on ``topic``, or None if none came.

    Upstream's services (2.1.4's and 2.11.1's) have no readiness signal, so a call that
    times out is retried until one is answered, ``gone`` says the service exited, or
    ``timeout`` passes; then the caller's row says it failed, with what ``detail`` shows.
    """
    request_topic, response_topic = tool_service_topics(topic)
    ps = PubSub(broker_url, processor="interop")
    try:
        client = ToolServiceClient(ps, request_topic=request_topic, response_topic=response_topic)

        async def answered() -> tuple[str] | None:
            try:
                return (await client.call("ann", config, arguments, timeout=5.0),)
            except TimeoutError:
                return None

        with contextlib.suppress(pytest.fail.Exception):
            (text,) = await wait_for_async(what, answered, timeout, every=0, detail=detail, gone=gone)
            return text
        return None
    finally:
        await ps.close()
