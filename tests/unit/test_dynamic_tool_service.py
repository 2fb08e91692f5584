"""DynamicToolService on the in-memory transport: what reaches invoke, and what comes back."""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time

import pytest
from trustgraph.base import DynamicToolService, ToolServiceClient, ToolServiceError
from trustgraph.base.messaging import deadlines
from trustgraph.base.testing import worker
from trustgraph.base.tool_services.dynamic_tool_service import ToolError
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse
from trustgraph.schema.services.tool_service import READS_STREAMS
from trustgraph.topics import tool_service_topics

REQ, RESP = tool_service_topics("unit-echo")
STREAMS = {READS_STREAMS: "true"}  # what a caller that reads streamed replies sends


class Echo(DynamicToolService):
    """Records every invocation; streams when asked, fails with a ToolError when asked."""

    default_topic = "unit-echo"

    def __init__(self, **params):
        super().__init__(**params)
        self.invoked: list[dict] = []

    async def invoke(self, user, config, arguments):
        self.invoked.append(arguments)
        if arguments.get("fail"):
            raise ToolError(arguments["fail"], "echo-error")
        return {"user": user, "config": config, "arguments": arguments}


def request(**arguments) -> ToolServiceRequest:
    return ToolServiceRequest(user="u", config="{}", arguments=json.dumps(arguments))


def final(r: ToolServiceResponse) -> bool:
    return r.end_of_stream


async def test_request_without_id_never_reaches_invoke():
    # Concurrency 1: requests are handled in order, so once the second is answered
    # the first has been dealt with.
    async with worker(Echo, concurrency=1) as w:
        replies = await w.listen(RESP, ToolServiceResponse)
        await w.send(REQ, request(n=1), id=None)
        (answer,) = await w.call(REQ, RESP, request(n=2), ToolServiceResponse, until=final)
        assert json.loads(answer.response)["arguments"] == {"n": 2}
        assert w.processor.invoked == [{"n": 2}]
        assert replies.by_id(None) == [] and len(replies.messages) == 1


async def test_answers_errors_and_bad_input_without_dying():
    async with worker(Echo) as w:
        async def call(record):
            return await w.call(REQ, RESP, record, ToolServiceResponse, until=final)

        (ok,) = await call(ToolServiceRequest(user="", config='{"k": "v"}', arguments='{"a": 1}'))
        assert json.loads(ok.response) == {"user": "trustgraph", "config": {"k": "v"}, "arguments": {"a": 1}}
        (err,) = await call(request(fail="no"))
        assert (err.error.type, err.error.message, err.response, err.end_of_stream) == (
            "echo-error", "no", "", True)
        (err,) = await call(ToolServiceRequest(arguments="[1]"))
        assert (err.error.type, err.error.message) == (
            "tool-service-error", "request arguments must be a JSON object, got list")
        replies = await w.listen(RESP, ToolServiceResponse)
        rid = await w.send(REQ, b"garbage")
        (err,) = await replies.wait_for(rid)
        assert err.error.type == "tool-service-error" and err.error.message.startswith("malformed request")
        assert len(w.processor.invoked) == 2  # neither bad request reached invoke


class Chunky(DynamicToolService):
    """An invoke that returns an async generator (rather than being one): it still streams."""

    default_topic = "unit-echo"

    async def invoke(self, user, config, arguments):
        async def words():
            for w in ("a", "b", "c"):
                yield w

        return words()


async def test_an_invoke_that_returns_an_async_generator_streams():
    async with worker(Chunky) as w:
        got = await w.call(REQ, RESP, request(), ToolServiceResponse, until=final, properties=STREAMS)
        assert [(r.response, r.end_of_stream) for r in got] == [("a", False), ("b", False), ("c", False),
                                                               ("", True)]


class Words(DynamicToolService):
    """Is an async generator: yields the words of ``text`` (and an empty chunk first); the word
    ``fail`` raises half-way; ``endless`` yields ``chunk`` for ever.  Notes when it is closed."""

    default_topic = "unit-echo"

    def __init__(self, **params):
        super().__init__(**params)
        self.yielded = 0
        self.closed = False

    async def invoke(self, user, config, arguments):
        try:
            yield ""
            if arguments.get("endless"):
                while True:
                    self.yielded += 1
                    yield arguments["chunk"]
            for word in arguments.get("text", "").split():
                if word == "fail":
                    raise ToolError("failed half-way", "words-error")
                self.yielded += 1
                yield word + " "
        finally:
            self.closed = True


