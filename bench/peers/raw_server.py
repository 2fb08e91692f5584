"""The raw broker limit, server side: a minimal pulsar-client echo service.

No framework: the client library's listener thread decodes the request,
sends the reply asynchronously and acknowledges.  It speaks the same wire
format as a tool service (``ToolServiceRequest`` in, ``ToolServiceResponse``
out, correlated by the ``id`` property), so it measures what the broker and
the client library allow, and our stack is judged against it.

Usage: ``raw_server.py PULSAR_URL TOPIC READY_FILE``; runs until SIGTERM.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from typing import Any

import pulsar


def main(url: str, topic: str, ready_file: str) -> None:
    client = pulsar.Client(url, io_threads=1, message_listener_threads=1,
                           logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Warn))
    producer = client.create_producer(f"non-persistent://tg/response/{topic}",
                                      batching_enabled=False, block_if_queue_full=True)

    def on_message(consumer: Any, msg: Any) -> None:
        req = json.loads(msg.data())
        text = json.loads(req["arguments"]).get("text", "")
        reply = {"error": None, "response": text, "end_of_stream": True}
        producer.send_async(json.dumps(reply).encode(), None, properties={"id": msg.properties()["id"]})
        consumer.acknowledge(msg)

    consumer = client.subscribe(f"non-persistent://tg/request/{topic}", "raw-server",
                                consumer_type=pulsar.ConsumerType.Shared,
                                receiver_queue_size=1000, message_listener=on_message)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with open(ready_file, "w") as f:
        f.write("ready")
    try:
        while not stop.wait(0.5):
            pass
    finally:
        consumer.close()
        producer.close()
        client.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
