"""The base of every processor: flags, lifecycle, config push, metrics.

A processor is a plain class whose constructor takes the parsed flags as
keyword arguments (``Processor(**params)``), so a test can build one directly.
``Processor.launch(ident, doc)`` is the console-script entry point.

Config: upstream processors replay the config push topic from Earliest.  On
pulsar-lite (and on a Pulsar whose ``tg/config`` retention keeps much) that
replays every push ever made, and each push is the whole store, so start-up
grows with every config change.  We subscribe at Latest under a fresh
subscription instead and fetch the current config once with the ``config``
operation, which upstream's config-svc answers too; pushes that arrive later
carry newer versions.  An older version never replaces a newer one.  A
version too big to push arrives as a notice, and is fetched in parts
(:mod:`.config_parts`).  Pushes and fetches travel on connections of their
own (``PubSub.lane_client``), so their megabytes never crowd out a flow's
replies.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ..schema import ConfigPush, ConfigRequest, ConfigResponse
from . import config_parts, logsafe, metrics
from .broker_url import DEFAULT_PULSAR_HOST, BrokerUrlError, choose_broker_url
from .pubsub import CONFIG_LANE, CONFIG_PUSH_LANE, Consumer, Message, Producer, PubSub, PubSubError
from .request_response import RequestResponseClient
from .secrets import secret_values
from .serving import Replies, Work, serve
from .topics import ANNOUNCE, CONFIG_REQUEST, CONFIG_RESPONSE, PROBE, config_notice_topic, config_push_queue

logger = logging.getLogger(__name__)

ConfigHandler = Callable[[dict[str, dict[str, str]], int], Awaitable[None]]

_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def env_default(name: str, default: Any = None) -> Any:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


class StartRefused(Exception):
    """A processor will not start as configured (a setting that would be unsafe or cannot work):
    ``launch`` prints the message as one line and exits 2, with no traceback."""


class AsyncProcessor:
    """Lifecycle and config handling shared by every processor."""

    def __init__(self, **params: Any) -> None:
        self.id: str = params.get("id") or "processor"
        self.params = params
        # A PubSub given from outside (a test's in-memory one) replaces the broker connection.
        given: PubSub | None = params.get("pubsub")
        if given is not None:
            self.pulsar_host, self.broker_source = given.url, "given"
        else:
            self.pulsar_host, self.broker_source = choose_broker_url(params.get("pulsar_host"))
        timeout = params.get("connect_timeout")
        self.pubsub: PubSub = given or PubSub(
            self.pulsar_host,
            api_key=params.get("pulsar_api_key") or None,
            listener=params.get("pulsar_listener") or None,
            processor=self.id,
            # A service waits for its broker as long as it takes (and stays killable).
            connect_timeout=float(timeout) if timeout else None,
        )
        # False: no push subscription and no fetch from config-svc; whoever made the
        # processor hands it config with apply_config() (trustgraph.base.testing does).
        self.follow_config: bool = params.get("follow_config", True)
        self.config_push_queue: str = params.get("config_push_queue") or config_push_queue
        # Where tool services announce themselves, and readers probe for them.
        self.announce_queue: str = params.get("announce_queue") or ANNOUNCE
        self.announce_probe_queue: str = params.get("announce_probe_queue") or PROBE
        self.config_request_queue: str = params.get("config_request_queue") or CONFIG_REQUEST
        self.config_response_queue: str = params.get("config_response_queue") or CONFIG_RESPONSE
        self.metrics_enabled: bool = params.get("metrics", True)
        # None: the default port if free, else any free one (see metrics.start_metrics_server).
        port = params.get("metrics_port")
        self.metrics_port: int | None = int(port) if port is not None else None
        self.metrics_host: str = params.get("metrics_host") or metrics.DEFAULT_HOST
        self.config_version: int | None = None
        self._config_handlers: list[tuple[ConfigHandler, frozenset[str] | None]] = []
        self._seen: dict[int, dict[str, Any]] = {}
        self._config_lock = asyncio.Lock()
        self._stopping = asyncio.Event()
        self._background: set[asyncio.Task] = set()
        self._config_received = asyncio.Event()
        self._config_changed = asyncio.Event()   # set by every applied version (a fetch's retry waits on it)
        self._wanted_version = 0                  # the newest version a notice announced
        self._fetching: asyncio.Task | None = None

    # -- config ------------------------------------------------------------
    def register_config_handler(self, handler: ConfigHandler,
                                types: Iterable[str] | None = None) -> None:
        """Call ``handler(config, version)`` when any of ``types`` changes.

        ``types=None`` means every new version.  Handlers run one at a time,
        in registration order; one that raises is logged and the others still
        run.
        """
        self._config_handlers.append((handler, frozenset(types) if types is not None else None))

    async def apply_config(self, config: dict[str, dict[str, str]], version: int) -> None:
        """Run the handlers for a full config at ``version`` (older ones are ignored)."""
        async with self._config_lock:
            if self.config_version is not None and version < self.config_version:
                logger.debug("Ignoring config version %d (have %d)", version, self.config_version)
                return
            self.config_version = version
            for i, (handler, types) in enumerate(self._config_handlers):
                if types is not None:
                    view = {t: config.get(t, {}) for t in types}
                    if self._seen.get(i) == view:
                        continue
                    self._seen[i] = view
                try:
                    await handler(config, version)
                except Exception:
                    logger.exception("Config handler %s failed on version %d",
                                     getattr(handler, "__qualname__", handler), version)
            self._config_received.set()
            self._config_changed.set()
            logger.info("Config version %d applied", version)

    async def _on_config_push(self, msg: Message) -> None:
        push: ConfigPush = msg.value
        await self.apply_config(push.config or {}, push.version or 0)

    async def _on_config_notice(self, msg: Message) -> None:
        """A version too big to push was written: fetch it (in parts), unless we have it."""
        version = msg.value.version or 0
        if self.config_version is not None and version <= self.config_version:
            return
        self._wanted_version = max(self._wanted_version, version)
        if self._fetching is None or self._fetching.done():
            self._fetching = self.spawn(self._fetch_config())

    def _have_wanted(self) -> bool:
        return self.config_version is not None and self.config_version >= self._wanted_version

    async def _fetch_config(self) -> None:
        """Ask config-svc for the current config until we hold the version we want.

        The reply may come in parts (a config bigger than one message).  The
        response subscription lives only while fetching: every config reply
        of the whole system goes to every subscriber of the response topic,
        and a processor that stayed subscribed would receive them all (and
        have its connection crowded by their megabytes) for nothing.
        """
        delay = 0.5
        while not self._stopping.is_set() and not self._have_wanted():
            client = RequestResponseClient(
                self.pubsub, request_topic=self.config_request_queue,
                response_topic=self.config_response_queue,
                request_schema=ConfigRequest, response_schema=ConfigResponse,
                subscription=f"{self.id}--config-fetch--{uuid.uuid4()}", name="config-fetch",
                lane=CONFIG_LANE,
            )
            try:
                resp = await config_parts.request(client, ConfigRequest(operation="config"), timeout=10.0)
                if resp.error is None:
                    await self.apply_config(resp.config or {}, resp.version or 0)
                    continue
                logger.warning("Config fetch failed: %s", resp.error.message)
            except Exception as e:
                logger.info("Config service not answering yet (%s); retrying", e)
            finally:
                await client.stop()
            if self._have_wanted():
                return
            try:
                await asyncio.wait_for(self._config_changed.wait(), delay)
            except TimeoutError:
                pass
            self._config_changed.clear()
            delay = min(delay * 2, 10.0)

    async def start_config(self) -> None:
        """Follow the config push topic (and its notices) and fetch the current config once."""
        for topic, handler, name in ((self.config_push_queue, self._on_config_push, "config-push"),
                                     (config_notice_topic(self.config_push_queue),
                                      self._on_config_notice, "config-notice")):
            await self.pubsub.consumer(
                topic, f"{self.id}--{name}--{uuid.uuid4()}", ConfigPush,
                handler=handler, initial_position="latest", name=name, lane=CONFIG_PUSH_LANE,
            )
        # Any version will do for the first fetch; a push that arrives first ends it too.
        self._wanted_version = 0
        self._fetching = self.spawn(self._fetch_config())

    # -- serving -----------------------------------------------------------
    async def serve(self, request_topic: str, schema: type, work: Work, *, replies: Replies,
                    subscription: str, response_topic: str | None = None,
                    producer: Producer | None = None, concurrency: int = 1,
                    name: str | None = None) -> Consumer:
        """Answer requests on ``request_topic`` with ``work(msg, reply)``.

        Replies go on ``producer``, or on a new producer for ``response_topic``.
        The reply path (ids, id-less and undecodable requests, error replies)
        is :mod:`trustgraph.base.serving`'s, the same as a flow service's.
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
        if self._config_handlers and self.follow_config:
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
        if not wait or not self._config_handlers:
            return
        try:
            limit = float(wait)
        except ValueError:
            limit = 60.0
        limit = 60.0 if limit <= 1 else limit
        try:
            await asyncio.wait_for(self._config_received.wait(), limit)
        except TimeoutError:
            logger.warning("No config within %.0f s; reporting ready without it", limit)

    def request_stop(self) -> None:
        self._stopping.set()

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
        """The common flags of WIRE.md section 11; subclasses add theirs and call super()."""
        parser.add_argument("--id", default=None, help="processor id (default: the command's)")
        parser.add_argument("--pubsub-backend", default=env_default("PUBSUB_BACKEND", "pulsar"),
                            choices=["pulsar"], help="messaging backend (only pulsar)")
        parser.add_argument("-p", "--pulsar-host", default=env_default("PULSAR_HOST"),
                            help="broker URL (default: $PULSAR_HOST, else the broker of the stack "
                                 "running in ./.trustgraph or $TRUSTGRAPH_DATA, else "
                                 f"{DEFAULT_PULSAR_HOST})")
        parser.add_argument("--pulsar-api-key", default=env_default("PULSAR_API_KEY"),
                            help="Pulsar token (env PULSAR_API_KEY)")
        parser.add_argument("--pulsar-listener", default=None, help="Pulsar listener name")
        levels = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
        level = str(env_default("TRUSTGRAPH_LOG_LEVEL", "INFO")).upper()
        parser.add_argument("-l", "--log-level", default=level if level in levels else "INFO", choices=levels,
                            help="log level (default: $TRUSTGRAPH_LOG_LEVEL, else INFO; tg-launch passes "
                                 "its environment on to every component)")
        parser.add_argument("--metrics", action=argparse.BooleanOptionalAction, default=True,
                            help="serve Prometheus metrics")
        parser.add_argument("-P", "--metrics-port", type=int, default=None,
                            help=f"metrics port (default {metrics.DEFAULT_PORT}, or a free one "
                                 "when that is taken)")
        parser.add_argument("--metrics-host", default=metrics.DEFAULT_HOST,
                            help="address the metrics server listens on (default %(default)s; "
                                 "0.0.0.0 for every interface)")
        parser.add_argument("--config-push-queue", default=config_push_queue)
        parser.add_argument("--announce-queue", default=ANNOUNCE,
                            help="where tool services announce themselves (default %(default)s)")
        parser.add_argument("--announce-probe-queue", default=PROBE,
                            help="where readers ask tool services to announce (default %(default)s)")
        # Accepted for compatibility with upstream deployments; we log to stderr only.
        parser.add_argument("--loki-enabled", action=argparse.BooleanOptionalAction, default=False,
                            help=argparse.SUPPRESS)
        parser.add_argument("--loki-url", default=env_default("LOKI_URL"), help=argparse.SUPPRESS)
        parser.add_argument("--loki-username", default=env_default("LOKI_USERNAME"), help=argparse.SUPPRESS)
        parser.add_argument("--loki-password", default=env_default("LOKI_PASSWORD"), help=argparse.SUPPRESS)

    @classmethod
    def launch(cls, ident: str, doc: str | None = None, argv: list[str] | None = None) -> None:
        """Console-script entry: parse flags, configure logging, run until signalled."""
        parser = argparse.ArgumentParser(prog=ident, description=doc,
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
        cls.add_args(parser)
        args = parser.parse_args(argv)
        params = vars(args)
        params["id"] = params.get("id") or ident
        logsafe.configure(params.get("log_level") or "INFO", _LOG_FORMAT, sys.stderr, secret_values(params))
        try:
            asyncio.run(cls(**params).run())
        except KeyboardInterrupt:
            pass
        except (BrokerUrlError, PubSubError, StartRefused) as e:
            # A user's mistake or the broker's state, not our bug: one line, no traceback.
            print(f"{ident}: error: {e}", file=sys.stderr, flush=True)
            sys.exit(1 if isinstance(e, PubSubError) else 2)
        except Exception as e:
            logging.getLogger(ident).critical("%s failed: %s", ident, e, exc_info=True)
            sys.exit(1)
