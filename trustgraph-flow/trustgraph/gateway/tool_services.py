"""Calling tool services through the gateway (``POST /api/v1/tool-service``), and the tool catalog.

This is how a person tries a tool service without an agent or an LLM
(``tg-invoke-tool-service``), and how a non-Python program reaches one.  The
request body names either

* a **tool**: ``{"tool": "<tool name>", "arguments": {...}, "user": "..."}``;
  the tool is looked up by its ``name`` in the tool catalog (built from
  config exactly as the agent builds it) and called with its config values;
  only ``tool-service`` tools can be called this way; or
* a **service**: ``{"service": "<tool-service id>", "config": {...},
  "arguments": {...}, "user": "..."}``; the ``tool-service/<id>`` descriptor
  gives the queues and ``config`` is sent as given.

``user`` defaults to ``"trustgraph"``.  A call runs through
:mod:`trustgraph.catalog.calling`, as the agent's and the MCP server's do,
so a tool's arguments are checked against its schema first, and a call gets
the answer or the refusal it gets there.  The answer is ``{"response":
text}`` (streamed chunks joined) or ``{"error": {"type", "message"}}``:
``tool-argument-error`` for arguments the tool's schema refuses (nothing is
sent), the service's own error, ``tool-service-unavailable`` at once when
nothing would answer (no live replica of an announced service, or no
consumer on the request queue as the broker counts it), ``tool-timeout``,
``tool-call-lost`` (its service restarted mid-call), or ``gateway-error``
for an unknown or misconfigured tool (the message then carries the
catalog's descriptor problem) or a bad body.  A call by service id has no
tool schema: its arguments are passed as given, for the service to check.

``GET /api/v1/tool-catalog`` serves :meth:`Catalog.to_json` (what
``tg-show-tools`` shows) and ``GET /api/v1/tool-service/errors`` the list of
descriptor problems alone.

Calls go through the shared pool :class:`trustgraph.base.ToolServiceClients`
(one client per request/response queue pair, created on first use, shared by
every call); clients of queues that leave the config are closed once their
calls finish.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError
from trustgraph.base import PubSub, ToolServiceClients
from trustgraph.base.messaging.unserved import UnservedTopics
from trustgraph.base.tool_services.service_directory import ServiceDirectory
from trustgraph.catalog import TOOL_SERVICE_TYPE, Catalog, ToolServiceDescriptor, build_catalog
from trustgraph.catalog.calling import CallableTool, CallResult, call_service, call_tool

from .translators import DEFAULT_USER, JsonObject, error_body, gateway_error

logger = logging.getLogger(__name__)

OnChunk = Callable[[str], Awaitable[None]]


class ToolServices:
    """The tool catalog (config and announced services), and the clients that call its services."""

    def __init__(self, pubsub: PubSub, *, timeout: float, directory: ServiceDirectory | None = None,
                 unserved: UnservedTopics | None = None) -> None:
        self.pubsub = pubsub
        self.timeout = timeout
        self.directory = directory
        self.catalog = Catalog()
        self.configured: frozenset[str] = frozenset()   # tool-service ids in config
        self.clients = ToolServiceClients(pubsub, name="api-gateway",
                                          liveness=directory.live_for if directory is not None else None,
                                          unserved=unserved)
        self._closing: set[asyncio.Task] = set()
        # The catalog's tools with their implementations, built on first call: each keeps its
        # compiled argument schema from one call to the next.
        self._callable: dict[str, CallableTool] = {}

    @property
    def errors(self) -> list[str]:
        """The catalog's descriptor problems, one line each."""
        return [str(e) for e in self.catalog.errors]

    # -- config --------------------------------------------------------------------
    def update(self, config: dict[str, dict[str, str]], announced: Mapping[str, Any] | None = None) -> None:
        """Build the catalog of the config and the announced services, and swap it in."""
        known = set(self.errors)
        catalog = build_catalog(config, announced)
        warnings = catalog.new_warnings(self.catalog)
        self.catalog = catalog
        self._callable = {}
        self.configured = frozenset(config.get("tool-service") or {})
        logger.info("Tool catalog: %d tools, %d services (%d announced), %d descriptor errors",
                    len(catalog.tools), len(catalog.services), len(catalog.announced), len(catalog.errors))
        for error in catalog.errors:
            if str(error) not in known:
                logger.warning("Descriptor error: %s", error)
        for warning in warnings:
            logger.warning("Descriptor warning: %s", warning)
        # Clients of services no longer described close once their calls finish.
        task = asyncio.ensure_future(self.clients.keep(catalog.service_queue_pairs))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def stop(self) -> None:
        """Close every client; calls still waiting end with an error at once."""
        await asyncio.gather(*self._closing, return_exceptions=True)
        await self.clients.close()

    # -- what is there --------------------------------------------------------------
    def live(self, service: ToolServiceDescriptor) -> bool | None:
        """Whether a replica of ``service`` runs (None: it never announced itself)."""
        if self.directory is None:
            return None
        return self.directory.live_for(service.id, service.queues[0])

    def catalog_json(self) -> JsonObject:
        """``GET /api/v1/tool-catalog``: the catalog, each tool with whether its service is live."""
        out = self.catalog.to_json()
        for entry in out["tools"]:
            tool = self.catalog.tools.get(entry.get("name", "")) if not entry["errors"] else None
            if tool is not None and tool.key == entry["key"] and tool.service is not None:
                entry["live"] = self.live(tool.service)
        return out

    def services_json(self) -> list[JsonObject]:
        """``GET /api/v1/tool-services``: every known service, where it comes from, and its replicas."""
        known = {s["id"]: s for s in (self.directory.snapshot() if self.directory is not None else [])}
        out = []
        for sid in sorted(set(self.catalog.services) | set(known)):
            svc = self.catalog.services.get(sid)
            seen = known.get(sid)
            source = ("configured+announced" if sid in self.configured and seen else
                      "configured" if sid in self.configured else "announced")
            entry: JsonObject = {"id": sid, "source": source,
                                 "live": seen["live"] if seen is not None else None,
                                 "replicas": seen["replicas"] if seen is not None else [],
                                 "last-heartbeat-seconds-ago":
                                     seen["last-heartbeat-seconds-ago"] if seen is not None else None,
                                 "conflicts": seen.get("conflicts", []) if seen is not None else []}
            if svc is not None:
                entry.update({"request-queue": svc.request_queue, "response-queue": svc.response_queue,
                              **svc.annotations.said(), "timeout": svc.timeout})
            out.append(entry)
        return out

    # -- calls ---------------------------------------------------------------------
    def _target(self, body: CallBody) -> tuple[CallableTool | ToolServiceDescriptor, Any] | JsonObject:
        """``(tool, None)`` or ``(service descriptor, config)`` of a call, or its error JSON."""
        catalog = self.catalog
        if body.tool is not None:
            name = body.tool
            tool = catalog.tools.get(name)
            if tool is None:
                problems = catalog.tool_problems(name)
                detail = f": {'; '.join(str(p) for p in problems)}" if problems else ""
                return gateway_error(f"Unknown tool '{name}'{detail}")
            if tool.service is None:
                return gateway_error(f"Tool '{name}' is of type {tool.type}; only {TOOL_SERVICE_TYPE} "
                                     "tools can be called here")
            callable_tool = self._callable.get(name)
            if callable_tool is None or callable_tool.key != tool.key:
                callable_tool = self._callable[name] = CallableTool.build(tool, self.clients)
            return callable_tool, None
        if body.service is not None:
            sid = body.service
            svc = catalog.find_service(sid)
            if svc is None:
                problems = catalog.problems("tool-service", sid)
                if problems:
                    return gateway_error(f"Tool service '{sid}' is misconfigured: {problems[0]}")
                return gateway_error(f"Unknown tool service '{sid}'")
            return svc, body.config or {}
        return gateway_error("the request needs 'tool' (a tool name) or 'service' (a tool-service id)")

    async def call(self, body: Any, on_chunk: OnChunk | None = None,
                   deadline: float | None = None) -> JsonObject:
        """Run one tool-service call: ``{"response": text}`` or ``{"error": {...}}``.

        ``on_chunk`` (the websocket) receives each streamed chunk as it
        arrives; ``deadline`` is the caller's, if it said.  Never raises for
        anything the body or the service does (an exception of ``on_chunk``,
        the socket gone, is the caller's and is raised).
        """
        try:
            checked = CallBody.model_validate(body)
        except ValidationError as e:
            return gateway_error(_body_problem(e))
        target = self._target(checked)
        if isinstance(target, dict):
            return target
        user, arguments = checked.user, checked.arguments
        what, config = target
        if isinstance(what, CallableTool):
            result = await call_tool(what, arguments, user=user or DEFAULT_USER, flow=None, timeout=self.timeout,
                                     deadline=deadline, on_chunk=on_chunk, last_chunk=True)
        else:
            result = await call_service(self.clients, what, config, arguments, user=user or DEFAULT_USER,
                                        timeout=self.timeout, deadline=deadline, on_chunk=on_chunk)
        return _reply(result)


class CallBody(BaseModel):
    """A ``POST /api/v1/tool-service`` body (see the module); other fields are ignored."""

    model_config = ConfigDict(extra="ignore")

    tool: StrictStr | None = None
    service: StrictStr | None = None
    config: dict[str, Any] | None = None
    arguments: dict[str, Any] | None = None
    user: StrictStr | None = None


#: What each field of a body must be, as the error says it.
_BODY_FIELDS = {"tool": "a string (a tool name)", "service": "a string (a tool-service id)",
                "config": "a JSON object", "arguments": "a JSON object", "user": "a string"}


def _body_problem(e: ValidationError) -> str:
    """The first thing wrong with a body, in one line naming the field."""
    loc = e.errors()[0]["loc"]
    if not loc:
        return "the request must be a JSON object"
    return f"'{loc[0]}' must be {_BODY_FIELDS[str(loc[0])]}"


def _reply(result: CallResult) -> JsonObject:
    """A call's result as the route answers it; a failure with no type of its own is the gateway's."""
    if result.answered:
        return {"response": result.message}
    if not result.error_type:
        return gateway_error(result.message)
    return error_body(result.error_type, result.message)
