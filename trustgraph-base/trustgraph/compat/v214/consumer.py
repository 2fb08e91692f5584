"""Upstream 2.1.4's ``Consumer``: the one consumer of upstream's shape, made by hand or by a flow's spec.

Upstream's processors make one themselves (its config-svc, librarian,
knowledge cores, gateway dispatchers), and its ``ConsumerSpec`` makes one per
flow; either way a handler is called as ``handler(msg, consumer, flow)`` with
``msg.value()`` and ``msg.properties()``, a handler raising TooManyRequests is
called again with the same message (:func:`.handling.retry_rate_limited`), and
``metrics`` (upstream's ``ConsumerMetrics``) is told the state, the outcomes,
the rate limits and the handling times.  Its messages travel on our messaging
core (:func:`.backends.link_for`), so a lost broker is waited for and
reconnected, a busy subscription paused and a malformed message refused as
ours are.

:class:`FlowConsumer` is the one a flow's ``ConsumerSpec`` makes: the same
class, told by its class attributes where a flow needs otherwise (who counts
the messages, subscribing before ``start`` returns, keeping the subscription
when stopped), and skipping a request whose caller has gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ...base.messaging import deadlines
from ...base.messaging import metrics as our_metrics
from ...base.messaging.pubsub import PubSub
from .backends import BackendLink, CoreLink, link_for
from .handling import RATE_LIMIT_RETRY, RATE_LIMIT_TIMEOUT, handling_deadline, retry_rate_limited

logger = logging.getLogger(__name__)

__all__ = ["Consumer", "FlowConsumer", "unless_stopped", "wait_or_stop"]


async def wait_or_stop(stopping: asyncio.Event, seconds: float) -> bool:
    """Wait ``seconds`` or until ``stopping`` is set; True when it was set."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stopping.wait(), seconds)
    return stopping.is_set()


async def unless_stopped(stopping: asyncio.Event, work: Any) -> tuple[bool, Any]:
    """Run ``work`` (a coroutine) unless ``stopping`` is set first, which cancels it.

    ``(True, result)`` when it finished (its exception raised here), ``(False, None)``
    when the event came first: a part stopped while still waiting for the broker.
    """
    task = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stopping.wait())
    try:
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    if task.cancelled():
        return False, None
    return True, task.result()


