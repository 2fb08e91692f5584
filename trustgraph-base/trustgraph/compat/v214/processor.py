"""Upstream 2.1.4's processor surface, on our processors: what a processor written for it subclasses.

A processor written against upstream 2.1.4's docs (its own trustgraph-flow,
and the ones users wrote) looks like this::

    class Processor(FlowProcessor):
        def __init__(self, **params):
            super().__init__(**params)
            self.register_specification(ConsumerSpec(name="request", schema=Req, handler=self.on_request))
            self.register_specification(ProducerSpec(name="response", schema=Resp))
            self.register_specification(PromptClientSpec(request_name="prompt-request",
                                                         response_name="prompt-response"))

        async def on_request(self, msg, consumer, flow):
            text = await flow("prompt-request").prompt(id="question", variables={...})
            await flow("response").send(Resp(...), properties={"id": msg.properties()["id"]})

Ours differs in shape where it is better (a handler gets the record and a
reply path, a spec is data the processor opens), so upstream's names here are
subclasses and specs of their own, built on ours: the consumers, producers
and request/response clients they open are ours, so our reconnects,
deadlines, lost-call handling and metrics come along.

* :class:`Spec` and its ``add(flow, processor, definition)``: a spec puts its
  part in the flow (``flow.consumer[...]``, ``flow.producer[...]``,
  ``flow.parameter[...]``); users wrote specs of their own this way.
* :class:`ConsumerSpec` (``handler(msg, consumer, flow)``, ``concurrency=1``),
  :class:`ProducerSpec`, :class:`ParameterSpec`, :class:`RequestResponseSpec`
  (request name, request schema, response name, response schema, ``impl``).
* :class:`RequestResponse`: upstream's client base (``request(req, timeout,
  recipient)``) on our :class:`~trustgraph.base.messaging.request_response.RequestResponseClient`.
* :class:`AsyncProcessor` and :class:`FlowProcessor`: ours, plus upstream's
  ``taskgroup``, ``config_handlers``, ``on_config_change``,
  ``on_configure_flows``, ``launch_async``, ``setup_logging``, a ``stop()``
  that works called plainly (upstream's is synchronous) or awaited (ours).
  Our own specs work in this FlowProcessor too, beside upstream's.

A handler's message is upstream's (``msg.value()``, ``msg.properties()``); a
request that carries our deadline property is skipped once its caller has
gone, and the clients a handler calls inherit that deadline.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import inspect
import logging
import sys
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from ...base.messaging.pubsub import Producer as OurProducer
from ...base.messaging.pubsub import PubSub
from ...base.messaging.request_response import RequestResponseClient
from ...base.processors import async_processor as ours_async
from ...base.processors import flow_processor as ours_flow
from ...base.processors.flow_processor import FlowConfigError
from ...base.safety import logsafe
from ...base.safety.secrets import secret_values
from .backends import core_pubsub
from .consumer import FlowConsumer
from .handling import handling_deadline
from .metrics import ConsumerMetrics, ProducerMetrics, SubscriberMetrics

logger = logging.getLogger(__name__)

__all__ = ["AsyncProcessor", "ConsumerSpec", "Flow", "FlowProcessor", "Parameter", "ParameterSpec",
           "ProducerSpec", "RequestResponse", "RequestResponseSpec", "Spec", "default_config_queue"]

#: Upstream's name for the config push topic a processor follows.
default_config_queue = ours_async.config_push_queue

#: Upstream's RequestResponse.request waits this long by default (seconds).
DEFAULT_REQUEST_TIMEOUT = 300

# -- specs --------------------------------------------------------------------------------------

class Spec:
    """A part every flow of a processor opens; ``add`` puts it in one flow.

    ``add(flow, processor, definition)`` is called once per flow as the flow
    is made (``definition`` is the flow's entry in ``active-flow``: its
    topics and parameters); it puts the part in ``flow.consumer``,
    ``flow.producer`` or ``flow.parameter``, and the flow then starts every
    part that has ``start()``.  A processor author subclasses it for a part of
    their own.
    """

    def add(self, flow: Flow, processor: Any, definition: dict[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement add()")


class Parameter:
    """A flow parameter's value (``flow("model")`` returns ``value``)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass


