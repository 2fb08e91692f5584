"""The raw broker limit, client side: pulsar-client with plain threads.

Each in-flight slot is a thread that sends a request and waits on an event; a
message listener routes responses to the waiting thread by ``id``.  This is the
least a Python caller can do per call with the sync client, so it is the
yardstick for our ``ToolServiceClient``.  Same stdin/stdout protocol as
``_driver`` (implemented with threads here, not asyncio).

Usage: ``raw_client.py PULSAR_URL TOPIC``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from typing import Any

import _driver  # first: moves stdout away from pulsar's logger
import pulsar

REQUEST = json.dumps({"user": "bench", "config": "{}", "arguments": json.dumps({"text": "hello"})}).encode()


class RawClient:
    """Correlates responses to waiting threads by the ``id`` property."""

    def __init__(self, url: str, topic: str) -> None:
        self.client = pulsar.Client(url, io_threads=1, message_listener_threads=1,
                                    logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Warn))
        self.waiters: dict[str, list[Any]] = {}
        self.lock = threading.Lock()
        self.consumer = self.client.subscribe(
            f"non-persistent://tg/response/{topic}", f"raw-client-{uuid.uuid4()}",
            consumer_type=pulsar.ConsumerType.Shared, receiver_queue_size=1000,
            message_listener=self._on_response)
        self.producer = self.client.create_producer(
            f"non-persistent://tg/request/{topic}", batching_enabled=False, block_if_queue_full=True)

    def _on_response(self, consumer: Any, msg: Any) -> None:
        consumer.acknowledge(msg)
        with self.lock:
            w = self.waiters.pop(msg.properties().get("id", ""), None)
        if w is not None:
            w[1] = msg.data()
            w[0].set()

    def call(self, timeout: float = 30.0) -> bytes:
        rid = str(uuid.uuid4())
        w: list[Any] = [threading.Event(), None]
        with self.lock:
            self.waiters[rid] = w
        self.producer.send_async(REQUEST, None, properties={"id": rid})
        if not w[0].wait(timeout):
            with self.lock:
                self.waiters.pop(rid, None)
            raise TimeoutError("no response")
        return w[1]

    def close(self) -> None:
        self.consumer.close()
        self.producer.close()
        self.client.close()


def run_load(c: RawClient, n: int, inflight: int) -> tuple[int, float]:
    remaining = [n]
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                if remaining[0] <= 0:
                    return
                remaining[0] -= 1
            c.call()

    threads = [threading.Thread(target=worker) for _ in range(inflight)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return n, time.perf_counter() - t


def main(url: str, topic: str) -> None:
    c = RawClient(url, topic)
    try:
        end = time.monotonic() + 60
        while True:  # warm-up: the server may not be subscribed yet
            try:
                c.call(timeout=0.5)
                break
            except TimeoutError:
                if time.monotonic() > end:
                    raise
        _driver.emit({"ready": True})
        for line in sys.stdin:
            cmd = json.loads(line)
            if cmd["op"] == "quit":
                break
            if cmd["op"] == "seq":
                lat = []
                for _ in range(int(cmd["n"])):
                    t = time.perf_counter()
                    c.call()
                    lat.append((time.perf_counter() - t) * 1000.0)
                _driver.emit({"lat_ms": lat})
            elif cmd["op"] == "load":
                calls, secs = run_load(c, int(cmd["n"]), int(cmd["inflight"]))
                _driver.emit({"calls": calls, "secs": secs})
            else:
                _driver.emit({"error": f"unknown op {cmd['op']}"})
    finally:
        c.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
