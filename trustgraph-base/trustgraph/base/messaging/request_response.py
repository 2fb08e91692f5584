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

``await client.request(req)`` returns the first response;
``async for resp in client.stream(req, final=...)`` yields each response of
a streamed answer.  Both are one :class:`ResponseStream`, so the waiter,
the in-flight slot and the deadline are handled in one place.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Container
from typing import Any, Generic, TypeVar

from . import deadlines, tracing
from .pubsub import DEFAULT_LANE, Consumer, Message, Producer, PubSub, PubSubError

logger = logging.getLogger(__name__)

__all__ = ["ClientClosed", "RequestResponseClient", "RequestTimeout", "ResponseStream",
           "Verdict", "new_request_id"]

Req = TypeVar("Req")
Resp = TypeVar("Resp")

#: ``verdict(topic, patience)``: why nothing serves ``topic`` (the call then fails at once with
#: :class:`Unserved`), or None to send it; it may wait up to ``patience`` seconds for a topic
#: whose consumers are not known yet (``unserved.UnservedTopics.verdict``).
Verdict = Callable[[str, float], Awaitable["str | None"]]


class RequestTimeout(TimeoutError):
    """No (complete) response within the call's deadline."""


class CallLost(RequestTimeout):
    """The call cannot be answered any more: its service restarted, or the broker connection went
    (see :mod:`.lost_calls`)."""


class Unserved(RequestTimeout):
    """Nothing consumes the request topic, as the broker has counted for a while
    (:mod:`.unserved`): the request would be dropped, so the call fails at once."""


class ClientClosed(RequestTimeout):
    """The client was closed during the call (its flow stopped, its process is stopping)."""


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

    __slots__ = ("_items", "_waiter", "messages", "sent")

    def __init__(self, messages: bool = False) -> None:
        self._items: deque[Any] = deque()
        self._waiter: asyncio.Future | None = None
        self.messages = messages  # the call wants whole messages (properties too), not records
        # Wall-clock time the request went (lost_calls compares it across processes); 0 while it
        # waits in pulsar-client's queue for its producer to reconnect: nothing lost before
        # then can be it.
        self.sent = 0.0

    def went(self, at: float) -> None:
        """The request, kept while its producer reconnected, reached the broker at ``at``
        (wall-clock, taken when its receipt came, not when the loop got to this: a busy loop
        dated it after the service was back, and the notice that it was lost did not end it)."""
        if not self.sent:
            self.sent = at

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
                 max_in_flight: int = 256, timeout: float = 120.0, name: str | None = None,
                 lane: str = DEFAULT_LANE, unserved: Verdict | None = None) -> None:
        """``lane``: the connection its responses arrive on (``PubSub.consumer``'s ``lane``);
        ``unserved``: asked before each request is sent, within the call's deadline
        (:data:`Verdict`, :mod:`.unserved`)."""
        self.pubsub = pubsub
        self.unserved = unserved
        self.lane = lane
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
            # A restart notice sent before this process listens to the notices is dropped, and
            # a call it should have ended waits out its deadline: listening is begun first and
            # awaited before the first request can go (lost_calls.CallWatch.listen).
            listening = self.pubsub.calls.listen()
            self._consumer = await self.pubsub.consumer(
                self.response_topic, self.subscription, self.response_schema,
                direct=self._on_response, name=self.name, lane=self.lane, own=True,
            )
            producer = await self.pubsub.producer(self.request_topic)
            try:
                self.pubsub.calls.follow(self)
                if not listening.done():
                    await asyncio.wait([listening])
                # Let the subscription settle once before the first request can
                # trigger a reply (pulsar-lite: see pulsar_transport.SUBSCRIBE_SETTLE).
                await asyncio.sleep(self.pubsub.subscribe_settle)
            except BaseException:
                await self.pubsub.remove(producer)
                raise
            # Set last: a call that finds it set sends at once, without these waits.
            self._producer = producer

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
        self.pubsub.calls.forget(self)
        await self.pubsub.remove(*parts)

    def fail_pending(self, reason: str, before: float | None = None, spare: Container[str] = ()) -> None:
        """End every call sent before ``before`` (wall-clock; default now) with :class:`CallLost`,
        except those whose request id is in ``spare``.

        See :mod:`.lost_calls`.  A call sent later went to the process that
        announced itself, and keeps waiting; so does one that process says it
        received, and one still in pulsar-client's queue (not sent yet).
        """
        before = time.time() if before is None else before
        lost = [q for rid, q in self._waiters.items() if q.sent and q.sent < before and rid not in spare]
        for q in lost:
            q.put_nowait(_Lost(reason))
        if lost:
            logger.info("%d call(s) to %s ended: %s", len(lost), self.request_topic, reason)

    def _on_response(self, msg: Message) -> None:
        rid = msg.id
        q = self._waiters.get(rid) if rid is not None else None
        if q is None:
            logger.debug("Response on %s with id %s has no waiter; dropped", self.response_topic, rid)
            return
        q.put_nowait(msg if q.messages else msg.value)

    def stream(self, request: Req, *, final: Callable[[Resp], bool] | None = None,
               timeout: float | None = None, deadline: float | None = None,
               properties: dict[str, str] | None = None,
               request_id: str | None = None, messages: bool = False) -> ResponseStream[Resp]:
        """The responses to ``request`` as an async iterator::

            async for resp in client.stream(req, final=lambda r: r.end_of_stream):
                ...

        The request goes out when iteration starts.  The iteration ends after
        the response for which ``final`` returns True; without ``final`` it
        goes on until the caller stops (break, then ``close()``).
        ``timeout`` bounds the whole call, from the wait for an in-flight
        slot to the last response, however long the caller takes between
        responses; it raises :class:`RequestTimeout`.  ``deadline`` (an
        absolute UNIX time, e.g. the caller's own caller's) shortens it; the
        request carries the resulting deadline (see ``deadlines.py``).
        ``request_id`` sends a retry under the id of its first attempt, so a
        service can tell it is one.  ``messages``: yield each response as its
        :class:`~trustgraph.base.messaging.message.Message` (record and properties), and
        pass that to ``final``.
        """
        return ResponseStream(self, request, final, self._limit(timeout, deadline), properties,
                              request_id, messages, deadline)

    async def request(self, request: Req, *, timeout: float | None = None,
                      deadline: float | None = None, properties: dict[str, str] | None = None,
                      request_id: str | None = None) -> Resp:
        """Send ``request`` and return the first response (the whole call within ``timeout``)."""
        call = ResponseStream(self, request, None, self._limit(timeout, deadline), properties,
                              request_id, cap=deadline)
        try:
            return await call.__anext__()
        finally:
            call.close()


    def _limit(self, timeout: float | None, deadline: float | None) -> float:
        return deadlines.left(deadline, self.timeout if timeout is None else timeout)


