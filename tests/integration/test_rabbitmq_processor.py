"""A processor of ours on RabbitMQ, chosen by its flags (``--pubsub-backend rabbitmq --rabbitmq-*``), on a
real node (fixture ``rabbitmq``): it serves tool calls, announces itself, says what the backend cannot
do, and a wrong password ends it with one line that does not hold the password.

The service is ``announcing_service.py`` (a DynamicToolService declaring a ``weather`` tool) as a real
process, given its password through ``--rabbitmq-password-file``; the caller is a PubSub on a
RabbitMQTransport in the test.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

from support import ANNOUNCING_SERVICE, Proc, wait_for, wait_for_async
from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.base.messaging.rabbitmq_transport import RabbitMQTransport
from trustgraph.base.tool_services.service_directory import ServiceDirectory
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse
from trustgraph.topics import tool_service_topics

#: Bounds on hangs (a process starting on a loaded 2-core machine), not performance figures.
START_TIMEOUT = 60.0
CALL_TIMEOUT = 30.0


def flags(node, password_file) -> list[str]:
    return ["--pubsub-backend", "rabbitmq", "--rabbitmq-host", node.host, "--rabbitmq-port", str(node.port),
            "--rabbitmq-username", node.username, "--rabbitmq-password-file", str(password_file),
            "--rabbitmq-vhost", node.vhost]


async def test_a_service_chosen_onto_rabbitmq_by_its_flags_serves_calls_and_announces(rabbitmq, tmp_path) -> None:
    secret = tmp_path / "password"
    secret.write_text(rabbitmq.password + "\n")
    topic, sid = f"weather-{uuid.uuid4().hex[:6]}", f"weather-{uuid.uuid4().hex[:6]}"
    ready = tmp_path / "ready"
    # The environment names Pulsar: the flags win, and nothing here can reach a Pulsar.
    service = Proc([sys.executable, str(ANNOUNCING_SERVICE), "--id", sid, "-t", topic, "--no-metrics",
                    *flags(rabbitmq, secret)], tmp_path / "service.log",
                   env={"TG_READY_FILE": str(ready), "PULSAR_HOST": "pulsar://127.0.0.1:1",
                        "PUBSUB_BACKEND": "pulsar"}).start()
    ps = PubSub(f"amqp://{rabbitmq.host}:{rabbitmq.port}", processor="caller", transport=RabbitMQTransport(
        rabbitmq.host, rabbitmq.port, rabbitmq.username, rabbitmq.password, rabbitmq.vhost))
    directory = ServiceDirectory(ps)
    try:
        service.wait_ready(ready, START_TIMEOUT)
        await directory.start()
        await wait_for_async(f"{sid} announced on RabbitMQ", lambda: directory.live_for(sid), START_TIMEOUT,
                             detail=service.output)
        request, response = tool_service_topics(topic)
        client = RequestResponseClient(ps, request_topic=request, response_topic=response,
                                       request_schema=ToolServiceRequest, response_schema=ToolServiceResponse,
                                       subscription=f"caller-{uuid.uuid4()}")
        await client.start()
        answer = await client.request(ToolServiceRequest(user="ann", config="{}",
                                                         arguments=json.dumps({"city": "Oslo"})),
                                      timeout=CALL_TIMEOUT)
        assert (answer.error, answer.response) == (None, "It is sunny in Oslo (metric), ann.")
        log = service.output()
        assert (f"Processor {sid}: broker amqp://{rabbitmq.host}:{rabbitmq.port}/%2F (user {rabbitmq.username}, "
                "from --rabbitmq-* or $RABBITMQ_*)") in log
        for line in _limitations():  # each said once, at INFO
            assert log.count(f"On rabbitmq, {line}") == 1, log
        assert rabbitmq.password not in log
    finally:
        await directory.stop()
        await ps.close()
        assert service.stop() == 0, service.output()


def _limitations() -> tuple[str, ...]:
    transport = RabbitMQTransport("127.0.0.1", 1, "u", "p")
    try:
        return transport.capabilities.limitations
    finally:
        transport.close()


def test_a_wrong_password_ends_the_processor_with_one_line(rabbitmq, tmp_path) -> None:
    secret = tmp_path / "password"
    secret.write_text("not-" + rabbitmq.password)
    done = subprocess.run([sys.executable, str(ANNOUNCING_SERVICE), "--id", "w", "-t", "w", "--no-metrics",
                           *flags(rabbitmq, secret)], capture_output=True, text=True, timeout=START_TIMEOUT,
                          stdin=subprocess.DEVNULL)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1, done.stderr
    assert last == (f"weather-service: error: RabbitMQ at {rabbitmq.host}:{rabbitmq.port} refused user "
                    f"{rabbitmq.username}: check --rabbitmq-username/--rabbitmq-password"), done.stderr
    assert rabbitmq.password not in done.stderr and "Traceback" not in done.stderr


def test_a_rabbitmq_that_is_down_is_one_line_and_the_processor_keeps_waiting(tmp_path) -> None:
    from trustgraph.base.launching.broker import free_port

    port = free_port()
    service = Proc([sys.executable, str(ANNOUNCING_SERVICE), "--id", "d", "-t", "d", "--no-metrics",
                    "--pubsub-backend", "rabbitmq", "--rabbitmq-host", "127.0.0.1", "--rabbitmq-port", str(port)],
                   tmp_path / "down.log").start()
    try:
        line = (f"cannot reach the broker at amqp://127.0.0.1:{port}/%2F: connection refused on "
                f"127.0.0.1:{port} (nothing listens there); is RabbitMQ running there?")
        wait_for("the unreachable line", lambda: line in service.output(), START_TIMEOUT, detail=service.output,
                 gone=service.exited)
        assert service.exited() is None
    finally:
        assert service.stop() == 0, service.output()
