"""Calling a catalog tool with arguments: the one path every caller takes.

The agent, the MCP server and the gateway's tool-service route (and so
``tg-invoke-tool-service``) all call a tool through :func:`call_tool`, so the
same call gets the same answer, or the same refusal, whoever makes it.  One
call is:

1. the arguments checked against the tool's schema, with the unambiguous
   coercions of :mod:`.arguments` (``"3"`` for an integer: small models and
   ``-a days=3`` both write that); arguments that do not fit are refused
   before anything is sent;
2. the tool's implementation (:mod:`.implementations`, by type) run within
   the call's time: the tool's own ``timeout`` (else its service's, else the
   caller's default), never past the caller's ``deadline``;
3. streamed chunks passed to ``on_chunk`` as they arrive;
4. whatever happened mapped to one :class:`Outcome`, each with one wording
   (:class:`CallResult` ``message``) and one wire error ``type``.

A caller words the outcome for its own reader around that message (the
agent tells the model what to do next; the MCP server and the gateway pass
it on as it is), and never needs to know which exceptions a tool raises.
An exception raised by the caller's own ``on_chunk`` (its client went away)
is the caller's, and is raised, not mapped.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from ..base.descriptors.arguments import ArgumentError
from ..base.descriptors.models import ToolServiceDescriptor
from ..base.formats.text import as_text
from ..base.messaging import deadlines, tracing
from ..base.messaging.request_response import CallLost, ClientClosed, Unserved
from ..base.tool_services.tool_service_client import (
    UNAVAILABLE,
    ServiceUnavailable,
    ToolServiceClients,
    ToolServiceError,
)
from .build import CatalogTool
from .implementations import BUILDERS, Builder, CallContext, ToolFailed, ToolImpl

logger = logging.getLogger(__name__)

OnChunk = Callable[[str], "Awaitable[None] | None"]


class Outcome(StrEnum):
    """How a call ended."""

    ANSWERED = "answered"
    REFUSED = "refused"          # the arguments do not fit the tool's schema: nothing was sent
    FAILED = "failed"            # the tool answered with an error
    UNAVAILABLE = "unavailable"  # nothing would answer: its service is not running, or no flow is
    TIMED_OUT = "timed-out"      # no answer within the call's time
    LOST = "lost"                # its service's replica or the broker connection went mid-call


#: The wire error ``type`` of each failing outcome (a failed tool keeps its service's own).
ERROR_TYPES: Mapping[Outcome, str] = {
    Outcome.REFUSED: "tool-argument-error",
    Outcome.FAILED: "tool-error",
    Outcome.UNAVAILABLE: UNAVAILABLE,
    Outcome.TIMED_OUT: "tool-timeout",
    Outcome.LOST: "tool-call-lost",
}


@dataclass(frozen=True)
class CallResult:
    """What one call gave: the answer text, or what went wrong in one message.

    ``error_type`` is the wire error type (``""`` when answered); ``text`` is
    the one line a caller that shows failures as ``type: message`` prints.
    """

    outcome: Outcome
    message: str
    error_type: str = ""
    elapsed: float = 0.0
    timeout: float = 0.0

    @property
    def answered(self) -> bool:
        return self.outcome is Outcome.ANSWERED

    @property
    def text(self) -> str:
        if self.answered or not self.error_type:
            return self.message
        return f"{self.error_type}: {self.message}"


@dataclass(frozen=True)
class CallableTool(CatalogTool):
    """A catalog tool together with the implementation it is called through."""

    impl: ToolImpl | None = None

    @classmethod
    def of(cls, entry: CatalogTool, impl: ToolImpl | None) -> CallableTool:
        return cls(**{f.name: getattr(entry, f.name) for f in fields(CatalogTool)}, impl=impl)

    @classmethod
    def build(cls, entry: CatalogTool, clients: ToolServiceClients,
              builders: Mapping[str, Builder] = BUILDERS) -> CallableTool:
        """``entry`` with the implementation of its type (every catalog type has one) from
        ``builders``: 2.1's, or another wire's (the agent's ``self.dialect.tools.builders``)."""
        return cls.of(entry, builders[entry.type](entry, clients))


def check_call(tool: CatalogTool, arguments: Mapping[str, Any]) -> tuple[dict[str, Any], CallResult | None]:
    """The arguments to call ``tool`` with (checked, coerced), or the refusal of them."""
    try:
        return tool.check_arguments(arguments), None
    except ArgumentError as e:
        return {}, CallResult(Outcome.REFUSED, str(e), ERROR_TYPES[Outcome.REFUSED])


async def call_tool(tool: CallableTool, arguments: Mapping[str, Any] | None, *, user: str, flow: Any,
                    timeout: float, deadline: float | None = None, on_chunk: OnChunk | None = None,
                    last_chunk: bool = False) -> CallResult:
    """Call ``tool`` once: check the arguments, run it within its time, map what happened.

    ``timeout`` is the caller's default for a tool that sets none; ``deadline``
    (absolute UNIX time) is when the caller stops waiting.  ``flow`` gives
    the flow's clients, or is None where no flow runs (then only a
    ``tool-service`` tool can be called).  Never raises for anything the
    arguments or the tool do.
    """
    checked, refusal = check_call(tool, arguments or {})
    if refusal is not None:
        logger.debug("Tool %s: arguments refused", tool.name)
        return refusal
    if flow is None and tool.service is None:
        return CallResult(Outcome.UNAVAILABLE, f"tool '{tool.name}' is of type {tool.type}, which needs "
                          "a flow's services, and no flow is running here", ERROR_TYPES[Outcome.UNAVAILABLE])
    assert tool.impl is not None, "a callable tool has its implementation"
    limit = deadlines.left(deadline, tool.timeout or timeout)
    impl = tool.impl

    def invoke(chunk: OnChunk | None) -> Awaitable[Any]:
        ctx = CallContext(user=user, flow=flow, timeout=limit, on_chunk=chunk, last_chunk=last_chunk)
        return impl.invoke(ctx, checked)

    logger.debug("Calling tool %s (%s)", tool.name, tool.type)
    with tracing.span(f"tool call {tool.name}", client=True, trustgraph_tool=tool.name,
                      trustgraph_tool_type=tool.type) as span:
        result = await _run(f"tool '{tool.name}'", invoke, limit, on_chunk)
        _traced(span, result)
    return result


async def call_service(clients: ToolServiceClients, service: ToolServiceDescriptor, config: Mapping[str, Any],
                       arguments: Mapping[str, Any] | None, *, user: str, timeout: float,
                       deadline: float | None = None, on_chunk: OnChunk | None = None,
                       last_chunk: bool = True) -> CallResult:
    """Call a tool service directly, with config values of the caller's (no tool, so no schema:
    the service checks its own arguments); the same time, streaming and outcomes as a tool call."""
    limit = deadlines.left(deadline, service.timeout or timeout)

    def invoke(chunk: OnChunk | None) -> Awaitable[Any]:
        return clients.invoke(service, user, dict(config), dict(arguments or {}), timeout=limit,
                              on_chunk=chunk, last_chunk=last_chunk)

    logger.debug("Calling tool service %s", service.id)
    with tracing.span(f"tool service call {service.id}", client=True, trustgraph_tool_service=service.id) as span:
        result = await _run(f"tool service '{service.id}'", invoke, limit, on_chunk)
        _traced(span, result)
    return result


def _traced(span: Any, result: CallResult) -> None:
    """A tool call's span says how it ended (``trustgraph.outcome``), in error unless answered."""
    tracing.note(span, trustgraph_outcome=result.outcome.value)
    if not result.answered:
        tracing.failed(span, result.text, result.error_type or result.outcome.value)


async def _run(what: str, invoke: Callable[[OnChunk | None], Awaitable[Any]], limit: float,
               on_chunk: OnChunk | None) -> CallResult:
    """Run ``invoke`` within ``limit`` seconds and map its end to an outcome."""
    theirs: list[BaseException] = []   # what the caller's own callback raised

    async def chunk(text: str) -> None:
        try:
            done = on_chunk(text)   # type: ignore[misc]  # only passed when there is one
            if done is not None and inspect.isawaitable(done):
                await done
        except BaseException as e:
            theirs.append(e)
            raise

    started = time.monotonic()

    def result(outcome: Outcome, message: str, error_type: str | None = None) -> CallResult:
        return CallResult(outcome, message, ERROR_TYPES.get(outcome, "") if error_type is None else error_type,
                          elapsed=time.monotonic() - started, timeout=limit)

    try:
        async with asyncio.timeout(limit):
            answer = await invoke(chunk if on_chunk is not None else None)
    except Unserved as e:  # before TimeoutError, which it is: nothing would have answered
        logger.info("%s: %s", what, e)
        return result(Outcome.UNAVAILABLE, str(e))
    except (CallLost, ClientClosed) as e:  # before TimeoutError too: it ended early, and says why
        elapsed = time.monotonic() - started
        logger.info("%s: call lost after %.1fs: %s", what, elapsed, e)
        return result(Outcome.LOST, f"the call of {what} was lost after {elapsed:.1f} seconds ({e}): "
                      "its service stopped or restarted")
    except TimeoutError as e:
        if theirs and theirs[-1] is e:
            raise
        logger.info("%s did not answer within %.3gs", what, limit)
        return result(Outcome.TIMED_OUT, f"{what} did not answer within {max(limit, 0):.3g} seconds")
    except ServiceUnavailable as e:
        logger.info("%s: %s", what, e.message)
        return result(Outcome.UNAVAILABLE, e.message)
    except (ToolServiceError, ToolFailed) as e:   # the service's own error, with its type
        logger.info("%s failed: %s", what, e)
        return result(Outcome.FAILED, e.message, e.type)
    except Exception as e:
        if theirs and theirs[-1] is e:
            raise
        logger.info("%s failed: %s", what, e)
        return result(Outcome.FAILED, str(e) or type(e).__name__, "")
    return result(Outcome.ANSWERED, as_text(answer), "")