async def test_a_caller_that_reads_streams_gets_the_chunks_and_any_other_one_whole_reply():
    # Concurrency 1: requests are handled in order, so once one is answered, those sent before
    # it have sent everything they will.
    async with worker(Words, concurrency=1) as w:
        inbox = await w.listen(RESP, ToolServiceResponse)
        # As upstream's callers send it: no property; they take the first reply as the answer.
        whole_id = await w.send(REQ, request(text="one two three"))
        # Only "true" asks for a stream.
        other_id = await w.send(REQ, request(text="a b"), properties={READS_STREAMS: "yes"})
        streamed = await w.call(REQ, RESP, request(text="one two three"), ToolServiceResponse,
                                until=final, properties=STREAMS)
        assert [(r.response, r.end_of_stream) for r in streamed] == [
            ("one ", False), ("two ", False), ("three ", False), ("", True)]
        (whole,) = inbox.by_id(whole_id)
        assert (whole.error, whole.response, whole.end_of_stream) == (None, "one two three ", True)
        (other,) = inbox.by_id(other_id)
        assert (other.error, other.response, other.end_of_stream) == (None, "a b ", True)


async def test_an_error_half_way_is_one_error_reply_to_a_caller_that_reads_whole_replies():
    async with worker(Words) as w:
        (err,) = await w.call(REQ, RESP, request(text="a b fail c"), ToolServiceResponse, until=final)
        assert (err.error.type, err.error.message, err.response, err.end_of_stream) == (
            "words-error", "failed half-way", "", True)
        # A streaming caller gets what came before the error, then the error.
        got = await w.call(REQ, RESP, request(text="a b fail c"), ToolServiceResponse, until=final,
                           properties=STREAMS)
        assert [r.response for r in got[:-1]] == ["a ", "b "]
        assert (got[-1].error.message, got[-1].end_of_stream) == ("failed half-way", True)


async def test_a_joined_answer_over_the_limit_is_an_error_and_stops_the_work():
    class Small(Words):
        max_whole_reply = 10

    async with worker(Small) as w:
        (ok,) = await w.call(REQ, RESP, request(text="0123 5678"), ToolServiceResponse, until=final)
        assert ok.response == "0123 5678 "  # exactly 10 bytes: within the limit
        w.processor.yielded = 0
        (err,) = await w.call(REQ, RESP, request(endless=True, chunk="é" * 3), ToolServiceResponse,
                              until=final)
        assert err.error.type == "tool-service-error" and err.end_of_stream
        assert "over the 10-byte limit of one reply" in err.error.message
        assert f"no '{READS_STREAMS}' property" in err.error.message
        # Two chunks of 6 bytes (UTF-8) are over 10: the generator was closed at the second.
        assert w.processor.closed and w.processor.yielded == 2
        # A streaming caller is not bound by it: each chunk is its own message.
        got = await w.call(REQ, RESP, request(text="0123456789 0123456789"), ToolServiceResponse,
                           until=final, properties=STREAMS)
        assert [r.response for r in got] == ["0123456789 ", "0123456789 ", ""]


async def test_our_client_reads_streams_and_a_plain_first_response_request_gets_the_whole_text():
    async with worker(Words) as w:
        client = ToolServiceClient(w.pubsub, request_topic=REQ, response_topic=RESP)
        chunks: list[str] = []
        text = await client.call_streaming("u", {}, {"text": "one two three"}, chunks.append, timeout=10)
        assert (chunks, text) == (["one ", "two ", "three "], "one two three ")
        assert await client.call("u", {}, {"text": "x y"}, timeout=10) == "x y "
        with pytest.raises(ToolServiceError, match="failed half-way"):
            await client.call("u", {}, {"text": "a fail"}, timeout=10)
        # The inherited request() is upstream's way: the first response, no property.
        first = await client.request(request(text="one two three"), timeout=10)
        assert (first.error, first.response, first.end_of_stream) == (None, "one two three ", True)


