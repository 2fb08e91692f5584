"""Processors that serve flows: consumers, producers and clients per flow.

A FlowProcessor declares *specs* (a consumer on the ``request`` key, a
producer on ``response``, a request/response client on ``prompt-request`` /
``prompt-response``...).  When ``active-flow[<id>]`` lists a flow, the
processor reads each spec's topic from that flow's definition and opens it;
when the flow disappears it closes them.  A flow whose definition lacks a key
is reported and skipped; the other flows run (upstream fails the whole push).

Where config assigns a processor its flows is its wire's ``flow-assignment``
(:class:`FlowAssignment`): ours, :class:`ActiveFlows`, reads ``active-flow``;
another wire names its own (:meth:`trustgraph.base.wire.Wire.component`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..launching.stack import STACK_STATUS_ENV, stack_starting
from ..messaging.pubsub import Consumer, Message, Producer
from ..messaging.request_response import RequestResponseClient
from ..messaging.serving import Replies, serve
from ..messaging.unserved import UnservedTopics
from ..safety import limits
from .async_processor import AsyncProcessor, env_default

logger = logging.getLogger(__name__)


class FlowConfigError(ValueError):
    """A flow's definition cannot be used by this processor."""


@dataclass
class ConsumerSpec:
    """Consume ``name``'s topic; the handler runs per message.

    With ``replies`` (the service's :class:`~trustgraph.base.messaging.serving.Replies`)
    the consumer serves requests: ``handler(msg, flow, reply)`` sends its
    records through ``reply`` (on the ``reply_to`` producer, with the
    request's ``id``), a request without an ``id`` is dropped before the
    handler runs, an undecodable one with an id gets the error record, and an
    exception from the handler becomes the error reply (see
    :mod:`trustgraph.base.messaging.serving`).  Without it, ``handler(msg, flow)``
    consumes messages nobody answers, and undecodable ones are only logged.
    """
    name: str
    schema: type
    handler: Callable[..., Awaitable[None]]
    concurrency: int | None = None
    replies: Replies | None = None
    reply_to: str = "response"


@dataclass
class ProducerSpec:
    name: str
    schema: type


@dataclass
class RequestResponseSpec:
    """A client: requests on ``request_name``'s topic, answers on ``response_name``'s.

    Each name comes before its schema, in the order upstream's spec takes them,
    so that a positional call means the same with either.
    """
    request_name: str
    request_schema: type
    response_name: str
    response_schema: type
    impl: type = RequestResponseClient
    timeout: float = 120.0


@dataclass
class ParameterSpec:
    """A flow parameter (``model``, ``temperature``): optional, None when absent."""
    name: str


class Flow:
    """The opened parts of one flow; ``flow("name")`` returns a part or a parameter."""

    def __init__(self, name: str, definition: dict[str, Any]) -> None:
        self.name = name
        self.definition = definition
        self.producers: dict[str, Producer] = {}
        self.clients: dict[str, RequestResponseClient] = {}
        self.consumers: dict[str, Consumer] = {}
        self.parameters: dict[str, Any] = {}

    def __call__(self, name: str) -> Any:
        for table in (self.producers, self.clients, self.parameters):
            if name in table:
                return table[name]
        raise KeyError(f"flow {self.name} has no part {name!r}")


class FlowAssignment(Protocol):
    """Where config assigns a processor its flows, as the definitions :meth:`FlowProcessor.start_flow`
    opens: a wire's ``flow-assignment`` component (ours: :data:`ACTIVE_FLOWS`)."""

    def config_type(self, processor_id: str) -> str:
        """The config type whose changes may change ``processor_id``'s flows."""
        ...

    def read(self, config: dict[str, dict[str, str]], processor_id: str) -> dict[str, Any] | None:
        """``{flow: definition}`` assigned to ``processor_id``; None: unreadable (logged), flows unchanged."""
        ...

    def assignment(self, config: dict[str, dict[str, str]], processor_id: str, flow: str,
                   definition: dict[str, Any]) -> dict[str, dict[str, str]]:
        """The config types to write for ``config`` to assign ``flow`` (``definition``) too, as
        config-svc's start-flow writes them (a test's stand-in for it uses this)."""
        ...

    def subscription(self, processor_id: str, flow: str, spec: str) -> str:
        """The subscription ``processor_id``'s consumer ``spec`` shares in ``flow``, named as this
        wire's processors name it: a processor of ours put in place of upstream's (the same id) then
        takes over its subscription, where a broker keeps one without consumers (a RabbitMQ queue
        on 2.11's topology), instead of leaving it to collect every message."""
        ...


