"""Services that announce themselves: which of them, and which of their tools, the catalog takes.

What a person configured wins over what a service announces with the same id;
the announced-tools policy (:mod:`.policy`) says whose tools are used at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base.descriptors.checks import tool_descriptor
from ..base.descriptors.errors import DescriptorError, load_object
from ..base.descriptors.models import ToolServiceDescriptor
from ..base.descriptors.parsing import parse_item
from ..base.descriptors.reserved_topics import refuse_framework_topics
from .policy import AnnouncedPolicy


def announced_services(announced: Mapping[str, Any], services: dict[str, ToolServiceDescriptor],
                        broken_services: dict[str, DescriptorError], errors: list[DescriptorError],
                        warnings: list[DescriptorError], reserved: Mapping[str, str],
                        policy: AnnouncedPolicy) -> tuple[list[str], list[tuple[str, dict[str, Any]]]]:
    """Add the announced services a person has not configured (in the order they took their
    ids); return the ids used and their tools to build."""
    used: list[str] = []
    tools: list[tuple[str, dict[str, Any]]] = []
    for sid in sorted(announced, key=lambda k: (getattr(announced[k], "since", 0.0), k)):
        a = announced[sid]
        configured = sid in services or sid in broken_services
        if not policy.admits(sid, configured):
            warnings.append(DescriptorError(
                "tool-service", sid, "tools", "the tools this running service announces are not used: the "
                f"announced-tools policy (tool-policy/announced) is {policy.describe()}"))
            continue
        mine = services.get(sid)
        for other in getattr(a, "conflicts", None) or ():
            queue = getattr(other, "request_queue", None)
            if mine is not None and getattr(other, "queues", None) != mine.queues:
                reason = other_queues(queue, mine)
            else:
                reason = (f"other replicas announce this id with another descriptor or other tools ({queue}); "
                          "they are not used")
            warnings.append(DescriptorError("tool-service", sid, "request-queue", reason))
        if not a.descriptor:
            continue  # nothing usable announced (only conflicts, reported above)
        parsed = parse_item("tool-service", ToolServiceDescriptor, sid, a.descriptor or "{}", {"id": sid})
        if not isinstance(parsed, list):
            theirs: dict[str, ToolServiceDescriptor] = {sid: parsed}
            refused: dict[str, DescriptorError] = {}
            refuse_framework_topics(theirs, refused, reserved, errors, " (announced by the service)")
            if refused:
                continue
        if configured:
            if mine is not None and not isinstance(parsed, list) and parsed.queues != mine.queues:
                warnings.append(DescriptorError("tool-service", sid, "request-queue",
                                                other_queues(parsed.request_queue, mine)))
                continue
        elif isinstance(parsed, list):
            errors.extend(DescriptorError(e.kind, e.key, e.field, e.reason + " (announced by the service)")
                          for e in parsed)
            continue
        else:
            services[sid] = parsed
        used.append(sid)
        data = load_object("tool-service", sid, a.tools or "{}")
        if isinstance(data, DescriptorError):
            errors.append(DescriptorError("tool-service", sid, "tools", data.reason + " (announced)"))
            continue
        for key in sorted(data):
            tool = data[key]
            tool = tool_descriptor(sid, tool) if isinstance(tool, dict) else tool
            tools.append((f"{sid}/{key}", tool))
    return used, tools


def other_queues(theirs: str | None, mine: ToolServiceDescriptor) -> str:
    """The warning for a configured descriptor whose queues are not the ones the running service of
    its id serves: both named, since the tools' calls go to the configured one, where that service
    does not listen (a mistyped queue, or a service started with another ``-t/--topic``)."""
    return (f"a running service announces itself under this id with other queues ({theirs}, not this "
            f"descriptor's {mine.request_queue}); the configured descriptor is used, so its tools' calls go "
            "where that service does not listen: make the two agree")
