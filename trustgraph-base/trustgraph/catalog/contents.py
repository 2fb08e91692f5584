"""What a built catalog holds: usable tools, left-out ones, and the catalog itself.

:class:`Catalog` is what :func:`~trustgraph.catalog.build.build_catalog`
returns; it is never changed once built (a reader swaps in a new one on every
config push).  A :class:`CatalogTool` is a tool joined with its service or MCP
server, its argument schema and its config values; a :class:`BrokenTool` is a
``tool`` item that is left out, with why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..base.descriptors.annotations import Annotations
from ..base.descriptors.arguments import (
    ArgumentError,
    ToolArgument,
    arguments_schema,
    check_arguments,
    schema_validator,
)
from ..base.descriptors.errors import DescriptorError, Kind
from ..base.descriptors.models import ExampleCall, McpServer, ToolDescriptor, ToolServiceDescriptor
from ..base.descriptors.parsing import EMPTY
from .policy import APPROVAL_DEFAULT, AnnouncedPolicy, ApprovalPolicy

DEFAULT_GROUPS = ("default",)
ANY_STATE = ("*",)


@dataclass(frozen=True)
class CatalogTool:
    """One usable tool: its descriptor, joined with what it calls.

    ``config`` holds the tool's values for the config params its service
    declares (other extra fields are not sent).  ``source`` says where the
    tool came from (``config`` for a ``tool`` config item).
    """

    key: str
    descriptor: ToolDescriptor
    service_key: str | None = None
    service: ToolServiceDescriptor | None = None
    config: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    mcp: McpServer | None = None
    source: str = "config"

    @property
    def name(self) -> str:
        return self.descriptor.name

    @property
    def description(self) -> str:
        return self.descriptor.description

    @property
    def type(self) -> str:
        return self.descriptor.kind

    @property
    def arguments(self) -> tuple[ToolArgument, ...]:
        return self.descriptor.tool_arguments()

    @property
    def examples(self) -> tuple[str, ...]:
        """Questions a user might ask that this tool answers (may be empty): the example
        questions, and the questions of the example calls, in the order declared."""
        return tuple(e if isinstance(e, str) else e.question for e in self.descriptor.examples
                     if isinstance(e, str) or e.question)

    @property
    def example_calls(self) -> tuple[ExampleCall, ...]:
        """The declared example calls: arguments a caller gives the tool (and their question)."""
        return tuple(e for e in self.descriptor.examples if isinstance(e, ExampleCall))

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(self.descriptor.group or DEFAULT_GROUPS)

    @property
    def applicable_states(self) -> tuple[str, ...]:
        return tuple(self.descriptor.applicable_states or ANY_STATE)

    @property
    def state(self) -> str | None:
        return self.descriptor.state

    @property
    def timeout(self) -> float | None:
        """Seconds one call may take: the tool's own ``timeout``, else its service's."""
        if self.descriptor.timeout is not None:
            return self.descriptor.timeout
        return self.service.timeout if self.service is not None else None

    @property
    def annotations(self) -> Annotations:
        """What the tool says of its effects (``read-only``, ``destructive``, ``idempotent``,
        ``open-world``): its own, else its service's; None where neither says
        (:mod:`trustgraph.base.descriptors.annotations` says how an unknown one reads)."""
        own = self.descriptor.annotations
        return own.over(self.service.annotations) if self.service is not None else own

    @property
    def retries(self) -> bool:
        """Whether a call that may not have run is repeated: the tool is idempotent and does not say it
        is destructive."""
        return self.annotations.retries

    @property
    def queues(self) -> tuple[str, str] | None:
        """The service's (request, response) Pulsar URLs, for a ``tool-service`` tool."""
        return self.service.queues if self.service is not None else None

    @cached_property
    def schema(self) -> dict[str, Any]:
        """The JSON Schema of this tool's arguments object (see ``arguments.py``)."""
        return arguments_schema(self.arguments)

    @cached_property
    def _validator(self) -> Any:
        return schema_validator(self.schema)

    def check_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments to call the tool with (coerced where unambiguous), or :class:`ArgumentError`.

        ``"validate-arguments": false`` on the descriptor passes them through
        unchecked (for pass-through tools whose real schema lives elsewhere).
        """
        if not self.descriptor.validate_arguments:
            return dict(arguments)
        return check_arguments(self.name, arguments, self.arguments, self._validator)

    def argument_problem(self, arguments: Mapping[str, Any]) -> str | None:
        """What is wrong with ``arguments``, or None."""
        try:
            self.check_arguments(arguments)
        except ArgumentError as e:
            return str(e)
        return None

    def describe(self) -> dict[str, Any]:
        """The tool as the ``agent-react`` prompt's ``tools`` variable lists it.

        Upstream's shape, plus ``examples`` when the tool has some: templates
        read the keys they name, so upstream's ignore it.
        """
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "arguments": [{"name": a.name, "type": a.type, "description": a.description}
                          for a in self.arguments],
        }
        if self.examples:
            out["examples"] = list(self.examples)
        return out

    def to_json(self, errors: list[str] | None = None) -> dict[str, Any]:
        """The tool as ``GET /api/v1/tool-catalog`` lists it."""
        out = _descriptor_json(self.key, self.descriptor.model_dump(
            mode="json", by_alias=True, exclude_none=True))
        out["arguments"] = [a.model_dump(mode="json", exclude_none=True, by_alias=True) for a in self.arguments]
        out["input-schema"] = self.schema
        out["source"] = self.source
        # What the tool says of its effects, its service's where it says nothing itself; the
        # annotations nobody gave are left out (unknown, not false).
        out["annotations"] = self.annotations.said()
        if self.service is not None:
            out["service"] = self.service_key
            out["request-queue"] = self.service.request_queue
            out["response-queue"] = self.service.response_queue
            out["config"] = dict(self.config)
        out["errors"] = errors or []
        return out


@dataclass(frozen=True)
class BrokenTool:
    """A ``tool`` item that is left out, with what is known of it and why."""

    key: str
    errors: tuple[DescriptorError, ...]
    data: Mapping[str, Any] | None = None   # the descriptor, when its JSON could be read

    @property
    def name(self) -> str | None:
        name = (self.data or {}).get("name")
        return name.strip() if isinstance(name, str) else None

    def to_json(self) -> dict[str, Any]:
        out = _descriptor_json(self.key, dict(self.data or {}))
        out["source"] = "config"
        out["errors"] = [str(e) for e in self.errors]
        return out


def _descriptor_json(key: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, **{k: v for k, v in fields.items() if k != "key"}}


@dataclass(frozen=True)
class Catalog:
    """The tools of one config, never changed once built (readers swap in a new one)."""

    tools: Mapping[str, CatalogTool] = field(default_factory=lambda: EMPTY)        # usable tools by name
    broken: Mapping[str, BrokenTool] = field(default_factory=lambda: EMPTY)        # tool key -> why it is left out
    services: Mapping[str, ToolServiceDescriptor] = field(default_factory=lambda: EMPTY)   # usable services by config key
    mcp: Mapping[str, McpServer] = field(default_factory=lambda: EMPTY)            # usable MCP servers by config key
    errors: tuple[DescriptorError, ...] = ()
    warnings: tuple[DescriptorError, ...] = ()
    announced: frozenset[str] = frozenset()          # ids of the announced services the catalog uses
    policy: AnnouncedPolicy = AnnouncedPolicy()      # which announced tools it may use (tool-policy/announced)
    approval: ApprovalPolicy = APPROVAL_DEFAULT      # which calls the agent asks about first (tool-policy/approval)

    @property
    def queue_pairs(self) -> frozenset[tuple[str, str]]:
        """The queue pairs the usable tools call: the clients an agent keeps open."""
        return frozenset(t.queues for t in self.tools.values() if t.queues is not None)

    @property
    def service_queue_pairs(self) -> frozenset[tuple[str, str]]:
        """The queue pairs of every usable service, tools or not (a service can be called by id)."""
        return frozenset(s.queues for s in self.services.values())

    def find_service(self, sid: str) -> ToolServiceDescriptor | None:
        """A usable service by config key, else by its descriptor's ``id``."""
        svc = self.services.get(sid)
        if svc is None:
            svc = next((s for s in self.services.values() if s.id == sid), None)
        return svc

    def new_warnings(self, before: Catalog) -> list[DescriptorError]:
        """The warnings this catalog has that ``before`` (the one it replaces) had not: what a
        reader logs, once, on a rebuild (a rebuild for every heartbeat repeats none).  A reader
        logs them because a descriptor that loads with one (a running service of its id serving
        other queues, a misspelled key) was otherwise told to nobody but ``tg-put-config-item``."""
        known = {str(w) for w in before.warnings}
        return [w for w in self.warnings if str(w) not in known]

    def problems(self, kind: Kind, key: str) -> list[DescriptorError]:
        """The errors of one config item."""
        return [e for e in self.errors if e.kind == kind and e.key == key]

    def tool_problems(self, name: str) -> list[DescriptorError]:
        """The errors of the left-out tools that give themselves ``name``."""
        return [e for b in self.broken.values() if b.name == name for e in b.errors]

    def approval_reason(self, tool: CatalogTool) -> str | None:
        """Why the agent asks a person before calling ``tool`` (``tool-policy/approval``), or None."""
        return self.approval.reason(tool.name, tool.annotations)

    def to_json(self) -> dict[str, Any]:
        """Everything a client may show: ``GET /api/v1/tool-catalog``'s body."""
        entries = [*({"sort": t.key, **t.to_json(), "approval": self.approval_reason(t)} for t in self.tools.values()),
                   *({"sort": b.key, **b.to_json()} for b in self.broken.values())]
        entries.sort(key=lambda e: e.pop("sort"))
        services = []
        for key, svc in sorted(self.services.items()):
            services.append({"key": key, **svc.model_dump(mode="json", by_alias=True)})
        return {
            "tools": entries,
            "services": services,
            "mcp": sorted(self.mcp),
            "errors": [str(e) for e in self.errors],
            "warnings": [str(e) for e in self.warnings],
            "announced-tools": self.policy.to_json(),
            "approval-policy": self.approval.to_json(),
        }
