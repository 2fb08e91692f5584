"""Upstream 2.1.4's LLM service base on ours: a provider written for upstream serves our flows.

The providers here are written as upstream's docs and its own text-completion-*
are: a subclass of ``trustgraph.base.LlmService`` with ``generate_content`` (and
``supports_streaming``/``generate_content_stream``).  They run on the in-memory
transport; tests/integration/test_compat_llm.py runs them as processes.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import time

import pytest
from prometheus_client import REGISTRY
from trustgraph.base import LlmChunk, LlmResult, LlmService, ParameterSpec
from trustgraph.base.messaging import deadlines
from trustgraph.base.processors.flow_processor import ConsumerSpec, ProducerSpec
from trustgraph.base.testing import MemoryBroker, memory_pubsub, worker
from trustgraph.exceptions import TooManyRequests
from trustgraph.schema import TextCompletionRequest, TextCompletionResponse


class Echo(LlmService):
    """A user's provider: answers with what it was given."""

    def __init__(self, **params):
        super().__init__(**params)
        self.default_model = params.get("model", "echo-1")
        self.calls: list[tuple] = []

    async def generate_content(self, system, prompt, model=None, temperature=None):
        self.calls.append((system, prompt, model, temperature))
        if prompt == "boom":
            raise RuntimeError("the backend fell over")
        if prompt == "not a result":
            return "plain text"
        return LlmResult(text=f"{system}|{prompt}", in_token=3, out_token=2, model=model or self.default_model)


class Streamer(Echo):
    """A provider that streams: three chunks, then the final one with the counts."""

    def supports_streaming(self):
        return True

    async def generate_content_stream(self, system, prompt, model=None, temperature=None):
        model = model or self.default_model
        for word in ["one ", "two ", "three"]:
            yield LlmChunk(text=word, model=model)
        if prompt == "break":
            raise RuntimeError("the stream broke")
        if prompt == "no final":
            return
        yield LlmChunk(text="", in_token=7, out_token=3, model=model, is_final=True)


class RateLimited(Echo):
    """Rate-limited for its first ``busy`` calls (upstream's providers raise TooManyRequests)."""

    rate_limit_retry_time = 0.01
    busy = 2

    async def generate_content(self, system, prompt, model=None, temperature=None):
        self.calls.append(prompt)
        if len(self.calls) <= self.busy or prompt == "always":
            raise TooManyRequests()
        return LlmResult(text="finally", in_token=1, out_token=1, model="m")


def is_final(r: TextCompletionResponse) -> bool:
    return r.end_of_stream


async def ask(w, d, prompt: str, streaming: bool = False, system: str = "sys", **kw):
    return await w.call(d["request"], d["response"], TextCompletionRequest(system=system, prompt=prompt,
                                                                           streaming=streaming),
                        TextCompletionResponse, until=is_final, **kw)


# -- the shapes ---------------------------------------------------------------------------


def test_upstreams_names_at_upstreams_paths():
    import trustgraph.base.llm_service as module
    assert (module.LlmService, module.LlmResult, module.LlmChunk) == (LlmService, LlmResult, LlmChunk)
    assert (module.default_ident, module.default_concurrency) == ("text-completion", 1)
    params = inspect.signature(LlmService.generate_content).parameters
    assert [(p.name, p.default) for p in list(params.values())[1:]] == [
        ("system", inspect.Parameter.empty), ("prompt", inspect.Parameter.empty),
        ("model", None), ("temperature", None)]
    assert list(inspect.signature(LlmService.generate_content_stream).parameters) == \
        ["self", "system", "prompt", "model", "temperature"]


def test_result_and_chunk_are_upstreams_records():
    r = LlmResult()
    assert (r.text, r.in_token, r.out_token, r.model) == (None, None, None, None)
    r = LlmResult("hi", 1, 2, "m")
    assert (r.text, r.in_token, r.out_token, r.model) == ("hi", 1, 2, "m")
    c = LlmChunk(text="x")
    assert (c.text, c.in_token, c.out_token, c.model, c.is_final) == ("x", None, None, None, False)
    with pytest.raises(AttributeError):
        r.extra = 1  # __slots__, as upstream's


async def test_specs_flags_and_defaults():
    async with worker(Echo) as w:
        service = w.processor
        assert service.supports_streaming() is False
        specs = {(type(s).__name__, s.name) for s in service.specs}
        assert {("ConsumerSpec", "request"), ("ProducerSpec", "response"),
                ("ParameterSpec", "model"), ("ParameterSpec", "temperature")} <= specs
        consumer = next(s for s in service.specs if isinstance(s, ConsumerSpec))
        assert consumer.schema is TextCompletionRequest
        assert next(s for s in service.specs if isinstance(s, ProducerSpec)).schema is TextCompletionResponse
        # The flow parameters are upstream's specs (requests are served by our consumer and producer).
        assert [s.name for s in service.specifications if isinstance(s, ParameterSpec)] == ["model", "temperature"]
        assert service.concurrency == 1
    # Upstream's default id when none is given (its launch always gives one).
    made = Echo(metrics=False, follow_config=False, pubsub=memory_pubsub(MemoryBroker(), "t"))
    assert made.id == "text-completion"


