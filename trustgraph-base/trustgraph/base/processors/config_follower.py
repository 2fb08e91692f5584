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
connections of their own (``PubSub.consumer``'s ``lane``), so their megabytes never
crowd out a flow's replies.

A push is applied only once config-svc confirms it holds that version with
that content (:mod:`.config_source`): anything on the broker can publish on
the push topic.  What config-svc says is current is applied even when it is
older than what the processor holds (a new store, a restore from a backup),
with a WARNING naming why.  One task follows the config (pushes, notices and
fetches, in turn), so a check never races an apply; a burst of pushes is
checked once, for the newest.

What a wire changes here is what is subscribed to and how one fetch is asked
for: the wire's ``config-following`` strategy (:class:`Following`; ours,
:class:`PushFollowing`, is the above).  The task, the fetch's retries and
wake-ups, the version checks and the handlers are this module's on every wire.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol, TypeVar

from tenacity import AsyncRetrying, retry_if_result, wait_exponential

from ...schema import ConfigPush, ConfigRequest, ConfigResponse
from ...topics import config_notice_topic
from ..messaging import metrics
from ..messaging.pubsub import CONFIG_LANE, CONFIG_PUSH_LANE, Message, PubSub
from ..messaging.request_response import RequestResponseClient
from ..wire import NATIVE, Wire
from . import config_parts, config_source

logger = logging.getLogger(__name__)

ConfigHandler = Callable[[dict[str, dict[str, str]], int], Awaitable[None]]
T = TypeVar("T")

#: Seconds one fetch of config-svc's config waits for its answer before asking again (read at each fetch).
FETCH_TIMEOUT = 10.0

#: Awaits a fetch's request (the follower's, see ``ConfigFollower._fetch``); None: it gave up on the answer.
Asked = Callable[[Awaitable[Any]], Awaitable[Any]]


class Following(Protocol):
    """How a wire follows config-svc: a wire's ``config-following`` component, made with the
    follower it serves (ours: :class:`PushFollowing`)."""

    def __init__(self, follower: ConfigFollower) -> None: ...

    async def subscribe(self) -> None:
        """Open what tells the follower that config changed (at Latest, under fresh subscriptions)."""
        ...

    async def fetch_once(self, asked: Asked, timeout: float) -> bool:
        """Ask config-svc once for its current config and apply it; whether it was applied.

        ``asked`` awaits the request (None: it gave up on it); an exception means config-svc did
        not answer, and the follower asks again."""
        ...


class ConfigFollower:
    """A processor's config: its handlers, the version applied, and the task that follows config-svc."""

    def __init__(self, pubsub: PubSub, processor_id: str, *, push_queue: str, request_queue: str,
                 response_queue: str, stopping: asyncio.Event, wire: Wire = NATIVE) -> None:
        """``stopping`` is the processor's: once set, a fetch still waiting for config-svc gives up.

        ``wire``: the processor's; its ``config-following`` says what to subscribe to and how to
        fetch (ours: the queues given here)."""
        self.pubsub = pubsub
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
        #: How this processor's wire follows config-svc (chosen once).
        self.following: Following = wire.component("config-following", PushFollowing)(self)

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

    def wants(self, types: Iterable[str]) -> bool:
        """Whether a handler follows any of ``types``."""
        changed = set(types)
        return any(wanted is None or wanted & changed for _handler, wanted in self._handlers)

    @property
    def held_version(self) -> int | None:
        """The version of config-svc's config applied last (None: none yet)."""
        return self._held.version

    def fetch_soon(self) -> None:
        """Have :meth:`follow` fetch config-svc's config (a change it was told of, or at start)."""
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

        config-svc pushes (or sends a notice) when it starts.  A fetch sent before it
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

    def client(self, name: str, *, request_topic: str | None = None, response_topic: str | None = None,
               request_schema: type = ConfigRequest, response_schema: type = ConfigResponse,
               ) -> RequestResponseClient:
        """A client of config-svc for one fetch or check (its queues given here and our records,
        unless told others).  The response subscription lives only that long: every config reply
        of the whole system goes to every subscriber of the response topic, and a processor that
        stayed subscribed would receive them all (and have its connection crowded by their
        megabytes) for nothing."""
        return RequestResponseClient(
            self.pubsub, request_topic=request_topic or self.request_queue,
            response_topic=response_topic or self.response_queue,
            request_schema=request_schema, response_schema=response_schema,
            subscription=f"{self.id}--{name}--{uuid.uuid4()}", name=name, lane=CONFIG_LANE,
        )

    async def _config_svc_holds(self) -> config_source.Answer | None:
        """config-svc's version (and, ours, its digest and store); None when it does not answer."""
        client = self.client("config-check")
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

    async def apply_fetched(self, config: dict[str, dict[str, str]], version: int, store: str | None) -> None:
        """Apply a config config-svc answered a fetch with (``store``: its store's id, when it says)."""
        digest = await asyncio.to_thread(config_source.config_digest, config)
        await self._apply_current(config, version, digest, store)

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

        async def asked(request: Awaitable[T]) -> T | None:
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
            try:
                return await self.following.fetch_once(asked, FETCH_TIMEOUT)
            except Exception as e:
                unanswered += 1
                logger.log(logging.INFO if unanswered == 1 else logging.DEBUG,
                           "Config service not answering yet (%s); retrying", e)
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
        """Follow what says config changed (the wire's; ours: the push topic and its notices), and
        ask for the current config once: :meth:`follow` (which the processor runs as a task) fetches it."""
        await self.following.subscribe()
        self.fetch_soon()

    def wake(self) -> None:
        """Make :meth:`follow` look again now (at a stop, so it sees the processor stopping)."""
        self._follow.set()


class PushFollowing:
    """Our wire's (2.1's) config following: config-svc pushes each version on the push topic
    (and a notice of one too big to push on its ``-notify`` twin); a fetch is the ``config``
    operation on its request queue, its reply perhaps in parts (:mod:`.config_parts`)."""

    def __init__(self, follower: ConfigFollower) -> None:
        self.follower = follower

    async def subscribe(self) -> None:
        """The push topic and its notices, each checked before it is applied (see the module's docstring)."""
        f = self.follower
        for topic, handler, name in ((f.push_queue, f._on_push, "config-push"),
                                     (config_notice_topic(f.push_queue), f._on_notice, "config-notice")):
            await f.pubsub.consumer(
                topic, f"{f.id}--{name}--{uuid.uuid4()}", ConfigPush,
                handler=handler, initial_position="latest", name=name, lane=CONFIG_PUSH_LANE, own=True,
            )

    async def fetch_once(self, asked: Asked, timeout: float) -> bool:
        """One ``config`` request; config-svc's store (its stamp) comes with the reply."""
        f = self.follower
        client = f.client("config-fetch")
        try:
            answer = await asked(config_parts.request_with_properties(
                client, ConfigRequest(operation="config"), timeout=timeout))
        finally:
            await client.stop()
        if answer is None:
            return False
        resp, props = answer
        if resp.error is not None:
            logger.warning("Config fetch failed: %s", resp.error.message)
            return False
        store, _ = config_source.stamp_of(props)
        await f.apply_fetched(resp.config or {}, resp.version or 0, store)
        return True
