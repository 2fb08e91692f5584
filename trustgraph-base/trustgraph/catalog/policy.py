"""Which announced tools a catalog may use: the config item ``tool-policy/announced``.

A tool service that announces itself is usable at once, with no config step
(docs/self-announcing.md); anything that can publish on the broker can
announce.  The policy says whose announcements the catalog takes tools from.
It is one config item, read here and nowhere else, so the agent, the gateway
and mcp-server (every reader builds its catalog with :func:`build_catalog`)
apply the same one:

* ``"all"`` (the default, also when the item is absent): every announced
  service's tools;
* ``"configured"``: only the announced tools of services a person described in
  config (``tool-service/<id>``); the configured descriptor gives the queues,
  the announcement the tools and the liveness;
* a list of service ids (``["weather-service", ...]``): only those services.

Tools put in config (``tool/<key>``) are never affected.  An unreadable value
is reported and read as ``"configured"``: a typo must not open the catalog to
every announcer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from ..base.descriptors.errors import JSON_FIELD, DescriptorError, describe
from ..base.safety import limits

#: The config type and key of the policy.
POLICY_TYPE = "tool-policy"
POLICY_KEY = "announced"
ALL = "all"
CONFIGURED = "configured"
DEFAULT = ALL


@dataclass(frozen=True)
class AnnouncedPolicy:
    """``mode`` is ``all``, ``configured`` or ``allow`` (then ``allow`` holds the service ids)."""

    mode: str = DEFAULT
    allow: frozenset[str] = frozenset()

    def admits(self, service: str, configured: bool) -> bool:
        """Whether the catalog may use the tools announced by ``service``."""
        if self.mode == ALL:
            return True
        if self.mode == CONFIGURED:
            return configured
        return service in self.allow

    def describe(self) -> str:
        if self.mode == "allow":
            return f"only the services {', '.join(sorted(self.allow)) or '(none)'}"
        return f"{self.mode!r}"

    def to_json(self) -> str | list[str]:
        return sorted(self.allow) if self.mode == "allow" else self.mode


def parse_policy(value: str | None) -> tuple[AnnouncedPolicy, DescriptorError | None]:
    """The policy a config value says (``None``: the item is absent), and what is wrong with it."""
    if value is None:
        return AnnouncedPolicy(), None

    def bad(reason: str) -> tuple[AnnouncedPolicy, DescriptorError]:
        return AnnouncedPolicy(CONFIGURED), DescriptorError(
            POLICY_TYPE, POLICY_KEY, JSON_FIELD,
            f"{reason}; it must be \"all\", \"configured\" or a list of tool-service ids (read as "
            "\"configured\" until it is fixed)")

    try:
        data = limits.loads(value)
    except ValueError as e:
        return bad(f"not valid JSON ({e})")
    if isinstance(data, str):
        if data in (ALL, CONFIGURED):
            return AnnouncedPolicy(data), None
        return bad(f"unknown policy {json.dumps(data)}")
    if isinstance(data, list) and all(isinstance(s, str) and s for s in data):
        return AnnouncedPolicy("allow", frozenset(data)), None
    return bad(f"got {describe(data)}")


def read_policy(config: Mapping[str, Mapping[str, str]]) -> tuple[AnnouncedPolicy, DescriptorError | None]:
    """The policy of a whole config."""
    return parse_policy((config.get(POLICY_TYPE) or {}).get(POLICY_KEY))
