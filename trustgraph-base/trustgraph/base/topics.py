"""Topic names: the generic ``qos/tenant/namespace/name`` form and full Pulsar URLs.

Upstream writes topics in a backend-neutral form (``q0/tg/request/config``) and
maps them to Pulsar URLs at the edge.  Descriptors in config may use either form,
so every place that opens a producer or consumer goes through :func:`to_pulsar`.
"""

from __future__ import annotations

import re

_QOS_SCHEME = {"q0": "non-persistent", "q1": "persistent", "q2": "persistent"}

_URL = re.compile(r"^(persistent|non-persistent)://([^/\s]+)/([^/\s]+)/([^\s]+)$")
_GENERIC = re.compile(r"^(q[0-9])/([^/\s]+)/([^/\s]+)/([^\s]+)$")


class TopicError(ValueError):
    """A string that is neither a Pulsar topic URL nor a generic topic name."""


def to_pulsar(name: str) -> str:
    """Return the Pulsar URL for ``name``; URLs pass through unchanged.

    Raises :class:`TopicError` for anything else, so a typo in a descriptor is
    reported when it is loaded rather than as a broker error at first use.
    """
    if not isinstance(name, str) or not name:
        raise TopicError(f"topic must be a non-empty string, got {name!r}")
    if "://" in name:
        if not _URL.match(name):
            raise TopicError(
                f"{name!r} is not a Pulsar topic URL "
                "(expected persistent://tenant/namespace/topic or non-persistent://...)"
            )
        return name
    m = _GENERIC.match(name)
    if not m:
        raise TopicError(
            f"{name!r} is not a topic (expected a Pulsar URL or q0|q1|q2/tenant/namespace/topic)"
        )
    qos, tenant, namespace, rest = m.groups()
    scheme = _QOS_SCHEME.get(qos)
    if scheme is None:
        raise TopicError(f"{name!r}: unknown quality of service {qos!r} (use q0, q1 or q2)")
    return f"{scheme}://{tenant}/{namespace}/{rest}"


def is_topic(name: str) -> bool:
    """True when ``name`` is a usable topic in either form."""
    try:
        to_pulsar(name)
    except TopicError:
        return False
    return True


# Well-known topics of WIRE.md section 2.
CONFIG_REQUEST = "non-persistent://tg/request/config"
CONFIG_RESPONSE = "non-persistent://tg/response/config"
CONFIG_PUSH = "persistent://tg/config/config"
FLOW_REQUEST = "non-persistent://tg/request/flow"
FLOW_RESPONSE = "non-persistent://tg/response/flow"


def tool_service_topics(topic: str) -> tuple[str, str]:
    """Request and response topics of a dynamic tool service called ``topic``."""
    return (
        f"non-persistent://tg/request/{topic}",
        f"non-persistent://tg/response/{topic}",
    )
