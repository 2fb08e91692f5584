"""The tool policies, config type ``tool-policy``: which announced tools a catalog may use
(``tool-policy/announced``), and which calls the agent asks a person about first
(``tool-policy/approval``).

``tool-policy/announced``
-------------------------

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

``tool-policy/approval``
------------------------

Which of the agent's tool calls wait for a person's approval
(docs/governing-tools.md): a JSON object ``{"tools": [names], "destructive":
true|false, "expires": seconds}``.  A call needs approval when its tool is
named in ``tools``, or when ``destructive`` is true and the tool *says* it is
destructive (its ``destructive`` annotation, else its service's): an
annotation nobody gave is unknown, and an unknown one is not read as
destructive here (the policy asks about what a tool's author declared, and a
tool that says nothing can be named).  ``expires`` is how long a paused call
may wait for its answer.  The item absent, or any key left out, is
:data:`APPROVAL_DEFAULT`'s: every tool that says it is destructive asks first,
and an approval waits 10 minutes.  An unreadable value is reported, as the
announced policy's problems are, and read as that default until it is fixed.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from ..base.descriptors.annotations import Annotations
from ..base.descriptors.errors import JSON_FIELD, DescriptorError, describe, near_key
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


# -- tool-policy/approval ---------------------------------------------------------------------

APPROVAL_KEY = "approval"
#: How long a paused call waits for its approval when the policy does not say (seconds).
DEFAULT_EXPIRES = 600.0
#: The longest wait a policy may set (a week): the agent remembers each used approval until it expires.
MAX_EXPIRES = 7 * 24 * 3600.0
#: Why a tool needs approval, as ``tg-show-tools`` and the docs say it.
NAMED = "tool-policy/approval names it"
DESTRUCTIVE = "it says it is destructive, and tool-policy/approval asks first for every destructive tool"


@dataclass(frozen=True)
class ApprovalPolicy:
    """``tools``: the tools named; ``destructive``: every tool that says it is destructive too;
    ``expires``: seconds a paused call waits for its approval."""

    tools: frozenset[str] = frozenset()
    destructive: bool = True
    expires: float = DEFAULT_EXPIRES

    def reason(self, name: str, annotations: Annotations) -> str | None:
        """Why a call of tool ``name`` (with these annotations, its service's merged in) needs a
        person's approval, or None when it does not: only a tool that says it is destructive
        counts as one (an unknown annotation claims nothing)."""
        if name in self.tools:
            return NAMED
        if self.destructive and annotations.destructive is True:
            return DESTRUCTIVE
        return None

    def to_json(self) -> dict[str, Any]:
        return {"tools": sorted(self.tools), "destructive": self.destructive, "expires": self.expires}


#: The policy when the item is absent, and while it is unreadable: safe by default.
APPROVAL_DEFAULT = ApprovalPolicy()
_APPROVAL_KEYS = ("tools", "destructive", "expires")


def parse_approval(value: str | None) -> tuple[ApprovalPolicy, DescriptorError | None]:
    """The approval policy a config value says (``None``: the item is absent), and what is wrong
    with it (then the policy is :data:`APPROVAL_DEFAULT`)."""
    if value is None:
        return APPROVAL_DEFAULT, None

    def bad(field: str, reason: str) -> tuple[ApprovalPolicy, DescriptorError]:
        return APPROVAL_DEFAULT, DescriptorError(
            POLICY_TYPE, APPROVAL_KEY, field,
            f"{reason} (read as the default, {{\"tools\": [], \"destructive\": true, \"expires\": "
            f"{DEFAULT_EXPIRES:g}}}, until it is fixed)")

    try:
        data = limits.loads(value)
    except ValueError as e:
        return bad(JSON_FIELD, f"not valid JSON ({e})")
    if not isinstance(data, dict):
        return bad(JSON_FIELD, f"it must be an object such as {{\"tools\": [\"name\"], \"destructive\": true, "
                               f"\"expires\": 600}}, got {describe(data)}")
    for key in data:
        if key not in _APPROVAL_KEYS:
            near = near_key(key, _APPROVAL_KEYS)
            return bad(key, f"unknown key{f' (did you mean {near!r}?)' if near else ''}; the keys are "
                            f"{', '.join(_APPROVAL_KEYS)}")
    tools = data.get("tools", [])
    if not isinstance(tools, list) or not all(isinstance(t, str) and t.strip() for t in tools):
        return bad("tools", f"must be a list of tool names, got {describe(tools)}" if not isinstance(tools, list)
                   else "must be a list of tool names (non-empty strings)")
    destructive = data.get("destructive", APPROVAL_DEFAULT.destructive)
    if not isinstance(destructive, bool):
        return bad("destructive", f"must be true or false, got {json.dumps(destructive)}")
    expires = data.get("expires", DEFAULT_EXPIRES)
    if isinstance(expires, bool) or not isinstance(expires, (int, float)) or not 1 <= expires <= MAX_EXPIRES:
        return bad("expires", f"must be a number of seconds from 1 to {MAX_EXPIRES:g} (a week), got "
                              f"{json.dumps(expires)}")
    return ApprovalPolicy(frozenset(t.strip() for t in tools), destructive, float(expires)), None


def read_approval(config: Mapping[str, Mapping[str, str]]) -> tuple[ApprovalPolicy, DescriptorError | None]:
    """The approval policy of a whole config."""
    return parse_approval((config.get(POLICY_TYPE) or {}).get(APPROVAL_KEY))


def unknown_named(policy: ApprovalPolicy, tools: Collection[str]) -> list[DescriptorError]:
    """A warning for each tool the policy names that is no tool of the catalog (a typo would
    otherwise leave the tool it meant running without approval)."""
    return [DescriptorError(POLICY_TYPE, APPROVAL_KEY, "tools", f"names {name!r}, which is no tool of the catalog "
                                                               "now (a tool of that name will need approval)")
            for name in sorted(policy.tools - set(tools))]
