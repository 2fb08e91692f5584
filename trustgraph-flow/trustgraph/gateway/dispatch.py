"""Routing of gateway calls to services on the bus, with one deadline per call.

Global services have fixed topics and one client each: ``config`` and
``flow`` opened at start, upstream's ``librarian``, ``knowledge`` and
``collection-management`` on first use (most deployments of this fork run
none of them).  Flow services are found through each flow's ``interfaces``
(config ``flow/<id>``, learned from pushes); their clients are created on
first use, one per (flow, kind), and closed when the flow disappears or its
topics change, so a stopped flow leaves no subscription behind.

Every client subscribes under ``gateway-...-request-<uuid>``: upstream's name
plus a suffix, because the subscriptions are Shared and two gateways under one
name would split, and so lose, each other's responses.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.base.messaging import deadlines
from trustgraph.base.messaging.pubsub import CONFIG_LANE, DEFAULT_LANE, Producer, PubSubError
from trustgraph.base.messaging.request_response import CallLost
from trustgraph.base.messaging.unserved import GRACE, UnservedTopics
from trustgraph.base.processors import config_parts
from trustgraph.base.safety import limits
from trustgraph.schema import (
    ConfigRequest,
    ConfigResponse,
    collection_request_queue,
    collection_response_queue,
    knowledge_request_queue,
    knowledge_response_queue,
    librarian_request_queue,
    librarian_response_queue,
)
from trustgraph.topics import TopicError, to_pulsar

from .translators import FLOW_KINDS, GLOBAL_KINDS, SENDERS, JsonObject, OneWay, Translator, gateway_error

logger = logging.getLogger(__name__)

#: Called with each translated response and whether it is the last one.
OnMessage = Callable[[JsonObject, bool], Awaitable[None]]

# The health probe lists a config type nobody uses: the reply is tiny whatever
# the size of the store, and it still carries the version.
_PROBE_TYPE = "api-gateway-health"


class RoutingError(Exception):
    """A call refused before it reaches a translator (unknown kind or flow, unreadable body);
    answered as ``{"error": "<text>"}``, as upstream answers it."""


class Unserved(RoutingError):
    """A flow interface or global service that no processor serves: refused at once instead of
    waiting for the deadline."""


class SocketGone(Exception):
    """The client a streamed call was answering has gone; the call is abandoned."""


#: Upstream's fixed topics of the global services other than config and flow.
UPSTREAM_GLOBAL_TOPICS = {
    "librarian": (librarian_request_queue, librarian_response_queue),
    "knowledge": (knowledge_request_queue, knowledge_response_queue),
    "collection-management": (collection_request_queue, collection_response_queue),
}

#: The answer of a call whose client was closed under it (flow stopped, gateway stopping).
CLOSED_DURING_CALL = "Call abandoned: its flow or the gateway stopped"


def timeout_error() -> JsonObject:
    """What a caller gets when a service does not answer within the deadline."""
    return gateway_error("Timeout")


class Dispatcher:
    """Owns the request/response clients and runs calls through them."""

    def __init__(self, pubsub: PubSub, *, timeout: float, config_topics: tuple[str, str],
                 flow_topics: tuple[str, str], other_topics: dict[str, tuple[str, str]] | None = None,
                 unserved: UnservedTopics | None = None) -> None:
        """``unserved``: the broker's view of which request topics nobody consumes (flow calls to
        one fail at once); None: every call waits for its reply or its deadline."""
        self.pubsub = pubsub
        self.unserved = unserved
        self.timeout = timeout
        self._global_topics = {"config": config_topics, "flow": flow_topics,
                              **UPSTREAM_GLOBAL_TOPICS, **(other_topics or {})}
        self._global: dict[str, RequestResponseClient] = {}
        self._producers: dict[str, Producer] = {}
        self._flow_clients: dict[tuple[str, str], RequestResponseClient] = {}
        self.flows: dict[str, dict[str, Any]] = {}
        self._closing: set[asyncio.Task] = set()

    def _global_client(self, kind: str) -> RequestResponseClient:
        req, resp = self._global_topics[kind]
        t = GLOBAL_KINDS[kind]
        client = self._global[kind] = RequestResponseClient(
            self.pubsub, request_topic=req, response_topic=resp,
            request_schema=t.request_schema, response_schema=t.response_schema,
            subscription=f"gateway-{kind}-request-{uuid.uuid4()}", timeout=self.timeout,
            name=f"gateway-{kind}", lane=CONFIG_LANE if kind == "config" else DEFAULT_LANE)
        return client

    async def start(self) -> None:
        """Open the config and flow clients, so the first config call pays no subscription."""
        for kind in ("config", "flow"):
            await self._global_client(kind).start()

    async def stop(self) -> None:
        """Close every client; calls still waiting end with :data:`CLOSED_DURING_CALL`."""
        clients = [*self._global.values(), *self._flow_clients.values()]
        self._global.clear()
        self._flow_clients.clear()
        await asyncio.gather(*(c.stop() for c in clients), return_exceptions=True)
        await asyncio.gather(*self._closing, return_exceptions=True)

    # -- flows -------------------------------------------------------------------
    def update_flows(self, section: dict[str, str]) -> None:
        """Take the ``flow`` config section: learn interfaces, retire stale clients."""
        flows: dict[str, dict[str, Any]] = {}
        for flow_id, text in section.items():
            try:
                record = limits.loads(text)
                interfaces = record.get("interfaces") or {}
                if not isinstance(interfaces, dict):
                    raise ValueError("'interfaces' is not an object")
            except (TypeError, ValueError, AttributeError) as e:
                logger.warning("Ignoring flow/%s: unreadable flow record (%s)", flow_id, e)
                continue
            flows[flow_id] = interfaces
        for flow_id in flows.keys() - self.flows.keys():
            kinds = ", ".join(sorted(flows[flow_id])) or "no interfaces"
            logger.info("Flow %s available (%s)", flow_id, kinds)
        for flow_id in self.flows.keys() - flows.keys():
            logger.info("Flow %s gone", flow_id)
        self.flows = flows
        for key, client in list(self._flow_clients.items()):
            if _pair(flows.get(key[0], {}).get(key[1])) != (client.request_topic, client.response_topic):
                self._retire(key)

    def _retire(self, key: tuple[str, str]) -> None:
        client = self._flow_clients.pop(key, None)
        if client is None:
            return
        logger.debug("Closing client for flow %s kind %s", *key)
        task = asyncio.ensure_future(client.stop())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def route(self, kind: str, flow: str | None) -> tuple[Translator, RequestResponseClient]:
        """Find the translator and client of a call, or raise :class:`RoutingError`.

        The checks run in upstream's order, so the same mistake gives the same
        message: unknown flow, kind missing from the flow, kind we cannot translate.
        """
        if flow is None:
            translator = GLOBAL_KINDS.get(kind)
            if translator is None or kind not in self._global_topics:
                raise RoutingError("Invalid kind")
            # The global services we route but do not ship (librarian, knowledge, ...) are as
            # often unserved as a flow's interfaces, and a call to one would wait its deadline.
            request_topic = self._global_topics[kind][0]
            if self.unserved is not None and self.unserved.unserved(request_topic):
                raise Unserved(f"Nothing serves {kind}: no processor consumes {request_topic} "
                               f"(the broker has counted no consumer there for {GRACE:.0f} s)")
            return translator, self._global.get(kind) or self._global_client(kind)
        interfaces = self._interfaces(flow, kind)
        translator = FLOW_KINDS.get(kind)
        if translator is None:
            raise RoutingError("Invalid kind")
        pair = _pair(interfaces[kind])
        if pair is None:
            raise RoutingError("This kind not supported by flow")
        if self.unserved is not None and self.unserved.unserved(pair[0]):
            raise Unserved(f"Nothing serves {kind} on flow {flow}: no processor consumes {pair[0]} "
                           f"(the broker has counted no consumer there for {GRACE:.0f} s)")
        client = self._flow_clients.get((flow, kind))
        if client is None:
            try:
                for topic in pair:
                    to_pulsar(topic)
            except TopicError as e:
                raise RoutingError(f"Flow {flow} has a bad {kind} interface: {e}") from None
            client = RequestResponseClient(
                self.pubsub, request_topic=pair[0], response_topic=pair[1],
                request_schema=translator.request_schema, response_schema=translator.response_schema,
                subscription=f"gateway-{flow}-{kind}-request-{uuid.uuid4()}", timeout=self.timeout,
                name=f"gateway-{flow}-{kind}")
            self._flow_clients[(flow, kind)] = client
        return translator, client

    def _interfaces(self, flow: str, kind: str) -> dict[str, Any]:
        interfaces = self.flows.get(flow)
        if interfaces is None:
            raise RoutingError("Invalid flow")
        if kind not in interfaces:
            raise RoutingError("This kind not supported by flow")
        return interfaces

    def interface_topic(self, flow: str, interface: str) -> str:
        """The topic of a one-way interface (a sender, an import or an export), or :class:`RoutingError`."""
        topic = self._interfaces(flow, interface)[interface]
        if not isinstance(topic, str) or not topic:
            raise RoutingError("This kind not supported by flow")
        try:
            to_pulsar(topic)
        except TopicError as e:
            raise RoutingError(f"Flow {flow} has a bad {interface} interface: {e}") from None
        return topic

    async def producer(self, topic: str) -> Producer:
        """One shared producer per topic, for senders and imports."""
        producer = self._producers.get(topic)
        if producer is None:
            producer = self._producers[topic] = await self.pubsub.producer(topic)
        return producer

    async def send(self, sender: OneWay, flow: str, body: Any) -> JsonObject:
        """A one-way call (text-load, document-load): publish the record, answer ``{}``."""
        topic = self.interface_topic(flow, sender.kind)
        record = sender.request(body)
        try:
            async with asyncio.timeout(self.timeout):
                await (await self.producer(topic)).send(record)
        except TimeoutError:
            return timeout_error()
        except (PubSubError, TopicError) as e:
            logger.warning("Send %s failed: %s", sender.kind, e)
            return gateway_error(str(e))
        return {}

    # -- calls -------------------------------------------------------------------
    async def call(self, kind: str, flow: str | None, body: Any,
                   on_message: OnMessage | None = None, deadline: float | None = None) -> JsonObject:
        """Run one call and return its final JSON message.

        ``on_message`` (the websocket) sees every message as it arrives, the
        final one included.  ``deadline`` is the caller's (absolute), when it
        said: the call, and the service behind it, end by then.  Routing and
        body problems raise :class:`RoutingError`; everything after the
        request is sent is a JSON answer, a timeout included.
        """
        if flow is not None and kind in SENDERS:
            out = await self.send(SENDERS[kind], flow, body)
            if on_message is not None:
                await on_message(out, True)
            return out
        limit = deadlines.left(deadline, self.timeout)
        translator, client = self.route(kind, flow)
        if self.unserved is not None and self.unserved.in_grace(client.request_topic):
            # Nothing is known of its consumers yet: sent now, the request could be dropped and
            # the call wait its whole deadline.  Held until the topic is judged, then routed again:
            # refused as a call after the grace is, or sent to the consumer that appeared.
            held = time.monotonic()
            await self.unserved.verdict(client.request_topic, limit)
            limit -= time.monotonic() - held
            translator, client = self.route(kind, flow)
            if limit <= 0:
                out = timeout_error()
                if on_message is not None:
                    await on_message(out, True)
                return out
        request = translator.request(body)
        logger.debug("Call %s%s", kind, f" on flow {flow}" if flow else "")
        last: JsonObject = {}
        # No final predicate: the translator decides which message is the last,
        # and the loop stops there.  The request carries the deadline, so an
        # agent's whole dialog (every iteration) ends within it.
        # A config reply may come in parts (a config bigger than one message):
        # gathered into one record, so every client sees upstream's one reply.
        props = translator.request_properties(body)
        responses = (_gathered_config(client, request, limit, props) if flow is None and kind == "config"
                     else client.stream(request, timeout=limit, properties=props))
        try:
            # The client's own deadline covers the exchange; this one also covers
            # opening the client (a subscription can wait on an absent broker).
            async with asyncio.timeout(limit):
                async for record in responses:
                    last, final = translator.response(record)
                    if on_message is not None:
                        await on_message(last, final)
                    if final:
                        break
            return last
        except CallLost as e:  # the service restarted or the broker went: say which, at once
            out = gateway_error(str(e))
        except TimeoutError:
            out = timeout_error() if client.started else gateway_error(CLOSED_DURING_CALL)
        except (PubSubError, TopicError, config_parts.PartsError) as e:
            logger.warning("Call %s failed: %s", kind, e)
            out = gateway_error(str(e))
        finally:
            await responses.aclose()
        if on_message is not None:
            await on_message(out, True)
        return out

    async def probe_config(self, timeout: float = 2.0) -> tuple[bool, int | None]:
        """Ask config-svc for its version: ``(answered, version)``."""
        client = self._global.get("config")
        if client is None:
            return False, None
        try:
            async with asyncio.timeout(timeout):
                resp: ConfigResponse = await client.request(
                    ConfigRequest(operation="list", type=_PROBE_TYPE), timeout=timeout)
        except (TimeoutError, PubSubError):
            return False, None
        return True, resp.version


async def _gathered_config(client: RequestResponseClient, request: Any, limit: float,
                           properties: dict[str, str] | None) -> Any:
    """The one (gathered) reply of a config call, as a one-item stream."""
    yield await config_parts.request(client, request, timeout=limit, properties=properties)


def _pair(interface: Any) -> tuple[str, str] | None:
    """The (request, response) topics of an interface entry, if it is a request/response one."""
    if isinstance(interface, dict):
        req, resp = interface.get("request"), interface.get("response")
        if isinstance(req, str) and req and isinstance(resp, str) and resp:
            return req, resp
    return None
