"""The raw RabbitMQ limit, client side: aio-pika's classic RPC caller, driven by the shared driver.

One connection and one channel; replies come to an exclusive, server-named
queue consumed without acks, and each one resolves the waiting call's future by
its ``correlation_id``.  Requests go to the default exchange, routed to the
service's queue.  The least an asyncio caller does per call on RabbitMQ: the
yardstick for our ``ToolServiceClient`` on ``--pubsub-backend rabbitmq``.

Usage: ``aiopika_client.py HOST PORT USER PASSWORD_FILE QUEUE``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import uuid
from pathlib import Path

import _driver  # first: the protocol's stdout
import aio_pika

REQUEST = json.dumps({"user": "bench", "config": "{}", "arguments": json.dumps({"text": "hello"})}).encode()


async def main(host: str, port: int, user: str, password_file: str, queue_name: str) -> None:
    password = Path(password_file).read_text().strip()
    connection = await aio_pika.connect(host=host, port=port, login=user, password=password)
    try:
        channel = await connection.channel()
        replies = await channel.declare_queue(exclusive=True)
        waiting: dict[str, asyncio.Future[bytes]] = {}

        async def on_reply(message: aio_pika.abc.AbstractIncomingMessage) -> None:
            # A coroutine: aio-pika wraps a plain callback in one anyway, and warns at each call.
            future = waiting.pop(message.correlation_id or "", None)
            if future is not None and not future.done():
                future.set_result(message.body)

        await replies.consume(on_reply, no_ack=True)
        exchange = channel.default_exchange
        loop = asyncio.get_running_loop()

        async def call(topic: str, timeout: float | None = 30.0) -> bytes:
            cid = str(uuid.uuid4())
            future: asyncio.Future[bytes] = loop.create_future()
            waiting[cid] = future
            try:
                await exchange.publish(aio_pika.Message(REQUEST, correlation_id=cid, reply_to=replies.name),
                                       routing_key=topic)
                return await asyncio.wait_for(future, timeout)
            finally:
                waiting.pop(cid, None)

        await _driver.warm_up(call, queue_name)
        await _driver.serve(call, queue_name)
    finally:
        await connection.close()


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]))
