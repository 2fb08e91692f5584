"""Upstream TrustGraph 2.1.4's ``ToolServiceClient`` driven by the shared driver.

Built the way upstream's ``RequestResponseSpec.add`` builds it (a
``PulsarBackend``, a unique subscription, no metrics objects).  Runs in
``.interop/upstream``.

Usage: ``upstream_client.py PULSAR_URL TOPIC``.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import uuid

import _driver
from trustgraph.base.pulsar_backend import PulsarBackend
from trustgraph.base.tool_service_client import ToolServiceClient
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse

ARGS = {"text": "hello"}


async def main(url: str, topic: str) -> None:
    backend = PulsarBackend(host=url)
    client = ToolServiceClient(
        backend=backend, subscription=f"bench-upstream-{uuid.uuid4()}", consumer_name="bench",
        request_topic=f"non-persistent://tg/request/{topic}", request_schema=ToolServiceRequest,
        request_metrics=None,
        response_topic=f"non-persistent://tg/response/{topic}", response_schema=ToolServiceResponse,
        response_metrics=None,
    )
    await client.start()
    try:
        async def call(t: str, timeout: float | None = None) -> str:
            return await client.call("bench", {}, ARGS, timeout=timeout or 30)

        await _driver.warm_up(call, topic)
        await _driver.serve(call, topic)
    finally:
        await client.stop()
        backend.close()


if __name__ == "__main__":
    # Upstream logs every timed-out warm-up call with a traceback at ERROR.
    logging.basicConfig(level=logging.CRITICAL, stream=sys.stderr)
    asyncio.run(main(sys.argv[1], sys.argv[2]))