class Waits(DynamicToolService):
    """An invoke that waits for ever (or streams one chunk, then waits), noting that it was stopped."""

    default_topic = "unit-echo"

    def __init__(self, **params):
        super().__init__(**params)
        self.stopped = asyncio.Event()

    async def invoke(self, user, config, arguments):
        if arguments.get("stream"):
            return self._chunks()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.stopped.set()
            raise

    async def _chunks(self):
        yield "first "
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.stopped.set()
            raise


@pytest.mark.parametrize("stream", [False, True])
async def test_an_invocation_is_stopped_when_its_callers_deadline_passes(stream):
    async with worker(Waits) as w:
        replies = await w.listen(RESP, ToolServiceResponse)
        start = time.monotonic()
        rid = await w.send(REQ, request(stream=stream),
                           properties={**STREAMS, deadlines.DEADLINE: deadlines.stamp(0.5)})
        await asyncio.wait_for(w.processor.stopped.wait(), 10)
        assert 0.3 < time.monotonic() - start < 5
        (*chunks, last) = await replies.wait_for(rid, final)
        assert last.error.message == "the invocation was stopped: the caller's deadline passed"
        assert [c.response for c in chunks] == (["first "] if stream else [])


class Echo211(DynamicToolService):
    """Written for TrustGraph 2.11: ``invoke(config, arguments)``, no user."""

    default_topic = "unit-echo"

    async def invoke(self, config, arguments):
        return {"config": config, "arguments": arguments}


async def test_a_service_written_for_2_11_gets_config_and_arguments_only():
    async with worker(Echo211) as w:
        (ok,) = await w.call(REQ, RESP, ToolServiceRequest(user="u", config='{"k": "v"}', arguments='{"a": 1}'),
                             ToolServiceResponse, until=final)
        assert json.loads(ok.response) == {"config": {"k": "v"}, "arguments": {"a": 1}}


def test_which_invoke_a_service_wrote_is_read_from_its_signature():
    from trustgraph.base.tool_services.dynamic_tool_service import takes_user

    class Old:
        async def invoke(self, user, config, arguments): ...

    class New:
        async def invoke(self, config, arguments): ...

    class Loose:
        async def invoke(self, *args): ...

    assert takes_user(Old().invoke) and not takes_user(New().invoke) and takes_user(Loose().invoke)


# -- the topic it serves --------------------------------------------------------------------------
# Upstream's base default was "tool": a class that set no default_topic (its spec's own example
# among them) served non-persistent://tg/request/tool whatever its descriptor said, and two such
# services took each other's calls. Such a class must be given a topic.

SPEC_EXAMPLE = '''
from trustgraph.base import DynamicToolService

class Processor(DynamicToolService):
    async def invoke(self, user, config, arguments):
        return "Hey " + user

Processor.launch("joke-service")
'''


def test_a_class_without_default_topic_run_without_topic_is_refused_in_one_line(tmp_path):
    script = tmp_path / "spec_example.py"
    script.write_text(SPEC_EXAMPLE)
    r = subprocess.run([sys.executable, str(script), "-p", "pulsar://127.0.0.1:9", "--no-metrics"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    (line,) = [ln for ln in r.stderr.splitlines() if ln.startswith("joke-service: error:")]
    assert "names no topic to serve" in line and "default_topic" in line and "-t/--topic" in line, line
    assert "Traceback" not in r.stderr


def test_a_class_without_default_topic_serves_the_topic_it_is_given():
    class Plain(DynamicToolService):
        async def invoke(self, user, config, arguments):
            return ""

    parser = argparse.ArgumentParser()
    Plain.add_args(parser)
    assert parser.parse_args([]).topic is None                       # no silent "tool"
    svc = Plain(id="plain", topic="plain-topic", pulsar_host="pulsar://127.0.0.1:9", metrics=False)
    assert (svc.request_topic, svc.response_topic) == tool_service_topics("plain-topic")
    assert Echo(id="e", pulsar_host="pulsar://127.0.0.1:9", metrics=False).request_topic == REQ
