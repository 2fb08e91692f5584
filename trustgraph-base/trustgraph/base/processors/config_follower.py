"""Following the config: what a processor holds of config-svc's config, and the one task that changes it.

Every processor follows the config (its flows, its tools, its prompts); how
it does so is the subtlest part of its life, so it is one object,
:class:`ConfigFollower`, that :class:`~.async_processor.AsyncProcessor` owns
(its ``register_config_handler``, ``apply_config`` and ``start_config`` hand
over to it).

Upstream processors replay the config push topic from Earliest.  On
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

Under ``--wire 2.11`` config-svc (ours or upstream's) pushes no config: it
sends a notice naming, per changed type, the workspaces it changed in, on
``notify:tg:config``, and a processor fetches what it needs
(trustgraph-base 2.11.1 ``base/async_processor.py``).  The follower then
subscribes to the notices (at Latest, under a fresh subscription), fetches
the followed workspace's config (:data:`~trustgraph.compat.v211.schema.DEFAULT_WORKSPACE`)
with 2.11's ``config`` operation at start, and again after each notice that
names that workspace for a type a handler follows, and hands the handlers the
same ``{type: {key: value}}`` they get under 2.1.  A fetched config is
config-svc's own reply, so there is no push to check: a notice nobody sent
costs one fetch.  One fetch takes the whole workspace, so the handlers see
one consistent version (2.11 fetches type by type).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from tenacity import AsyncRetrying, retry_if_result, wait_exponential
from trustgraph.compat.v211 import schema as v211

from ...schema import ConfigPush, ConfigRequest, ConfigResponse
from ...topics import config_notice_topic
from ..messaging import metrics
from ..messaging.pubsub import CONFIG_LANE, CONFIG_PUSH_LANE, Message, PubSub
from ..messaging.request_response import RequestResponseClient
from ..wire import WIRE_21, WIRE_211
from . import config_parts, config_source

logger = logging.getLogger(__name__)

ConfigHandler = Callable[[dict[str, dict[str, str]], int], Awaitable[None]]
T = TypeVar("T")

#: Seconds one fetch of config-svc's config waits for its answer before asking again (read at each fetch).
FETCH_TIMEOUT = 10.0


class ConfigFollower:
    """A processor's config: its handlers, the version applied, and the task that follows config-svc."""

    def __init__(self, pubsub: PubSub, processor_id: str, *, push_queue: str, request_queue: str,
                 response_queue: str, stopping: asyncio.Event, wire: str = WIRE_21) -> None:
        """``stopping`` is the processor's: once set, a fetch still waiting for config-svc gives up.

        ``wire`` 2.11: follow 2.11's notices and fetch the default workspace
        (the queues given are then 2.1's and unused)."""
        self.pubsub = pubsub
        self.wire = wire
        #: The workspace whose config the handlers get (2.11).
        self.workspace = v211.DEFAULT_WORKSPACE
        self.id = processor_id
        self.push_queue = push_queue
        self.request_queue = request_queue
        self.response_queue = response_queue
        self.version: int | None = None
        #: Set once the first config has been applied.
        self.received = asyncio.Event()
        self._stopping = stopping
        self._handlers: list[tuple[ConfigHandler, frozenset[str] | None]] = []
        self._seen: dict[int, dict[str, Any]] = {}
        self._lock = asyncio.Lock()
        # What we hold of config-svc's config, and what waits to be checked (the follower's work).
        self._held = config_source.Held()
        self._pending_push: tuple[int, dict[str, dict[str, str]], dict[str, str]] | None = None
        self._need_fetch = False
        self._follow = asyncio.Event()

    @property
    def has_handlers(self) -> bool:
        """Whether anything was registered (a processor with no handler follows nothing)."""
        return bool(self._handlers)

    def register(self, handler: ConfigHandler, types: Iterable[str] | None = None) -> None:
        """See :meth:`~.async_processor.AsyncProcessor.register_config_handler`."""
        self._handlers.append((handler, frozenset(types) if types is not None else None))

    async def apply(self, config: dict[str, dict[str, str]], version: int, *,
                    current: bool = False) -> None:
        """Run the handlers for a full config at ``version``.

        An older version than the one held is ignored, unless ``current``:
        config-svc said it is its current one (its history restarted).
        The ``config_version`` gauge is set once the handlers have run, so a
        scrape showing a version means the processor acts on it (both wires
        come here).
        """
        async with self._lock:
            if not current and self.version is not None and version < self.version:
                logger.debug("Ignoring config version %d (have %d)", version, self.version)
                return
            self.version = version
            for i, (handler, types) in enumerate(self._handlers):
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
            self.received.set()
            metrics.config_version.labels(processor=self.id).set(version)
            logger.info("Config version %d applied", version)

    async def _on_push(self, msg: Message) -> None:
        """A push to check with config-svc: kept for the follower (only the newest waiting one)."""
        push: ConfigPush = msg.value
        self._pending_push = (push.version or 0, push.config or {}, dict(msg.properties))
        self._follow.set()

    async def _on_notice(self, msg: Message) -> None:
        """A version too big to push was written: fetch it (in parts), unless we hold it."""
        version = msg.value.version or 0
        store, _ = config_source.stamp_of(msg.properties)
        if version == self._held.version and (store is None or store == self._held.store):
            return
        self._need_fetch = True
        self._follow.set()

    def _wants(self, types: Iterable[str]) -> bool:
        """Whether a handler follows any of ``types``."""
        changed = set(types)
        return any(wanted is None or wanted & changed for _handler, wanted in self._handlers)

    async def _on_notify_211(self, msg: Message) -> None:
        """A 2.11 change notice: fetch the workspace when it names it for a type we follow.

        A notice that names no change (config-svc's when it starts) is fetched
        on too when its version is not the one held: a config-svc with a new
        store starts at its own version, and this is all it says.
        """
        push: v211.ConfigPush = msg.value
        changes = push.changes or {}
        ours = [t for t, workspaces in changes.items() if self.workspace in (workspaces or [])]
        if ours and self._wants(ours):
            logger.debug("Config notice of version %d changes %s: fetching", push.version or 0, ours)
        elif not changes and (push.version or 0) != self._held.version:
            logger.debug("Config notice of version %d (held %s): fetching", push.version or 0,
                         self._held.version)
        else:
            logger.debug("Config notice of version %d: nothing this processor follows", push.version or 0)
            return
        self._need_fetch = True
        self._follow.set()

    async def follow(self) -> None:
        """The one task that changes what config we hold: fetches, then checked pushes (until stopping)."""
        while not self._stopping.is_set():
            await self._follow.wait()
            self._follow.clear()
            while self._need_fetch or self._pending_push is not None:
                if self._need_fetch:
                    self._need_fetch = False
                    await self._fetch()
                    continue
                version, config, _props = self._pending_push
                self._pending_push = None
                try:
                    await self._check_push(version, config)
                except Exception:
                    logger.exception("Checking config push version %d failed", version)

    async def _unless_woken(self, request: Awaitable[T]) -> T | None:
        """``request``'s answer; None when a push or notice arrives first (the request is then
        cancelled).

        config-svc pushes (or, 2.11, sends a notice) when it starts.  A fetch sent before it
        subscribed went to nobody, and a non-persistent topic drops such a request without a
        word: without this the first fetch of a processor started beside its config-svc waited
        out its whole timeout (10 s) before asking again.
        """
        self._follow.clear()
        call = asyncio.ensure_future(request)
        woken = asyncio.ensure_future(self._follow.wait())
        try:
            await asyncio.wait({call, woken}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            woken.cancel()
            if not call.done():
                call.cancel()
                await asyncio.gather(call, return_exceptions=True)
        return call.result() if not call.cancelled() else None

    def _client_211(self, name: str) -> RequestResponseClient:
        """A client of 2.11's system config queue, for one fetch (see :meth:`_client`)."""
        return RequestResponseClient(
            self.pubsub, request_topic=v211.CONFIG_REQUEST, response_topic=v211.CONFIG_RESPONSE,
            request_schema=v211.ConfigRequest, response_schema=v211.ConfigResponse,
            subscription=f"{self.id}--{name}--{uuid.uuid4()}", name=name, lane=CONFIG_LANE,
        )

    async def _fetch_once_211(self, asked: Callable[[Awaitable[Any]], Awaitable[Any]]) -> bool | None:
        """Fetch the followed workspace's config with 2.11's ``config`` operation and apply it.

        ``asked`` awaits the request (see :meth:`_fetch`); None: it gave up on the answer."""
        client = self._client_211("config-fetch")
        try:
            resp = await asked(client.request(
                v211.ConfigRequest(operation="config", workspace=self.workspace), timeout=FETCH_TIMEOUT))
        finally:
            await client.stop()
        if resp is None:
            return None
        if resp.error is not None:
            logger.warning("Config fetch of workspace %s failed: %s", self.workspace, resp.error.message)
            return False
        config = resp.config or {}
        digest = await asyncio.to_thread(config_source.config_digest, config)
        await self._apply_current(config, resp.version or 0, digest, None)
        return True

    def _client(self, name: str) -> RequestResponseClient:
        """A client of config-svc for one fetch or check.  The response subscription lives only
        that long: every config reply of the whole system goes to every subscriber of the
        response topic, and a processor that stayed subscribed would receive them all (and have
        its connection crowded by their megabytes) for nothing."""
        return RequestResponseClient(
            self.pubsub, request_topic=self.request_queue,
            response_topic=self.response_queue,
            request_schema=ConfigRequest, response_schema=ConfigResponse,
            subscription=f"{self.id}--{name}--{uuid.uuid4()}", name=name, lane=CONFIG_LANE,
        )

    async def _config_svc_holds(self) -> config_source.Answer | None:
        """config-svc's version (and, ours, its digest and store); None when it does not answer."""
        client = self._client("config-check")
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
            await self._fetch()
            return
        decision = config_source.decide(version, digest, answer, self._held)
        if decision.action == "apply":
            await self._apply_current(config, version, digest, answer.store)
        elif decision.action == "superseded":
            logger.debug("Config push of version %d superseded: %s", version, decision.why)
        else:
            logger.warning("Config push of version %d ignored: %s", version, decision.why)
            if decision.action == "ignore+fetch":
                await self._fetch()

    async def _apply_current(self, config: dict[str, dict[str, str]], version: int, digest: str,
                             store: str | None) -> None:
        """Apply what config-svc holds now, also behind what we hold (saying why)."""
        why = config_source.restart_reason(self._held, version, store)
        if why is not None:
            logger.warning("Config service's version history restarted (%s): applying version %d "
                           "in place of %d", why, version, self._held.version)
        self._held = config_source.Held(version, digest, store)
        await self.apply(config, version, current=True)

    async def _fetch(self) -> None:
        """Ask config-svc for its current config until it answers, and apply that.

        The reply may come in parts (a config bigger than one message).  The first
        unanswered request is an INFO line, later ones DEBUG (a processor started
        before its stack waits quietly); the config applied is the INFO line that ends it.
        """
        unanswered = 0
        # The first request may be given up when a push or notice arrives before its answer
        # (see _unless_woken), and asked again at once; only the first, so that pushes coming
        # faster than a big config is read cannot keep a fetch from ever finishing.
        may_give_up = True
        again_now = False

        async def asked(request: Awaitable[Any]) -> Any:
            nonlocal may_give_up, again_now
            if not may_give_up:
                return await request
            may_give_up = False
            answer = await self._unless_woken(request)
            if answer is None:
                logger.debug("Config fetch asked again: config-svc spoke before it answered")
                again_now = True
            return answer

        async def fetched() -> bool:
            """One request; whether we are done (config-svc's config applied, or we are stopping)."""
            nonlocal unanswered
            if self._stopping.is_set():
                return True
            if self.wire == WIRE_211:
                try:
                    return bool(await self._fetch_once_211(asked))
                except Exception as e:
                    unanswered += 1
                    logger.log(logging.INFO if unanswered == 1 else logging.DEBUG,
                               "Config service not answering yet (%s); retrying", e)
                    return False
            client = self._client("config-fetch")
            try:
                answer = await asked(config_parts.request_with_properties(
                    client, ConfigRequest(operation="config"), timeout=FETCH_TIMEOUT))
                if answer is None:
                    return False
                resp, props = answer
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
            nonlocal again_now
            if again_now:
                again_now = False
                return
            try:
                await asyncio.wait_for(self._follow.wait(), seconds)
            except TimeoutError:
                pass
            self._follow.clear()

        await AsyncRetrying(wait=wait_exponential(multiplier=0.5, exp_base=2, max=10.0), sleep=pause,
                            retry=retry_if_result(lambda done: not done))(fetched)

    async def subscribe(self) -> None:
        """Follow the config push topic (and its notices), and ask for the current config once:
        :meth:`follow` (which the processor runs as a task) fetches it.  Under 2.11, the
        notices of 2.11's config-svc instead."""
        if self.wire == WIRE_211:
            await self.pubsub.consumer(
                v211.CONFIG_NOTIFY, f"{self.id}--config-notify--{uuid.uuid4()}", v211.ConfigPush,
                handler=self._on_notify_211, initial_position="latest", name="config-notify",
                lane=CONFIG_PUSH_LANE,
            )
            self._need_fetch = True
            self._follow.set()
            return
        for topic, handler, name in ((self.push_queue, self._on_push, "config-push"),
                                     (config_notice_topic(self.push_queue), self._on_notice, "config-notice")):
            await self.pubsub.consumer(
                topic, f"{self.id}--{name}--{uuid.uuid4()}", ConfigPush,
                handler=handler, initial_position="latest", name=name, lane=CONFIG_PUSH_LANE,
            )
        self._need_fetch = True
        self._follow.set()

    def wake(self) -> None:
        """Make :meth:`follow` look again now (at a stop, so it sees the processor stopping)."""
        self._follow.set()
