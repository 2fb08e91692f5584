"""Upstream 2.1.4's pub/sub backends, and what carries the messages of its publishers and consumers.

Upstream's processors hand a *backend* to every ``Consumer``, ``Producer``,
``Publisher`` and ``Subscriber`` they make: ``self.pubsub`` of their processor,
or ``get_pubsub(**config)`` (its gateway, ``tg-dump-queues``).  Here:

* upstream's backend interface (``trustgraph.base.backend``: the protocols a
  backend implements), its Pulsar backend (``trustgraph.base.pulsar_backend``,
  on ours: :mod:`trustgraph.base.messaging.pulsar_backend`), ``get_pubsub``
  and ``PulsarClient`` (``trustgraph.base.pubsub``);
* :func:`link_for`: which transport carries an upstream-shaped part.  Our
  :class:`~trustgraph.base.messaging.pubsub.PubSub` (what our processors'
  ``pubsub`` is) carries it itself, and so does a Pulsar backend of ours,
  through a PubSub of its own made on first use: reconnecting, pausing a busy
  subscription, refusing what is malformed and the metrics come with it.  Any
  other object is a backend of the caller's own and is driven through
  upstream's protocol, as upstream does.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import sys
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, runtime_checkable

from trustgraph.base.messaging.errors import MessageTooLarge, PubSubError
from trustgraph.base.messaging.message import Message as _OurMessage
from trustgraph.base.messaging.pubsub import PubSub
from trustgraph.base.messaging.pulsar_backend import DEFAULT_PULSAR_HOST, BackendMessage, backend_settings
from trustgraph.base.messaging.pulsar_backend import BackendConsumer as _OurBackendConsumer
from trustgraph.base.messaging.pulsar_backend import BackendProducer as _OurBackendProducer
from trustgraph.base.messaging.pulsar_backend import PulsarBackend as _OurPulsarBackend
from trustgraph.base.processors.broker_choice import choose_broker_url, stack_hint
from trustgraph.base.processors.flags import env_default
from trustgraph.base.safety.limits import loads
from trustgraph.schema.codec import from_dict, to_dict

from .handling import UpstreamMessage

logger = logging.getLogger(__name__)


# -- upstream's backend interface (trustgraph.base.backend) ---------------------------------

@runtime_checkable
class Message(Protocol):
    """A received message: its record and its properties."""

    def value(self) -> Any: ...

    def properties(self) -> dict: ...


@runtime_checkable
class BackendProducer(Protocol):
    """Sends records on one topic."""

    def send(self, message: Any, properties: dict = {}) -> None: ...  # noqa: B006 - upstream's signature

    def flush(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class BackendConsumer(Protocol):
    """Receives records of one subscription; ``receive`` raises a timeout when none came in time."""

    def receive(self, timeout_millis: int = 2000) -> Message: ...

    def acknowledge(self, message: Message) -> None: ...

    def negative_acknowledge(self, message: Message) -> None: ...

    def unsubscribe(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class PubSubBackend(Protocol):
    """Makes producers and consumers; topics are generic (``q0/tg/request/x``) or Pulsar URLs."""

    def create_producer(self, topic: str, schema: type, **options: Any) -> BackendProducer: ...

    def create_consumer(self, topic: str, subscription: str, schema: type, initial_position: str = "latest",
                        consumer_type: str = "shared", **options: Any) -> BackendConsumer: ...

    def close(self) -> None: ...


# -- upstream's Pulsar backend (trustgraph.base.pulsar_backend, trustgraph.base.pubsub) -----

def dataclass_to_dict(obj: Any) -> Any:
    """A record (or a list or dict of them) as JSON-ready data; bytes as their UTF-8 text."""
    if obj is None:
        return None
    if isinstance(obj, (bytes, bytearray)):
        return bytes(obj).decode("utf-8")
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return to_dict(obj)
    if isinstance(obj, list):
        return [dataclass_to_dict(item) for item in obj]
    if isinstance(obj, dict):
        return {k: dataclass_to_dict(v) for k, v in obj.items()}
    return obj


def dict_to_dataclass(data: Any, cls: type) -> Any:
    """``data`` as a ``cls`` record (our codec: a value of the wrong type is a SchemaError)."""
    if data is None:
        return None
    if not dataclasses.is_dataclass(cls):
        return data
    return from_dict(cls, data)


class PulsarMessage(BackendMessage):
    """A received message (upstream's argument names over ours)."""

    def __init__(self, pulsar_msg: Any, schema_cls: type | None) -> None:
        super().__init__(pulsar_msg, schema_cls)


class PulsarBackendProducer(_OurBackendProducer):
    """Sends records on one topic (upstream's arguments; the schema is the record's own)."""

    def __init__(self, pulsar_producer: Any, schema_cls: type | None = None) -> None:
        super().__init__(pulsar_producer)
        self.schema = schema_cls


class PulsarBackendConsumer(_OurBackendConsumer):
    """Receives records of one subscription (upstream's argument names over ours)."""

    def __init__(self, pulsar_consumer: Any, schema_cls: type | None) -> None:
        super().__init__(pulsar_consumer, schema_cls)


class PulsarBackend(_OurPulsarBackend):
    """Our synchronous Pulsar backend; closing it also closes the PubSub its async parts used."""

    def close(self) -> None:
        super().close()
        core = _cores.pop(self, None)
        if core is not None:
            _close_later(core)


def get_pubsub(**config: Any) -> PulsarBackend:
    """Upstream's backend factory: ``pulsar_host`` (``$PULSAR_HOST``), ``pulsar_api_key``,
    ``pulsar_listener``; only ``pubsub_backend='pulsar'`` exists."""
    return PulsarBackend(**backend_settings(**config))


class PulsarClient:
    """Upstream's client holder: the broker settings and a pulsar-client, from our PubSub.

    ``pulsar_host`` None: the broker our processors would choose (``$PULSAR_HOST``,
    else the running stack's, else the default).
    """

    default_pulsar_host = os.getenv("PULSAR_HOST", DEFAULT_PULSAR_HOST)
    default_pulsar_api_key = os.getenv("PULSAR_API_KEY", None)

    def __init__(self, **params: Any) -> None:
        self.pulsar_host: str = params.get("pulsar_host") or choose_broker_url(None)[0]
        self.pulsar_api_key: str | None = params.get("pulsar_api_key", self.default_pulsar_api_key)
        self.pulsar_listener: str | None = params.get("pulsar_listener")
        self.pubsub = PubSub(self.pulsar_host, api_key=self.pulsar_api_key, listener=self.pulsar_listener,
                             processor=params.get("id") or _program(), hint=stack_hint)
        self.client: Any = self.pubsub.transport.client   # the Pulsar transport's default lane

    def close(self) -> None:
        """Close the pulsar-client."""
        if self.client is not None:
            self.client.close()
            self.client = None

    @staticmethod
    def add_args(parser: argparse.ArgumentParser) -> None:
        """Upstream's broker flags: ``-p/--pulsar-host``, ``--pulsar-api-key``, ``--pulsar-listener``."""
        parser.add_argument("-p", "--pulsar-host", default=env_default("PULSAR_HOST"),
                            help="Pulsar host (default: $PULSAR_HOST, else the running stack's broker, "
                                 f"else {DEFAULT_PULSAR_HOST})")
        parser.add_argument("--pulsar-api-key", default=env_default("PULSAR_API_KEY"),
                            help="Pulsar API key (default: $PULSAR_API_KEY)")
        parser.add_argument("--pulsar-listener", help="Pulsar listener (default: none)")


# -- what carries an upstream-shaped part ---------------------------------------------------

#: A handler of one received message: returns when it is done with (ack), raises when not (nack).
Handle = Callable[[Any], Awaitable[None]]

_cores: weakref.WeakKeyDictionary[Any, PubSub] = weakref.WeakKeyDictionary()
_closing: set[asyncio.Task] = set()


def _program() -> str:
    """The command's name, upstream's default processor id: the label our metrics carry."""
    return os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "processor"


def _close_later(core: PubSub) -> None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no loop any more: the process is ending, its connections with it
        return
    task = loop.create_task(core.close())
    _closing.add(task)
    task.add_done_callback(_closing.discard)


class SendFailed(Exception):
    """A send that may succeed when tried again (the broker away, a producer closed under us)."""


def _json_or_bytes(payload: bytes) -> Any:
    """A payload's JSON (within our limits), or the bytes themselves when they are no JSON."""
    try:
        return loads(payload)
    except ValueError:
        return payload


class _CoreSubscription:
    def __init__(self, pubsub: PubSub, consumer: Any) -> None:
        self._pubsub, self.consumer = pubsub, consumer
        #: Never ends by itself: our consumer reconnects on its own.
        self.ended: asyncio.Future = asyncio.get_running_loop().create_future()

    async def close(self, unsubscribe: bool) -> None:
        await self._pubsub.remove(self.consumer, unsubscribe=unsubscribe)


class _CoreSender:
    def __init__(self, pubsub: PubSub, producer: Any) -> None:
        self._pubsub, self._producer = pubsub, producer

    async def send(self, value: Any, properties: dict[str, str]) -> None:
        try:
            await self._producer.send(value, properties)
        except MessageTooLarge:
            raise
        except PubSubError as e:
            raise SendFailed(str(e)) from e

    async def close(self) -> None:
        await self._pubsub.remove(self._producer)


class CoreLink:
    """Parts carried by our PubSub."""

    def __init__(self, pubsub: PubSub) -> None:
        self.pubsub = pubsub

    async def subscribe(self, topic: str, subscription: str, schema: type | None, handle: Handle, *,
                        concurrency: int = 1, initial_position: str = "latest", name: str | None = None,
                        counted: bool = True) -> _CoreSubscription:
        async def handler(message: _OurMessage) -> None:
            if schema is None:  # upstream's value() of a schema-less message: its JSON, parsed
                message = _OurMessage(_json_or_bytes(message.value), message.properties, message.topic)
            await handle(UpstreamMessage(message))

        consumer = await self.pubsub.consumer(topic, subscription, schema, handler=handler,
                                              concurrency=concurrency, initial_position=initial_position,
                                              name=name, counted=counted)
        # A message published just after subscribing may be missed by pulsar-lite (pulsar_transport.SUBSCRIBE_SETTLE).
        await asyncio.sleep(self.pubsub.subscribe_settle)
        return _CoreSubscription(self.pubsub, consumer)

    async def producer(self, topic: str, schema: type | None, chunking_enabled: bool = True) -> _CoreSender:
        # Ours always chunks what a persistent topic takes (docs/compatibility.md).
        return _CoreSender(self.pubsub, await self.pubsub.producer(topic))


def _is_timeout(e: BaseException) -> bool:
    # Upstream's test: a backend's receive timeout is any exception whose type or text says so.
    return "timeout" in type(e).__name__.lower() or "timeout" in str(e).lower()


class _BackendSubscription:
    """Receivers in threads over a backend consumer, as upstream's consumer loop."""

    RECEIVE_WAIT_MS = 2000

    def __init__(self, consumer: Any, handle: Handle, concurrency: int, topic: str) -> None:
        self.consumer, self._handle, self._topic = consumer, handle, topic
        self._running = True
        self._receivers = [asyncio.create_task(self._receive()) for _ in range(max(1, concurrency))]
        self.ended: asyncio.Future = asyncio.gather(*self._receivers)

    async def _receive(self) -> None:
        while self._running:
            try:
                msg = await asyncio.to_thread(self.consumer.receive, timeout_millis=self.RECEIVE_WAIT_MS)
            except Exception as e:
                if _is_timeout(e):
                    continue
                raise
            try:
                await self._handle(msg)
            except Exception as e:
                logger.error("Handling a message of %s failed: %s", self._topic, e, exc_info=True)
                self.consumer.negative_acknowledge(msg)
            else:
                self.consumer.acknowledge(msg)

    async def close(self, unsubscribe: bool) -> None:
        self._running = False
        await asyncio.gather(*self._receivers, return_exceptions=True)
        for step in ((self.consumer.unsubscribe,) if unsubscribe else ()) + (self.consumer.close,):
            try:
                step()
            except Exception as e:  # closed already, or the backend is gone
                logger.debug("Closing the consumer of %s: %s", self._topic, e)


class _BackendSender:
    def __init__(self, producer: Any) -> None:
        self._producer = producer

    async def send(self, value: Any, properties: dict[str, str]) -> None:
        try:
            await asyncio.to_thread(self._producer.send, value, properties)
        except Exception as e:
            raise SendFailed(str(e)) from e

    async def close(self) -> None:
        for step in (self._producer.flush, self._producer.close):
            try:
                await asyncio.to_thread(step)
            except Exception as e:
                logger.debug("Closing a producer: %s", e)


class BackendLink:
    """Parts carried by a backend of the caller's own, through upstream's protocol."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend

    async def subscribe(self, topic: str, subscription: str, schema: type | None, handle: Handle, *,
                        concurrency: int = 1, initial_position: str = "latest", name: str | None = None,
                        counted: bool = True) -> _BackendSubscription:
        consumer = await asyncio.to_thread(
            self.backend.create_consumer, topic=topic, subscription=subscription, schema=schema,
            initial_position=initial_position, consumer_type="shared")
        return _BackendSubscription(consumer, handle, concurrency, topic)

    async def producer(self, topic: str, schema: type | None, chunking_enabled: bool = True) -> _BackendSender:
        return _BackendSender(await asyncio.to_thread(
            self.backend.create_producer, topic=topic, schema=schema, chunking_enabled=chunking_enabled))


def core_pubsub(backend: Any) -> PubSub | None:
    """The PubSub of ours that carries ``backend``'s parts, or None for a backend of the caller's own."""
    if isinstance(backend, PubSub):
        return backend
    if isinstance(backend, _OurPulsarBackend):
        core = _cores.get(backend)
        if core is None:
            # One per backend, made in the loop that uses it; it waits for the broker as long as it
            # takes, as upstream's parts retry for ever.
            core = _cores[backend] = PubSub(backend.host, api_key=backend.api_key, listener=backend.listener,
                                            processor=_program(), connect_timeout=None, hint=stack_hint)
        return core
    return None


def link_for(backend: Any) -> CoreLink | BackendLink:
    """What carries the parts made on ``backend`` (see the module's docstring)."""
    core = core_pubsub(backend)
    return CoreLink(core) if core is not None else BackendLink(backend)
