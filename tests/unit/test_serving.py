"""The shared reply path (trustgraph.base.messaging.serving), driven on the in-memory transport."""

from __future__ import annotations

import asyncio
import logging

import pytest
from trustgraph.base.messaging.serving import Replies, ServiceError, message_or_type
from trustgraph.base.processors.async_processor import AsyncProcessor
from trustgraph.base.testing import worker
from trustgraph.base.tool_services.dynamic_tool_service import ToolError
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse

REQ, RESP = "non-persistent://tg/request/serving", "non-persistent://tg/response/serving"

REPLIES = Replies(
    error_record=lambda error: ToolServiceResponse(error=error, response="", end_of_stream=True),
    error_type="test-error", describe=message_or_type)


async def words(text: str):
    for word in text.split():
        if word == "boom":
            raise RuntimeError("boom half-way")
        yield ToolServiceResponse(response=word, end_of_stream=False)


class Service(AsyncProcessor):
    """Answers by ``arguments``: echo, raise, a ServiceError, a stream, or a huge reply."""

    def __init__(self, **params):
        super().__init__(**params)
        self.runs: list[str] = []

    async def start(self):
        await super().start()
        await self.serve(REQ, ToolServiceRequest, self.work, replies=REPLIES, subscription="s",
                         response_topic=RESP, concurrency=1)

    async def work(self, msg, reply):
        what = msg.value.arguments
        self.runs.append(what)
        if what == "raise":
            raise ValueError("bad input")
        if what == "typed":
            raise ServiceError("not today", "custom-error")
        if what == "tool-error":
            raise ToolError("from a tool")
        if what.startswith("stream "):
            await reply.stream(words(what[7:]), end=ToolServiceResponse(response="", end_of_stream=True))
            return
        if what == "huge":
            await reply.send(ToolServiceResponse(response="x" * 6_000_000, end_of_stream=True))
            return
        await reply.send(ToolServiceResponse(response=f"echo {what}", end_of_stream=True))


def last(r: ToolServiceResponse) -> bool:
    return r.end_of_stream


async def ask(w, arguments: str) -> list[ToolServiceResponse]:
    return await w.call(REQ, RESP, ToolServiceRequest(arguments=arguments), ToolServiceResponse, until=last)


async def test_replies_carry_the_id_and_errors_keep_their_type():
    async with worker(Service) as w:
        inbox = await w.listen(RESP, ToolServiceResponse)
        assert [r.response for r in await ask(w, "hi")] == ["echo hi"]
        assert all(m.id is not None for m in inbox.messages)
        # Any exception: the service's default type, the describe()d message.
        (err,) = await ask(w, "raise")
        assert (err.error.type, err.error.message, err.response, err.end_of_stream) == (
            "test-error", "bad input", "", True)
        # A ServiceError keeps its type; ToolError is one (with the tool-service type).
        assert (await ask(w, "typed"))[0].error.type == "custom-error"
        assert (await ask(w, "tool-error"))[0].error.type == "tool-service-error"
        # A reply too big for its topic is the work's outcome: an error reply saying so.
        assert "byte limit" in (await ask(w, "huge"))[0].error.message
        assert (await ask(w, "still"))[0].response == "echo still"


async def test_request_without_id_is_dropped_before_the_work(caplog):
    async with worker(Service) as w:
        inbox = await w.listen(RESP, ToolServiceResponse)
        with caplog.at_level(logging.DEBUG, logger="trustgraph.base.messaging.serving"):
            await w.send(REQ, ToolServiceRequest(arguments="no id"), id=None)
            # Concurrency 1 keeps order: once this is answered the id-less one was handled.
            await ask(w, "with id")
        assert w.processor.runs == ["with id"]
        assert inbox.by_id(None) == [] and len(inbox.messages) == 1
        (drop,) = [r for r in caplog.records if "without an id" in r.getMessage()]
        assert drop.levelno == logging.DEBUG


async def test_malformed_request_with_an_id_gets_an_error_reply():
    async with worker(Service) as w:
        inbox = await w.listen(RESP, ToolServiceResponse)
        await w.send(REQ, b'{"arguments": 42}', id=None)     # undecodable, no id: nothing
        rid = await w.send(REQ, b'{"arguments": 42}')          # undecodable, with an id
        (err,) = await inbox.wait_for(rid)
        assert err.error.type == "test-error" and err.end_of_stream
        assert err.error.message.startswith("malformed request: ") and "ToolServiceRequest.arguments" in \
            err.error.message
        await ask(w, "after")
        assert w.processor.runs == ["after"]  # the work never ran for either
        assert inbox.by_id(None) == []


async def test_streamed_chunks_then_the_end_marker_or_the_error():
    async with worker(Service) as w:
        got = await ask(w, "stream a b c")
        assert [(r.response, r.end_of_stream) for r in got] == [("a", False), ("b", False), ("c", False),
                                                               ("", True)]
        got = await ask(w, "stream a boom c")
        assert [r.response for r in got[:-1]] == ["a"]
        assert (got[-1].error.message, got[-1].end_of_stream) == ("boom half-way", True)


class Logged(logging.Handler):
    """Sets an event when a record containing ``text`` is logged (an event to wait for)."""

    def __init__(self, text: str) -> None:
        super().__init__(logging.DEBUG)
        self.text, self.records, self.seen = text, [], asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.records.append(record)
            self.seen.set()


async def test_a_reply_that_cannot_be_sent_is_logged_and_not_run_again():
    log = logging.getLogger("trustgraph.base.messaging.serving")
    watch = Logged("not sent")
    log.addHandler(watch)
    try:
        async with worker(Service) as w:
            inbox = await w.listen(RESP, ToolServiceResponse)
            w.broker.refuse_sends(RESP)
            lost = await w.send(REQ, ToolServiceRequest(arguments="lost"))
            async with asyncio.timeout(10):
                await watch.seen.wait()
            w.broker.refuse_sends(RESP, False)
            await ask(w, "after")
    finally:
        log.removeHandler(watch)
    assert w.processor.runs == ["lost", "after"]   # the lost one ran once, not again
    assert inbox.by_id(lost) == []                 # and no error reply was attempted
    (record,) = watch.records
    assert record.levelno == logging.ERROR
    assert f"Reply {lost}" in record.getMessage() and "not run again" in record.getMessage()


@pytest.mark.parametrize("message, want", [("", "ValueError"), ("x", "x")])
def test_describe_and_error_records(message, want):
    assert message_or_type(ValueError(message)) == want
    rec = REPLIES.malformed("why")
    assert (rec.error.type, rec.error.message) == ("test-error", "malformed request: why")
    assert REPLIES.error("m", "t").error.type == "t"


async def test_an_id_over_the_limit_is_answered_with_an_error_and_not_worked_on():
    from trustgraph.base.safety.limits import MAX_ID

    async with worker(Service) as w:
        inbox = await w.listen(RESP, ToolServiceResponse)
        for rid, worked in (("x" * MAX_ID, True), ("y" * (MAX_ID + 1), False)):
            await w.send(REQ, ToolServiceRequest(arguments=rid[:8]), id=rid)
            (reply,) = await inbox.wait_for(rid, until=last)
            if worked:
                assert reply.error is None and reply.response == f"echo {rid[:8]}"
            else:
                assert reply.error.type == "test-error"
                assert reply.error.message == (f"the request id is {MAX_ID + 1:,} characters long, over the "
                                               f"limit of {MAX_ID:,}")
        assert w.processor.runs == ["x" * 8]