class ActiveFlows:
    """2.1's flow assignment (ours): ``active-flow/<id>`` holds ``{flow: definition}`` as JSON."""

    TYPE = "active-flow"

    def config_type(self, processor_id: str) -> str:
        """``active-flow``: one item per processor."""
        return self.TYPE

    def read(self, config: dict[str, dict[str, str]], processor_id: str) -> dict[str, Any] | None:
        """The processor's item; one that is not a JSON object leaves every flow as it is (an ERROR
        line says so), since stopping them all for a bad write would be worse."""
        raw = config.get(self.TYPE, {}).get(processor_id)
        if not raw:
            return {}
        try:
            wanted = limits.loads(raw)
            if not isinstance(wanted, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            logger.error("active-flow/%s is not usable (%s); flows unchanged", processor_id, e)
            return None
        return wanted

    def assignment(self, config: dict[str, dict[str, str]], processor_id: str, flow: str,
                   definition: dict[str, Any]) -> dict[str, dict[str, str]]:
        """``active-flow`` with ``flow`` added to the processor's item."""
        items = dict(config.get(self.TYPE, {}))
        flows = json.loads(items.get(processor_id, "{}"))
        flows[flow] = definition
        items[processor_id] = json.dumps(flows)
        return {self.TYPE: items}

    def subscription(self, processor_id: str, flow: str, spec: str) -> str:
        """``{id}--{flow}--{spec}``, as upstream 2.1's ConsumerSpec names it."""
        return f"{processor_id}--{flow}--{spec}"


#: Our wire's flow assignment (the default of ``wire.component("flow-assignment", ...)``).
ACTIVE_FLOWS = ActiveFlows()


class FlowProcessor(AsyncProcessor):
    """Starts and stops per-flow parts from ``active-flow[<id>]``."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.concurrency: int = int(params.get("concurrency") or 1)
        self.specs: list[Any] = []
        self.flows: dict[str, Flow] = {}
        self.flow_errors: dict[str, str] = {}
        self._flow_lock = asyncio.Lock()
        # When the transport counts consumers (Pulsar's, with the broker's admin URL), a client
        # call to a request topic nothing has consumed for a while fails at once instead of at
        # its deadline (unserved.py).
        # Under tg-launch, no call is refused as unserved while the stack is still starting.
        transport = self.pubsub.transport
        self.unserved_topics: UnservedTopics | None = (
            UnservedTopics(transport, starting=stack_starting(os.environ.get(STACK_STATUS_ENV)))
            if transport.capabilities.consumer_counts else None)
        #: Where config assigns this processor its flows (its wire's; ours: active-flow/<id>).
        self.flow_assignment: FlowAssignment = self.wire.component("flow-assignment", ACTIVE_FLOWS)
        self.register_config_handler(self._on_flow_config,
                                     types=[self.flow_assignment.config_type(self.id)])

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument("--pulsar-admin-url", default=env_default("PULSAR_ADMIN_URL"),
                            help="the broker's HTTP admin/metrics URL: calls to a flow interface "
                                 "nothing consumes then fail at once (env PULSAR_ADMIN_URL)")

    async def stop(self) -> None:
        if self.unserved_topics is not None:
            await self.unserved_topics.stop()
        await super().stop()

    def register_specification(self, spec: Any) -> None:
        self.specs.append(spec)

    async def _on_flow_config(self, config: dict[str, dict[str, str]], version: int) -> None:
        wanted = self.flow_assignment.read(config, self.id)
        if wanted is None:
            return
        async with self._flow_lock:
            for name in [n for n in self.flows if n not in wanted]:
                await self.stop_flow(name)
            for name, definition in wanted.items():
                if name in self.flows:
                    continue
                try:
                    await self.start_flow(name, definition)
                except FlowConfigError as e:
                    self.flow_errors[name] = str(e)
                    logger.error("Flow %s not started: %s", name, e)
                except Exception as e:
                    self.flow_errors[name] = str(e)
                    logger.exception("Flow %s failed to start: %s", name, e)

    def _topic(self, name: str, definition: dict[str, Any], key: str) -> str:
        try:
            value = definition[key]
        except (KeyError, TypeError):
            raise FlowConfigError(f"definition of flow {name!r} lacks key {key!r}") from None
        if not isinstance(value, str):
            raise FlowConfigError(f"flow {name!r} key {key!r} is not a topic string")
        return value

    def make_flow(self, name: str, definition: dict[str, Any]) -> Flow:
        """The object that holds flow ``name``'s parts; a subclass that keeps more per flow
        returns its own kind of :class:`Flow` (raise :class:`FlowConfigError` to refuse it)."""
        return Flow(name, definition)

    async def start_flow(self, name: str, definition: dict[str, Any]) -> Flow:
        """Open every spec's part for flow ``name``; on failure close what opened."""
        # Resolve every key first so a bad definition opens nothing.
        for spec in self.specs:
            if isinstance(spec, RequestResponseSpec):
                self._topic(name, definition, spec.request_name)
                self._topic(name, definition, spec.response_name)
            elif isinstance(spec, (ConsumerSpec, ProducerSpec)):
                self._topic(name, definition, spec.name)
        flow = self.make_flow(name, definition)
        try:
            for spec in self.specs:
                if isinstance(spec, ParameterSpec):
                    flow.parameters[spec.name] = definition.get(spec.name)
                elif isinstance(spec, ProducerSpec):
                    flow.producers[spec.name] = await self.pubsub.producer(
                        self._topic(name, definition, spec.name))
                elif isinstance(spec, RequestResponseSpec):
                    if self.unserved_topics is not None:
                        self.unserved_topics.start(self.pubsub.calls)
                    client = spec.impl(
                        self.pubsub,
                        request_topic=self._topic(name, definition, spec.request_name),
                        response_topic=self._topic(name, definition, spec.response_name),
                        request_schema=spec.request_schema, response_schema=spec.response_schema,
                        subscription=f"{self.id}--{name}--{spec.request_name}--{uuid.uuid4()}",
                        timeout=spec.timeout, name=f"{name}/{spec.request_name}",
                        unserved=self.unserved_topics.verdict if self.unserved_topics is not None else None,
                    )
                    await client.start()
                    flow.clients[spec.request_name] = client
            # Consumers last: a handler may use any producer or client at once.
            for spec in self.specs:
                if isinstance(spec, ConsumerSpec):
                    flow.consumers[spec.name] = await self._consume(spec, flow)
        except BaseException:
            await self._close_flow(flow)
            raise
        self.flows[name] = flow
        self.flow_errors.pop(name, None)
        logger.info("Flow %s started", name)
        return flow

    async def _consume(self, spec: ConsumerSpec, flow: Flow) -> Consumer:
        topic = self._topic(flow.name, flow.definition, spec.name)
        subscription = self.flow_assignment.subscription(self.id, flow.name, spec.name)
        concurrency = spec.concurrency or self.concurrency
        name = f"{flow.name}/{spec.name}"
        handler = spec.handler
        if spec.replies is None:
            async def consume(msg: Message) -> None:
                await handler(msg, flow)

            return await self.pubsub.consumer(topic, subscription, spec.schema, handler=consume,
                                              concurrency=concurrency, name=name)
        producer = flow.producers.get(spec.reply_to)
        if producer is None:
            raise FlowConfigError(f"consumer {spec.name!r} replies on {spec.reply_to!r}, "
                                  "which no ProducerSpec declares")

        async def work(msg: Message, reply: Any) -> None:
            await handler(msg, flow, reply)

        return await serve(self.pubsub, topic, subscription, spec.schema, producer=producer,
                           replies=spec.replies, work=work, concurrency=concurrency, name=name)

    async def _close_flow(self, flow: Flow) -> None:
        await self.pubsub.remove(*flow.consumers.values())
        for client in flow.clients.values():
            await client.stop()
        await self.pubsub.remove(*flow.producers.values())

    async def stop_flow(self, name: str) -> None:
        flow = self.flows.pop(name, None)
        if flow is not None:
            await self._close_flow(flow)
            logger.info("Flow %s stopped", name)
