"""mcp-server's tasks (``trustgraph.mcp_server.tasks``): when a call becomes one, and what a task says."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from trustgraph.mcp_server import tasks
from trustgraph.mcp_server.tasks import EXTENSION, TaskBoard


def ctx(version: str = "2026-07-28", extensions: dict | None = None, method: str = "tools/call"):
    """What a handler's context carries that the board reads."""
    caps = types.ClientCapabilities(extensions={EXTENSION: {}} if extensions is None else extensions)
    return SimpleNamespace(protocol_version=version, method=method, request_id=1,
                           session=SimpleNamespace(client_capabilities=caps))


def result(text: str, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


def ask(task_id: str):
    return types.GetTaskRequestParams(task_id=task_id)


class Gate:
    """A call that ends when the test says, noting whether it was cancelled."""

    def __init__(self, answer: types.CallToolResult | Exception) -> None:
        self.answer = answer
        self.go = asyncio.Event()
        self.cancelled = False

    async def __call__(self) -> types.CallToolResult:
        try:
            await self.go.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


async def settled(board: TaskBoard, task_id: str) -> dict:
    for _ in range(200):
        state = await board.get(ctx(), ask(task_id))
        if state["status"] != "working":
            return state
        await asyncio.sleep(0.01)
    raise AssertionError(f"task {task_id} still working")


def test_only_a_2026_request_that_declares_the_extension_takes_tasks():
    assert tasks.takes_tasks(ctx())
    assert not tasks.takes_tasks(ctx(extensions={}))
    assert not tasks.takes_tasks(ctx(version="2025-11-25"))


async def test_a_call_that_ends_in_time_is_answered_and_a_longer_one_is_a_task_that_completes():
    board = TaskBoard(after=0.2)
    inline = [True]
    quick = Gate(result("quick"))
    quick.go.set()
    assert await board.call(ctx(), quick, inline) == result("quick")
    assert inline == [True] and len(board) == 0

    slow = Gate(result("slow, with an error", error=True))
    handle = await board.call(ctx(), slow, inline)
    assert inline == [False]   # its progress notifications stop here
    assert handle["resultType"] == "task" and handle["status"] == "working" and handle["ttlMs"] is None
    assert handle["pollIntervalMs"] == tasks.POLL_MS
    state = await board.get(ctx(), ask(handle["taskId"]))
    assert (state["status"], state["createdAt"]) == ("working", handle["createdAt"])
    slow.go.set()
    state = await settled(board, handle["taskId"])
    # A tool's error result is a completed task (the extension says so), with the result whole.
    assert state["status"] == "completed" and state["result"]["isError"] is True
    assert state["result"]["content"] == [{"type": "text", "text": "slow, with an error"}]
    assert state["ttlMs"] >= tasks.KEEP * 1000


async def test_cancelling_a_task_cancels_its_call_and_the_task_says_so():
    board = TaskBoard(after=0)
    call = Gate(result("never read"))
    handle = await board.call(ctx(), call, [True])
    assert await board.cancel(ctx(method="tasks/cancel"), types.CancelTaskRequestParams(task_id=handle["taskId"])) == {}
    state = await board.get(ctx(), ask(handle["taskId"]))
    assert state["status"] == "cancelled" and "result" not in state
    await asyncio.sleep(0)
    assert call.cancelled
    # Cancelling an ended task changes nothing.
    await board.cancel(ctx(), types.CancelTaskRequestParams(task_id=handle["taskId"]))
    assert (await board.get(ctx(), ask(handle["taskId"])))["status"] == "cancelled"


async def test_a_call_that_raises_is_a_failed_task_with_a_protocol_error():
    board = TaskBoard(after=0)
    call = Gate(RuntimeError("secret detail"))
    handle = await board.call(ctx(), call, [True])
    call.go.set()
    state = await settled(board, handle["taskId"])
    assert state["status"] == "failed" and state["error"]["code"] == types.INTERNAL_ERROR
    assert "secret detail" not in str(state)   # the exception's type, not its text


async def test_at_the_cap_an_ended_task_makes_room_and_with_all_working_a_call_is_answered_when_done():
    board = TaskBoard(after=0, max_tasks=1)
    first = Gate(result("first"))
    one = await board.call(ctx(), first, [True])
    second = Gate(result("second"))
    second.go.set()
    assert await board.call(ctx(), second, [True]) == result("second")   # no room: not a task
    first.go.set()
    await settled(board, one["taskId"])
    third = await board.call(ctx(), Gate(result("third")), [True])
    assert third["resultType"] == "task" and len(board) == 1
    with pytest.raises(MCPError, match="Task not found"):
        await board.get(ctx(), ask(one["taskId"]))


async def test_an_ended_task_is_forgotten_after_it_was_kept(monkeypatch):
    board = TaskBoard(after=0)
    call = Gate(result("done"))
    handle = await board.call(ctx(), call, [True])
    call.go.set()
    await settled(board, handle["taskId"])
    monkeypatch.setattr(tasks, "KEEP", 0.0)
    with pytest.raises(MCPError) as e:
        await board.get(ctx(), ask(handle["taskId"]))
    assert e.value.error.code == types.INVALID_PARAMS


@pytest.mark.parametrize("context, code", [
    (ctx(version="2025-11-25", method="tasks/get"), types.METHOD_NOT_FOUND),
    (ctx(extensions={}, method="tasks/get"), types.MISSING_REQUIRED_CLIENT_CAPABILITY),
    (ctx(method="tasks/get"), types.INVALID_PARAMS),
])
async def test_tasks_get_is_refused_where_it_does_not_apply(context, code):
    board = TaskBoard()
    with pytest.raises(MCPError) as e:
        await board.get(context, ask("no-such-task"))
    assert e.value.error.code == code
    if code == types.MISSING_REQUIRED_CLIENT_CAPABILITY:
        assert e.value.error.data == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}


async def test_stopping_cancels_the_calls_still_running():
    board = TaskBoard(after=0)
    call = Gate(result("x"))
    handle = await board.call(ctx(), call, [True])
    await board.stop()
    assert call.cancelled
    assert (await board.get(ctx(), ask(handle["taskId"])))["status"] == "cancelled"
