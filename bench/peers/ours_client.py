"""Our client worker: ``ToolServiceClient.call`` driven by the shared driver.

Usage: ``ours_client.py PULSAR_URL TOPIC [TOPIC...] [--pubsub-backend rabbitmq --rabbitmq-host ...]``
(with ``OTEL_TRACES_EXPORTER`` set, each call is a span of its own, as a traced caller's would be);
one client per topic (topic = the tool-service topic name, e.g. ``bench-echo``), all in one
process and one ``PubSub`` as an agent would hold them.  With ``--pubsub-backend rabbitmq`` the
broker is the one the ``--rabbitmq-*`` flags name, as for a processor (the URL is then unused).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import uuid
from typing import Any

import _driver
from trustgraph.base import PubSub, ToolServiceClient
from trustgraph.base.messaging import tracing
from trustgraph.topics import tool_service_topics

ARGS = {"text": "hello"}


def pubsub(url: str, params: dict[str, Any]) -> PubSub:
    """Pulsar at ``url``, or the RabbitMQ of the ``--rabbitmq-*`` flags, declared as our wire does."""
    if params["pubsub_backend"] != "rabbitmq":
        return PubSub(url, processor="bench-client")
    from trustgraph.base.processors.async_processor import rabbitmq_transport
    from trustgraph.base.processors.flags import amqp_url
    from trustgraph.base.wire import NATIVE
    return PubSub(amqp_url(params), processor="bench-client",
                  transport=rabbitmq_transport(params, NATIVE.rabbitmq_topology(), "bench-client"))


async def main(url: str, topics: list[str], params: dict[str, Any]) -> None:
    ps = pubsub(url, params)
    clients: dict[str, ToolServiceClient] = {}
    try:
        for topic in topics:
            req, resp = tool_service_topics(topic)
            c = ToolServiceClient(ps, request_topic=req, response_topic=resp,
                                  subscription=f"bench-client-{uuid.uuid4()}", timeout=30.0)
            await c.start()
            clients[topic] = c

        async def call(topic: str, timeout: float | None = None) -> str:
            return await clients[topic].call("bench", {}, ARGS, timeout=timeout)

        if tracing.setup("bench-client") is not None:   # OTEL_TRACES_EXPORTER set: each call its span
            plain = call

            async def call(topic: str, timeout: float | None = None) -> str:
                with tracing.span("bench call", client=True):
                    return await plain(topic, timeout)

        for topic in topics:
            await _driver.warm_up(call, topic)
        await _driver.serve(call, topics[0])
    finally:
        for c in clients.values():
            await c.stop()
        await ps.close()
        tracing.shutdown()


if __name__ == "__main__":
    from trustgraph.base.processors.flags import add_backend_args

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("topics", nargs="+")
    add_backend_args(parser)
    args = parser.parse_args()
    asyncio.run(main(args.url, args.topics, vars(args)))
