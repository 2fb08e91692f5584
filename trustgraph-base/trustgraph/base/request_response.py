"""One request/response client for every client in the code base.

A call publishes a request with a fresh ``id`` property and waits for response
messages carrying the same id.  The shape follows the RPC patterns we learn
from (aio-pika, nameko, the MCP SDK):

* a ``{id: waiter}`` map, with the waiter removed in ``finally`` so a timed-out
  or cancelled call never leaks;
* one deadline for the *whole* call, streaming included, so a service that
  stops half-way cannot hang the caller;
* a bound on requests in flight, because a non-persistent topic drops what a
  full consumer cannot take and an unbounded sender only makes that worse;
* responses nobody waits for (a late answer after a timeout, another
  instance's traffic) are dropped at DEBUG.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import os
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from .pubsub import Consumer, Message, Producer, PubSub, PubSubError

logger = logging.getLogger(__name__)

Req = TypeVar("Req")
Resp = TypeVar("Resp")

# Called with each response; returns True when that response ends the call.
Recipient = Callable[[Any], "bool | Awaitable[bool]"]


SUBSCRIBE_SETTLE = 0.05


class RequestTimeout(TimeoutError):
    """No (complete) response within the call's deadline."""


# Correlation ids: a random UUID-shaped prefix per process and a counter, so
# ids stay unique across processes (74 random bits) without the os.urandom
# call and UUID object that uuid4() costs on every request.
_id_prefix = ""
_id_counter = itertools.count()


def _reset_ids() -> None:
    global _id_prefix, _id_counter
    _id_prefix = str(uuid.uuid4())[:24]
    _id_counter = itertools.count()


_reset_ids()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_ids)


def new_request_id() -> str:
    """A fresh correlation id (UUID-shaped, unique per process and call)."""
    return f"{_id_prefix}{next(_id_counter) & 0xFFFFFFFFFFFF:012x}"


class _Inbox:
    """The responses of one call: a deque and at most one waiting future.

    Lighter than an ``asyncio.Queue`` (no getter/putter bookkeeping), which
    matters at thousands of calls per second; used from the loop only.
    """

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[Any] = deque()
        self._waiter: asyncio.Future | None = None

    def put_nowait(self, item: Any) -> None:
        self._items.append(item)
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def get(self) -> Any:
        items = self._items
        while not items:
            self._waiter = w = asyncio.get_running_loop().create_future()
            try:
                await w
            finally:
                self._waiter = None
        return items.popleft()


class RequestResponseClient(Generic[Req, Resp]):
    """Correlated calls over a request topic and a response topic."""

    def __init__(self, pubsub: PubSub, *, request_topic: str, response_topic: str,
                 request_schema: type, response_schema: type, subscription: str,
                 max_in_flight: int = 256, timeout: float = 120.0, name: str | None = None) -> None:
        self.pubsub = pubsub
        self.request_topic = request_topic
        self.response_topic = response_topic
        self.request_schema = request_schema
        self.response_schema = response_schema
        self.subscription = subscription
        self.timeout = timeout
        self.name = name or subscription
        self._slots = asyncio.Semaphore(max_in_flight)
        self._waiters: dict[str, _Inbox] = {}
        self._producer: Producer | None = None
        self._consumer: Consumer | None = None
        self._start_lock = asyncio.Lock()
        self._start_task: asyncio.Future | None = None

    @property
    def started(self) -> bool:
        return self._producer is not None

    async def start(self) -> None:
        """Subscribe to responses first, so no early answer can be missed."""
        async with self._start_lock:
            if self._producer is not None:
                return
            self._consumer = await self.pubsub.consumer(
                self.response_topic, self.subscription, self.response_schema,
                direct=self._on_response, name=self.name,
            )
            self._producer = await self.pubsub.producer(self.request_topic)
            # pulsar-lite 0.2 may drop a non-persistent message published from
            # another connection just after subscribe() returns (measured 18 in
            # 300 under CPU load; none after 50 ms): let the subscription settle
            # once before the first request can trigger a reply.
            await asyncio.sleep(SUBSCRIBE_SETTLE)

    def _starting(self) -> asyncio.Future:
        """The (shared) start of this client, begun once and shielded from callers' deadlines.

        A caller whose deadline expires while the client subscribes must not
        cancel the subscription half-way: that would leave a consumer nobody
        closes.  The start goes on, and the next caller uses it.
        """
        task = self._start_task
        if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
            task = self._start_task = asyncio.ensure_future(self.start())
        return task

    async def stop(self) -> None:
        """Close, failing every call still waiting."""
        if self._start_task is not None and not self._start_task.done():
            self._start_task.cancel()
        parts = [p for p in (self._consumer, self._producer) if p is not None]
        self._consumer = self._producer = None
        for q in self._waiters.values():
            q.put_nowait(_CLOSED)
        await self.pubsub.remove(*parts)

    def _on_response(self, msg: Message) -> None:
        rid = msg.id
        q = self._waiters.get(rid) if rid is not None else None
        if q is None:
            logger.debug("Response on %s with id %s has no waiter; dropped", self.response_topic, rid)
            return
        q.put_nowait(msg.value)

    async def request(self, request: Req, *, timeout: float | None = None,
                      recipient: Recipient | None = None,
                      properties: dict[str, str] | None = None) -> Resp:
        """Send ``request`` and return the final response.

        Without ``recipient`` the first response is final.  With it, every
        response is passed to ``recipient`` (sync or async) until it returns
        True; the last response is returned.  ``timeout`` bounds the whole
        call, including the wait for an in-flight slot.
        """
        limit = self.timeout if timeout is None else timeout
        rid = new_request_id()
        queue = _Inbox()
        try:
            async with asyncio.timeout(limit):
                if self._producer is None:
                    await asyncio.shield(self._starting())
                async with self._slots:
                    self._waiters[rid] = queue
                    props = {"id": rid}
                    if properties:
                        props.update(properties)
                    loop = asyncio.get_running_loop()
                    self._producer.send_nowait(
                        request, props,
                        on_error=lambda why: loop.call_soon_threadsafe(queue.put_nowait, _Failed(why)))
                    while True:
                        resp = await queue.get()
                        if resp is _CLOSED:
                            raise RequestTimeout(f"client for {self.request_topic} closed during the call")
                        if isinstance(resp, _Failed):
                            raise PubSubError(resp.reason)
                        if recipient is None:
                            return resp
                        done = recipient(resp)
                        if done.__class__ is not bool and inspect.isawaitable(done):
                            done = await done
                        if done:
                            return resp
        except TimeoutError as e:
            if isinstance(e, RequestTimeout):
                raise
            raise RequestTimeout(
                f"no response from {self.request_topic} within {limit:g}s"
            ) from None
        finally:
            self._waiters.pop(rid, None)


_CLOSED = object()


class _Failed:
    """Put in a call's queue when its request could not be sent."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
