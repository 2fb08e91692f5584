"""Tool services under ``--wire 2.11``, and announce topics the broker refuses, on a real broker.

pulsar-lite creates any namespace on first use, so the missing ``tg/config`` of a
2.11 topology is tested on the in-memory transport
(tests/unit/test_announce_topics_missing.py); here the broker path that fails to
open is a topic name pulsar-client refuses (``InvalidTopicName``).
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import uuid
from pathlib import Path

import pulsar
from support import Proc, wait_for_async
from trustgraph.base import PubSub
from trustgraph.base.tool_services.service_directory import ServiceDirectory
from trustgraph.compat.v211.topics import ANNOUNCE_211, PROBE_211
from trustgraph.topics import tool_service_topics

ANNOUNCING_SERVICE = Path(__file__).parent / "announcing_service.py"


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def call_as_2_11(url: str, topic: str, config: dict, arguments: dict, timeout: float = 20.0) -> dict:
    """One request as an upstream 2.11.1 caller sends it (no ``user`` key), its first reply as JSON."""
    req, resp = tool_service_topics(topic)
    client = pulsar.Client(url, operation_timeout_seconds=int(timeout))
    try:
        consumer = client.subscribe(resp, f"caller-{uuid.uuid4()}", consumer_type=pulsar.ConsumerType.Shared)
        producer = client.create_producer(req)
        rid = str(uuid.uuid4())
        producer.send(json.dumps({"config": json.dumps(config), "arguments": json.dumps(arguments)}).encode(),
                      properties={"id": rid})
        while True:
            msg = consumer.receive(timeout_millis=int(timeout * 1000))
            consumer.acknowledge(msg)
            if msg.properties().get("id") == rid:
                return json.loads(msg.data())
    finally:
        client.close()


async def test_a_tool_service_started_with_wire_2_11_serves_and_announces_on_tg_notify(broker, spawn) -> None:
    topic = unique("joke-211")
    svc = spawn("joke-service", "-t", topic, "--id", topic, "--wire", "2.11", broker=broker)
    got = await asyncio.to_thread(call_as_2_11, broker.url, topic, {"style": "pun"}, {"topic": "cats"})
    assert got["error"] is None and got["end_of_stream"] is True
    assert got["response"].startswith("Hey trustgraph! Here's a pun for you:")
    # Its announcements are on 2.11's notify namespace, where a 2.11 reader listens.
    ps = PubSub(broker.url, processor="reader-211")
    directory = ServiceDirectory(ps, topic=ANNOUNCE_211, probe_topic=PROBE_211)
    try:
        await directory.start()
        await wait_for_async("the service announced on tg/notify", lambda: directory.live(topic), 20,
                             detail=svc.output)
    finally:
        await directory.stop()
        await ps.close()
    log = svc.output()
    assert "wire 2.11" in log and " WARNING " not in log, log


async def test_a_tool_service_serves_when_the_broker_refuses_its_announce_topic(broker, tmp_path) -> None:
    topic = unique("weather-refused")
    ready = tmp_path / "ready"
    bad = f"non-persistent://tg/bad%ns/{topic}"   # pulsar-client: InvalidTopicName
    proc = Proc([sys.executable, str(ANNOUNCING_SERVICE), "-p", broker.url, "-t", topic, "--id", topic,
                 "--no-metrics", "--announce-queue", bad], tmp_path / "svc.log",
                env={"TG_READY_FILE": str(ready)}).start()
    try:
        proc.wait_ready(ready, 60)   # the start was not held
        got = await asyncio.to_thread(call_as_2_11, broker.url, topic, {}, {"city": "Oslo"})
        assert (got["error"], got["response"]) == (None, "It is sunny in Oslo (metric), trustgraph.")
        lines = [line for line in proc.output().splitlines() if " WARNING " in line]
        assert len(lines) == 1, lines
        assert f"announcements of {topic} are off: cannot open {bad}" in lines[0]
        assert "InvalidTopicName" in lines[0] and "--announce-queue" in lines[0]
    finally:
        assert proc.stop() is not None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_gateway_starts_when_the_broker_refuses_its_announce_topic(broker, spawn) -> None:
    bad = f"non-persistent://tg/bad%ns/{unique('announce')}"
    gw = spawn("api-gateway", "--port", str(free_port()), "--host", "127.0.0.1", "--announce-queue", bad,
               broker=broker, timeout=60)
    lines = [line for line in gw.output().splitlines() if "announcements are off" in line]
    assert len(lines) == 1 and f"cannot open {bad}" in lines[0] and "config only" in lines[0], gw.output()
