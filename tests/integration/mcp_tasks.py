"""The MCP tasks extension (``io.modelcontextprotocol/tasks``) on the SDK's own client, for tests.

The SDK (mcp 2.3) has the extension machinery (a ``ClientExtension`` whose
``ResultClaim`` takes the ``"resultType": "task"`` shape of a ``tools/call``
result) but not the tasks extension itself, so the tests write that much of
a client here, from the extension's 2026-07-28 text: ``Tasks()`` declares it
and claims the task result, ``get`` and ``cancel`` send ``tasks/get`` and
``tasks/cancel`` (with ``Mcp-Name``, the task id), and ``until_done`` polls
a task to its end.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, ClassVar, Literal

import mcp_types as types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from pydantic import ConfigDict

EXTENSION = "io.modelcontextprotocol/tasks"
DONE = ("completed", "failed", "cancelled")


class TaskFields(types.Result):
    """What every shape of a task says (the extension's ``Task``)."""

    model_config = ConfigDict(extra="allow")
    task_id: str
    status: str
    created_at: str
    last_updated_at: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    status_message: str | None = None


class CreatedTask(TaskFields):
    """``CreateTaskResult``: what a ``tools/call`` answers instead of its result."""

    result_type: Literal["task"] = "task"


class TaskState(TaskFields):
    """``tasks/get``'s answer (a ``DetailedTask``)."""

    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param: ClassVar[str | None] = "taskId"


class CancelTask(types.Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param: ClassVar[str | None] = "taskId"


async def get(session: Any, task_id: str) -> TaskState:
    return await session.send_request(GetTask(params=TaskParams(task_id=task_id)), TaskState)


async def cancel(session: Any, task_id: str) -> None:
    await session.send_request(CancelTask(params=TaskParams(task_id=task_id)), types.EmptyResult)


async def until_done(session: Any, task_id: str, timeout: float = 60.0) -> TaskState:
    """Poll ``tasks/get`` (at the interval the server suggests) until the task has ended."""
    end = time.monotonic() + timeout
    while True:
        state = await get(session, task_id)
        if state.status in DONE:
            return state
        if time.monotonic() > end:
            raise TimeoutError(f"task {task_id} still {state.status} after {timeout:g}s")
        await asyncio.sleep(min((state.poll_interval_ms or 1000) / 1000, 1.0))


async def _resolve(task: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
    state = await until_done(ctx.session, task.task_id)
    if state.status != "completed" or state.result is None:
        raise RuntimeError(f"task {task.task_id} ended {state.status}: {state.status_message or state.error}")
    return types.CallToolResult.model_validate(state.result)


class Tasks(ClientExtension):
    """Declares the extension; ``Client.call_tool`` then polls a task to its result by itself."""

    identifier = EXTENSION

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=_resolve)]