def test_a_providers_static_add_args_calls_the_bases():
    class Provider(Echo):
        @staticmethod
        def add_args(parser):
            LlmService.add_args(parser)
            parser.add_argument("-m", "--model", default="m0")
            parser.add_argument("-t", "--temperature", type=float, default=0.0)
            parser.add_argument("-x", "--max-output", type=int, default=4096)

    parser = argparse.ArgumentParser()
    Provider.add_args(parser)
    assert parser.parse_args([]).concurrency == 1
    args = parser.parse_args(["-c", "3", "-m", "big", "-t", "0.5", "-p", "pulsar://h:6650"])
    assert (args.concurrency, args.model, args.temperature, args.pulsar_host) == (3, "big", 0.5, "pulsar://h:6650")
    assert parser.parse_args([]).timeout == 600.0  # upstream's callers wait 600 s


# -- serving ------------------------------------------------------------------------------


async def test_flow_parameters_reach_generate_content_and_the_reply_is_upstreams():
    async with worker(Echo) as w:
        d = w.flow_definition("f")
        await w.open_flow("f", {**d, "model": "gpt-4", "temperature": "0.7"})
        (r,) = await ask(w, d, "hello")
        assert w.processor.calls == [("sys", "hello", "gpt-4", 0.7)]
        assert (r.error, r.response, r.in_token, r.out_token, r.model, r.end_of_stream) == \
            (None, "sys|hello", 3, 2, "gpt-4", True)


async def test_absent_flow_parameters_are_none_so_the_provider_picks():
    async with worker(Echo, model="own-default") as w:
        d = w.flow_definition("f")
        await w.open_flow("f", d)
        (r,) = await ask(w, d, "hello")
        assert w.processor.calls == [("sys", "hello", None, None)]
        assert r.model == "own-default"


async def test_a_failing_provider_is_an_llm_error_with_upstreams_message_and_serves_on():
    async with worker(Echo) as w:
        d = w.flow_definition("f")
        await w.open_flow("f", d)
        (r,) = await ask(w, d, "boom")
        assert (r.error.type, r.error.message, r.end_of_stream) == ("llm-error", "the backend fell over", True)
        assert (r.response, r.in_token, r.out_token, r.model) == (None, None, None, None)  # as upstream's
        (r,) = await ask(w, d, "not a result")
        assert r.error.type == "llm-error" and "not an LlmResult" in r.error.message
        (r,) = await ask(w, d, "still here")
        assert r.error is None and r.response == "sys|still here"


async def test_streaming_sends_each_chunk_then_the_final_counts():
    async with worker(Streamer) as w:
        d = w.flow_definition("f")
        await w.open_flow("f", {**d, "model": "s-1"})
        got = await ask(w, d, "count", streaming=True)
        assert [g.response for g in got if not g.end_of_stream] == ["one ", "two ", "three"]
        assert not any(g.error for g in got)
        last = got[-1]
        assert (last.end_of_stream, last.in_token, last.out_token, last.model) == (True, 7, 3, "s-1")
        assert "".join(g.response for g in got) == "one two three"
        # Not streaming, the same provider answers with generate_content.
        (r,) = await ask(w, d, "count")
        assert (r.response, r.end_of_stream) == ("sys|count", True)


async def test_a_stream_without_its_final_chunk_still_ends_and_a_broken_one_is_an_error():
    async with worker(Streamer) as w:
        d = w.flow_definition("f")
        await w.open_flow("f", d)
        got = await ask(w, d, "no final", streaming=True)
        assert "".join(g.response for g in got) == "one two three" and got[-1].end_of_stream
        got = await ask(w, d, "break", streaming=True)
        assert got[-1].error.type == "llm-error" and got[-1].error.message == "the stream broke"
        assert got[-1].end_of_stream


async def test_a_streaming_request_to_a_provider_that_cannot_stream_gets_the_whole_text():
    async with worker(Echo) as w:
        d = w.flow_definition("f")
        await w.open_flow("f", d)
        got = await ask(w, d, "whole", streaming=True)
        assert "".join(g.response for g in got) == "sys|whole"
        assert got[-1].end_of_stream and (got[-1].in_token, got[-1].out_token) == (3, 2)


async def test_a_rate_limited_provider_is_asked_again_within_the_callers_wait():
    async with worker(RateLimited) as w:
        d = w.flow_definition("f")
        await w.open_flow("f", d)
        (r,) = await ask(w, d, "please")
        assert (r.error, r.response) == (None, "finally")
        assert w.processor.calls == ["please"] * 3
        # Rate-limited until the caller stops waiting: an error of upstream's type for it.
        start = time.monotonic()
        (r,) = await ask(w, d, "always", properties={deadlines.DEADLINE: deadlines.stamp(0.5)})
        assert r.error.type == "too-many-requests" and r.end_of_stream
        assert time.monotonic() - start < 10


