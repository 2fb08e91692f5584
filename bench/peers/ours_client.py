"""Our client worker: ``ToolServiceClient.call`` driven by the shared driver.

Usage: ``ours_client.py PULSAR_URL TOPIC [TOPIC...]``; one client per topic
(topic = the tool-service topic name, e.g. ``bench-echo``), all in one process
and one ``PubSub`` as an agent would hold them.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import uuid

import _driver
from trustgraph.base import PubSub, ToolServiceClient
from trustgraph.topics import tool_service_topics

ARGS = {"text": "hello"}


async def main(url: str, topics: list[str]) -> None:
    pubsub = PubSub(url, processor="bench-client")
    clients: dict[str, ToolServiceClient] = {}
    try:
        for topic in topics:
            req, resp = tool_service_topics(topic)
            c = ToolServiceClient(pubsub, request_topic=req, response_topic=resp,
                                  subscription=f"bench-client-{uuid.uuid4()}", timeout=30.0)
            await c.start()
            clients[topic] = c

        async def call(topic: str, timeout: float | None = None) -> str:
            return await clients[topic].call("bench", {}, ARGS, timeout=timeout)

        for topic in topics:
            await _driver.warm_up(call, topic)
        await _driver.serve(call, topics[0])
    finally:
        for c in clients.values():
            await c.stop()
        await pubsub.close()


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