class _Signal:
    """Put in a call's inbox instead of a response: the call ends with an exception."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class _Expired(_Signal):
    __slots__ = ()


class _Closed(_Signal):
    __slots__ = ()


class _Failed(_Signal):
    """The request could not be sent."""

    __slots__ = ()


class _Lost(_Signal):
    """The call cannot be answered any more (:mod:`.lost_calls`)."""

    __slots__ = ()


_EXPIRED = _Expired("deadline")
_CLOSED = _Closed("client closed")


class ResponseStream(Generic[Resp]):
    """The responses of one call: an async iterator that owns the call's waiter, slot and deadline.

    One object serves :meth:`RequestResponseClient.request` (first response)
    and :meth:`RequestResponseClient.stream` (several).  The deadline is a
    timer that puts a marker in the call's inbox rather than a cancel scope:
    a cancel scope cannot span the ``yield`` of an iterator (it would cancel
    whatever the caller does between responses), and one timer per call is
    also cheaper than a timeout context per response.  :meth:`close` frees
    everything synchronously and is idempotent; it runs after the final
    response, on an error, on cancellation, from ``aclose()`` /
    ``async with``, and, for a caller that breaks out and drops the iterator,
    when it is garbage-collected.
    """

    __slots__ = ("_client", "_request", "_final", "_limit", "_props", "_rid", "_inbox",
                 "_timer", "_done", "_messages", "_cap")

    def __init__(self, client: RequestResponseClient, request: Any, final: Callable[[Any], bool] | None,
                 timeout: float, properties: dict[str, str] | None, request_id: str | None = None,
                 messages: bool = False, cap: float | None = None) -> None:
        """``cap``: the caller's absolute deadline, if it gave one (the request never carries a later one)."""
        self._client = client
        self._cap = cap
        self._request = request
        self._final = final
        self._limit = timeout
        self._props = properties
        self._rid = request_id or ""
        self._inbox: _Inbox | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._done = False
        self._messages = messages

    def __aiter__(self) -> ResponseStream[Resp]:
        return self

    async def __anext__(self) -> Resp:
        inbox = self._inbox
        if inbox is None:
            if self._done:
                raise StopAsyncIteration
            inbox = await self._open()
        try:
            resp = await inbox.get()
        except BaseException:
            self.close()  # cancelled while waiting: the call is over
            raise
        if resp.__class__ in _SIGNALS:
            self.close()
            raise self._failure(resp)
        final = self._final
        try:
            if final is not None and final(resp):
                self.close()
        except BaseException:
            self.close()
            raise
        return resp

    async def _open(self) -> _Inbox:
        client = self._client
        if self._limit <= 0:
            self._done = True
            raise RequestTimeout(f"no time left to call {client.request_topic}: the deadline has passed")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._limit
        if client.unserved is not None:
            # Inside the deadline: a topic in its grace holds the call until it is judged.
            try:
                why = await client.unserved(client.request_topic, self._limit)
            except BaseException:
                self._done = True
                raise
            if why:
                self._done = True
                raise Unserved(why)
            if loop.time() >= deadline:   # held for the whole deadline: nothing is sent
                self._done = True
                raise RequestTimeout(f"no response from {client.request_topic} within {self._limit:g}s")
        try:
            # Only waits that can block need the deadline's timeout context.
            if client._producer is None or client._slots.locked():
                async with asyncio.timeout_at(deadline):
                    if client._producer is None:
                        await asyncio.shield(client._starting())
                    await client._slots.acquire()
            else:
                await client._slots.acquire()
        except TimeoutError:
            self._done = True
            raise RequestTimeout(
                f"no response from {client.request_topic} within {self._limit:g}s") from None
        except BaseException:
            self._done = True
            raise
        self._rid = rid = self._rid or new_request_id()
        self._inbox = inbox = _Inbox(self._messages)
        client._waiters[rid] = inbox
        self._timer = loop.call_at(deadline, inbox.put_nowait, _EXPIRED)
        producer = client._producer
        try:
            if producer is None:
                raise ClientClosed(f"client for {client.request_topic} closed during the call")
            props = {"id": rid}
            if self._props:
                props.update(self._props)
            # The service learns when we stop waiting (after any wait for a slot above).
            props[deadlines.DEADLINE] = deadlines.stamp(deadline - loop.time(), self._cap)
            tracing.outgoing(props)   # the trace this call is part of, if any
            if producer.send_nowait(
                    self._request, props,
                    on_error=lambda why: loop.call_soon_threadsafe(inbox.put_nowait, _Failed(why)),
                    on_queued_sent=lambda: loop.call_soon_threadsafe(inbox.went, time.time())):
                inbox.sent = time.time()
        except BaseException:
            self.close()
            raise
        return inbox

    def _failure(self, signal: _Signal) -> Exception:
        topic = self._client.request_topic
        if signal.__class__ is _Expired:
            return RequestTimeout(f"no response from {topic} within {self._limit:g}s")
        if signal.__class__ is _Closed:
            return ClientClosed(f"client for {topic} closed during the call")
        if signal.__class__ is _Lost:
            return CallLost(f"call to {topic} lost: {signal.reason}")
        return PubSubError(signal.reason)

    def close(self) -> None:
        """End the call: free its waiter, in-flight slot and deadline timer (idempotent)."""
        self._done = True
        if self._inbox is None:
            return
        self._inbox = None
        client = self._client
        client._waiters.pop(self._rid, None)
        self._timer.cancel()
        client._slots.release()

    async def aclose(self) -> None:
        """The async form of :meth:`close`, for ``contextlib.aclosing``."""
        self.close()

    async def __aenter__(self) -> ResponseStream[Resp]:
        return self

    async def __aexit__(self, *_: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if self._inbox is not None:
            try:
                self.close()
            except Exception:  # the loop may be gone at interpreter exit
                pass


_SIGNALS = frozenset({_Expired, _Closed, _Failed, _Lost})
