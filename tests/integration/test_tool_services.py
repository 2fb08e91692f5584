"""DynamicToolService and ToolServiceClient with real processes on the broker."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid

import pulsar
import pytest
from support import Proc, wait_for_async
from trustgraph.base import DynamicToolService, PubSub, RequestTimeout, ToolServiceClient, ToolServiceError
from trustgraph.base.messaging.message import Message
from trustgraph.base.messaging.request_response import RequestResponseClient, new_request_id
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse
from trustgraph.topics import tool_service_topics


def client(ps: PubSub, topic: str, **kw) -> ToolServiceClient:
    req, resp = tool_service_topics(topic)
    return ToolServiceClient(ps, request_topic=req, response_topic=resp, **kw)


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


class Stream(DynamicToolService):
    """Yields the words of arguments['text'] one by one; 'fail' raises half-way."""

    async def invoke(self, user, config, arguments):
        for word in arguments.get("text", "").split():
            if word == "fail":
                raise RuntimeError("asked to fail")
            await asyncio.sleep(0.01)
            yield word + " "


class Echo(DynamicToolService):
    async def invoke(self, user, config, arguments):
        if arguments.get("raise"):
            raise ValueError(arguments["raise"])
        if arguments.get("sleep"):
            await asyncio.sleep(arguments["sleep"])
        return {"user": user, "config": config, "arguments": arguments, "pid": self.id}


async def started(cls, broker, topic, **kw):
    svc = cls(id=kw.pop("id", topic), pulsar_host=broker.url, metrics=False, topic=topic, **kw)
    await svc.start()
    return svc


async def test_joke_service_process_answers(broker, spawn):
    topic = unique("joke")
    spawn("joke-service", "-t", topic, broker=broker)
    ps = PubSub(broker.url, processor="t")
    try:
        c = client(ps, topic)
        text = await c.call("alice", {"style": "dad-joke"}, {"topic": "cats"}, timeout=10)
        assert text.startswith("Hey alice! Here's a dad-joke for you:\n\n")
        assert len(text) > len("Hey alice! Here's a dad-joke for you:\n\n") + 10
        # The style comes from config; an unknown one is reported, not guessed.
        with pytest.raises(ToolServiceError) as e:
            await c.call("alice", {"style": "limerick"}, {"topic": "cats"}, timeout=10)
        assert e.value.type == "tool-service-error"
        assert "pun" in e.value.message and "limerick" in e.value.message
        # The same request gets the same joke, so agent dialogs are reproducible.
        again = await c.call("alice", {"style": "dad-joke"}, {"topic": "cats"}, timeout=10)
        assert again == text
        # An empty user becomes "trustgraph", as upstream.
        assert (await c.call("", {}, {"topic": "dogs"}, timeout=10)).startswith("Hey trustgraph!")
    finally:
        await ps.close()


async def test_streaming_chunks_arrive_in_order(broker):
    topic = unique("stream")
    svc = await started(Stream, broker, topic)
    ps = PubSub(broker.url, processor="t")
    try:
        chunks: list[str] = []
        text = await client(ps, topic).call_streaming(
            "u", {}, {"text": "one two three four five"}, chunks.append, timeout=10)
        assert chunks == ["one ", "two ", "three ", "four ", "five "]
        assert text == "one two three four five "
        with pytest.raises(ToolServiceError, match="asked to fail"):
            await client(ps, topic).call_streaming("u", {}, {"text": "a b fail c"}, chunks.append, timeout=10)
    finally:
        await ps.close()
        await svc.stop()


async def test_a_caller_without_the_stream_property_gets_exactly_one_whole_reply(broker):
    """As upstream's callers do: a plain first-response request, no properties of ours."""
    topic = unique("stream")
    # Concurrency 1: requests are served in order and their replies go out in order, so once
    # the watcher has the last call's end, it has every message sent for the calls before it.
    svc = await started(Stream, broker, topic, concurrency=1)
    req, resp = tool_service_topics(topic)
    ps = PubSub(broker.url, processor="t")
    seen: list[Message] = []
    last_id = new_request_id()
    last_seen = asyncio.Event()

    async def watch(msg: Message) -> None:
        seen.append(msg)
        if msg.id == last_id and msg.value.end_of_stream:
            last_seen.set()

    try:
        await ps.consumer(resp, f"watch-{uuid.uuid4().hex[:6]}", ToolServiceResponse, handler=watch)
        plain = RequestResponseClient(ps, request_topic=req, response_topic=resp, request_schema=ToolServiceRequest,
                                      response_schema=ToolServiceResponse, subscription=f"plain-{topic}")
        whole_id, error_id = new_request_id(), new_request_id()
        whole = await plain.request(ToolServiceRequest(arguments=json.dumps({"text": "one two three four"})),
                                    timeout=10, request_id=whole_id)
        assert (whole.error, whole.response, whole.end_of_stream) == (None, "one two three four ", True)
        # An error half-way is the usual single error reply (2.1.4's agent raises on it).
        failed = await plain.request(ToolServiceRequest(arguments=json.dumps({"text": "a b fail c"})),
                                     timeout=10, request_id=error_id)
        assert (failed.error.type, failed.error.message, failed.response, failed.end_of_stream) == (
            "tool-service-error", "asked to fail", "", True)
        # Our client says it reads streams, and still gets chunks.
        chunks: list[str] = []
        text = await client(ps, topic).call_streaming("u", {}, {"text": "x y"}, chunks.append, timeout=10,
                                                      request_id=last_id)
        assert (chunks, text) == (["x ", "y "], "x y ")
        async with asyncio.timeout(30):
            await last_seen.wait()
        assert [m.value.response for m in seen if m.id == whole_id] == ["one two three four "]
        assert [m.value.error.message for m in seen if m.id == error_id] == ["asked to fail"]
        await plain.stop()
    finally:
        await ps.close()
        await svc.stop()


