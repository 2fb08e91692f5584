"""Diagnostic peer: the least an asyncio service can do per call.

The listener thread hands each request to the event loop
(``call_soon_threadsafe``), and the loop decodes it, sends the reply and
acknowledges: no tasks, no schema codec, no metrics.  Against the raw server
it prices the thread-to-loop hop alone; against ours it prices everything our
stack adds on top of that hop (see bench/notes.md).

Usage: ``floor_server.py PULSAR_URL TOPIC READY_FILE``; runs until SIGTERM.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from typing import Any

import pulsar


async def main(url: str, topic: str, ready_file: str) -> None:
    loop = asyncio.get_running_loop()
    client = pulsar.Client(url, io_threads=1, message_listener_threads=1,
                           logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Warn))
    producer = client.create_producer(f"non-persistent://tg/response/{topic}", batching_enabled=False)
    consumer: list[Any] = []

    def handle(msg: Any) -> None:
        req = json.loads(msg.data())
        text = json.loads(req["arguments"]).get("text", "")
        reply = {"error": None, "response": text, "end_of_stream": True}
        producer.send_async(json.dumps(reply).encode(), None, properties={"id": msg.properties()["id"]})
        consumer[0].acknowledge(msg)

    def on_message(_consumer: Any, msg: Any) -> None:
        loop.call_soon_threadsafe(handle, msg)

    consumer.append(client.subscribe(f"non-persistent://tg/request/{topic}", "floor-server",
                                     consumer_type=pulsar.ConsumerType.Shared,
                                     receiver_queue_size=1000, message_listener=on_message))
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    with open(ready_file, "w") as f:
        f.write("ready")
    try:
        await stop.wait()
    finally:
        consumer[0].close()
        producer.close()
        client.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
