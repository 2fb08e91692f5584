"""Topic names: their one grammar, the mapping to Pulsar URLs, and the well-known topics.

Upstream writes topics in a backend-neutral form (``q0/tg/request/config``) and
maps them to Pulsar URLs at the edge.  Descriptors and flow definitions may
use either form, so every place that opens a producer or consumer, and every
check of a descriptor's queues, goes through :func:`to_pulsar`: one grammar,
so a queue a descriptor check accepts is a queue the broker gets.

The grammar is ``persistent://tenant/namespace/topic``,
``non-persistent://tenant/namespace/topic``, ``q0|q1|q2/tenant/namespace/topic``
(upstream 2.1's generic form) or ``class:topicspace:topic`` (upstream 2.11's,
class one of flow, request, response, notify), with no slash or white space
inside a part: Pulsar would read a slash in the topic part as a different
(legacy, cluster-scoped) name than the author meant.

A 2.11 name maps as upstream 2.11's Pulsar backend maps it, so a descriptor
written for a 2.11 deployment reaches the topic its peers use: ``flow`` is
``persistent://``, the other classes ``non-persistent://``, and the class is
the namespace: ``request:tg:joke`` is ``non-persistent://tg/request/joke``.
Everything after the second colon is the topic, colons included (2.11 appends
``:workspace`` to per-workspace queues: ``request:tg:config:default`` is
``non-persistent://tg/request/config:default``).

:func:`parse` reads any of these forms into one :class:`Topic` value
(persistence, tenant, namespace, name), so no caller reads a name's text to
learn whether its topic is persistent: a ``q0/...`` or ``request:tg:...``
name is as non-persistent as its URL.

It imports nothing of ours, so the wire records (``trustgraph.schema``) can
name their queues with it and the messaging core can map them, without the
schema leaning on the layer above it.  ``trustgraph.schema`` re-exports
:func:`topic` and the generic names of the global queues
(``config_request_queue``...), which are upstream's public API.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import NamedTuple

_QOS_SCHEME = {"q0": "non-persistent", "q1": "persistent", "q2": "persistent"}

_PART = r"[^/\s]+"
# Matched whole (``fullmatch``): ``$`` would let a trailing newline through.
_TOPIC = re.compile(rf"(?:(persistent|non-persistent)://|(q[0-9])/)({_PART})/({_PART})/({_PART})")
# 2.11's ``class:topicspace:topic``: no slash anywhere, no colon in the first two parts.
_QUEUE = re.compile(r"([^:/\s]+):([^:/\s]+):([^/\s]+)")

#: Upstream 2.11's queue classes and the persistence each gets on Pulsar
#: (trustgraph-base 2.11.1, ``base/async_pulsar_backend.py``, ``_map_topic``).
QUEUE_CLASSES = {"flow": "persistent", "request": "non-persistent",
                 "response": "non-persistent", "notify": "non-persistent"}

EXPECTED = ("persistent://tenant/namespace/topic, non-persistent://tenant/namespace/topic, "
            "q0|q1|q2/tenant/namespace/topic or class:topicspace:topic "
            "(class flow, request, response or notify)")


class TopicError(ValueError):
    """A string that is neither a Pulsar topic URL nor a generic (2.1) or class (2.11) topic name."""


def topic(name: str, qos: str = "q1", tenant: str = "tg", namespace: str = "flow") -> str:
    """The generic topic form ``qos/tenant/namespace/name`` (upstream's ``schema.topic``).

    Only formats: :func:`to_pulsar` is the place that rejects a bad qos or name.
    """
    return f"{qos}/{tenant}/{namespace}/{name}"


def queue(name: str, cls: str = "flow", topicspace: str = "tg") -> str:
    """Upstream 2.11's queue form ``cls:topicspace:name`` (its ``schema.queue``).

    Only formats, like :func:`topic`: :func:`to_pulsar` rejects a bad class or name.
    """
    return f"{cls}:{topicspace}:{name}"


@dataclass(frozen=True)
class Topic:
    """One topic, whichever form named it: what a transport needs to open it.

    ``tenant/namespace/name`` are the Pulsar URL's parts (a 2.11 name's
    topicspace is the tenant and its class the namespace, as 2.11 maps it).
    """

    persistent: bool
    tenant: str
    namespace: str
    name: str

    @property
    def namespace_path(self) -> str:
        """``tenant/namespace``: where the topic is, as Pulsar's admin API names a namespace."""
        return f"{self.tenant}/{self.namespace}"

    @property
    def path(self) -> str:
        """``tenant/namespace/name``: the topic without its persistence."""
        return f"{self.tenant}/{self.namespace}/{self.name}"

    @functools.cached_property
    def pulsar_url(self) -> str:
        """``persistent://tenant/namespace/name`` or ``non-persistent://...``."""
        return f"{'persistent' if self.persistent else 'non-persistent'}://{self.path}"


