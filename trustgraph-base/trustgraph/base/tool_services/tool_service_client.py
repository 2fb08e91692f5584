"""The caller's side of a tool service: ``await client.call(user, config, arguments)``.

Built on the one request/response client, so it inherits the whole-call
deadline, the bound on calls in flight and the cleanup of waiters.  A service
that streams is handled by both methods: ``call`` joins the chunks,
``call_streaming`` also hands each one to a callback as it arrives.  Both say
so on every request (the ``reads-streams`` property): a streaming service
streams only to a caller that does, and answers any other (an upstream one, or
the inherited first-response ``request()``) with one reply, its chunks joined.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from ...schema import ToolServiceRequest, ToolServiceResponse
from ...schema.services.tool_service import READS_STREAMS
from ...topics import to_pulsar
from ..descriptors.annotations import Annotations
from ..messaging import deadlines
from ..messaging.pubsub import PubSub, PubSubError
from ..messaging.request_response import (
    RequestResponseClient,
    RequestTimeout,
    Unserved,
    Verdict,
    new_request_id,
)

if TYPE_CHECKING:
    from ..messaging.unserved import UnservedTopics

logger = logging.getLogger(__name__)

QueuePair = tuple[str, str]

ChunkCallback = Callable[[str], "Awaitable[None] | None"]


class ToolServiceError(RuntimeError):
    """The service answered with an error; ``type`` and ``message`` are the wire Error's.

    A RuntimeError, as the error of upstream's client is, so code written for either catches it.
    """

    def __init__(self, type: str, message: str) -> None:
        super().__init__(f"{type}: {message}" if type else message)
        self.type = type
        self.message = message


UNAVAILABLE = "tool-service-unavailable"
#: How often a running call checks that its service is still live (seconds).
WATCH_EVERY = 1.0


class ServiceUnavailable(ToolServiceError):
    """Nothing would answer a call to the service: it announced itself before and no replica of
    it is live now, or the broker has counted no consumer on its request queue for a while."""

    def __init__(self, service: str, request_queue: str, why: str | None = None) -> None:
        reason = why or f"no replica is live, so nothing serves {request_queue}"
        super().__init__(UNAVAILABLE, f"tool service '{service}' is not running: {reason}")
        self.service = service
        self.request_queue = request_queue


class Service(Protocol):
    """What :meth:`ToolServiceClients.invoke` needs of a service (a ``ToolServiceDescriptor`` has it)."""

    id: str

    @property
    def queues(self) -> QueuePair: ...

    @property
    def annotations(self) -> Annotations: ...


#: ``liveness(service id, request queue)``: True, False (known to be down) or None (not known).
Liveness = Callable[[str, str], "bool | None"]

#: The properties of every request of ``call_streaming``: it reads every response to the end.
_READS_STREAMS = {READS_STREAMS: "true"}

#: Attempts of a call that may be retried; each gets its share of what is left of the deadline.
ATTEMPTS = 3


def _as_json(value: Any, what: str) -> str:
    if value is None or (value.__class__ is dict and not value):
        return "{}"
    if isinstance(value, str):
        return value or "{}"
    try:
        return json.dumps(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"tool-service {what} must be JSON-serialisable: {e}") from e


class ToolServiceClient(RequestResponseClient):
    """Calls one tool service (one request topic, one response topic)."""

    def __init__(self, pubsub: PubSub, *, request_topic: str, response_topic: str,
                 subscription: str | None = None, timeout: float = 60.0,
                 max_in_flight: int = 256, name: str | None = None,
                 unserved: Verdict | None = None) -> None:
        super().__init__(
            pubsub, request_topic=request_topic, response_topic=response_topic,
            request_schema=ToolServiceRequest, response_schema=ToolServiceResponse,
            subscription=subscription or f"{pubsub.processor or 'client'}--tool-service--{uuid.uuid4()}",
            timeout=timeout, max_in_flight=max_in_flight, name=name, unserved=unserved,
        )

    @classmethod
    async def for_service(cls, pubsub: PubSub, service: str, *, timeout: float = 60.0,
                          lookup_timeout: float = 10.0, **where: str) -> ToolServiceClient:
        """A started client for the tool service with id ``service``, wherever it is described.

        Its ``tool-service/<id>`` config item, else the announcement of a
        running replica (``service_lookup.look_up_service``; ``where`` may name
        other config or announce queues).  Raises ``ServiceNotFound`` when
        neither knows it within ``lookup_timeout``.  Stop it with ``stop()``.
        """
        from ..descriptors.errors import InvalidDescriptor
        from ..descriptors.models import ToolServiceDescriptor
        from .service_lookup import look_up_service

        found = await look_up_service(pubsub, service, timeout=lookup_timeout, **where)
        try:
            descriptor = ToolServiceDescriptor.from_wire(found, service)
        except InvalidDescriptor as e:
            raise ToolServiceError("tool-service-error", f"{e}; the service cannot be called") from None
        client = cls(pubsub, request_topic=descriptor.request_queue, response_topic=descriptor.response_queue,
                     timeout=timeout, name=f"{service}-client")
        await client.start()
        return client

    async def call(self, user: str, config: Any, arguments: Any, timeout: float | None = None) -> str:
        """Invoke the tool and return its observation text (chunks joined)."""
        return await self.call_streaming(user, config, arguments, None, timeout=timeout)

    async def call_streaming(self, user: str, config: Any, arguments: Any,
                             callback: ChunkCallback | None, timeout: float | None = None, *,
                             deadline: float | None = None, request_id: str | None = None,
                             last_chunk: bool = True) -> str:
        """Invoke the tool, pass each chunk to ``callback``, return the joined text.

        Raises :class:`ToolServiceError` when the service reports an error and
        :class:`~trustgraph.base.messaging.request_response.RequestTimeout` when the
        whole call outlives ``timeout`` (or the absolute ``deadline``).
        ``request_id`` repeats an earlier attempt's id (a retry).  With
        ``last_chunk`` False the text of the final response is not passed to
        ``callback`` (only joined): a service that does not stream then
        passes nothing, and its whole answer stays one piece.
        """
        request = ToolServiceRequest(
            user=user or "", config=_as_json(config, "config"),
            arguments=_as_json(arguments, "arguments"),
        )
        parts: list[str] = []
        responses = self.stream(request, final=_end_of_stream, timeout=timeout, deadline=deadline,
                                request_id=request_id, properties=_READS_STREAMS)
        try:
            async for resp in responses:
                if resp.error is not None:
                    raise ToolServiceError(resp.error.type or "tool-service-error", resp.error.message or "")
                text = resp.response
                if text:
                    parts.append(text)
                    if callback is not None and (last_chunk or not resp.end_of_stream):
                        done = callback(text)
                        if done is not None and inspect.isawaitable(done):
                            await done
        finally:
            responses.close()
        return "".join(parts)


def _end_of_stream(resp: ToolServiceResponse) -> bool:
    return bool(resp.end_of_stream)


class ToolServiceClients:
    """One :class:`ToolServiceClient` per (request queue, response queue).

    Each client subscribes to its response topic, so sharing one per service
    (rather than one per tool or per call) keeps subscriptions few.  Clients
    are created on first use.  :meth:`keep` is told, on every config reload,
    which queue pairs the current tools use; the others are closed as soon as
    no call is using them, so a call still running on the previous config
    finishes first.  The agent and the gateway share this pool.
    """

    def __init__(self, pubsub: PubSub | None, *, name: str = "client",
                 liveness: Liveness | None = None, unserved: UnservedTopics | None = None) -> None:
        """``liveness``: what the announcements say of a service; ``unserved``: the broker's
        consumer counts (``unserved.UnservedTopics``), so a configured service that nothing runs
        fails at once too, not at its deadline, and a call made while its queue's consumers are
        not known yet waits until they are."""
        self.pubsub = pubsub
        self.name = name
        self.liveness = liveness
        self.unserved = unserved
        self.clients: dict[QueuePair, ToolServiceClient] = {}
        self._active: Counter[QueuePair] = Counter()
        self._wanted: frozenset[QueuePair] = frozenset()

    @staticmethod
    def key(request_queue: str, response_queue: str) -> QueuePair:
        """The pool key: both queues as Pulsar URLs, so ``q0/...`` and its URL share a client."""
        return to_pulsar(request_queue), to_pulsar(response_queue)

    def _get(self, key: QueuePair) -> ToolServiceClient:
        client = self.clients.get(key)
        if client is None:
            # Not started here: the client opens itself inside its first
            # call's deadline, so a slow subscription cannot outlive a call.
            client = ToolServiceClient(self.pubsub, request_topic=key[0], response_topic=key[1],
                                       name=f"{self.name}/tool-service/{key[0]}",
                                       unserved=self._verdict if self.unserved is not None else None)
            self.clients[key] = client
            logger.info("Tool-service client created for %s", key[0])
        return client

    def unavailable(self, service: Service) -> str | None:
        """Why a call to ``service`` would fail at once now (no live replica announced, or the
        broker counts no consumer on its request topic), or None: what an agent asking back
        checks, so it never offers a tool that cannot be used, and names it when the question is
        about it. The words are those of the :class:`ServiceUnavailable` the call would raise."""
        key = service.queues
        if self.liveness is not None and self.liveness(service.id, key[0]) is False:
            return ServiceUnavailable(service.id, key[0]).message
        if self.unserved is None or self._announced_live(key[0]):
            return None
        why = self.unserved.why(key[0])
        return None if why is None else ServiceUnavailable(service.id, key[0], why).message

    def _announced_live(self, topic: str) -> bool:
        """Whether a live replica announces ``topic``: its heartbeats are fresher than the broker's
        gauge, which counts a service that has just started only at its next refresh (every 5 s
        on pulsar-lite), so the gauge is not asked."""
        return self.liveness is not None and self.liveness("", topic) is True

    async def _verdict(self, topic: str, patience: float) -> str | None:
        """The clients' ``unserved`` hook: the broker's verdict on ``topic``, unless a live
        replica announces it."""
        if self.unserved is None or self._announced_live(topic):
            return None
        return await self.unserved.verdict(topic, patience)

    async def invoke(self, service: Service, user: str, config: Any, arguments: Any, *,
                     timeout: float, deadline: float | None = None,
                     on_chunk: ChunkCallback | None = None, last_chunk: bool = True,
                     retries: bool | None = None) -> str:
        """Call ``service`` once, or, when a repeat is safe, up to :data:`ATTEMPTS` times.

        A repeat is safe when ``retries`` says so: a tool's own annotations
        over its service's (``CatalogTool.retries``); without it, the
        service's (``Annotations.retries``: idempotent, and not said to be
        destructive).  A service known to have no live replica (it announced
        itself, then stopped or missed its lease) fails at once with
        :class:`ServiceUnavailable` instead of waiting out the deadline.  A
        call that may be repeated is retried on a timeout, on that, or when
        the request could not be sent, with a jittered back-off, under the
        same request id, each attempt with its share of what is left of the
        deadline; never once a chunk has been passed on (the caller would see
        it twice).  Any other call is made exactly once.
        """
        key = service.queues
        end = time.monotonic() + deadlines.left(deadline, timeout)
        attempts = ATTEMPTS if (service.annotations.retries if retries is None else retries) else 1
        rid = new_request_id()
        streamed = False

        def chunk(text: str) -> Any:
            nonlocal streamed
            streamed = True
            return on_chunk(text)

        def retryable(e: BaseException) -> bool:
            return not streamed and isinstance(e, (RequestTimeout, ServiceUnavailable, PubSubError))

        async for attempt in AsyncRetrying(stop=stop_after_attempt(attempts),
                                           wait=wait_random_exponential(multiplier=0.1, max=1.0),
                                           retry=retry_if_exception(retryable), reraise=True):
            with attempt:
                if self.liveness is not None and self.liveness(service.id, key[0]) is False:
                    raise ServiceUnavailable(service.id, key[0])
                left = end - time.monotonic()
                share = left / (attempts - attempt.retry_state.attempt_number + 1)
                if attempt.retry_state.attempt_number > 1:
                    logger.info("Retrying the call to %s (attempt %d of %d)", service.id,
                                attempt.retry_state.attempt_number, attempts)
                async with self.use(key) as client:
                    try:
                        with self._watched(service.id, key[0]) as stopped:
                            return await client.call_streaming(user, config, arguments,
                                                               chunk if on_chunk is not None else None,
                                                               timeout=share, request_id=rid,
                                                               last_chunk=last_chunk)
                    except Unserved as e:
                        raise ServiceUnavailable(service.id, key[0], str(e)) from None
                    except asyncio.CancelledError:
                        if not stopped or asyncio.current_task().uncancel() > 0:
                            raise
                        raise ServiceUnavailable(service.id, key[0], "its replica stopped while the call ran "
                                                 "(it missed its lease)") from None
        raise AssertionError("unreachable")

    @contextmanager
    def _watched(self, service_id: str, queue: str) -> Iterator[list[bool]]:
        """While a call runs, check every :data:`WATCH_EVERY` seconds that its service is still
        live; if it stops (a replica killed without withdrawing misses its lease), the call is
        cancelled and the flag yielded is set, so the caller hears it at once rather than at its
        deadline (a request on a non-persistent topic nobody consumes is dropped silently).
        A call that ends sooner costs one timer."""
        stopped: list[bool] = []
        if self.liveness is None:
            yield stopped
            return
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle | None = None

        def check() -> None:
            nonlocal handle
            if self.liveness is not None and self.liveness(service_id, queue) is False:
                stopped.append(True)
                if task is not None:
                    task.cancel()
                return
            handle = loop.call_later(WATCH_EVERY, check)

        handle = loop.call_later(WATCH_EVERY, check)
        try:
            yield stopped
        finally:
            handle.cancel()

    @asynccontextmanager
    async def use(self, key: QueuePair) -> AsyncIterator[ToolServiceClient]:
        """Borrow the pair's client for one call, creating it if needed."""
        client = self._get(key)
        self._active[key] += 1
        try:
            yield client
        finally:
            self._active[key] -= 1
            if self._active[key] <= 0:
                del self._active[key]
                if key not in self._wanted:
                    await self._close(key)

    async def keep(self, keys: frozenset[QueuePair]) -> None:
        """Record the pairs the current tools use; close idle clients of the others."""
        self._wanted = frozenset(keys)
        for key in [k for k in self.clients if k not in self._wanted and not self._active[k]]:
            await self._close(key)

    async def _close(self, key: QueuePair) -> None:
        client = self.clients.pop(key, None)
        if client is not None:
            await client.stop()
            logger.info("Tool-service client closed for %s (no tool uses it)", key[0])

    async def close(self) -> None:
        """Close every client (processor shutdown)."""
        self._wanted = frozenset()
        for key in list(self.clients):
            await self._close(key)