async def test_upstreams_metric_names_are_recorded():
    async with worker(Echo) as w:
        d = w.flow_definition("f")
        await w.open_flow("f", {**d, "model": "gpt-4", "temperature": 0.5})
        labels = {"id": w.processor.id, "flow": "f-request"}
        before = REGISTRY.get_sample_value("text_completion_duration_count", labels) or 0
        await ask(w, d, "hello")
        assert REGISTRY.get_sample_value("text_completion_duration_count", labels) == before + 1
        assert REGISTRY.get_sample_value("text_completion_model_info", {
            "processor": w.processor.id, "flow": "f", "model": "gpt-4", "temperature": "0.5"}) == 1
        assert LlmService.text_completion_metric._name == "text_completion_duration"


async def test_requests_run_concurrently_up_to_the_flag():
    class Slow(Echo):
        running = 0
        most = 0

        async def generate_content(self, system, prompt, model=None, temperature=None):
            Slow.running += 1
            Slow.most = max(Slow.most, Slow.running)
            await asyncio.sleep(0.05)
            Slow.running -= 1
            return LlmResult(text=prompt)

    async with worker(Slow, concurrency=3) as w:
        d = w.flow_definition("f")
        await w.open_flow("f", d)
        got = await asyncio.gather(*(ask(w, d, f"p{i}") for i in range(6)))
        assert sorted(r.response for (r,) in got) == [f"p{i}" for i in range(6)]
        assert Slow.most == 3


async def test_a_stream_is_asked_again_only_before_its_first_chunk():
    class BusyStreamer(Streamer):
        rate_limit_retry_time = 0.01
        tries = 0

        async def generate_content_stream(self, system, prompt, model=None, temperature=None):
            type(self).tries += 1
            if type(self).tries == 1:
                raise TooManyRequests()
            yield LlmChunk(text="part ")
            if prompt == "late":
                raise TooManyRequests()
            yield LlmChunk(text="whole", in_token=1, out_token=2, is_final=True)

    async with worker(BusyStreamer) as w:
        d = w.flow_definition("f")
        await w.open_flow("f", d)
        got = await ask(w, d, "early", streaming=True)
        assert "".join(g.response for g in got) == "part whole" and BusyStreamer.tries == 2
        # Once a chunk went out, asking again would send it twice: an error ends the stream.
        got = await ask(w, d, "late", streaming=True)
        assert [g.response for g in got[:-1]] == ["part "]
        assert (got[-1].error.type, got[-1].end_of_stream) == ("too-many-requests", True)
        assert BusyStreamer.tries == 3


class Sent:
    """Upstream's producer as a handler sees it: ``await send(record, properties)``."""

    def __init__(self) -> None:
        self.sent: list[tuple[TextCompletionResponse, dict[str, str]]] = []

    async def send(self, record, properties=None):
        self.sent.append((record, properties))


class UpstreamFlow:
    """Upstream's flow as a handler sees it: ``flow(name)`` a parameter, ``flow.producer[...]``."""

    def __init__(self, **parameters) -> None:
        self.name = "up"
        self.parameters = parameters
        self.producer = {"response": Sent()}

    def __call__(self, name):
        return self.parameters.get(name)


class UpstreamMessage:
    def __init__(self, record, rid: str) -> None:
        self._record, self._rid = record, rid

    def value(self):
        return self._record

    def properties(self):
        return {"id": self._rid}


class Consumer:
    name = "request"


async def test_upstreams_on_request_called_directly_answers_on_the_flows_producer():
    service = Echo(metrics=False, follow_config=False, pubsub=memory_pubsub(MemoryBroker(), "t"))
    flow = UpstreamFlow(model="gpt-4", temperature=0.7)
    await service.on_request(UpstreamMessage(TextCompletionRequest(system="s", prompt="p"), "r1"), Consumer(), flow)
    ((record, props),) = flow.producer["response"].sent
    assert props == {"id": "r1"} and service.calls == [("s", "p", "gpt-4", 0.7)]
    assert (record.response, record.in_token, record.out_token, record.model, record.end_of_stream) == \
        ("s|p", 3, 2, "gpt-4", True)
    flow = UpstreamFlow()
    await service.on_request(UpstreamMessage(TextCompletionRequest(prompt="boom"), "r2"), Consumer(), flow)
    ((record, props),) = flow.producer["response"].sent
    assert props == {"id": "r2"} and service.calls[-1] == ("", "boom", None, None)
    assert (record.error.type, record.error.message, record.response, record.end_of_stream) == \
        ("llm-error", "the backend fell over", None, True)
