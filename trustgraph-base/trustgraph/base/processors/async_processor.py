"""The base of every processor: the broker it uses, its lifecycle, serving, metrics.

A processor is a plain class whose constructor takes the parsed flags as
keyword arguments (``Processor(**params)``), so a test can build one directly.
``Processor.launch(ident, doc)`` is the console-script entry point.

Its common flags are in :mod:`.flags`, and following the config (the fetch at
start, the checked pushes) in :mod:`.config_follower`; ``env_default``,
``pulsar_token`` and ``TokenFileError`` are importable from here too.  The
broker is Pulsar's (``-p``) or, with ``--pubsub-backend rabbitmq``, RabbitMQ's
(the ``--rabbitmq-*`` flags), declared as the processor's wire declares it.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import functools
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Iterable
from typing import Any

from ...topics import CONFIG_REQUEST, CONFIG_RESPONSE, config_push_queue
from .. import wire
from ..messaging import metrics, tracing
from ..messaging.broker_url import BrokerUrlError
from ..messaging.pubsub import Consumer, Producer, PubSub, PubSubError
from ..messaging.serving import Replies, Work, serve
from ..messaging.transport import BrokerRefused
from ..safety import logsafe
from ..safety.secrets import remember, secret_values
from ..wire import WIRE_21
from .broker_choice import choose_backend, choose_broker_url, stack_hint
from .config_follower import ConfigFollower, ConfigHandler
from .flags import (
    RABBITMQ_DEFAULT_PORT,
    RABBITMQ_DEFAULT_USER,
    TokenFileError,
    add_processor_args,
    amqp_url,
    env_default,
    pulsar_token,
    rabbitmq_password,
)

logger = logging.getLogger(__name__)

__all__ = ["AsyncProcessor", "ConfigHandler", "StartRefused", "TokenFileError", "env_default", "pulsar_token"]

_LOG_FORMAT = logsafe.PROCESSOR_FORMAT


class StartRefused(Exception):
    """A processor will not start as configured (a setting that would be unsafe or cannot work):
    ``launch`` prints the message as one line and exits 2, with no traceback."""


def rabbitmq_hint(url: str) -> str:
    """The end of the line saying RabbitMQ cannot be reached: which flags name it."""
    return "is RabbitMQ running there? (--rabbitmq-host/--rabbitmq-port, or $RABBITMQ_HOST/$RABBITMQ_PORT)"


def rabbitmq_transport(params: dict[str, Any], topology: Any, name: str) -> Any:
    """The RabbitMQ transport the ``--rabbitmq-*`` settings in ``params`` name, declaring ``topology``
    (the wire's), its connections named ``name`` (what ``rabbitmqctl list_connections`` shows).
    Used by every processor on ``--pubsub-backend rabbitmq`` and by tg-launch's own bootstrap."""
    try:
        from ..messaging.rabbitmq_transport import RabbitMQTransport  # aio-pika: only when chosen
    except ImportError as e:
        raise StartRefused(f"--pubsub-backend rabbitmq needs aio-pika ({e}): install "
                           "trustgraph-base[rabbitmq]") from None
    try:
        return RabbitMQTransport(
            params.get("rabbitmq_host") or "localhost", int(params.get("rabbitmq_port") or RABBITMQ_DEFAULT_PORT),
            params.get("rabbitmq_username") or RABBITMQ_DEFAULT_USER, rabbitmq_password(params),
            params.get("rabbitmq_vhost") or "/", topology=topology, name=name)
    except ValueError as e:   # a malformed node list (BrokerUrlError names the part)
        raise StartRefused(f"--rabbitmq-host: {e}") from None


async def rabbitmq_problem(params: dict[str, Any], name: str,
                           hint: str = "check --rabbitmq-host and --rabbitmq-port") -> str | None:
    """None when the RabbitMQ the ``--rabbitmq-*`` settings in ``params`` name takes our user; else why
    not, as one line (a refused login says which flags to check; a node away, ``hint``).  What tg-launch
    asks before it starts anything, and tg-verify-system-status of a stack on RabbitMQ."""
    transport = rabbitmq_transport(params, wire.wire_for(WIRE_21).rabbitmq_topology(), name)
    try:
        problem = await transport.problem()
    except BrokerRefused as e:
        return str(e)
    finally:
        await asyncio.to_thread(transport.close)
    return None if problem is None else f"cannot reach RabbitMQ at {amqp_url(params)}: {problem}; {hint}"


class AsyncProcessor:
    """Lifecycle, serving and config handling shared by every processor."""

    #: The upstream wires this processor speaks (:mod:`trustgraph.base.wire`), the default first.
    wires: tuple[str, ...] = (WIRE_21,)

    def __init__(self, **params: Any) -> None:
        self.id: str = params.get("id") or "processor"
        self.params = params
        wire_name: str = params.get("wire") or WIRE_21
        if wire_name not in self.wires:
            raise StartRefused(wire.unsupported(self.id, wire_name, self.wires))
        #: The wire this processor speaks, asked for each edge that differs (trustgraph.base.wire).
        self.wire: wire.Wire = wire.wire_for(wire_name)
        # A PubSub given from outside (a test's in-memory one) replaces the broker connection.
        given: PubSub | None = params.get("pubsub")
        # The broker's kind: --pubsub-backend, else a running stack's RabbitMQ joined, else Pulsar.
        backend, broker, joined = ("", params, "") if given is not None else choose_backend(params)
        #: The broker's kind (--pubsub-backend): pulsar or rabbitmq.
        self.backend: str = given.transport.capabilities.name if given is not None else backend
        timeout = params.get("connect_timeout")
        if given is not None:
            self.pulsar_host, self.broker_source = given.url, "given"
        elif self.backend == "rabbitmq":
            user = broker.get("rabbitmq_username") or RABBITMQ_DEFAULT_USER
            self.pulsar_host = amqp_url(broker)
            self.broker_source = f"user {user}, " + (joined if broker is not params
                                                      else "from --rabbitmq-* or $RABBITMQ_*")
            if broker.get("rabbitmq_password_file"):   # the joined stack's: masked as the flag's would be
                try:
                    password = rabbitmq_password(broker)
                except TokenFileError as e:
                    raise StartRefused(f"joining the stack's RabbitMQ ({joined}): {e}") from None
                remember(password)
                broker = {**broker, "rabbitmq_password": password, "rabbitmq_password_file": None}
            given = PubSub(self.pulsar_host, processor=self.id,
                           transport=rabbitmq_transport(broker, self.wire.rabbitmq_topology(), self.id),
                           connect_timeout=float(timeout) if timeout else None, hint=rabbitmq_hint)
        else:
            self.pulsar_host, self.broker_source = choose_broker_url(params.get("pulsar_host"))
        self.pubsub: PubSub = given or PubSub(
            self.pulsar_host,
            api_key=pulsar_token(params),
            listener=params.get("pulsar_listener") or None,
            processor=self.id,
            # A service waits for its broker as long as it takes (and stays killable).
            connect_timeout=float(timeout) if timeout else None,
            hint=functools.partial(stack_hint, given=self.broker_source.startswith("from ")),
            # The broker's metrics, whose consumer counts fail calls nothing serves at once
            # (--pulsar-admin-url: the gateway's and every flow processor's flag).
            admin_url=params.get("pulsar_admin_url") or None,
        )
        # False: no push subscription and no fetch from config-svc; whoever made the
        # processor hands it config with apply_config() (trustgraph.base.testing does).
        self.follow_config: bool = params.get("follow_config", True)
        self.config_push_queue: str = params.get("config_push_queue") or config_push_queue
        # Where tool services announce themselves, readers probe for them, and serving notices go:
        # by default in a namespace the wire's deployment has (2.11's has no tg/config).
        defaults = self.wire.announce_topics()
        self.announce_queue: str = params.get("announce_queue") or defaults.announce
        self.announce_probe_queue: str = params.get("announce_probe_queue") or defaults.probe
        self.pubsub.serving_topic = defaults.serving
        self.config_request_queue: str = params.get("config_request_queue") or CONFIG_REQUEST
        self.config_response_queue: str = params.get("config_response_queue") or CONFIG_RESPONSE
        self.metrics_enabled: bool = params.get("metrics", True)
        # None: the default port if free, else any free one (see metrics.start_metrics_server).
        port = params.get("metrics_port")
        self.metrics_port: int | None = int(port) if port is not None else None
        self.metrics_host: str = params.get("metrics_host") or metrics.DEFAULT_HOST
        self._stopping = asyncio.Event()
        self._background: set[asyncio.Task] = set()
        self.config_follower = ConfigFollower(
            self.pubsub, self.id, push_queue=self.config_push_queue,
            request_queue=self.config_request_queue, response_queue=self.config_response_queue,
            stopping=self._stopping, wire=self.wire)

    # -- config (see .config_follower) ----------------------------------------
    @property
    def config_version(self) -> int | None:
        """The config version applied last (None: none yet)."""
        return self.config_follower.version

    def register_config_handler(self, handler: ConfigHandler,
                                types: Iterable[str] | None = None) -> None:
        """Call ``handler(config, version)`` when any of ``types`` changes.

        ``types=None`` means every new version.  Handlers run one at a time,
        in registration order; one that raises is logged and the others still
        run.
        """
        self.config_follower.register(handler, types)

    async def apply_config(self, config: dict[str, dict[str, str]], version: int, *,
                           current: bool = False) -> None:
        """Run the handlers for a full config at ``version``.

        An older version than the one held is ignored, unless ``current``:
        config-svc said it is its current one (its history restarted).
        """
        await self.config_follower.apply(config, version, current=current)

    async def start_config(self) -> None:
        """Follow the config push topic (and its notices) and fetch the current config once."""
        await self.config_follower.subscribe()
        self.spawn(self.config_follower.follow())

    # -- serving -----------------------------------------------------------
    async def serve(self, request_topic: str, schema: type, work: Work, *, replies: Replies,
                    subscription: str, response_topic: str | None = None,
                    producer: Producer | None = None, concurrency: int = 1,
                    name: str | None = None) -> Consumer:
        """Answer requests on ``request_topic`` with ``work(msg, reply)``.

        Replies go on ``producer``, or on a new producer for ``response_topic``.
        The reply path (ids, id-less and undecodable requests, error replies)
        is :mod:`trustgraph.base.messaging.serving`'s, the same as a flow service's.
        """
        if producer is None:
            if response_topic is None:
                raise ValueError("give response_topic or producer")
            producer = await self.pubsub.producer(response_topic)
        return await serve(self.pubsub, request_topic, subscription, schema, producer=producer,
                           replies=replies, work=work, concurrency=concurrency, name=name)

    # -- lifecycle ---------------------------------------------------------
    def spawn(self, coro: Awaitable[Any]) -> asyncio.Task:
        """Run a background task that is cancelled at shutdown and never lost."""
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def start(self) -> None:
        """Open what the processor needs; subclasses extend and call super()."""
        if self.metrics_enabled:
            metrics.processor_info.info({"id": self.id})
            metrics.start_metrics_server(self.metrics_port, self.metrics_host)
        if self.config_follower.has_handlers and self.follow_config:
            await self.start_config()

    async def stop(self) -> None:
        """Close consumers, producers and the client."""
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        await self.pubsub.close()

    async def wait_for_first_config(self) -> None:
        """With ``$TG_READY_AFTER_CONFIG`` set (tg-launch sets it), wait until the first
        config has been applied, so that "ready" means the flows are open too.

        Bounded by that variable's value in seconds (``1`` means the default
        60 s); past it the processor reports ready anyway and keeps waiting
        for config in the background.
        """
        wait = os.environ.get("TG_READY_AFTER_CONFIG")
        if not wait or not self.config_follower.has_handlers:
            return
        try:
            limit = float(wait)
        except ValueError:
            limit = 60.0
        limit = 60.0 if limit <= 1 else limit
        try:
            await asyncio.wait_for(self.config_follower.received.wait(), limit)
        except TimeoutError:
            logger.warning("No config within %.0f s; reporting ready without it", limit)

    def request_stop(self) -> None:
        self._stopping.set()
        self.config_follower.wake()

    async def run(self) -> None:
        """Start, signal readiness, wait for SIGINT/SIGTERM, stop.

        A signal during the start (a broker that is not there yet, a config
        service that does not answer) cancels the start at once: a processor
        must never need ``kill -9``.
        """
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self.request_stop)
            except (NotImplementedError, RuntimeError):
                pass
        logger.info("Processor %s: broker %s (%s)", self.id, self.pulsar_host, self.broker_source)
        for limitation in self.pubsub.transport.capabilities.limitations:
            logger.info("On %s, %s", self.backend, limitation)
        try:
            starting = asyncio.ensure_future(self._come_up())
            stopping = asyncio.ensure_future(self._stopping.wait())
            await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if not starting.done():
                logger.info("Processor %s stopping before it was started", self.id)
                starting.cancel()
                await asyncio.gather(starting, return_exceptions=True)
                return
            stopping.cancel()
            starting.result()
            await self._stopping.wait()
            logger.info("Processor %s stopping", self.id)
        finally:
            await self.stop()

    async def _come_up(self) -> None:
        await self.start()
        await self.wait_for_first_config()
        # Let the new subscriptions settle before anyone is told we are
        # ready (pulsar-lite may drop a message sent just after subscribe).
        await asyncio.sleep(self.pubsub.subscribe_settle)
        logger.info("Processor %s started (broker %s)", self.id, self.pulsar_host)
        ready = os.environ.get("TG_READY_FILE")
        if ready:
            with open(ready, "w") as f:
                f.write(str(os.getpid()))

    # -- command line --------------------------------------------------------
    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        """Upstream 2.1.4's common processor flags (:mod:`.flags`); subclasses add theirs and call super()."""
        add_processor_args(parser)

    @classmethod
    def checked(cls, params: dict[str, Any]) -> int | None:
        """A subclass's check of its own making that the command line asks for instead of running
        (:class:`DynamicToolService`'s ``--check-tools``): its exit status, or None to run."""
        return None

    @classmethod
    def launch(cls, ident: str, doc: str | None = None, argv: list[str] | None = None) -> None:
        """Console-script entry: parse flags, configure logging, run until signalled."""
        parser = argparse.ArgumentParser(prog=ident, description=doc,
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
        cls.add_args(parser)
        args = parser.parse_args(argv)
        params = vars(args)
        params["id"] = params.get("id") or ident
        try:
            params["pulsar_api_key"] = pulsar_token(params)
            if params.get("rabbitmq_password_file"):  # (none given: the default, not a secret to mask)
                params["rabbitmq_password"] = rabbitmq_password(params)
        except TokenFileError as e:
            print(f"{ident}: error: {e}", file=sys.stderr, flush=True)
            sys.exit(2)
        params["pulsar_api_key_file"] = params["rabbitmq_password_file"] = None
        if (code := cls.checked(params)) is not None:
            sys.exit(code)
        logsafe.configure(params.get("log_level") or "INFO", _LOG_FORMAT, sys.stderr, secret_values(params))
        # Spans when the operator's OTEL_* asks for them; exported at the end (atexit: whatever ends us).
        traced = tracing.setup(params["id"])
        if traced is not None:
            logger.info("Processor %s: %s", params["id"], traced)
            atexit.register(tracing.shutdown)

        async def main() -> None:
            # Made inside the loop: a constructor may open what needs one (upstream's TGI and
            # vLLM providers make an aiohttp session in __init__, as upstream's launch allows).
            await cls(**params).run()

        try:
            asyncio.run(main())
        except KeyboardInterrupt:
            pass
        except (BrokerUrlError, PubSubError, StartRefused) as e:
            # A user's mistake or the broker's state, not our bug: one line, no traceback.
            print(f"{ident}: error: {e}", file=sys.stderr, flush=True)
            sys.exit(1 if isinstance(e, PubSubError) else 2)
        except Exception as e:
            logging.getLogger(ident).critical("%s failed: %s", ident, e, exc_info=True)
            sys.exit(1)
