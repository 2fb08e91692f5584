"""Diagnostic peer: the least an asyncio caller can do per call.

A future per call, resolved from the response listener thread with
``call_soon_threadsafe``: no deadline, no in-flight bound, no schema codec.
Same stdin/stdout protocol as the other clients (``_driver``).

Usage: ``floor_client.py PULSAR_URL TOPIC``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from typing import Any

import _driver  # first: moves stdout away from pulsar's logger
import pulsar

REQUEST = json.dumps({"user": "bench", "config": "{}", "arguments": json.dumps({"text": "hello"})}).encode()


async def main(url: str, topic: str) -> None:
    loop = asyncio.get_running_loop()
    client = pulsar.Client(url, io_threads=1, message_listener_threads=1,
                           logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Warn))
    waiters: dict[str, asyncio.Future] = {}

    def on_response(consumer: Any, msg: Any) -> None:
        consumer.acknowledge(msg)
        fut = waiters.pop(msg.properties().get("id", ""), None)
        if fut is not None:
            loop.call_soon_threadsafe(_settle, fut, msg.data())

    consumer = client.subscribe(f"non-persistent://tg/response/{topic}", f"floor-client-{uuid.uuid4()}",
                                consumer_type=pulsar.ConsumerType.Shared, receiver_queue_size=1000,
                                message_listener=on_response)
    producer = client.create_producer(f"non-persistent://tg/request/{topic}", batching_enabled=False)

    async def call(_topic: str, timeout: float | None = None) -> bytes:
        rid = str(uuid.uuid4())
        fut = loop.create_future()
        waiters[rid] = fut
        producer.send_async(REQUEST, None, properties={"id": rid})
        try:
            return await asyncio.wait_for(fut, timeout) if timeout else await fut
        finally:
            waiters.pop(rid, None)

    try:
        await _driver.warm_up(call, topic)
        await _driver.serve(call, topic)
    finally:
        consumer.close()
        producer.close()
        client.close()


def _settle(fut: asyncio.Future, value: bytes) -> None:
    if not fut.done():
        fut.set_result(value)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
