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
carry newer versions.  A version too big to push arrives as a notice, and is
fetched in parts (:mod:`.config_parts`).  Pushes and fetches travel on
connections of their own (``PubSub.lane_client``), so their megabytes never
crowd out a flow's replies.

A push is applied only once config-svc confirms it holds that version with
that content (:mod:`.config_source`): anything on the broker can publish on
the push topic.  What config-svc says is current is applied even when it is
older than what the processor holds (a new store, a restore from a backup),
with a WARNING naming why.  One task follows the config (pushes, notices and
fetches, in turn), so a check never races an apply; a burst of pushes is
checked once, for the newest.
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

from tenacity import AsyncRetrying, retry_if_result, wait_exponential

from ...schema import ConfigPush, ConfigRequest, ConfigResponse
from ...topics import ANNOUNCE, CONFIG_REQUEST, CONFIG_RESPONSE, PROBE, config_notice_topic, config_push_queue
from ..messaging import metrics
from ..messaging.broker_url import DEFAULT_PULSAR_HOST, BrokerUrlError, choose_broker_url
from ..messaging.pubsub import CONFIG_LANE, CONFIG_PUSH_LANE, Consumer, Message, Producer, PubSub, PubSubError
from ..messaging.request_response import RequestResponseClient
from ..messaging.serving import Replies, Work, serve
from ..safety import logsafe
from ..safety.secrets import secret_values
from . import config_parts, config_source

logger = logging.getLogger(__name__)

ConfigHandler = Callable[[dict[str, dict[str, str]], int], Awaitable[None]]

_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def env_default(name: str, default: Any = None) -> Any:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


class StartRefused(Exception):
    """A processor will not start as configured (a setting that would be unsafe or cannot work):
    ``launch`` prints the message as one line and exits 2, with no traceback."""


class TokenFileError(ValueError):
    """``--pulsar-api-key-file`` names a file that gives no token."""