def parse(name: str) -> Topic:
    """The :class:`Topic` ``name`` names, in any form of the grammar (see the module's docstring).

    Raises :class:`TopicError` for anything else, so a typo in a descriptor is
    reported when it is loaded rather than as a broker error at first use.
    Remembered per name: a tool call or a gateway send asks again for the same
    few names.
    """
    if not isinstance(name, str):
        raise TopicError(f"{name!r} is not a valid topic: expected {EXPECTED}")
    return _parse(name)


@functools.lru_cache(maxsize=4096)
def _parse(name: str) -> Topic:
    m = _TOPIC.fullmatch(name)
    if m is None:
        q = _QUEUE.fullmatch(name) if "://" not in name else None
        if q is None:
            raise TopicError(f"{name!r} is not a valid topic: expected {EXPECTED}")
        cls, topicspace, local = q.groups()
        persistence = QUEUE_CLASSES.get(cls)
        if persistence is None:
            raise TopicError(f"{name!r} is not a valid topic: unknown queue class {cls!r} "
                             f"(use {', '.join(QUEUE_CLASSES)})")
        return Topic(persistence == "persistent", topicspace, cls, local)
    scheme, qos, tenant, namespace, local = m.groups()
    if scheme is None:
        scheme = _QOS_SCHEME.get(qos)
        if scheme is None:
            raise TopicError(f"{name!r} is not a valid topic: unknown quality of service {qos!r} "
                             "(use q0, q1 or q2)")
    return Topic(scheme == "persistent", tenant, namespace, local)


def to_pulsar(name: str) -> str:
    """Return the Pulsar URL for ``name`` (:func:`parse`'s ``pulsar_url``); URLs pass through unchanged.

    Raises :class:`TopicError` as :func:`parse` does.
    """
    return parse(name).pulsar_url


# The global queues of upstream 2.1.4 (config and flow request/response, config push), in its generic form (its public names) ...
config_request_queue = topic("config", qos="q0", namespace="request")
config_response_queue = topic("config", qos="q0", namespace="response")
config_push_queue = topic("config", qos="q2", namespace="config")
flow_request_queue = topic("flow", qos="q0", namespace="request")
flow_response_queue = topic("flow", qos="q0", namespace="response")

# ... and as the Pulsar URLs the broker sees.
CONFIG_REQUEST = to_pulsar(config_request_queue)
CONFIG_RESPONSE = to_pulsar(config_response_queue)
FLOW_REQUEST = to_pulsar(flow_request_queue)
FLOW_RESPONSE = to_pulsar(flow_response_queue)
CONFIG_PUSH = to_pulsar(config_push_queue)


def config_notice_topic(push_topic: str) -> str:
    """Ours: where config-svc announces a version too big to push (``config_parts``).

    The push topic plus ``-notify``, so a deployment that moved the push topic
    (``--config-push-queue``) moves its notices with it.
    """
    return f"{to_pulsar(push_topic)}-notify"


CONFIG_NOTICE = config_notice_topic(CONFIG_PUSH)


# Our extension: where running tool services announce themselves (see
# docs/self-announcing.md).  Non-persistent, in the namespace of config
# (which every 2.1 deployment has), and no upstream peer subscribes.
ANNOUNCE = "non-persistent://tg/config/tool-service-announce"
PROBE = "non-persistent://tg/config/tool-service-probe"
# Ours: a processor that starts serving a request topic says so here
# (schema ServingStarted), so callers fail what they still wait for there.
SERVING = "non-persistent://tg/config/serving-started"


class AnnounceTopics(NamedTuple):
    """Where tool services announce themselves, where readers probe, where serving notices go.

    A processor's defaults are its wire's (``Wire.announce_topics``, :mod:`trustgraph.base.wire`):
    each deployment's own namespaces."""

    announce: str
    probe: str
    serving: str


def tool_service_topics(name: str) -> tuple[str, str]:
    """Request and response topics of a dynamic tool service serving topic ``name``."""
    return (f"non-persistent://tg/request/{name}", f"non-persistent://tg/response/{name}")