class ParameterSpec(Spec):
    """A flow parameter (``model``, ``temperature``...): its value, None when the flow has none."""

    def __init__(self, name: str) -> None:
        self.name = name

    def add(self, flow: Flow, processor: Any, definition: dict[str, Any]) -> None:
        flow.parameter[self.name] = Parameter(definition.get(self.name))


class ConsumerSpec(Spec):
    """Consume the flow's ``name`` topic: ``await handler(msg, consumer, flow)`` per message.

    ``msg.value()`` is the record and ``msg.properties()`` its properties.  A
    handler that raises has the message negatively acknowledged (a persistent
    topic delivers it again); one that raises TooManyRequests is run again
    every 10 s for up to two hours first, as upstream's consumer does.  The
    consumer is upstream's :class:`~.consumer.Consumer` as a flow's (:class:`~.consumer.FlowConsumer`).
    """

    def __init__(self, name: str, schema: type, handler: Callable[..., Awaitable[Any]],
                 concurrency: int = 1) -> None:
        self.name = name
        self.schema = schema
        self.handler = handler
        self.concurrency = concurrency

    def add(self, flow: Flow, processor: Any, definition: dict[str, Any]) -> None:
        flow.consumer[self.name] = FlowConsumer(
            processor.pubsub, flow, topic=definition[self.name],
            subscription=f"{processor.id}--{flow.name}--{self.name}", name=self.name,
            schema=self.schema, handler=self.handler, concurrency=self.concurrency,
            metrics=ConsumerMetrics(processor=flow.id, flow=flow.name, name=self.name),
            taskgroup=getattr(processor, "taskgroup", None))


class ProducerSpec(Spec):
    """Send on the flow's ``name`` topic: ``await flow(name).send(record, properties={...})``."""

    def __init__(self, name: str, schema: type) -> None:
        self.name = name
        self.schema = schema

    def add(self, flow: Flow, processor: Any, definition: dict[str, Any]) -> None:
        flow.producer[self.name] = FlowProducer(
            processor.pubsub, definition[self.name], self.schema,
            metrics=ProducerMetrics(processor=flow.id, flow=flow.name, name=self.name))


class RequestResponseSpec(Spec):
    """A client of another service: ``flow(request_name)`` is an ``impl`` (a :class:`RequestResponse`).

    ``impl`` is constructed with upstream's keywords (``backend``,
    ``subscription``, ``consumer_name``, ``request_topic``,
    ``request_schema``, ``request_metrics``, ``response_topic``,
    ``response_schema``, ``response_metrics``), so a client class written for
    upstream works unchanged.
    """

    def __init__(self, request_name: str, request_schema: type, response_name: str,
                 response_schema: type, impl: type | None = None) -> None:
        self.request_name = request_name
        self.request_schema = request_schema
        self.response_name = response_name
        self.response_schema = response_schema
        self.impl = impl or RequestResponse

    def add(self, flow: Flow, processor: Any, definition: dict[str, Any]) -> None:
        client = self.impl(
            backend=processor.pubsub,
            # Each instance its own subscription: every replica sees every response.
            subscription=f"{processor.id}--{flow.name}--{self.request_name}--{uuid.uuid4()}",
            consumer_name=flow.id,
            request_topic=definition[self.request_name], request_schema=self.request_schema,
            request_metrics=ProducerMetrics(processor=flow.id, flow=flow.name, name=self.request_name),
            response_topic=definition[self.response_name], response_schema=self.response_schema,
            response_metrics=SubscriberMetrics(processor=flow.id, flow=flow.name, name=self.request_name),
        )
        unserved = getattr(processor, "unserved_topics", None)
        if unserved is not None and isinstance(client, RequestResponseClient):
            unserved.start(processor.pubsub.calls)
            client.unserved = unserved.verdict
        flow.consumer[self.request_name] = client


# -- the parts a flow opens -----------------------------------------------------------------------