def pulsar_token(params: dict[str, Any]) -> str | None:
    """The Pulsar token: from ``pulsar_api_key_file`` when given, else ``pulsar_api_key``.

    A file of its own per process (a mounted secret, tg-launch's
    ``--pulsar-token-dir``) gives each process its own broker role and keeps
    the token out of the command line and the environment; it wins over
    ``$PULSAR_API_KEY``, which a whole stack may share.
    """
    path = params.get("pulsar_api_key_file")
    if not path:
        return params.get("pulsar_api_key") or None
    try:
        with open(path, encoding="utf-8") as f:
            token = f.read().strip()
    except (OSError, UnicodeDecodeError) as e:
        raise TokenFileError(f"cannot read the Pulsar token file {path}: {getattr(e, 'strerror', None) or e} "
                             "(give --pulsar-api-key-file a readable file holding the token)") from None
    if not token:
        raise TokenFileError(f"the Pulsar token file {path} is empty (put the token in it)")
    return token


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
            api_key=pulsar_token(params),
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
        # What we hold of config-svc's config, and what waits to be checked (the follower's work).
        self._held = config_source.Held()
        self._pending_push: tuple[int, dict[str, dict[str, str]], dict[str, str]] | None = None
        self._need_fetch = False
        self._follow = asyncio.Event()

    # -- config ------------------------------------------------------------
    def register_config_handler(self, handler: ConfigHandler,
                                types: Iterable[str] | None = None) -> None:
        """Call ``handler(config, version)`` when any of ``types`` changes.

        ``types=None`` means every new version.  Handlers run one at a time,
        in registration order; one that raises is logged and the others still
        run.
        """
        self._config_handlers.append((handler, frozenset(types) if types is not None else None))

    async def apply_config(self, config: dict[str, dict[str, str]], version: int, *,
                           current: bool = False) -> None:
        """Run the handlers for a full config at ``version``.

        An older version than the one held is ignored, unless ``current``:
        config-svc said it is its current one (its history restarted).
        """
        async with self._config_lock:
            if not current and self.config_version is not None and version < self.config_version:
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
            logger.info("Config version %d applied", version)

    async def _on_config_push(self, msg: Message) -> None:
        """A push to check with config-svc: kept for the follower (only the newest waiting one)."""
        push: ConfigPush = msg.value
        self._pending_push = (push.version or 0, push.config or {}, dict(msg.properties))
        self._follow.set()

    async def _on_config_notice(self, msg: Message) -> None:
        """A version too big to push was written: fetch it (in parts), unless we hold it."""
        version = msg.value.version or 0
        store, _ = config_source.stamp_of(msg.properties)
        if version == self._held.version and (store is None or store == self._held.store):
            return
        self._need_fetch = True
        self._follow.set()

    async def _follow_config(self) -> None:
        """The one task that changes what config we hold: fetches, then checked pushes."""
        while not self._stopping.is_set():
            await self._follow.wait()
            self._follow.clear()
            while self._need_fetch or self._pending_push is not None:
                if self._need_fetch:
                    self._need_fetch = False
                    await self._fetch_config()
                    continue
                version, config, _props = self._pending_push
                self._pending_push = None
                try:
                    await self._check_push(version, config)
                except Exception:
                    logger.exception("Checking config push version %d failed", version)

    def _config_client(self, name: str) -> RequestResponseClient:
        """A client of config-svc for one fetch or check.  The response subscription lives only
        that long: every config reply of the whole system goes to every subscriber of the
        response topic, and a processor that stayed subscribed would receive them all (and have
        its connection crowded by their megabytes) for nothing."""
        return RequestResponseClient(
            self.pubsub, request_topic=self.config_request_queue,
            response_topic=self.config_response_queue,
            request_schema=ConfigRequest, response_schema=ConfigResponse,
            subscription=f"{self.id}--{name}--{uuid.uuid4()}", name=name, lane=CONFIG_LANE,
        )

    async def _config_svc_holds(self) -> config_source.Answer | None:
        """config-svc's version (and, ours, its digest and store); None when it does not answer."""
        client = self._config_client("config-check")
        try:
            resp, props = await config_parts.request_with_properties(
                client, ConfigRequest(operation="get", keys=[]), timeout=10.0)
        except Exception as e:
            logger.info("Config service did not answer a version check (%s)", e)
            return None
        finally:
            await client.stop()
        if resp.error is not None:
            logger.warning("Config service refused a version check: %s", resp.error.message)
            return None
        store, digest = config_source.stamp_of(props)
        return config_source.Answer(resp.version or 0, digest, store)

    async def _check_push(self, version: int, config: dict[str, dict[str, str]]) -> None:
        """Apply a push only if config-svc holds it (:func:`config_source.decide`)."""
        digest = await asyncio.to_thread(config_source.config_digest, config)
        if version == self._held.version and digest == self._held.digest:
            return  # what we hold already (config-svc pushes once more when it starts)
        answer = await self._config_svc_holds()
        if answer is None:
            logger.warning("Config push of version %d not applied: config-svc did not confirm it; "
                           "fetching config-svc's config once it answers", version)
            await self._fetch_config()
            return
        decision = config_source.decide(version, digest, answer, self._held)
        if decision.action == "apply":
            await self._apply_current(config, version, digest, answer.store)
        elif decision.action == "superseded":
            logger.debug("Config push of version %d superseded: %s", version, decision.why)
        else:
            logger.warning("Config push of version %d ignored: %s", version, decision.why)
            if decision.action == "ignore+fetch":
                await self._fetch_config()

    async def _apply_current(self, config: dict[str, dict[str, str]], version: int, digest: str,
                             store: str | None) -> None:
        """Apply what config-svc holds now, also behind what we hold (saying why)."""
        why = config_source.restart_reason(self._held, version, store)
        if why is not None:
            logger.warning("Config service's version history restarted (%s): applying version %d "
                           "in place of %d", why, version, self._held.version)
        self._held = config_source.Held(version, digest, store)
        await self.apply_config(config, version, current=True)

    async def _fetch_config(self) -> None:
        """Ask config-svc for its current config until it answers, and apply that.

        The reply may come in parts (a config bigger than one message).  The first
        unanswered request is an INFO line, later ones DEBUG (a processor started
        before its stack waits quietly); the config applied is the INFO line that ends it.
        """
        unanswered = 0

        async def fetched() -> bool:
            """One request; whether we are done (config-svc's config applied, or we are stopping)."""
            nonlocal unanswered
            if self._stopping.is_set():
                return True
            client = self._config_client("config-fetch")
            try:
                resp, props = await config_parts.request_with_properties(
                    client, ConfigRequest(operation="config"), timeout=10.0)
                if resp.error is None:
                    config = resp.config or {}
                    digest = await asyncio.to_thread(config_source.config_digest, config)
                    store, _ = config_source.stamp_of(props)
                    await self._apply_current(config, resp.version or 0, digest, store)
                    return True
                logger.warning("Config fetch failed: %s", resp.error.message)
            except Exception as e:
                unanswered += 1
                logger.log(logging.INFO if unanswered == 1 else logging.DEBUG,
                           "Config service not answering yet (%s); retrying", e)
            finally:
                await client.stop()
            return False

        async def pause(seconds: float) -> None:
            # A push or notice arriving means config-svc is back: ask again at once.
            try:
                await asyncio.wait_for(self._follow.wait(), seconds)
            except TimeoutError:
                pass
            self._follow.clear()

        await AsyncRetrying(wait=wait_exponential(multiplier=0.5, exp_base=2, max=10.0), sleep=pause,
                            retry=retry_if_result(lambda done: not done))(fetched)

    async def start_config(self) -> None:
        """Follow the config push topic (and its notices) and fetch the current config once."""
        for topic, handler, name in ((self.config_push_queue, self._on_config_push, "config-push"),
                                     (config_notice_topic(self.config_push_queue),
                                      self._on_config_notice, "config-notice")):
            await self.pubsub.consumer(
                topic, f"{self.id}--{name}--{uuid.uuid4()}", ConfigPush,
                handler=handler, initial_position="latest", name=name, lane=CONFIG_PUSH_LANE,
            )
        self._need_fetch = True
        self._follow.set()
        self.spawn(self._follow_config())

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
        self._follow.set()

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
        """Upstream 2.1.4's common processor flags; subclasses add theirs and call super()."""
        parser.add_argument("--id", default=None, help="processor id (default: the command's)")
        parser.add_argument("--pubsub-backend", default=env_default("PUBSUB_BACKEND", "pulsar"),
                            choices=["pulsar"], help="messaging backend (only pulsar)")
        parser.add_argument("-p", "--pulsar-host", default=env_default("PULSAR_HOST"),
                            help="broker URL (default: $PULSAR_HOST, else the broker of the stack "
                                 "running in ./.trustgraph or $TRUSTGRAPH_DATA, else "
                                 f"{DEFAULT_PULSAR_HOST})")
        parser.add_argument("--pulsar-api-key", default=env_default("PULSAR_API_KEY"),
                            help="Pulsar token (env PULSAR_API_KEY)")
        parser.add_argument("--pulsar-api-key-file", default=env_default("PULSAR_API_KEY_FILE"), metavar="FILE",
                            help="read the Pulsar token from FILE (env PULSAR_API_KEY_FILE); wins over "
                                 "--pulsar-api-key, so each process can have its own role")
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
        parser.add_argument("--config-request-queue", default=CONFIG_REQUEST,
                            help="config-svc's requests, where the config is fetched and each push "
                                 "checked (default %(default)s)")
        parser.add_argument("--config-response-queue", default=CONFIG_RESPONSE,
                            help="config-svc's replies (default %(default)s)")
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
        try:
            params["pulsar_api_key"] = pulsar_token(params)
        except TokenFileError as e:
            print(f"{ident}: error: {e}", file=sys.stderr, flush=True)
            sys.exit(2)
        params["pulsar_api_key_file"] = None
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