async def test_errors_and_bad_json_come_back_as_errors(broker):
    topic = unique("echo")
    svc = await started(Echo, broker, topic)
    ps = PubSub(broker.url, processor="t")
    try:
        c = client(ps, topic)
        result = json.loads(await c.call("bob", {"k": "v"}, {"a": 1}, timeout=10))
        assert result["user"] == "bob" and result["config"] == {"k": "v"} and result["arguments"] == {"a": 1}
        with pytest.raises(ToolServiceError) as e:
            await c.call("bob", {}, {"raise": "bad input"}, timeout=10)
        assert (e.value.type, e.value.message) == ("tool-service-error", "bad input")
        with pytest.raises(ToolServiceError, match="config is not valid JSON"):
            await c.call("bob", "{not json", {}, timeout=10)
        with pytest.raises(ToolServiceError, match="arguments must be a JSON object"):
            await c.call("bob", {}, "[1, 2]", timeout=10)
        # Still serving after all that.
        assert json.loads(await c.call("carol", {}, {}, timeout=10))["user"] == "carol"
    finally:
        await ps.close()
        await svc.stop()


async def test_request_without_id_is_dropped_and_service_goes_on(broker):
    topic = unique("echo")
    svc = await started(Echo, broker, topic)
    req, resp = tool_service_topics(topic)
    raw = pulsar.Client(broker.url)
    ps = PubSub(broker.url, processor="t")
    try:
        watch = raw.subscribe(resp, "watch")
        producer = raw.create_producer(req)
        producer.send(json.dumps({"user": "x", "config": "{}", "arguments": "{}"}).encode())  # no id
        producer.send(b"garbage", properties={"id": "g1"})
        # The service runs on this event loop: wait for replies in a thread.
        msg = await asyncio.to_thread(watch.receive, 5000)
        assert msg.properties()["id"] == "g1"  # garbage with an id gets an error reply ...
        assert json.loads(msg.data())["error"]["type"] == "tool-service-error"
        with pytest.raises(pulsar.Timeout):      # ... the id-less request gets nothing
            await asyncio.to_thread(watch.receive, 500)
        assert json.loads(await client(ps, topic).call("y", {}, {}, timeout=10))["user"] == "y"
    finally:
        raw.close()
        await ps.close()
        await svc.stop()


