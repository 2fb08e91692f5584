"""Calling tool services through the gateway (``POST /api/v1/tool-service``).

This is how a person tries a tool service without an agent or an LLM
(``tg-invoke-tool-service``), and how a non-Python program reaches one.  The
request body names either

* a **tool**: ``{"tool": "<tool name>", "arguments": {...}, "user": "..."}``;
  the tool is looked up by its ``name`` among the ``tool`` config items of
  type ``tool-service``, resolved against their ``tool-service`` descriptors
  exactly as the agent resolves them, and called with the tool's config
  values; or
* a **service**: ``{"service": "<tool-service id>", "config": {...},
  "arguments": {...}, "user": "..."}``; the ``tool-service/<id>`` descriptor
  gives the queues and ``config`` is sent as given.

``user`` defaults to ``"trustgraph"``.  The answer is ``{"response": text}``
(streamed chunks joined) or ``{"error": {"type", "message"}}``: the service's
own error, or ``gateway-error`` for an unknown or misconfigured tool (the
message then carries the descriptor problem), a bad body, or ``Timeout``.

Calls go through the shared pool :class:`trustgraph.base.ToolServiceClients`
(one client per request/response queue pair, created on first use, shared by
every call); clients of queues that leave the config are closed once their
calls finish.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from trustgraph.base import PubSub, ToolServiceClients, ToolServiceError
from trustgraph.base.pubsub import PubSubError
from trustgraph.base.tool_descriptors import (
    TOOL_SERVICE_TYPE,
    ResolvedToolService,
    ToolServiceDescriptor,
    parse_tool_service,
    resolve_tool_services,
)
from trustgraph.base.topics import TopicError

from .dispatch import CLOSED_DURING_CALL, timeout_error
from .translators import DEFAULT_USER, JsonObject, error_body, gateway_error

logger = logging.getLogger(__name__)

OnChunk = Callable[[str], Awaitable[None]]


class ToolServices:
    """The tool and tool-service descriptors of the current config, and their clients."""

    def __init__(self, pubsub: PubSub, *, timeout: float) -> None:
        self.pubsub = pubsub
        self.timeout = timeout
        self._tools: dict[str, ResolvedToolService] = {}
        self._services: dict[str, ToolServiceDescriptor] = {}
        self._service_errors: dict[str, str] = {}
        self._tool_errors: dict[str, list[str]] = {}
        self.errors: list[str] = []
        self.clients = ToolServiceClients(pubsub, name="api-gateway")
        self._closing: set[asyncio.Task] = set()

    # -- config --------------------------------------------------------------------
    def update(self, config: dict[str, dict[str, str]]) -> None:
        """Resolve the ``tool`` and ``tool-service`` sections of a config push."""
        services = config.get("tool-service") or {}
        tools = config.get("tool") or {}
        resolved, errors = resolve_tool_services(services, tools)
        names = _tool_names(tools)

        by_name: dict[str, ResolvedToolService] = {}
        messages = [str(e) for e in errors]
        for key, tool in resolved.items():
            other = by_name.get(tool.name)
            if other is not None:
                messages.append(f"tool/{key}: field 'name': duplicate tool name {tool.name!r} "
                                f"(tool/{other.key} has it too; calls by name use tool/{other.key})")
                continue
            by_name[tool.name] = tool
        tool_errors: dict[str, list[str]] = {}
        for e in errors:
            if e.kind == "tool":
                tool_errors.setdefault(names.get(e.key, e.key), []).append(str(e))

        good: dict[str, ToolServiceDescriptor] = {}
        broken: dict[str, str] = {}
        for key, raw in services.items():
            parsed = parse_tool_service(key, raw)
            if isinstance(parsed, ToolServiceDescriptor):
                good[key] = parsed
            else:
                broken[key] = str(parsed)

        # The agent's own checks cover the built-in tool types too (unknown
        # type, unknown mcp-tool key, ...): report those as well, so that
        # tg-show-tools shows everything the agent will skip.
        for message in _agent_descriptor_errors(config):
            if message not in messages:
                messages.append(message)

        self._tools, self._tool_errors = by_name, tool_errors
        self._services, self._service_errors = good, broken
        self.errors = messages
        logger.info("Tool services: %d tools, %d services, %d descriptor errors",
                    len(by_name), len(good), len(messages))
        for message in messages:
            logger.warning("Descriptor error: %s", message)

        in_use = frozenset(ToolServiceClients.key(d.request_queue, d.response_queue)
                           for d in good.values())
        # Clients of services no longer described close once their calls finish.
        task = asyncio.ensure_future(self.clients.keep(in_use))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def stop(self) -> None:
        """Close every client; calls still waiting end with an error at once."""
        await asyncio.gather(*self._closing, return_exceptions=True)
        await self.clients.close()

    # -- calls ---------------------------------------------------------------------
    def _target(self, body: Any) -> tuple[str, str, Any] | JsonObject:
        """``(request queue, response queue, config)`` of a call, or its error JSON."""
        if not isinstance(body, dict):
            return gateway_error("the request must be a JSON object")
        if body.get("tool") is not None:
            name = body["tool"]
            tool = self._tools.get(name) if isinstance(name, str) else None
            if tool is None:
                problems = self._tool_errors.get(name, []) if isinstance(name, str) else []
                detail = f": {'; '.join(problems)}" if problems else ""
                return gateway_error(f"Unknown tool '{name}'{detail}")
            return tool.request_queue, tool.response_queue, tool.config
        if body.get("service") is not None:
            sid = body["service"]
            svc = self._find_service(sid) if isinstance(sid, str) else None
            if svc is None:
                if isinstance(sid, str) and sid in self._service_errors:
                    problem = self._service_errors[sid]
                    return gateway_error(f"Tool service '{sid}' is misconfigured: {problem}")
                return gateway_error(f"Unknown tool service '{sid}'")
            config = body.get("config")
            if config is not None and not isinstance(config, dict):
                return gateway_error("'config' must be a JSON object")
            return svc.request_queue, svc.response_queue, config or {}
        return gateway_error("the request needs 'tool' (a tool name) or 'service' (a tool-service id)")

    def _find_service(self, sid: str) -> ToolServiceDescriptor | None:
        svc = self._services.get(sid)
        if svc is None:
            # Tools name services by config key; the descriptor's own id is accepted too.
            svc = next((s for s in self._services.values() if s.id == sid), None)
        return svc

    async def call(self, body: Any, on_chunk: OnChunk | None = None) -> JsonObject:
        """Run one tool-service call: ``{"response": text}`` or ``{"error": {...}}``.

        ``on_chunk`` (the websocket) receives each streamed chunk as it
        arrives.  Never raises for anything the body or the service does.
        """
        target = self._target(body)
        if isinstance(target, dict):
            return target
        request_queue, response_queue, config = target
        user = body.get("user")
        arguments = body.get("arguments")
        if user is not None and not isinstance(user, str):
            return gateway_error("'user' must be a string")
        if arguments is not None and not isinstance(arguments, dict):
            return gateway_error("'arguments' must be a JSON object")
        logger.debug("Tool-service call on %s", request_queue)
        client = None
        try:
            async with asyncio.timeout(self.timeout), \
                    self.clients.use(ToolServiceClients.key(request_queue, response_queue)) as client:
                text = await client.call_streaming(user or DEFAULT_USER, config, arguments or {},
                                                   on_chunk, timeout=self.timeout)
        except ToolServiceError as e:
            return error_body(e.type, e.message)
        except TimeoutError:
            return timeout_error() if client is None or client.started else gateway_error(CLOSED_DURING_CALL)
        except (PubSubError, TopicError, TypeError) as e:
            logger.warning("Tool-service call on %s failed: %s", request_queue, e)
            return gateway_error(str(e))
        return {"response": text}


def _agent_descriptor_errors(config: dict[str, dict[str, str]]) -> list[str]:
    try:
        from trustgraph.agent.react.registry import descriptor_errors
        return descriptor_errors(config)
    except Exception as e:  # the agent's checks are extra information, never a gateway failure
        logger.warning("Agent descriptor checks unavailable: %s", e)
        return []


def _tool_names(tools: dict[str, str]) -> dict[str, str]:
    """Tool key -> the ``name`` it gives, for tool-service tools whose JSON can be read."""
    names: dict[str, str] = {}
    for key, raw in tools.items():
        try:
            data = json.loads(raw)
        except (TypeError, ValueError):
            continue
        if not isinstance(data, dict) or data.get("type") != TOOL_SERVICE_TYPE:
            continue
        if isinstance(data.get("name"), str):
            names[key] = data["name"]
    return names
