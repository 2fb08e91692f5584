"""MCP tasks: a long tool call answered with a handle the client polls (``io.modelcontextprotocol/tasks``).

The tasks extension of MCP 2026-07-28: a client that declares it in a
request's capabilities (``_meta`` ``clientCapabilities.extensions``) may be
answered, for a ``tools/call``, with a task (``"resultType": "task"``, a
``taskId``, status ``working``) instead of the result; the call goes on, and
the client polls ``tasks/get`` until the task is ``completed`` (with the
tool's result, an ``isError`` one too), ``failed`` (a protocol error) or
``cancelled``, or ends it with ``tasks/cancel``.  The server alone decides
when (the extension says so): mcp-server answers with a task when a call
has not finished within ``--task-after`` seconds (``0``: every call of such
a client); a call that ends sooner is answered as usual, and a client that
does not declare the extension always waits for its result.  Progress
notifications stop once a call is a task (the extension has none for
tasks).  ``server/discover`` lists the extension.

Cancelling a task cancels the call: mcp-server stops waiting for the tool at
once (the request's waiter goes, no retry is made, a result that comes later
is dropped) and the task says ``cancelled``.  The bus has no message that
stops a service's work: a tool service's invocation ends when the deadline
mcp-server sent with the request passes (``--timeout`` from the call's
start; the tool-service base class stops an invocation at its deadline).

Tasks live in this process's memory: a working one as long as its call (which
its timeout bounds: ``--timeout``, or the tool's own), an ended one
:data:`KEEP` seconds more (its ``ttlMs``, from its creation, is null while it
works), at most ``max_tasks`` at once: a new one drops the oldest ended
task, and when every task is still working a call is not made a task (it is
answered when done).  So a restarted
mcp-server knows none of its tasks (``tasks/get`` says the task is unknown),
and replicas behind one address need the client's task requests routed by
their ``Mcp-Name`` header (the task id), which the extension has clients
send for that reason.  A task id is a random UUID: whoever holds it can read
the result or cancel the call, as anyone holding the endpoint's token can
call the tool.

Only the session era (2025-11-25) had tasks in the core protocol, as an
experiment since withdrawn (the extension replaces it); the SDK serves none
of them, so a session-era client's ``tools/call`` is always answered with
its result and ``tasks/*`` are unknown methods there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from trustgraph.base.safety.connections import Summarised

logger = logging.getLogger(__name__)

#: The extension's identifier, in capabilities.
EXTENSION = "io.modelcontextprotocol/tasks"
#: Seconds a call of a client that takes tasks runs before it is answered with one.
TASK_AFTER = 2.0
#: Seconds an ended task is kept for its client to read.
KEEP = 600.0
#: Tasks held at most.
MAX_TASKS = 1000
#: The polling interval suggested to clients (milliseconds).
POLL_MS = 1000

Call = Callable[[], Awaitable[types.CallToolResult]]


class UpdateTaskParams(types.RequestParams):
    """``tasks/update``'s params (answers to a task's input requests; ours never asks for input)."""

    task_id: str
    input_responses: dict[str, Any] | None = None


@dataclass
class _Task:
    id: str
    call: asyncio.Task
    created: float
    status: str = "working"
    updated: float = 0.0
    ended: float | None = None
    message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None

    def wire(self) -> dict[str, Any]:
        """The task as the extension's ``DetailedTask`` (without ``resultType``)."""
        out: dict[str, Any] = {"taskId": self.id, "status": self.status, "createdAt": _iso(self.created),
                               "lastUpdatedAt": _iso(self.updated or self.created),
                               "ttlMs": None if self.ended is None else int((self.ended - self.created + KEEP) * 1000),
                               "pollIntervalMs": POLL_MS}
        if self.message:
            out["statusMessage"] = self.message
        if self.result is not None:
            out["result"] = self.result
        if self.error is not None:
            out["error"] = self.error
        return out


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def takes_tasks(ctx: Any) -> bool:
    """Whether this request's client declared the tasks extension (2026-07-28 requests only)."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = ctx.session.client_capabilities
    return bool(capabilities is not None and capabilities.extensions is not None
                and EXTENSION in capabilities.extensions)


class TaskBoard:
    """The tasks of one mcp-server: made from calls, polled, cancelled, forgotten after their ttl."""

    def __init__(self, *, after: float = TASK_AFTER, max_tasks: int = MAX_TASKS) -> None:
        self.after = after
        self.max_tasks = max_tasks
        self._tasks: OrderedDict[str, _Task] = OrderedDict()
        self._said = Summarised(logger)

    def __len__(self) -> int:
        return len(self._tasks)

    # -- tools/call -----------------------------------------------------------------
    async def call(self, ctx: Any, call: Call, inline: list[bool]) -> types.CallToolResult | dict[str, Any]:
        """Run ``call``; its result if it ends within :attr:`after` seconds, else a task for it.

        ``inline`` holds one flag, true while the call's own response is still to come (its
        progress notifications are sent only then)."""
        running = asyncio.get_running_loop().create_task(call(), name="mcp-task-call")
        try:
            done, _ = await asyncio.wait({running}, timeout=self.after)
        except asyncio.CancelledError:   # the client left before either: nobody will poll
            running.cancel()
            raise
        if done:
            return running.result()
        self._forget_expired()
        if not self._room():
            self._said(f"MCP tasks at their limit of {self.max_tasks:,}, all working: a call that would be a "
                       "task is answered when it ends")
            return await running
        inline[0] = False
        now = time.time()
        task = _Task(id=str(uuid.uuid4()), call=running, created=now, updated=now, message="The call is running.")
        self._tasks[task.id] = task
        running.add_done_callback(lambda _: self._finished(task))
        logger.debug("tools/call %s is task %s", ctx.request_id, task.id)
        return {"resultType": "task", **task.wire()}

    def _finished(self, task: _Task) -> None:
        if task.status != "working":   # cancelled: what it came to is not the client's any more
            return
        task.updated = task.ended = time.time()
        call = task.call
        if call.cancelled():   # cancelled by mcp-server stopping
            task.status, task.message = "cancelled", "mcp-server stopped before the call ended."
        elif (e := call.exception()) is not None:
            logger.warning("MCP task %s failed: %s: %s", task.id, type(e).__name__, e)
            task.status, task.message = "failed", f"The call failed: {type(e).__name__}"
            task.error = {"code": INTERNAL_ERROR, "message": f"the call failed: {type(e).__name__}"}
        else:
            task.status = "completed"
            task.message = "The tool answered with an error." if call.result().is_error else "The tool answered."
            task.result = call.result().model_dump(by_alias=True, mode="json", exclude_none=True)

    def _room(self) -> bool:
        """Make room for one more task: drop the oldest finished one when full; False if all work."""
        if len(self._tasks) < self.max_tasks:
            return True
        oldest = next((k for k, t in self._tasks.items() if t.ended is not None), None)
        if oldest is None:
            return False
        del self._tasks[oldest]
        return True

    def _forget_expired(self) -> None:
        now = time.time()
        for key in [k for k, t in self._tasks.items() if t.ended is not None and now >= t.ended + KEEP]:
            del self._tasks[key]

    # -- tasks/get, tasks/cancel, tasks/update ------------------------------------------------
    def _task(self, ctx: Any, task_id: str) -> _Task:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            raise MCPError(code=METHOD_NOT_FOUND, message="Method not found", data=ctx.method)
        if not takes_tasks(ctx):
            raise MCPError(code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                           message=f"{ctx.method} needs the {EXTENSION} extension in the request's client "
                                   "capabilities",
                           data={"requiredCapabilities": {"extensions": {EXTENSION: {}}}})
        self._forget_expired()
        task = self._tasks.get(task_id)
        if task is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Task not found: {task_id[:64]!r} is not a task of this "
                                                        "server (never made, expired, or made before it restarted)")
        return task

    async def get(self, ctx: Any, params: types.GetTaskRequestParams) -> dict[str, Any]:
        return self._task(ctx, params.task_id).wire()

    async def cancel(self, ctx: Any, params: types.CancelTaskRequestParams) -> dict[str, Any]:
        task = self._task(ctx, params.task_id)
        if task.status == "working":
            task.status, task.updated = "cancelled", time.time()
            task.ended = task.updated
            task.message = "Cancelled by the client; the call was cancelled."
            task.call.cancel()
            logger.debug("MCP task %s cancelled by its client", task.id)
        return {}

    async def update(self, ctx: Any, params: UpdateTaskParams) -> dict[str, Any]:
        task = self._task(ctx, params.task_id)
        logger.debug("tasks/update for %s ignored: it asks for no input (%s)", task.id, task.status)
        return {}

    async def stop(self) -> None:
        """Cancel the calls still running (mcp-server is stopping)."""
        calls = [t.call for t in self._tasks.values() if not t.call.done()]
        for c in calls:
            c.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*calls, return_exceptions=True)
