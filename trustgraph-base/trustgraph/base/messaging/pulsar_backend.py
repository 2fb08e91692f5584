"""A synchronous pub/sub backend on pulsar-client: upstream's ``get_pubsub()`` interface.

For blocking code (the :mod:`trustgraph.clients`, ``tg-dump-queues``): a
producer ``send(record, properties)`` and a consumer ``receive()`` /
``acknowledge()``, with records encoded by the one codec
(:mod:`trustgraph.schema.codec`) and topics mapped by :func:`to_pulsar`.
Processors use the asyncio :class:`~trustgraph.base.messaging.pubsub.PubSub` instead.
"""

from __future__ import annotations

import os
from typing import Any

import pulsar

from ...schema.codec import decode, encode
from ...topics import to_pulsar

DEFAULT_PULSAR_HOST = "pulsar://pulsar:6650"

#: pulsar-client's logger levels, and the error a ``receive`` that timed out raises: upstream's
#: sync clients (``trustgraph.clients``, ``trustgraph.log_level``) name them, and reach
#: pulsar-client only through this module.
LoggerLevel = pulsar.LoggerLevel
ReceiveTimeout = pulsar.Timeout


class BackendMessage:
    """A received message: ``value()`` is the decoded record (raw bytes without a schema)."""

    def __init__(self, message: Any, schema: type | None) -> None:
        self.message = message
        self.schema = schema

    def value(self) -> Any:
        data = self.message.data()
        return data if self.schema is None else decode(self.schema, data)

    def properties(self) -> dict[str, str]:
        return self.message.properties()


class BackendProducer:
    """Sends records on one topic."""

    def __init__(self, producer: Any) -> None:
        self.producer = producer

    def send(self, message: Any, properties: dict[str, str] | None = None) -> None:
        """Send a record (bytes are sent as they are) and wait for the broker's receipt."""
        data = message if isinstance(message, (bytes, bytearray)) else encode(message)
        self.producer.send(data, properties=properties or {})

    def flush(self) -> None:
        self.producer.flush()

    def close(self) -> None:
        self.producer.close()


class BackendConsumer:
    """Receives records from one subscription."""

    def __init__(self, consumer: Any, schema: type | None) -> None:
        self.consumer = consumer
        self.schema = schema

    def receive(self, timeout_millis: int = 2000) -> BackendMessage:
        """The next message; :data:`ReceiveTimeout` (``pulsar.Timeout``) when none came in time."""
        return BackendMessage(self.consumer.receive(timeout_millis=timeout_millis), self.schema)

    def acknowledge(self, message: BackendMessage) -> None:
        self.consumer.acknowledge(message.message)

    def negative_acknowledge(self, message: BackendMessage) -> None:
        self.consumer.negative_acknowledge(message.message)

    def unsubscribe(self) -> None:
        self.consumer.unsubscribe()

    def close(self) -> None:
        self.consumer.close()


_CONSUMER_TYPES = {"shared": pulsar.ConsumerType.Shared, "exclusive": pulsar.ConsumerType.Exclusive,
                   "failover": pulsar.ConsumerType.Failover}
_POSITIONS = {"latest": pulsar.InitialPosition.Latest, "earliest": pulsar.InitialPosition.Earliest}


class PulsarBackend:
    """One pulsar-client connection making producers and consumers."""

    def __init__(self, host: str, api_key: str | None = None, listener: str | None = None) -> None:
        # Kept, as upstream's backend keeps them: what a second client of the same broker needs.
        self.host, self.api_key, self.listener = host, api_key, listener
        options: dict[str, Any] = {"logger": pulsar.ConsoleLogger(pulsar.LoggerLevel.Error)}
        if api_key:
            options["authentication"] = pulsar.AuthenticationToken(api_key)
        if listener:
            options["listener_name"] = listener
        self.client = pulsar.Client(host, **options)

    def map_topic(self, topic: str) -> str:
        """A generic (``q0/tg/request/x``) or Pulsar topic name as a Pulsar URL."""
        return to_pulsar(topic)

    def create_producer(self, topic: str, schema: type | None = None, **options: Any) -> BackendProducer:
        """A producer on ``topic`` (chunking on, as upstream's)."""
        options.setdefault("chunking_enabled", True)
        options.setdefault("batching_enabled", False)
        return BackendProducer(self.client.create_producer(self.map_topic(topic), **options))

    def create_consumer(self, topic: str, subscription: str, schema: type | None = None,
                        initial_position: str = "latest", consumer_type: str = "shared",
                        **options: Any) -> BackendConsumer:
        """A consumer of ``subscription`` on ``topic`` (Shared, from the latest message by default)."""
        consumer = self.client.subscribe(
            self.map_topic(topic), subscription, consumer_type=_CONSUMER_TYPES[consumer_type],
            initial_position=_POSITIONS[initial_position], **options)
        return BackendConsumer(consumer, schema)

    def close(self) -> None:
        self.client.close()


def backend_settings(**config: Any) -> dict[str, Any]:
    """``PulsarBackend``'s arguments from the flags' settings: ``pulsar_host`` (``$PULSAR_HOST``),
    ``pulsar_api_key`` (``$PULSAR_API_KEY``), ``pulsar_listener``.

    Only the ``pulsar`` backend exists, as in upstream 2.1.4: another ``pubsub_backend`` is a ValueError
    (RabbitMQ too: these blocking clients are upstream 2.1.4's, which had none; our processors take
    ``--pubsub-backend rabbitmq``).
    """
    backend = config.get("pubsub_backend") or "pulsar"
    if backend == "rabbitmq":
        raise ValueError("Unknown pub/sub backend: rabbitmq for upstream 2.1.4's blocking clients and "
                         "get_pubsub(), which run on Pulsar only (our processors take --pubsub-backend rabbitmq)")
    if backend != "pulsar":
        raise ValueError(f"Unknown pub/sub backend: {backend}")
    return {"host": config.get("pulsar_host") or os.environ.get("PULSAR_HOST") or DEFAULT_PULSAR_HOST,
            "api_key": config.get("pulsar_api_key") or os.environ.get("PULSAR_API_KEY"),
            "listener": config.get("pulsar_listener")}


def get_pubsub(**config: Any) -> PulsarBackend:
    """The backend of these settings (:func:`backend_settings`)."""
    return PulsarBackend(**backend_settings(**config))
