"""Upstream 2.1.4's ``trustgraph.base.metrics`` classes, driving our Prometheus metrics.

Upstream's processors make a ``ConsumerMetrics(processor, flow, name)`` &c.
per consumer, producer and subscriber and call it as they work.  A process
holds one metric per name (prometheus_client refuses a second), and ours
already registers ``received_count``, ``processing_count``, ``dropped_count``,
``request_latency`` and ``processor`` (:mod:`trustgraph.base.messaging.metrics`),
so these classes drive those objects; the four series only upstream has
(``consumer_state``, ``rate_limit_count``, ``producer_count``,
``subscriber_state``) are made here, once, with the same labels as ours.

Labels: ours are ``processor`` and the role's name (``consumer``, and
``producer`` here), where upstream has ``processor``, ``flow``, ``name``.
Upstream's ``flow`` and ``name`` become one name, ``<flow>/<name>`` (``name``
alone without a flow), which is the name our flow processors give their own
consumers, so an upstream processor's series and ours read alike on one
dashboard.  ``dropped_count`` carries our ``reason`` label; a subscriber's
drops are ``overloaded`` (its queue was full).  A metric call never raises
into the processor's work: an unknown state is logged and ignored.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

from prometheus_client import Counter, Enum
from trustgraph.base.messaging import metrics as ours
from trustgraph.base.safety.secrets import MASK, SECRET_PARAMS, scrub, secret_values

logger = logging.getLogger(__name__)

STATES = ["stopped", "running"]

consumer_state = Enum("consumer_state", "Consumer state", ["processor", "consumer"], states=STATES)
rate_limits = Counter("rate_limit_count", "Messages a handler could not take yet (rate limited)",
                      ["processor", "consumer"])
produced = Counter("producer_count", "Output items produced", ["processor", "producer"])
subscriber_state = Enum("subscriber_state", "Subscriber state", ["processor", "consumer"], states=STATES)

#: ``dropped_count``'s reason for a message a subscriber let go because its queue was full.
DROPPED_REASON = "overloaded"

_LABEL_NAME = re.compile(r"[^a-zA-Z0-9_]")


def role_name(flow: Any, name: Any) -> str:
    """Upstream's ``flow`` and ``name`` as our one label: ``flow/name``, or ``name`` without a flow."""
    return f"{flow}/{name}" if flow else str(name)


def _label(value: Any) -> str:
    return "" if value is None else str(value)


def _set_state(metric: Enum, labels: tuple[str, str], state: str) -> None:
    if state not in STATES:
        logger.warning("Ignoring metric state %r for %s (known: %s)", state, "/".join(labels), ", ".join(STATES))
        return
    metric.labels(*labels).state(state)


class ConsumerMetrics:
    """One consumer's series: messages handled by outcome, handling time, rate limits, running or not."""

    state_metric = consumer_state
    request_metric = ours.handling_latency
    processing_metric = ours.messages_handled
    rate_limit_metric = rate_limits

    def __init__(self, processor: Any, flow: Any, name: Any) -> None:
        self.processor = processor
        self.flow = flow
        self.name = name
        #: The ``consumer`` label value (give it to ours as the consumer's name to share its series).
        self.consumer = role_name(flow, name)
        self._labels = (_label(processor), self.consumer)

    def process(self, status: str) -> None:
        """One message handled: ``status`` is ``success`` or ``error`` (ours use the same two)."""
        type(self).processing_metric.labels(*self._labels, str(status)).inc()

    def rate_limit(self) -> None:
        """The handler was rate limited and the message will be tried again."""
        type(self).rate_limit_metric.labels(*self._labels).inc()

    def state(self, state: str) -> None:
        """``stopped`` or ``running``."""
        _set_state(type(self).state_metric, self._labels, state)

    def record_time(self) -> AbstractContextManager[Any]:
        """``with metrics.record_time():`` times one handling into ``request_latency``."""
        return type(self).request_metric.labels(*self._labels).time()


class ProducerMetrics:
    """One producer's count of messages sent."""

    producer_metric = produced

    def __init__(self, processor: Any, flow: Any, name: Any) -> None:
        self.processor = processor
        self.flow = flow
        self.name = name
        #: The ``producer`` label value.
        self.producer = role_name(flow, name)
        self._labels = (_label(processor), self.producer)

    def inc(self) -> None:
        """One message sent."""
        type(self).producer_metric.labels(*self._labels).inc()


class ProcessorMetrics:
    """The process's ``processor`` info: its id and, from upstream's processors, its parameters.

    Ours has one ``processor`` info per process, without labels (a process is
    one processor): upstream's ``processor`` label becomes the ``id`` key our
    processors set.  Parameters that hold secrets are masked, and credentials
    in the others (a broker URL's password) scrubbed: a scrape is no place for them.
    """

    processor_metric = ours.processor_info

    def __init__(self, processor: Any) -> None:
        self.processor = processor

    def info(self, info: Mapping[str, Any]) -> None:
        """Publish ``info`` (values as text) with ``id`` = this processor."""
        shown: dict[str, str] = {}
        secrets = secret_values(info)
        for key, value in info.items():
            label = _LABEL_NAME.sub("_", str(key))
            if value is None:
                shown[label] = ""
            elif label in SECRET_PARAMS:
                shown[label] = MASK if value else ""
            else:
                shown[label] = scrub(str(value), secrets)
        shown["id"] = _label(self.processor)
        type(self).processor_metric.info(shown)


class SubscriberMetrics:
    """One subscriber's series: messages received, dropped when its queue was full, running or not."""

    state_metric = subscriber_state
    received_metric = ours.messages_received
    dropped_metric = ours.messages_dropped

    def __init__(self, processor: Any, flow: Any, name: Any) -> None:
        self.processor = processor
        self.flow = flow
        self.name = name
        #: The ``consumer`` label value.
        self.consumer = role_name(flow, name)
        self._labels = (_label(processor), self.consumer)

    def received(self) -> None:
        """One message received."""
        type(self).received_metric.labels(*self._labels).inc()

    def state(self, state: str) -> None:
        """``stopped`` or ``running``."""
        _set_state(type(self).state_metric, self._labels, state)

    def dropped(self, state: Any = None) -> None:
        """One message let go because the subscriber's queue was full.

        ``state`` is upstream's parameter, which upstream never reads (and its
        own subscriber calls this without it): optional here, and unread.
        """
        type(self).dropped_metric.labels(*self._labels, DROPPED_REASON).inc()


__all__ = ["ConsumerMetrics", "ProcessorMetrics", "ProducerMetrics", "SubscriberMetrics"]
