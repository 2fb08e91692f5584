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

``user`` defaults to ``"trustgraph"``.  The answer is ``{"response": text}``
(streamed chunks joined) or ``{"error": {"type", "message"}}``: the service's
own error, ``tool-service-unavailable`` at once when nothing would answer
(no live replica of an announced service, or no consumer on the request
queue as the broker counts it), or ``gateway-error`` for an unknown or
misconfigured tool (the message then carries the catalog's descriptor
problem), a bad body, a call lost on its way (its service restarted), or
``Timeout``.  Arguments are passed as given: the service validates its own
inputs (the agent checks the model's against the tool's schema first).

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

from trustgraph.base import PubSub, ToolServiceClients, ToolServiceError, deadlines
from trustgraph.base.pubsub import PubSubError
from trustgraph.base.request_response import CallLost, ClientClosed
from trustgraph.base.service_directory import ServiceDirectory
from trustgraph.base.topics import TopicError
from trustgraph.catalog import TOOL_SERVICE_TYPE, Catalog, ToolServiceDescriptor, build_catalog

from .dispatch import CLOSED_DURING_CALL, timeout_error
from .translators import DEFAULT_USER, JsonObject, error_body, gateway_error

logger = logging.getLogger(__name__)

OnChunk = Callable[[str], Awaitable[None]]


class ToolServices:
    """The tool catalog (config and announced services), and the clients that call its services."""

    def __init__(self, pubsub: PubSub, *, timeout: float, directory: ServiceDirectory | None = None,
                 unserved: Callable[[str], str | None] | None = None) -> None:
        self.pubsub = pubsub
        self.timeout = timeout
        self.directory = directory
        self.catalog = Catalog()
        self.configured: frozenset[str] = frozenset()   # tool-service ids in config
        self.clients = ToolServiceClients(pubsub, name="api-gateway",
                                          liveness=directory.live_for if directory is not None else None,
                                          unserved=unserved)
        self._closing: set[asyncio.Task] = set()

    @property
    def errors(self) -> list[str]:
        """The catalog's descriptor problems, one line each."""
        return [str(e) for e in self.catalog.errors]

    # -- config --------------------------------------------------------------------
    def update(self, config: dict[str, dict[str, str]], announced: Mapping[str, Any] | None = None) -> None:
        """Build the catalog of the config and the announced services, and swap it in."""
        known = set(self.errors)
        catalog = build_catalog(config, announced)
        self.catalog = catalog
        self.configured = frozenset(config.get("tool-service") or {})
        logger.info("Tool catalog: %d tools, %d services (%d announced), %d descriptor errors",
                    len(catalog.tools), len(catalog.services), len(catalog.announced), len(catalog.errors))
        for error in catalog.errors:
            if str(error) not in known:
                logger.warning("Descriptor error: %s", error)
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
                              "idempotent": svc.idempotent, "timeout": svc.timeout})
            out.append(entry)
        return out

    # -- calls ---------------------------------------------------------------------
    def _target(self, body: Any) -> tuple[ToolServiceDescriptor, Any] | JsonObject:
        """``(service descriptor, config)`` of a call, or its error JSON."""
        if not isinstance(body, dict):
            return gateway_error("the request must be a JSON object")
        catalog = self.catalog
        if body.get("tool") is not None:
            name = body["tool"]
            tool = catalog.tools.get(name) if isinstance(name, str) else None
            if tool is None:
                problems = catalog.tool_problems(name) if isinstance(name, str) else []
                detail = f": {'; '.join(str(p) for p in problems)}" if problems else ""
                return gateway_error(f"Unknown tool '{name}'{detail}")
            if tool.service is None:
                return gateway_error(f"Tool '{name}' is of type {tool.type}; only {TOOL_SERVICE_TYPE} "
                                     "tools can be called here")
            return tool.service, dict(tool.config)
        if body.get("service") is not None:
            sid = body["service"]
            svc = catalog.find_service(sid) if isinstance(sid, str) else None
            if svc is None:
                problems = catalog.problems("tool-service", sid) if isinstance(sid, str) else []
                if problems:
                    return gateway_error(f"Tool service '{sid}' is misconfigured: {problems[0]}")
                return gateway_error(f"Unknown tool service '{sid}'")
            config = body.get("config")
            if config is not None and not isinstance(config, dict):
                return gateway_error("'config' must be a JSON object")
            return svc, config or {}
        return gateway_error("the request needs 'tool' (a tool name) or 'service' (a tool-service id)")

    async def call(self, body: Any, on_chunk: OnChunk | None = None,
                   deadline: float | None = None) -> JsonObject:
        """Run one tool-service call: ``{"response": text}`` or ``{"error": {...}}``.

        ``on_chunk`` (the websocket) receives each streamed chunk as it
        arrives; ``deadline`` is the caller's, if it said.  A service known
        to have no live replica is answered at once (``tool-service-unavailable``);
        an idempotent one is retried (``ToolServiceClients.invoke``).  Never
        raises for anything the body or the service does.
        """
        target = self._target(body)
        if isinstance(target, dict):
            return target
        service, config = target
        queues = service.queues
        user = body.get("user")
        arguments = body.get("arguments")
        if user is not None and not isinstance(user, str):
            return gateway_error("'user' must be a string")
        if arguments is not None and not isinstance(arguments, dict):
            return gateway_error("'arguments' must be a JSON object")
        logger.debug("Tool-service call on %s", queues[0])
        limit = deadlines.left(deadline, self.timeout)
        try:
            async with asyncio.timeout(limit):
                text = await self.clients.invoke(service, user or DEFAULT_USER, config, arguments or {},
                                                 timeout=limit, on_chunk=on_chunk)
        except ToolServiceError as e:
            return error_body(e.type, e.message)
        except ClientClosed:
            return gateway_error(CLOSED_DURING_CALL)
        except CallLost as e:  # before TimeoutError, which it is: it ended early, and says why
            return gateway_error(str(e))
        except TimeoutError:
            return timeout_error()
        except (PubSubError, TopicError, TypeError) as e:
            logger.warning("Tool-service call on %s failed: %s", queues[0], e)
            return gateway_error(str(e))
        return {"response": text}
