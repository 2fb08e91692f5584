"""``BaseClient``: a blocking request/response call over Pulsar (upstream's ``trustgraph.clients``).

For scripts that talk to services directly on the broker rather than
through the gateway.  One call: send the request with a fresh ``id``
property, read responses until one with that id is complete
(``inspect(response)`` true), and acknowledge everything read.  An error
response raises :class:`~trustgraph.exceptions.LlmError`,
:class:`~trustgraph.exceptions.TooManyRequests`,
:class:`~trustgraph.exceptions.ParseError` or ``RuntimeError("type:
message")``; no complete answer within ``timeout`` raises ``TimeoutError``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from ..base.messaging.pulsar_backend import DEFAULT_PULSAR_HOST, LoggerLevel, ReceiveTimeout, get_pubsub
from ..exceptions import LlmError, ParseError, TooManyRequests

DEFAULT_TIMEOUT = 300

ERROR = LoggerLevel.Error
WARN = LoggerLevel.Warn
INFO = LoggerLevel.Info
DEBUG = LoggerLevel.Debug

# How long one receive waits before the deadline is checked again.
_POLL_MS = 500

_ERRORS: dict[str, type[Exception]] = {"llm-error": LlmError, "too-many-requests": TooManyRequests,
                                       "ParseError": ParseError}


def raise_for(error: Any) -> None:
    """Raise the exception for a response's ``error`` record."""
    exc = _ERRORS.get(error.type)
    if exc is not None:
        raise exc(error.message)
    raise RuntimeError(f"{error.type}: {error.message}")


class BaseClient:
    """Requests of ``input_schema`` on ``input_queue``, responses of ``output_schema`` on ``output_queue``."""

    def __init__(self, log_level: Any = ERROR, subscriber: str | None = None, input_queue: str | None = None,
                 output_queue: str | None = None, input_schema: type | None = None,
                 output_schema: type | None = None, pulsar_host: str = DEFAULT_PULSAR_HOST,
                 pulsar_api_key: str | None = None, listener: str | None = None) -> None:
        for name, value in (("input_queue", input_queue), ("output_queue", output_queue),
                            ("input_schema", input_schema), ("output_schema", output_schema)):
            if value is None:
                raise RuntimeError(f"Need {name}")
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.backend = get_pubsub(pulsar_host=pulsar_host, pulsar_api_key=pulsar_api_key,
                                  pulsar_listener=listener)
        self.consumer = self.backend.create_consumer(topic=output_queue, subscription=subscriber or str(uuid.uuid4()),
                                                     schema=output_schema)
        self.producer = self.backend.create_producer(topic=input_queue, schema=input_schema)

    def _responses(self, request: Any, timeout: float) -> Iterator[Any]:
        """Every response to one request, until the deadline (then ``TimeoutError``)."""
        rid = str(uuid.uuid4())
        deadline = time.monotonic() + timeout
        self.producer.send(request, properties={"id": rid})
        while time.monotonic() < deadline:
            try:
                msg = self.consumer.receive(timeout_millis=_POLL_MS)
            except ReceiveTimeout:
                continue
            self.consumer.acknowledge(msg)
            if msg.properties().get("id") != rid:
                continue
            value = msg.value()
            if value.error:
                raise_for(value.error)
            yield value
        raise TimeoutError("Timed out waiting for response")

    def call(self, timeout: float = DEFAULT_TIMEOUT, inspect: Callable[[Any], Any] = lambda r: True,
             **fields: Any) -> Any:
        """Send ``input_schema(**fields)``; return the first response ``inspect`` calls complete."""
        for value in self._responses(self.input_schema(**fields), timeout):
            if inspect(value):
                return value
        raise TimeoutError("Timed out waiting for response")  # pragma: no cover - _responses raises

    def close(self) -> None:
        """Close the consumer, the producer and the connection."""
        for part in ("consumer", "producer"):
            obj = self.__dict__.pop(part, None)
            if obj is not None:
                obj.close()
        backend = self.__dict__.pop("backend", None)
        if backend is not None:
            backend.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown
            pass