async def test_two_replicas_share_the_load(broker):
    topic = unique("echo")
    one = await started(Echo, broker, topic, id="replica")
    two = await started(Echo, broker, topic, id="replica")
    counts = {"one": 0, "two": 0}

    def counting(svc, name):
        orig = svc.invoke

        async def invoke(user, config, arguments):
            counts[name] += 1
            return await orig(user, config, arguments)
        svc.invoke = invoke

    counting(one, "one")
    counting(two, "two")
    ps = PubSub(broker.url, processor="t")
    try:
        c = client(ps, topic)
        await asyncio.gather(*(c.call("u", {}, {"sleep": 0.01}, timeout=10) for _ in range(40)))
        assert counts["one"] + counts["two"] == 40
        assert counts["one"] >= 5 and counts["two"] >= 5
    finally:
        await ps.close()
        await one.stop()
        await two.stop()


async def test_killed_service_gives_timeout_then_restart_serves(broker, spawn):
    topic = unique("joke")
    svc = spawn("joke-service", "-t", topic, broker=broker)
    ps = PubSub(broker.url, processor="t")
    try:
        c = client(ps, topic)
        assert (await c.call("a", {}, {"topic": "cats"}, timeout=10)).startswith("Hey a!")
        svc.kill()
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout):
            await c.call("a", {}, {"topic": "cats"}, timeout=1.0)
        # At its deadline, not before; and it ends (no hang), however loaded the machine.
        assert 0.9 < time.monotonic() - t0 < 30
        spawn("joke-service", "-t", topic, broker=broker)
        assert (await c.call("b", {}, {"topic": "cats"}, timeout=10)).startswith("Hey b!")
    finally:
        await ps.close()


async def test_killed_mid_call_times_out_at_deadline(broker, spawn, tmp_path):
    """kill -9 while an invocation is running: the caller hears a timeout at its deadline."""
    topic = unique("slow")
    script = tmp_path / "slow.py"
    script.write_text(
        "import asyncio\n"
        "from trustgraph.base import DynamicToolService\n"
        "import os, pathlib\n"
        "from trustgraph.base import DynamicToolService\n"
        "class P(DynamicToolService):\n"
        "    async def invoke(self, user, config, arguments):\n"
        "        pathlib.Path(os.environ['INVOKED_FILE']).touch()\n"
        "        await asyncio.sleep(3600)   # until killed\n"
        "        return 'late'\n"
        "P.launch('slow')\n")
    ready, invoked = tmp_path / "ready", tmp_path / "invoked"
    proc = Proc([sys.executable, str(script), "-t", topic, "--no-metrics", "-p", broker.url],
                tmp_path / "slow.log", env={"TG_READY_FILE": str(ready), "INVOKED_FILE": str(invoked)}).start()
    ps = PubSub(broker.url, processor="t")
    try:
        proc.wait_ready(ready)
        c = client(ps, topic)
        timeout = 10.0   # room for the request to reach the service on a loaded machine
        t0 = time.monotonic()
        call = asyncio.create_task(c.call("a", {}, {}, timeout=timeout))
        await wait_for_async("the invocation under way", invoked.exists, timeout, detail=proc.output)
        proc.kill()
        with pytest.raises(RequestTimeout):
            await call
        # At its deadline: not before it, and not hanging on a service that will never answer.
        assert timeout - 0.1 < time.monotonic() - t0 < timeout + 20
    finally:
        proc.kill()
        await ps.close()


class Big(DynamicToolService):
    async def invoke(self, user, config, arguments):
        return "x" * int(arguments.get("size", 10))


async def test_oversized_messages_are_refused_with_a_clear_error(broker):
    """Non-persistent topics cannot chunk: both directions fail fast and say why."""
    from trustgraph.base.messaging.pubsub import MessageTooLarge
    topic = unique("big")
    svc = await started(Big, broker, topic)
    ps = PubSub(broker.url, processor="t")
    try:
        c = client(ps, topic)
        t0 = time.monotonic()
        with pytest.raises(MessageTooLarge, match="limit of non-persistent topic"):
            await c.call("u", {}, {"pad": "y" * 6_000_000}, timeout=60)
        assert time.monotonic() - t0 < 30   # refused on sending, long before the call's 60 s timeout
        with pytest.raises(ToolServiceError, match="over the .*-byte limit"):
            await c.call("u", {}, {"size": 6_000_000}, timeout=10)
        assert await c.call("u", {}, {"size": 3}, timeout=10) == "xxx"  # still serving
    finally:
        await ps.close()
        await svc.stop()