class FlowProducer:
    """One flow's producer of upstream's shape: ``send(record, properties={})`` on our producer.

    Opened when the flow starts (upstream opens it at the first send), so a
    topic that cannot be opened fails the flow, not its first message.
    """

    def __init__(self, pubsub: PubSub, topic: str, schema: type, metrics: ProducerMetrics | None = None) -> None:
        self.pubsub = pubsub
        self.topic = topic
        self.schema = schema
        self.metrics = metrics
        self._producer: OurProducer | None = None
        self._opening: asyncio.Lock | None = None

    async def start(self) -> None:
        if self._producer is None:
            self._opening = self._opening or asyncio.Lock()
            async with self._opening:
                if self._producer is None:
                    self._producer = await self.pubsub.producer(self.topic)

    async def stop(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            await self.pubsub.remove(producer)

    async def send(self, msg: Any, properties: dict[str, str] | None = None) -> None:
        if self._producer is None:
            await self.start()
        await self._producer.send(msg, properties or {})
        if self.metrics:
            self.metrics.inc()


class RequestResponse(RequestResponseClient):
    """Upstream's client base, on ours: ``await client.request(req, timeout=300, recipient=None)``.

    Without ``recipient`` the first response is returned.  With it, each
    response is handed to ``await recipient(resp)`` until it returns True,
    and that response is returned.  The whole call is bounded by
    ``timeout`` (upstream bounds each wait), and by the deadline of the
    request being handled, when a handler calls it; it raises
    :class:`~trustgraph.base.messaging.request_response.RequestTimeout` (a
    ``TimeoutError``, as upstream's).  ``request_metrics`` (upstream's
    ``ProducerMetrics``) counts the requests sent; our consumer counts the
    responses.  ``backend`` is our PubSub (a processor's ``pubsub``) or a
    Pulsar backend (``get_pubsub()``).
    """

    def __init__(self, backend: Any, subscription: str | None = None, consumer_name: str | None = None,
                 request_topic: str | None = None, request_schema: type | None = None,
                 request_metrics: Any = None, response_topic: str | None = None,
                 response_schema: type | None = None, response_metrics: Any = None,
                 **ours: Any) -> None:
        pubsub = pubsub_for(backend, type(self).__name__)
        if request_topic is None or response_topic is None:
            raise TypeError(f"{type(self).__name__} needs request_topic and response_topic")
        ours.setdefault("timeout", DEFAULT_REQUEST_TIMEOUT)
        super().__init__(
            pubsub, request_topic=request_topic, response_topic=response_topic,
            request_schema=request_schema, response_schema=response_schema,
            subscription=subscription or f"{consumer_name or pubsub.processor or 'client'}--{uuid.uuid4()}",
            **ours)
        self.consumer_name = consumer_name
        self.request_metrics = request_metrics
        self.response_metrics = response_metrics

    async def request(self, req: Any, timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
                      recipient: Callable[[Any], Any] | None = None, **ours: Any) -> Any:
        ours.setdefault("deadline", handling_deadline.get())
        metrics = getattr(self, "request_metrics", None)
        if metrics:
            metrics.inc()
        if recipient is None:
            return await super().request(req, timeout=timeout, **ours)
        async with self.stream(req, timeout=timeout, **ours) as responses:
            async for resp in responses:
                done = recipient(resp)
                if inspect.isawaitable(done):
                    done = await done
                if done:
                    return resp
        return None  # the stream ended without a final response (not reached: it runs to its deadline)


def pubsub_for(backend: Any, what: str) -> PubSub:
    """The PubSub of ours that carries a client made on ``backend``."""
    pubsub = core_pubsub(backend)
    if pubsub is None:
        raise TypeError(f"{what} runs on our PubSub or a Pulsar backend (get_pubsub()), "
                        f"not on a {type(backend).__name__}")
    return pubsub


class Flow(ours_flow.Flow):
    """One flow's parts, as upstream has them: ``flow.producer``, ``flow.consumer``, ``flow.parameter``.

    ``flow(name)`` returns a producer, a consumer or client, or a
    parameter's value, else a part one of our own specs opened, else None.
    """

    def __init__(self, id: str, flow: str, processor: Any, defn: dict[str, Any]) -> None:  # noqa: A002
        super().__init__(flow, defn)
        self.id = id
        self.producer: dict[str, Any] = {}
        self.consumer: dict[str, Any] = {}
        self.parameter: dict[str, Any] = {}
        for spec in getattr(processor, "specifications", ()):
            if isinstance(spec, Spec) or (hasattr(spec, "add") and not _is_ours(spec)):
                spec.add(self, processor, defn)

    def __call__(self, key: str) -> Any:
        if key in self.producer:
            return self.producer[key]
        if key in self.consumer:
            return self.consumer[key]
        if key in self.parameter:
            return self.parameter[key].value
        for table in (self.producers, self.clients, self.parameters):
            if key in table:
                return table[key]
        return None

    async def start(self) -> None:
        """Start every part: producers, then clients and parts of the user's own, consumers last
        (a handler may use any of the others at once)."""
        parts = [*self.producer.values(), *self.parameter.values(),
                 *(c for c in self.consumer.values() if not isinstance(c, FlowConsumer)),
                 *(c for c in self.consumer.values() if isinstance(c, FlowConsumer))]
        for part in parts:
            start = getattr(part, "start", None)
            if start is not None:
                await _maybe_await(start())

    async def stop(self) -> None:
        """Stop every part, consumers first; one that fails to stop does not keep the others open."""
        parts = [*(c for c in self.consumer.values() if isinstance(c, FlowConsumer)),
                 *(c for c in self.consumer.values() if not isinstance(c, FlowConsumer)),
                 *self.producer.values()]
        for part in parts:
            stop = getattr(part, "stop", None)
            if stop is None:
                continue
            try:
                await _maybe_await(stop())
            except Exception as e:
                logger.warning("Flow %s: stopping %s failed: %s", self.name, type(part).__name__, e)


def _is_ours(spec: Any) -> bool:
    return isinstance(spec, (ours_flow.ConsumerSpec, ours_flow.ProducerSpec,
                             ours_flow.RequestResponseSpec, ours_flow.ParameterSpec))


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


# -- processors ---------------------------------------------------------------------------------

class _TaskGroup:
    """What upstream's processors use their ``taskgroup`` for (``create_task``), on the processor's
    own background tasks: cancelled when it stops, never waited for (a TaskGroup would wait for
    a consumer loop that never ends)."""

    def __init__(self, processor: ours_async.AsyncProcessor) -> None:
        self._processor = processor

    def create_task(self, coro: Coroutine[Any, Any, Any], *, name: str | None = None,
                    context: contextvars.Context | None = None) -> asyncio.Task:
        task = self._processor.spawn(coro)
        if name is not None:
            task.set_name(name)
        return task


class AsyncProcessor(ours_async.AsyncProcessor):
    """Our processor base with upstream's surface (see the module's docstring).

    * ``taskgroup``: the one given (upstream's ``launch_async`` gives one),
      else the processor's own background tasks;
    * ``config_handlers``: upstream's list of ``handler(config, version)``,
      run in order on every config version (after our flow handling);
      ``register_config_handler(handler)`` appends to it, and with ``types``
      it is ours (run when those types change);
    * ``stop()``: asks the processor to stop and returns the close, which may
      be awaited (ours) or not (upstream's is synchronous);
    * ``running``: False once stopping.
    """

    def __init__(self, **params: Any) -> None:
        self.config_handlers: list[Callable[[dict[str, Any], int], Awaitable[None]]] = []
        self._closing: asyncio.Future | None = None
        super().__init__(**params)
        self.taskgroup: Any = params.get("taskgroup") or _TaskGroup(self)
        self.running = True
        ours_async.AsyncProcessor.register_config_handler(self, self._run_config_handlers)

    def register_config_handler(self, handler: Callable[..., Awaitable[None]],
                                types: Any = None) -> None:
        """Upstream's: ``handler(config, version)`` on every config version.  With ``types`` (ours),
        only when one of those config types changes."""
        if types is None:
            self.config_handlers.append(handler)
        else:
            super().register_config_handler(handler, types)

    async def _run_config_handlers(self, config: dict[str, Any], version: int) -> None:
        for handler in list(self.config_handlers):
            try:
                await handler(config, version)
            except Exception as e:  # as our follower does: one handler's failure stops no other
                logger.error("Config handler %s failed on version %s: %s",
                             getattr(handler, "__qualname__", handler), version, e, exc_info=True)

    async def on_config_change(self, message: Any, consumer: Any = None, flow: Any = None) -> None:
        """Upstream's handler of a config push message (``message.value()`` is a ConfigPush)."""
        value = message.value() if callable(getattr(message, "value", None)) else message.value
        await self.apply_config(value.config, value.version)

    def stop(self) -> asyncio.Future | None:  # type: ignore[override]
        """Stop: the processor's run ends, and everything it opened is closed.

        Returns the close as an awaitable (ours awaits it); called plainly, as
        upstream's synchronous ``stop()`` is, it runs on.  Outside an event
        loop there is nothing open to close, and it returns None.
        """
        self.running = False
        self.request_stop()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        if self._closing is None:
            self._closing = loop.create_task(super().stop())
        return self._closing

    @classmethod
    async def launch_async(cls, args: dict[str, Any]) -> None:
        """Make the processor from parsed flags, inside the event loop, and run it until stopped."""
        await cls(**args).run()

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        """Our common flags, which are upstream's and a few more (``--config-request-queue`` ...).

        An upstream processor that defines one of those few itself (its config-svc defines
        the config queues it serves) replaces ours: on upstream's base it had no such flag
        to clash with.
        """
        super().add_args(parser)
        # argparse copies the handler into each group as it is made: the ones made so far too.
        for container in (parser, *getattr(parser, "_action_groups", ())):
            container.conflict_handler = "resolve"

    @classmethod
    def setup_logging(cls, args: dict[str, Any]) -> None:
        """Log to stderr at ``args["log_level"]``, as ``launch`` does (secrets in ``args`` masked)."""
        logsafe.configure(args.get("log_level") or "INFO", logsafe.PROCESSOR_FORMAT, sys.stderr,
                          secret_values(args))


class FlowProcessor(AsyncProcessor, ours_flow.FlowProcessor):
    """Our FlowProcessor with upstream's surface: ``specifications``, ``flows`` of upstream's
    :class:`Flow`, ``start_flow(flow, defn)``, ``stop_flow(flow)``, ``on_configure_flows(config,
    version)``.  Upstream's specs and ours may be registered together."""

    @property
    def specifications(self) -> list[Any]:
        """Upstream's name for the registered specs."""
        return self.specs

    @specifications.setter
    def specifications(self, value: list[Any]) -> None:
        self.specs = value

    async def _on_flow_config(self, config: dict[str, dict[str, str]], version: int) -> None:
        await self.on_configure_flows(config, version)

    async def on_configure_flows(self, config: dict[str, Any], version: int) -> None:
        """Start the flows ``active-flow[<id>]`` lists and this processor does not run, stop the
        ones it no longer lists (a flow that fails to start is logged; the others run)."""
        await ours_flow.FlowProcessor._on_flow_config(self, config, version)

    def make_flow(self, name: str, definition: dict[str, Any]) -> Flow:
        try:
            return Flow(self.id, name, self, definition)
        except KeyError as e:
            raise FlowConfigError(f"definition of flow {name!r} lacks key {e}") from None

    async def start_flow(self, flow: str, defn: dict[str, Any]) -> Flow:  # type: ignore[override]
        started = await super().start_flow(flow, defn)
        try:
            await started.start()
        except BaseException:
            await self.stop_flow(flow)
            raise
        return started

    async def stop_flow(self, flow: str) -> None:
        running = self.flows.get(flow)
        if isinstance(running, Flow):
            await running.stop()
        await super().stop_flow(flow)