class Consumer:
    """Runs ``handler(msg, consumer, flow)`` for each message of ``topic`` (subscription ``subscriber``).

    A message is acknowledged when the handler returns and negatively
    acknowledged (redelivered, on a persistent topic) when it raises.  A
    handler raising ``TooManyRequests`` is called again with the same
    message every ``rate_limit_retry_time`` seconds, for up to
    ``rate_limit_timeout`` seconds.  ``metrics`` (upstream's ``ConsumerMetrics``)
    is told the state, each outcome, each rate limit and each handling time;
    without one, our consumer's own metrics count them.
    """

    #: Whether ``metrics`` counts the messages handled and their handling times (upstream's way).
    #: False: our consumer counts them under its own name, and ``metrics`` gets the state and the
    #: rate limits only.
    metrics_count_messages: bool = True
    #: Whether ``start`` subscribes before it returns, raising when it cannot (upstream's returns
    #: at once and keeps trying in the background).
    subscribes_at_start: bool = False
    #: Whether stopping removes the subscription from the broker (upstream's does).
    unsubscribe_on_stop: bool = True

    def __init__(
        self,
        taskgroup: Any,
        flow: Any,
        backend: Any,
        topic: str,
        subscriber: str,
        schema: Any,
        handler: Callable[..., Awaitable[Any]],
        metrics: Any = None,
        start_of_messages: bool = False,
        rate_limit_retry_time: float = RATE_LIMIT_RETRY,
        rate_limit_timeout: float = RATE_LIMIT_TIMEOUT,
        reconnect_time: float = 5,
        concurrency: int = 1,
    ) -> None:
        self.taskgroup = taskgroup
        self.flow = flow
        self.backend = backend
        self.topic = topic
        self.subscriber = subscriber
        self.schema = schema
        self.handler = handler
        self.metrics = metrics
        self.start_of_messages = start_of_messages
        self.rate_limit_retry_time = rate_limit_retry_time
        self.rate_limit_timeout = rate_limit_timeout
        self.reconnect_time = reconnect_time
        self.concurrency = concurrency
        self.running = True
        self.consumer_task: asyncio.Task | None = None
        #: The subscription while subscribed (ours, or the backend's consumer).
        self.consumer: Any = None
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        """Handle messages, in a task (of ``taskgroup``, when given); see :attr:`subscribes_at_start`."""
        if self.consumer_task is not None and not self.consumer_task.done():
            return
        self.running = True
        self._stopping.clear()
        if self.metrics:
            self.metrics.state("stopped")
        if self.subscribes_at_start and self.consumer is None:
            self.consumer = await self._subscribe(link_for(self.backend))
            if self.metrics:
                self.metrics.state("running")
        spawn = self.taskgroup.create_task if self.taskgroup is not None else asyncio.create_task
        self.consumer_task = spawn(self.consumer_run())

    async def stop(self) -> None:
        """Stop handling; returns once the subscription is closed (and removed: :attr:`unsubscribe_on_stop`)."""
        self.running = False
        self._stopping.set()
        task, self.consumer_task = self.consumer_task, None
        if task is not None:
            await asyncio.wait({task})
            if not task.cancelled():  # cancelled: its processor stopped, closing everything it had
                task.result()
        await self._close()

    async def consumer_run(self) -> None:
        """Subscribe, and subscribe again whenever a backend's consumer fails, until stopped."""
        link = link_for(self.backend)
        while self.running:
            if self.consumer is None:
                if self.metrics:
                    self.metrics.state("stopped")
                try:
                    logger.info("Subscribing to %s", self.topic)
                    subscribed, self.consumer = await unless_stopped(self._stopping, self._subscribe(link))
                except Exception as e:
                    logger.error("Could not subscribe to %s: %s", self.topic, e, exc_info=True)
                    await wait_or_stop(self._stopping, self.reconnect_time)
                    continue
                if not subscribed:
                    break
                logger.info("Subscribed to %s", self.topic)
            if self.metrics:
                self.metrics.state("running")
            stopping = asyncio.ensure_future(self._stopping.wait())
            try:
                await asyncio.wait({stopping, self.consumer.ended}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopping.cancel()
            if self.metrics:
                self.metrics.state("stopped")
            if self.consumer.ended.done() and self.running:
                problem = self.consumer.ended.exception()
                logger.error("Consumer of %s failed: %s", self.topic, problem)
                await self.consumer.close(unsubscribe=True)
                self.consumer = None
                await wait_or_stop(self._stopping, self.reconnect_time)
        await self._close()

    async def consume_from_queue(self) -> None:
        """Upstream's receive loop; ours receives in :meth:`consumer_run`'s subscription instead."""
        await self._stopping.wait()

    async def handle_one_from_queue(self, msg: Any) -> None:
        """Handle one message: returns when it is done with, raises when it is to be redelivered."""
        await self._handle(msg, None)

    async def _handle(self, msg: Any, deadline: float | None) -> None:
        """The handler on ``msg``, tried again while rate-limited (until ``deadline`` at the latest)."""
        counting = self.metrics if self.metrics and self.metrics_count_messages else None

        async def attempt() -> None:
            if counting:
                with counting.record_time():
                    await self.handler(msg, self, self.flow)
            else:
                await self.handler(msg, self, self.flow)

        try:
            await retry_rate_limited(
                attempt,
                every=self.rate_limit_retry_time,
                give_up_after=self.rate_limit_timeout,
                deadline=deadline,
                on_limited=self.metrics.rate_limit if self.metrics else None,
            )
        except Exception:
            if counting:
                counting.process("error")
            raise
        if counting:
            counting.process("success")

    def _subscribe(self, link: CoreLink | BackendLink) -> Awaitable[Any]:
        return link.subscribe(
            self.topic,
            self.subscriber,
            self.schema,
            self.handle_one_from_queue,
            concurrency=self.concurrency,
            initial_position="earliest" if self.start_of_messages else "latest",
            name=self._counted_as(),
            counted=not (self.metrics and self.metrics_count_messages),
        )

    def _counted_as(self) -> str | None:
        """The name our consumer's metrics carry (None: the subscription's)."""
        return None

    async def _close(self) -> None:
        consumer, self.consumer = self.consumer, None
        if consumer is not None:
            await consumer.close(unsubscribe=self.unsubscribe_on_stop)
            if self.metrics:
                self.metrics.state("stopped")


class FlowConsumer(Consumer):
    """One flow's consumer, as upstream's ``ConsumerSpec`` makes it: a :class:`Consumer` that

    * carries what upstream's spec sets on it, which handlers read of their
      ``consumer`` argument: ``id`` (the processor's), ``name`` (the spec's), ``flow``;
    * returns from ``start()`` once subscribed, so a started flow takes requests
      at once, and a topic that cannot be opened fails the flow;
    * is counted by our consumer, under the names and labels upstream's
      ``ConsumerMetrics`` uses (``<flow>/<name>``, :mod:`.metrics`), its
      ``metrics`` adding the state and rate limits;
    * leaves its subscription on the broker when the flow stops, as our flows do;
    * skips a request whose caller's deadline has passed, bounds its rate-limit
      retries by that deadline and hands it to the clients its handler calls.
    """

    #: A handler raising TooManyRequests is run again this often (seconds), for at most this
    #: long, or until the request's deadline (upstream's ``rate_limit_retry_time`` and timeout).
    rate_limit_retry_time: float = RATE_LIMIT_RETRY
    rate_limit_timeout: float = RATE_LIMIT_TIMEOUT
    metrics_count_messages = False
    subscribes_at_start = True
    unsubscribe_on_stop = False

    def __init__(
        self,
        pubsub: PubSub,
        flow: Any,
        *,
        topic: str,
        subscription: str,
        name: str,
        schema: type,
        handler: Callable[..., Awaitable[Any]],
        concurrency: int = 1,
        metrics: Any = None,
        taskgroup: Any = None,
    ) -> None:
        super().__init__(
            taskgroup,
            flow,
            pubsub,
            topic,
            subscription,
            schema,
            handler,
            metrics=metrics,
            rate_limit_retry_time=type(self).rate_limit_retry_time,
            rate_limit_timeout=type(self).rate_limit_timeout,
            concurrency=max(1, int(concurrency or 1)),
        )
        self.id = flow.id
        self.name = name

    def _counted_as(self) -> str:
        return f"{self.flow.name}/{self.name}"

    async def handle_one_from_queue(self, msg: Any) -> None:
        properties = msg.properties()
        deadline = deadlines.read(properties)
        if deadlines.passed(deadline):
            logger.debug(
                "%s: request %s skipped, its caller's deadline has passed", self.topic, properties.get("id")
            )
            our_metrics.requests_expired.labels(self.backend.processor, self._counted_as()).inc()
            return
        token = handling_deadline.set(deadline)
        try:
            await self._handle(msg, deadline)
        finally:
            handling_deadline.reset(token)
