"""The raw RabbitMQ limit, server side: a minimal aio-pika echo service, RabbitMQ's classic RPC.

No framework: requests arrive on one queue, and each reply is published to the
default exchange with the request's ``reply_to`` as its routing key and its
``correlation_id``, then the request is acknowledged.  aio-pika's defaults
otherwise (publisher confirms on, a task per delivery).  It speaks the same
payloads as a tool service (``ToolServiceRequest`` in, ``ToolServiceResponse``
out), so it measures what RabbitMQ and aio-pika allow, and our stack on
RabbitMQ (``--pubsub-backend rabbitmq``) is judged against it.

Usage: ``aiopika_server.py HOST PORT USER PASSWORD_FILE QUEUE READY_FILE``; runs
until SIGTERM.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import aio_pika

#: Unacknowledged requests RabbitMQ hands the service at once (more than the callers keep in flight).
PREFETCH = 100


async def main(host: str, port: int, user: str, password_file: str, queue_name: str, ready_file: str) -> None:
    password = Path(password_file).read_text().strip()
    connection = await aio_pika.connect(host=host, port=port, login=user, password=password)
    try:
        channel = await connection.channel()
        await channel.set_qos(prefetch_count=PREFETCH)
        queue = await channel.declare_queue(queue_name, auto_delete=True)
        exchange = channel.default_exchange

        async def on_request(message: aio_pika.abc.AbstractIncomingMessage) -> None:
            req = json.loads(message.body)
            text = json.loads(req["arguments"]).get("text", "")
            reply = json.dumps({"error": None, "response": text, "end_of_stream": True}).encode()
            await exchange.publish(aio_pika.Message(reply, correlation_id=message.correlation_id),
                                   routing_key=message.reply_to or "")
            await message.ack()

        await queue.consume(on_request)
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        Path(ready_file).write_text("ready")
        await stop.wait()
    finally:
        await connection.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]))
