"""The framework's own topics, which no tool service may use.

A descriptor naming one would make the agent publish tool calls on the config
push topic or into a flow's queues; such a service is refused with the topic
and what it is.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...topics import (
    ANNOUNCE,
    CONFIG_NOTICE,
    CONFIG_REQUEST,
    CONFIG_RESPONSE,
    FLOW_REQUEST,
    FLOW_RESPONSE,
    PROBE,
    SERVING,
    TopicError,
    config_push_queue,
    to_pulsar,
)
from ..wire import WIRES, wire_for
from .errors import DescriptorError, load_object
from .models import REQUEST_QUEUE, RESPONSE_QUEUE, ToolServiceDescriptor

#: What each of a wire's announce topics is (``AnnounceTopics``' order).
_ANNOUNCE_TOPICS = ("the tool-service announcements", "the tool-service probes", "the serving notices")


def framework_topics(config: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """The topics of the framework itself (Pulsar URL -> what it is), which no tool service may use.

    A descriptor naming one would make the agent publish tool calls on the
    config push topic or into a flow's queues.
    """
    reserved = {CONFIG_REQUEST: "config-svc's requests", CONFIG_RESPONSE: "config-svc's replies",
                to_pulsar(config_push_queue): "the config pushes", CONFIG_NOTICE: "the config notices",
                FLOW_REQUEST: "config-svc's flow requests",
                FLOW_RESPONSE: "config-svc's flow replies", ANNOUNCE: "the tool-service announcements",
                PROBE: "the tool-service probes", SERVING: "the serving notices"}
    # Another wire's, where they differ from ours, say whose they are.
    for name in WIRES:
        for topic, what in zip(wire_for(name).announce_topics(), _ANNOUNCE_TOPICS, strict=True):
            reserved.setdefault(topic, f"{what} ({name} wire)")
    for processor, raw in (config.get("active-flow") or {}).items():
        data = load_object("tool", processor, raw)
        for flow, definition in (data.items() if isinstance(data, dict) else ()):
            for spec, topic in (definition.items() if isinstance(definition, dict) else ()):
                try:
                    reserved.setdefault(to_pulsar(topic), f"{processor}'s '{spec}' in flow {flow}")
                except TopicError:
                    continue
    return reserved


def _in_config_namespace(topic: str) -> str | None:
    """What a topic of the ``tg/config`` or ``tg/notify`` namespace is, whichever of its topics it is.

    Only the framework publishes there (2.1's pushes, our announcements,
    probes, 2.11's config notices, and whatever a later version adds), so the
    whole namespace is its own; ``tg/notify`` is where 2.11 broadcasts, and
    where our announcements go under ``--wire 2.11``.
    """
    path = topic.partition("://")[2]
    for kind in ("config", "notify"):
        if path.startswith(f"tg/{kind}/"):
            return f"the framework's {kind} namespace, tg/{kind}"
    return None


def framework_topic_problems(sid: str, svc: ToolServiceDescriptor, reserved: Mapping[str, str],
                             note: str = "") -> list[DescriptorError]:
    """A problem for each of the service's queues that is a framework topic, naming it and what it is."""
    out = []
    for field_name, topic in ((REQUEST_QUEUE, svc.queues[0]), (RESPONSE_QUEUE, svc.queues[1])):
        what = reserved.get(topic) or _in_config_namespace(topic)
        if what is not None:
            out.append(DescriptorError("tool-service", sid, field_name,
                                       f"{topic!r} is a topic of the framework itself ({what}); a tool service "
                                       f"needs topics of its own{note}"))
    return out


def refuse_framework_topics(services: dict[str, ToolServiceDescriptor], broken: dict[str, DescriptorError],
                             reserved: Mapping[str, str], errors: list[DescriptorError],
                             note: str = "") -> None:
    """Move every service whose request or response queue is a framework topic from ``services`` to
    ``broken``, each reported in ``errors`` with the topic and what it is."""
    for sid in sorted(services):
        problems = framework_topic_problems(sid, services[sid], reserved, note)
        if problems:
            errors.extend(problems)
            broken.setdefault(sid, problems[0])
            del services[sid]
