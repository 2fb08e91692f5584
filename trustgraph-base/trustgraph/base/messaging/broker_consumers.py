"""Which topics have a consumer, as the broker counts them: for ``tg-show-flows``.

A flow blueprint names interfaces (embeddings, graph-rag, ...) whether or not
any processor of the stack serves them; a request sent to a non-persistent
topic that nobody consumes is dropped without a word.  Only the broker knows
who consumes what, so we ask it: both Apache Pulsar (its web service port,
8080) and pulsar-lite (its ``[metrics] addr``) publish the gauge
``pulsar_consumers_count`` per topic in Prometheus text at ``/metrics``.
Pulsar's admin REST API (``/admin/v2/.../stats``) would be live, but
pulsar-lite does not serve it; the gauge is the one view both share.  Both
brokers refresh it periodically (pulsar-lite every 5 s, Pulsar every
``statsUpdateFrequencyInSecs``), so a processor that just started may be
counted a little late.

Topics are keyed ``tenant/namespace/name``: pulsar-lite labels a topic by its
short name beside the namespace, Pulsar by its full URL, and neither form
says more than that key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...topics import TopicError, parse
from .transport import TransportError

if TYPE_CHECKING:   # aiohttp only where the counts are read: about 8 MB of a process that never does
    import aiohttp

GAUGE = "pulsar_consumers_count"
_LINE = re.compile(r"^(\w+)\{([^}]*)\}\s+(\S+)")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


class BrokerStatsError(TransportError, RuntimeError):
    """The broker's metrics could not be read (what ``PulsarTransport.consumer_counts`` raises)."""


def topic_key(topic: str) -> str:
    """``tenant/namespace/name`` of ``topic`` in any form (``non-persistent://tg/request/x``,
    ``q0/tg/request/x``, ``request:tg:x``), as the broker's metrics label it; a text that names no
    topic (a metrics label, ``tg/request/x``) as it is after any ``scheme://``."""
    try:
        return parse(topic).path
    except TopicError:
        return topic.split("://", 1)[-1]


def samples(text: str, name: str) -> Iterator[tuple[dict[str, str], str]]:
    """The labelled samples of metric ``name`` in Prometheus text: ``(labels, value)`` each."""
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is not None and match.group(1) == name:
            yield dict(_LABEL.findall(match.group(2))), match.group(3)


def consumer_counts(text: str) -> dict[str, int]:
    """``{tenant/namespace/name: consumers}`` from Prometheus text (topic-level lines only)."""
    counts: dict[str, int] = {}
    for labels, value in samples(text, GAUGE):
        topic = labels.get("topic")
        if not topic or "subscription" in labels:
            continue
        if "://" in topic or "/" in topic:
            key = topic_key(topic)
        elif labels.get("namespace"):
            key = f"{labels['namespace']}/{topic}"
        else:
            continue
        try:
            counts[key] = counts.get(key, 0) + int(float(value))
        except ValueError:
            continue
    return counts


async def fetch_consumer_counts(session: aiohttp.ClientSession, admin_url: str,
                                timeout: float = 5.0) -> dict[str, int]:
    import aiohttp

    url = f"{admin_url.rstrip('/')}/metrics"
    try:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=timeout)) as resp:
            if resp.status != 200:
                raise BrokerStatsError(f"{url} answered HTTP {resp.status}")
            return consumer_counts(await resp.text())
    except (aiohttp.ClientError, TimeoutError) as e:
        raise BrokerStatsError(f"cannot read {url}: {type(e).__name__}: {e}") from None
