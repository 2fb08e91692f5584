"""Text-completion services and prompt-template as real processes on a real broker.

Each test runs its own config-svc on topics of its own (``flow_stack.Stack``),
starts the services under test with unique ids, and gives them flows by putting
``active-flow/<id>`` through that config-svc, as start-flow would.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from flow_stack import Stack, pair, uid, until_served
from support import wait_for_async
from trustgraph.base import RequestResponseClient
from trustgraph.base.formats import decision_schema as ds
from trustgraph.base.messaging.message import Message
from trustgraph.schema import (
    PromptRequest,
    PromptResponse,
    TextCompletionRequest,
    TextCompletionResponse,
)

KEY = "sk-test-DO-NOT-LOG-4f1c"


@pytest.fixture
async def stack(broker, spawn, tmp_path):
    s = Stack(broker, spawn, tmp_path)
    yield s
    await s.close()


class Llm:
    """Calls one flow's text-completion service."""

    def __init__(self, client: RequestResponseClient) -> None:
        self.client = client

    async def ask(self, prompt: str, system: str = "", timeout: float = 10.0,
                  **props: Any) -> TextCompletionResponse:
        properties = {k: v if isinstance(v, str) else json.dumps(v) for k, v in props.items()}
        return await self.client.request(TextCompletionRequest(system=system, prompt=prompt),
                                         timeout=timeout, properties=properties)

    async def stream(self, prompt: str, system: str = "", timeout: float = 10.0,
                     **props: Any) -> list[TextCompletionResponse]:
        properties = {k: v if isinstance(v, str) else json.dumps(v) for k, v in props.items()}
        return [r async for r in self.client.stream(
            TextCompletionRequest(system=system, prompt=prompt, streaming=True),
            final=lambda r: r.end_of_stream, timeout=timeout, properties=properties)]


    async def messages(self, prompt: str, streaming: bool = False, timeout: float = 10.0,
                       **props: Any) -> list[Message]:
        """Every response as a whole message (record and properties), up to the last."""
        properties = {k: v if isinstance(v, str) else json.dumps(v) for k, v in props.items()}
        return [m async for m in self.client.stream(
            TextCompletionRequest(prompt=prompt, streaming=streaming), final=lambda m: m.value.end_of_stream,
            timeout=timeout, properties=properties, messages=True)]


async def llm_flow(stack: Stack, command: str, *args: str,
                   params: dict[str, str] | None = None,
                   env: dict[str, str] | None = None) -> tuple[Llm, Any]:
    """Start an LLM service with one flow; return a caller once that flow answers, and the process."""
    ident, topics = f"tc-{uid()}", pair(f"text-completion-{uid()}")
    proc = stack.start(command, ident, *args, env=env)
    stack.ready()
    served = stack.served(topics[0])
    flow = {"request": topics[0], "response": topics[1], **(params or {})}
    await stack.put({("active-flow", ident): json.dumps({f"f-{uid()}": flow})})
    llm = Llm(stack.client(topics, TextCompletionRequest, TextCompletionResponse))
    # A probe sent before the flow's consumer is there is dropped and waits its whole deadline:
    # sent once the service says it serves the flow, it is answered.
    try:
        await asyncio.wait_for(served, 120.0)
    except TimeoutError:
        pytest.fail(f"{command} did not say within 120 s that it serves its flow's {topics[0]}")
    # The embedded model serves one request at a time, so a probe that gave up
    # still occupies it: probe with a deadline it can meet on a loaded machine (a
    # 24-token answer has taken over 5 s on two busy cores, and a 120-token one over
    # 30 s with another embedded model generating beside the suite).
    await until_served(lambda: llm.ask("PING", timeout=90.0), command, total=240.0)
    return llm, proc


# -- text-completion-openai against an OpenAI-compatible server of ours -------------


DECISION = re.compile(r"\[decide ([\w-]+)=([\d.]+)((?: [\w-]+=[\d.]+)*)\]")


def answer_pieces(content: str) -> list[tuple[str, float, dict[str, float]]]:
    """The answer to ``content`` as tokens, each with its probability and the other likely tokens.

    ``[decide tell-joke=0.6 weather=0.3]`` answers ``{"action": "tell-joke", ...}``: at the name's
    first token the model wanted ``tell`` with 0.6 and ``weather`` with 0.3 (each name's first
    part, up to a ``-``); every other token is certain.  Anything else: ``You said N words``.
    """
    found = DECISION.search(content)
    if found is None:
        return [(p, 1.0, {}) for p in ["You ", "said ", f"{len(content.split())} ", "words"]]
    chosen, p = found.group(1), float(found.group(2))
    others = {name.split("-")[0]: float(q) for name, q in
              (pair.split("=") for pair in found.group(3).split())}
    head, _, tail = chosen.partition("-")
    return [('{"', 1.0, {}), ("action", 1.0, {}), ('":', 1.0, {}), (' "', 1.0, {}), (head, p, others),
            *([("-" + tail, 1.0, {})] if tail else []), ('", "args": {}}', 1.0, {})]


def logprob_entry(token: str, p: float, others: dict[str, float], top: int) -> dict[str, Any]:
    """One ``logprobs.content`` entry in OpenAI's shape, with the ``top`` likeliest tokens."""
    likely = sorted({token: p, **others}.items(), key=lambda kv: -kv[1])[:top]
    return {"token": token, "logprob": math.log(p), "bytes": list(token.encode()),
            "top_logprobs": [{"token": t, "logprob": math.log(q), "bytes": list(t.encode())} for t, q in likely]}


class FakeOpenAI:
    """``/v1/chat/completions``, plain and SSE, with ``logprobs`` when asked; the prompt's tags
    pick the answer (:func:`answer_pieces`) and failures."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.seen: Counter[str] = Counter()
        self.runner: web.AppRunner | None = None

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.chat)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        return f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/v1"

    def calls(self, tag: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if tag in r["body"]["messages"][-1]["content"]]

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        content = body["messages"][-1]["content"]
        self.requests.append({"body": body, "auth": request.headers.get("Authorization")})
        self.seen[content] += 1
        if "[500]" in content:
            return web.json_response({"error": {"message": "the model fell over"}}, status=500)
        if "[400]" in content:
            return web.json_response({"error": {"message": "unknown parameter 'frobnicate'"}}, status=400)
        if "[no-schema]" in content and "response_format" in body:
            return web.json_response({"error": {"message": "response_format json_schema is not supported"}},
                                     status=400)
        if "[401-echo]" in content:   # a server that quotes the request's header in its refusal
            return web.json_response({"error": {"message": f"invalid credentials in Authorization: "
                                                           f"{request.headers.get('Authorization')}"}}, status=401)
        if "[429-once]" in content and self.seen[content] == 1:
            return web.json_response({"error": {"message": "slow down"}}, status=429)
        if "[no-logprobs]" in content and ("logprobs" in body or "top_logprobs" in body):
            # OpenAI's own words for a model without them
            return web.json_response({"error": {"message": "Unsupported parameter: 'logprobs' is not "
                                                           "supported with this model."}}, status=400)
        pieces = answer_pieces(content)
        text = [p for p, _, _ in pieces]

        def logprobs(*entries: tuple[str, float, dict[str, float]]) -> dict[str, Any] | None:
            if not body.get("logprobs") or "[ignores-logprobs]" in content:
                return None
            if "[junk-logprobs]" in content:
                return {"content": [{"token": t, "logprob": 1e6, "top_logprobs": 7} for t, _, _ in entries]}
            return {"content": [logprob_entry(*e, top=body.get("top_logprobs", 0)) for e in entries]}

        usage = {"prompt_tokens": len(content.split()), "completion_tokens": len(pieces),
                 "total_tokens": len(content.split()) + len(pieces)}
        base = {"id": "c1", "created": 0, "model": body["model"]}
        if not body.get("stream"):
            return web.json_response({**base, "object": "chat.completion", "usage": usage, "choices": [
                {"index": 0, "finish_reason": "stop", "logprobs": logprobs(*pieces),
                 "message": {"role": "assistant", "content": "".join(text)}}]})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        chunks = [{"index": 0, "delta": {"content": p[0]}, "logprobs": logprobs(p), "finish_reason": None}
                  for p in pieces]
        for choices, extra in [*[([c], {}) for c in chunks],
                               ([{"index": 0, "delta": {}, "finish_reason": "stop"}], {}),
                               ([], {"usage": usage})]:
            data = {**base, "object": "chat.completion.chunk", "choices": choices, **extra}
            await resp.write(f"data: {json.dumps(data)}\n\n".encode())
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()


@pytest.fixture
async def fake_openai():
    server = FakeOpenAI()
    url = await server.start()
    yield server, url
    await server.stop()


async def test_openai_plain_streaming_retry_and_flow_parameters(stack, fake_openai):
    server, url = fake_openai
    # A local server needs no API key.
    llm, _ = await llm_flow(stack, "text-completion-openai", "-u", url, "-x", "77",
                            params={"model": "flow-model", "temperature": "0.25"},
                            env={"OPENAI_TOKEN": ""})

    r = await llm.ask("hello there [plain]", system="Be terse.")
    assert (r.error, r.response, r.in_token, r.out_token, r.model, r.end_of_stream) == \
        (None, "You said 5 words", 5, 4, "flow-model", True)
    sent = server.calls("[plain]")[0]
    assert sent["body"]["messages"] == [{"role": "user", "content": "Be terse.\n\nhello there [plain]"}]
    assert (sent["body"]["model"], sent["body"]["temperature"], sent["body"]["max_tokens"]) == \
        ("flow-model", 0.25, 77)
    assert sent["auth"] == "Bearer not-needed"

    chunks = await llm.stream("stream me [stream]", stop=["\nObservation"])
    assert [c.response for c in chunks[:-1]] == ["You ", "said ", "3 ", "words"]
    assert not any(c.end_of_stream for c in chunks[:-1])
    last = chunks[-1]
    assert (last.end_of_stream, last.response, last.in_token, last.out_token, last.model) == \
        (True, "", 3, 4, "flow-model")
    assert server.calls("[stream]")[0]["body"]["stop"] == ["\nObservation"]

    r = await llm.ask("busy [429-once]")
    assert r.error is None and r.response == "You said 2 words"
    assert len(server.calls("[429-once]")) == 2


async def test_openai_errors_are_llm_errors_within_the_deadline(stack, fake_openai):
    server, url = fake_openai
    llm, proc = await llm_flow(stack, "text-completion-openai", "-u", url, "-k", KEY, "--timeout", "30",
                               "-l", "DEBUG")

    start = time.monotonic()
    r = await llm.ask("always failing [500]", timeout=60)
    elapsed = time.monotonic() - start
    assert r.error is not None and r.error.type == "llm-error", r
    assert "500" in r.error.message and "the model fell over" in r.error.message
    assert r.end_of_stream and elapsed < 30                # its retries end within its own timeout
    assert len(server.calls("[500]")) == 3                 # bounded retries

    chunks = await llm.stream("stream failing [500]", timeout=15)
    assert len(chunks) == 1 and chunks[0].error.type == "llm-error" and chunks[0].end_of_stream

    r = await llm.ask("bad request [400]")
    assert r.error.type == "llm-error" and "unknown parameter 'frobnicate'" in r.error.message
    assert len(server.calls("[400]")) == 1                 # not retried
    assert server.requests[-1]["auth"] == f"Bearer {KEY}"
    assert KEY not in proc.output()


async def test_openai_credentials_in_the_url_never_replace_the_key_nor_reach_an_error(stack, fake_openai):
    server, url = fake_openai
    with_credentials = url.replace("http://", "http://alice:pa55-w0rd@")
    basic = base64.b64encode(b"alice:pa55-w0rd").decode()
    llm, proc = await llm_flow(stack, "text-completion-openai", "-u", with_credentials, "-k", KEY)
    r = await llm.ask("hello [plain]")
    assert r.error is None and server.calls("[plain]")[-1]["auth"] == f"Bearer {KEY}"   # the key, not Basic
    refused = await llm.ask("who am I [401-echo]")
    assert server.calls("[401-echo]")[-1]["auth"] == f"Bearer {KEY}"
    assert refused.error.type == "llm-error" and "401" in refused.error.message
    for secret in (KEY, "pa55-w0rd", basic):
        assert secret not in refused.error.message, refused.error.message
        assert secret not in proc.output()
    assert "Authorization: Bearer ***" in refused.error.message
    assert "they are not sent: the API key is sent as the bearer token" in proc.output()


async def test_openai_credentials_in_the_url_without_a_key_are_sent_as_basic_auth(stack, fake_openai):
    server, url = fake_openai
    llm, proc = await llm_flow(stack, "text-completion-openai", "-u", url.replace("http://", "http://alice:pa55-w0rd@"),
                               env={"OPENAI_TOKEN": ""})
    basic = base64.b64encode(b"alice:pa55-w0rd").decode()
    refused = await llm.ask("who am I [401-echo]")
    assert server.calls("[401-echo]")[-1]["auth"] == f"Basic {basic}"
    assert "401" in refused.error.message
    for secret in ("pa55-w0rd", basic):
        assert secret not in refused.error.message and secret not in proc.output()


async def test_openai_sends_a_schema_as_structured_output_and_falls_back_when_refused(stack, fake_openai):
    server, url = fake_openai
    llm, proc = await llm_flow(stack, "text-completion-openai", "-u", url, "-m", "m1", env={"OPENAI_TOKEN": ""})
    schema = {"type": "object", "properties": {"action": {"const": "x"}}, "required": ["action"]}

    r = await llm.ask("decide [structured]", schema=schema)
    assert r.error is None
    assert server.calls("[structured]")[0]["body"]["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "output", "schema": schema, "strict": False}}
    assert (await llm.ask("free [unstructured]")).error is None
    assert "response_format" not in server.calls("[unstructured]")[0]["body"]

    # A server that refuses structured output: asked again without, and not asked again with it.
    r = await llm.ask("decide [no-schema]", schema=schema)
    assert (r.error, r.response) == (None, "You said 2 words")
    first, second = server.calls("[no-schema]")
    assert "response_format" in first["body"] and "response_format" not in second["body"]
    chunks = await llm.stream("again [no-schema]", schema=schema)
    assert "".join(c.response for c in chunks) == "You said 2 words"
    assert ["response_format" in c["body"] for c in server.calls("[no-schema]")] == [True, False, False]
    assert "refused structured output for model m1" in proc.output()

    r = await llm.ask("bad [plain]", schema="{not json")
    assert r.error.type == "llm-error" and "property 'schema' is not JSON" in r.error.message


OPTIONS = ["tell-joke", "weather", "final-answer"]
SCORE = {ds.CHOICES_PROPERTY: ds.choices_request(OPTIONS)}
DECIDE_SCHEMA = ds.decision_schema([("tell-joke", {"type": "object"}), ("weather", {"type": "object"})])


def scores_of(message: Message) -> dict[str, float] | None:
    raw = message.properties.get(ds.SCORES_PROPERTY)
    return None if raw is None else json.loads(raw)


async def test_openai_reports_choice_scores_from_the_servers_logprobs(stack, fake_openai):
    server, url = fake_openai
    llm, _ = await llm_flow(stack, "text-completion-openai", "-u", url, env={"OPENAI_TOKEN": ""})

    # Whole names scored from the token probabilities; one never considered gets half the least.
    [m] = await llm.messages("pick [decide tell-joke=0.6 weather=0.3] [plain]", **SCORE)
    assert (m.value.error, m.value.response) == (None, '{"action": "tell-joke", "args": {}}')
    assert scores_of(m) == pytest.approx({"tell-joke": 0.6, "weather": 0.3, "final-answer": 0.15})
    sent = server.calls("[plain]")[0]["body"]
    assert (sent["logprobs"], sent["top_logprobs"]) == (True, 20)

    # Streaming, beside the schema: the tokens of every chunk count, the scores ride on the end marker.
    ms = await llm.messages("pick [decide weather=0.7 tell-joke=0.2] [stream]", streaming=True,
                            schema=DECIDE_SCHEMA, **SCORE)
    assert "".join(m.value.response for m in ms) == '{"action": "weather", "args": {}}'
    assert ms[-1].value.end_of_stream and len(ms) > 2
    assert [scores_of(m) for m in ms[:-1]] == [None] * (len(ms) - 1)
    assert scores_of(ms[-1]) == pytest.approx({"weather": 0.7, "tell-joke": 0.2, "final-answer": 0.1})
    sent = server.calls("[stream]")[0]["body"]
    assert (sent["logprobs"], sent["top_logprobs"], sent["stream"]) == (True, 20, True)
    assert sent["response_format"]["json_schema"]["schema"] == DECIDE_SCHEMA

    # Without score-choices no logprobs are asked for, and none are reported.
    for streaming in (False, True):
        ms = await llm.messages(f"pick [decide tell-joke=0.6 weather=0.3] [unscored-{streaming}]",
                                streaming=streaming, schema=DECIDE_SCHEMA)
        assert ms[-1].value.error is None and scores_of(ms[-1]) is None
        sent = server.calls(f"[unscored-{streaming}]")[0]["body"]
        assert "logprobs" not in sent and "top_logprobs" not in sent


async def test_openai_answers_without_scores_when_the_server_gives_no_logprobs(stack, fake_openai):
    server, url = fake_openai
    llm, proc = await llm_flow(stack, "text-completion-openai", "-u", url, "-m", "m1", env={"OPENAI_TOKEN": ""})
    decision = '{"action": "tell-joke", "args": {}}'

    # A server that ignores logprobs, or sends some that cannot be read: the answer, no scores.
    for tag in ("[ignores-logprobs]", "[junk-logprobs]"):
        for streaming in (False, True):
            ms = await llm.messages(f"pick [decide tell-joke=0.6 weather=0.3] {tag} {streaming}",
                                    streaming=streaming, **SCORE)
            assert ms[-1].value.error is None and ms[-1].value.end_of_stream, (tag, streaming)
            assert "".join(m.value.response for m in ms) == decision
            assert [scores_of(m) for m in ms] == [None] * len(ms)
        assert all(c["body"]["logprobs"] for c in server.calls(tag))

    # A server that refuses them (and structured output): asked again without each, once.
    refusing = "pick [decide tell-joke=0.6 weather=0.3] [no-schema] [no-logprobs]"
    [m] = await llm.messages(refusing, schema=DECIDE_SCHEMA, **SCORE)
    assert (m.value.error, m.value.response, scores_of(m)) == (None, decision, None)
    assert [("response_format" in c["body"], "logprobs" in c["body"]) for c in server.calls(refusing)] == \
        [(True, True), (False, True), (False, False)]
    # ...and this model is not asked for them again.
    ms = await llm.messages(refusing + " again", streaming=True, schema=DECIDE_SCHEMA, **SCORE)
    assert "".join(m.value.response for m in ms) == decision and scores_of(ms[-1]) is None
    again = server.calls(refusing + " again")
    assert len(again) == 1 and "logprobs" not in again[0]["body"] and "top_logprobs" not in again[0]["body"]
    # Scores are an extra: nothing about them above DEBUG.
    assert "logprob" not in proc.output().lower()


async def test_openai_without_key_needs_one_only_for_openai(spawn, broker, tmp_path):
    proc = spawn("text-completion-openai", "-u", "https://api.openai.com/v1", broker=broker, wait=False,
                 env={"OPENAI_TOKEN": ""})
    assert proc.p.wait(20) == 1
    assert "API key is required" in proc.output()


# -- the scripted test model ---------------------------------------------------------


async def test_scripted_model_rules_replies_stop_prefix_and_streaming(stack, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [
        {"match": "PING", "reply": "PONG"},
        {"match": r"capital of \w+", "reply": "Paris is the capital."},
        {"match": "count", "replies": ["one", "two", "three"]},
        {"match": "agent", "reply": "Thought: look it up\nAction: kb\nObservation: leaked"},
    ], "default": "I don't know."}))
    llm, _ = await llm_flow(stack, "text-completion-scripted", "--script", str(script))

    r = await llm.ask("What is the capital of France?", system="Be brief.")
    assert (r.response, r.in_token, r.out_token, r.model) == ("Paris is the capital.", 8, 4, "scripted")
    assert [(await llm.ask("count")).response for _ in range(4)] == ["one", "two", "three", "three"]
    assert (await llm.ask("something else")).response == "I don't know."

    r = await llm.ask("agent step", stop=["\nObservation"], prefix="Thought:")
    assert r.response == " look it up\nAction: kb"

    chunks = await llm.stream("agent step", stop=["\nObservation"])
    assert len(chunks) > 2 and chunks[-1].end_of_stream and chunks[-1].response == ""
    assert "".join(c.response for c in chunks) == "Thought: look it up\nAction: kb"
    assert chunks[-1].out_token == 6


async def test_a_prefix_is_continued_and_said_so_or_the_whole_prompt_is_shown(stack, tmp_path, fake_openai):
    """prompt-template sends the turn's start at the prompt's end, the prompt without it as
    prefix-prompt, and the turn as prefix: a service that continues turns is shown the turn once,
    as its own, and marks every reply; one that cannot (OpenAI's API) is shown the whole prompt."""
    script = tmp_path / "script.json"
    record = tmp_path / "sent.jsonl"
    script.write_text(json.dumps({"rules": [{"match": "Question: Q", "reply": "Thought: I know\nFinal Answer: A"}],
                                  "record": str(record)}))
    llm, _ = await llm_flow(stack, "text-completion-scripted", "--script", str(script))
    turn = {"prefix": "Thought:", "prefix-prompt": "Question: Q"}
    for streaming in (False, True):
        ms = await llm.messages("Question: Q\nThought:", streaming=streaming, **turn)
        assert "".join(m.value.response for m in ms) == " I know\nFinal Answer: A"
        assert all(m.properties.get("prefix-continued") == "true" for m in ms)
    sent = [json.loads(line) for line in record.read_text().splitlines()]
    assert {(r["prompt"], r["prefix"]) for r in sent if "Question" in r["prompt"]} == {("Question: Q", "Thought:")}

    server, url = fake_openai
    llm, _ = await llm_flow(stack, "text-completion-openai", "-u", url, env={"OPENAI_TOKEN": ""})
    for streaming in (False, True):
        ms = await llm.messages(f"Question: Q [turn-{streaming}]\nThought:", streaming=streaming, **turn)
        assert ms[-1].value.error is None and not any("prefix-continued" in m.properties for m in ms)
        (call,) = server.calls(f"[turn-{streaming}]")
        assert call["body"]["messages"] == [{"role": "user", "content": f"Question: Q [turn-{streaming}]\nThought:"}]


async def test_scripted_model_enforces_the_requests_schema(stack, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [{"match": "PING", "reply": "PONG"},
                                            {"match": "decide", "reply": '{"action": "weather"}'}]}))
    llm, _ = await llm_flow(stack, "text-completion-scripted", "--script", str(script))
    allows = {"type": "object", "properties": {"action": {"enum": ["weather"]}}, "required": ["action"]}
    refuses = {"type": "object", "properties": {"action": {"const": "final-answer"}}}

    assert (await llm.ask("decide", schema=allows)).response == '{"action": "weather"}'
    r = await llm.ask("decide", schema=refuses)
    assert r.error.type == "llm-error" and "does not follow the request's schema" in r.error.message
    assert "at /action" in r.error.message
    r = await llm.ask("PING", schema=allows)
    assert "not JSON, as the request's schema requires" in r.error.message
    chunks = await llm.stream("decide", schema=refuses)
    assert len(chunks) == 1 and chunks[0].error.type == "llm-error"


# -- the embedded real model ----------------------------------------------------------


@pytest.mark.slow
async def test_callers_that_gave_up_cannot_starve_a_fresh_request(stack, tmp_path):
    # One generation at a time, a second each: eight callers that give up after 0.3 s
    # would hold the model for 8 s if their requests were still worked on.
    script = tmp_path / "slow.json"
    script.write_text(json.dumps({"rules": [], "default": "answer", "delay": 1.0}))
    llm, _ = await llm_flow(stack, "text-completion-scripted", "--script", str(script), "-c", "1")
    abandoned = [asyncio.ensure_future(llm.ask(f"abandoned {i}", timeout=0.3)) for i in range(8)]
    for call in abandoned:
        # The caller gives up; or, when the service sees the deadline pass first, it says so.
        try:
            r = await call
        except TimeoutError:
            continue
        assert r.error is not None and "no completion within" in r.error.message, r
    fresh = await llm.ask("fresh", timeout=6.0)
    assert (fresh.error, fresh.response) == (None, "answer")


@pytest.mark.timeout(480)   # the real model on a loaded machine: a hang bound, not a speed
async def test_llamacpp_real_model_answers_with_counts(stack):
    llm, _ = await llm_flow(stack, "text-completion-llamacpp", "-x", "24", "--ctx", "1024")

    r = await llm.ask("Say hello to the user.", system="You are a friendly assistant.", timeout=60)
    assert r.error is None, r.error
    assert r.response.strip() and r.in_token > 5 and 0 < r.out_token <= 24
    assert r.model == "SmolLM2-135M-Instruct.Q4_1"

    chunks = await llm.stream("Say hello to the user.", system="You are a friendly assistant.", timeout=60)
    assert chunks[-1].end_of_stream and (chunks[-1].in_token, chunks[-1].out_token) == (r.in_token, r.out_token)
    assert "".join(c.response for c in chunks) == r.response       # greedy: the same text every time

    word = r.response.split()[1]
    cut = await llm.ask("Say hello to the user.", system="You are a friendly assistant.", stop=[word], timeout=60)
    assert cut.response == r.response[:r.response.index(word)]


@pytest.mark.timeout(480)   # the real model on a loaded machine: a hang bound, not a speed
async def test_llamacpp_real_model_follows_the_schema(stack):
    # The model is asked for a tool it has never seen, under a schema: llama.cpp's grammar
    # lets it write nothing else than one of the allowed calls, with its declared arguments.
    import jsonschema
    from trustgraph.base.descriptors.arguments import ToolArgument, arguments_schema
    from trustgraph.base.formats import decision_schema as ds

    llm, _ = await llm_flow(stack, "text-completion-llamacpp", "-x", "120", "--ctx", "1024")
    schema = ds.narrow(ds.decision_schema([
        ("weather", arguments_schema([ToolArgument(name="city", type="string", description="The city")])),
        ("convert", arguments_schema([ToolArgument(name="amount", type="number", description="How much"),
                                      ToolArgument(name="to", type="string", description="Currency")])),
    ]), answer=False)
    prompt = ("Tools: weather (argument city), convert (arguments amount, to).\n"
              "Reply with one JSON object naming the tool and its args.\nQuestion: Convert 20 dollars to euros")
    r = await llm.ask(prompt, timeout=60, schema=schema)
    assert r.error is None, r.error
    jsonschema.validate(json.loads(r.response), schema)
    chunks = await llm.stream(prompt, timeout=60, schema=schema)
    assert "".join(c.response for c in chunks) == r.response



@pytest.mark.timeout(480)   # the real model on a loaded machine: a hang bound, not a speed
async def test_llamacpp_reuses_a_prompt_asked_again_under_another_schema(tmp_path):
    # The agent asks the prompt of its decision again under a narrower schema (the ranker's tool's
    # arguments): llama.cpp must reuse what it computed of that prompt.  The same request asked
    # again is computed afresh and answers byte for byte as before.  One processor with the real
    # model, no broker needed.
    from trustgraph.base.testing.memory import MemoryBroker, memory_pubsub
    from trustgraph.model.text_completion.llamacpp.llm import Engine, Processor, default_model_path

    processor = Processor(id="llm", metrics=False, follow_config=False,
                          pubsub=memory_pubsub(MemoryBroker(), "llm"), max_output=40)
    processor.engine = await asyncio.to_thread(Engine, default_model_path(), 2, 1024)
    weather = ("weather", {"type": "object", "properties": {"city": {"enum": ["Paris", "rain"]}},
                           "required": ["city"]})
    joke = ("tell-joke", {"type": "object", "properties": {"topic": {"enum": ["Paris", "rain"]}},
                          "required": ["topic"]})
    both = ds.narrow(ds.decision_schema([joke, weather]), answer=False)
    only = ds.narrow(ds.decision_schema([weather]), answer=False)
    prompt = "Tools: tell-joke (topic), weather (city).\nQuestion: Will it rain in Paris?"

    first = await processor.generate("", prompt, "m", 0.0, [], "", schema=only)
    assert processor.reused == 0
    same = await processor.generate("", prompt, "m", 0.0, [], "", schema=only)
    assert processor.reused == 0 and same.text == first.text
    narrowed = await processor.generate("", prompt, "m", 0.0, [], "", schema=both)
    assert processor.reused > 10 and narrowed.in_token == first.in_token
    assert json.loads(narrowed.text)["action"] in ("weather", "tell-joke")
    await processor.generate("", prompt.replace("Paris", "Rome"), "m", 0.0, [], "", schema=only)
    assert processor.reused == 0
    await processor.generate("", prompt, "m", 0.0, [], "", schema=both)
    assert processor.reused == 0          # another prompt came between: computed afresh

# -- prompt-template with the scripted model, through flows ---------------------------


SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
          "required": ["name", "age"]}


def templates(**spec: dict) -> dict[tuple[str, str], str]:
    values = {("prompt", f"template.{k}"): json.dumps(v) for k, v in spec.items()}
    values[("prompt", "template-index")] = json.dumps(list(spec))
    values[("prompt", "system")] = json.dumps("You are {{ persona | default('a helper') }}.")
    return values


async def prompt_flow(stack: Stack, script: Path, prompts: dict[tuple[str, str], str]) -> RequestResponseClient:
    """The scripted model and prompt-template on one flow with ``prompts``; a client of the prompt service."""
    llm_id, prompt_id = f"tc-{uid()}", f"prompt-{uid()}"
    tc, pr = pair(f"text-completion-{uid()}"), pair(f"prompt-{uid()}")
    stack.start("text-completion-scripted", llm_id, "--script", str(script))
    stack.start("prompt-template", prompt_id)
    stack.ready()
    await stack.put({
        ("active-flow", llm_id): json.dumps({"default": {"request": tc[0], "response": tc[1]}}),
        ("active-flow", prompt_id): json.dumps({"default": {
            "request": pr[0], "response": pr[1],
            "text-completion-request": tc[0], "text-completion-response": tc[1]}}),
        **prompts})
    return stack.client(pr, PromptRequest, PromptResponse)


def without_error(r: PromptResponse) -> bool:
    """A prompt reply that is no error: prompt-template answers before its LLM's flow has started,
    with an error ("text-completion did not answer"), so an answer alone does not mean both are up."""
    return r.error is None


async def test_prompt_template_end_to_end(stack, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [
        {"match": r"^You are a helper\.\n\nPING$", "reply": "PONG"},
        {"match": "Say hello to Alice from Paris", "reply": "Hello Alice!"},
        {"match": "Wave at Alice", "reply": "*waves*"},
        {"match": "Describe Bob", "reply": "Sure:\n```json\n{\"name\": \"Bob\", \"age\": 42}\n```"},
        {"match": "Describe Eve", "reply": "{\"name\": \"Eve\"}"},
        {"match": "List people", "reply": "{\"name\": \"A\", \"age\": 1}\nnonsense\n{\"name\": \"B\", \"age\": 2}"},
        {"match": "Question: why", "reply": "Thought: because\nFinal Answer: 42\nObservation: junk"},
    ]}))
    client = await prompt_flow(stack, script, templates(
        ping={"prompt": "PING"},
        greet={"prompt": "Say hello to {{name}} from {{ place.city }}", "strict": True},  # opts in (upstream renders a missing variable empty)
        person={"prompt": "Describe {{name}}", "response-type": "json", "schema": SCHEMA},
        people={"prompt": "List people", "response-type": "jsonl", "schema": SCHEMA},
        agent={"prompt": "Question: {{question}}", "stop": ["\nObservation"], "prefix": "Thought:"},
        silent={"prompt": "nothing matches this"},
    ))

    async def ask(tid: str, timeout: float = 10.0, **variables: Any) -> PromptResponse:
        terms = {k: json.dumps(v) for k, v in variables.items()}
        return await client.request(PromptRequest(id=tid, terms=terms), timeout=timeout)

    await until_served(lambda: ask("ping", timeout=1.0), "prompt-template", ok=without_error)

    r = await ask("greet", name="Alice", place={"city": "Paris"})
    assert (r.error, r.text, r.object, r.end_of_stream) == (None, "Hello Alice!", None, True)
    r = await ask("person", name="Bob")
    assert r.text is None and json.loads(r.object) == {"name": "Bob", "age": 42}
    r = await ask("people")
    assert json.loads(r.object) == [{"name": "A", "age": 1}, {"name": "B", "age": 2}]
    r = await ask("agent", question="why")
    assert r.text == "Thought: because\nFinal Answer: 42"

    errors = {
        "schema": await ask("person", name="Eve"),
        "missing": await ask("greet", name="Alice"),
        "unknown": await ask("nope"),
        "llm": await ask("silent"),
    }
    for case, r in errors.items():
        assert r.error is not None and r.error.type == "llm-error", case
        assert (r.text, r.object, r.end_of_stream) == (None, None, True), case
    assert "'age' is a required property" in errors["schema"].error.message
    assert errors["missing"].error.message == "template 'greet': missing variable 'place'"
    assert "no rule matches" in errors["llm"].error.message

    got: list[PromptResponse] = [r async for r in client.stream(
        PromptRequest(id="agent", terms={"question": '"why"'}, streaming=True),
        final=lambda r: r.end_of_stream, timeout=10)]
    assert len(got) > 1 and all(g.object is None and g.error is None for g in got)
    assert "".join(g.text for g in got) == "Thought: because\nFinal Answer: 42"

    # Reload on config push, no restart.
    await stack.put({("prompt", "template.greet"): json.dumps({"prompt": "Wave at {{name}}"})})

    async def reloaded() -> bool:
        return (await ask("greet", name="Alice")).text == "*waves*"

    await wait_for_async("the reloaded template", reloaded, 60, every=0.1)


async def test_prompt_template_narrows_the_agents_schema_and_passes_it_to_the_llm(stack, tmp_path):
    from trustgraph.base.formats import decision_schema as ds
    script = tmp_path / "script.json"
    # The scripted model enforces the schema it receives, so each reply shows what arrived.
    script.write_text(json.dumps({"rules": [
        {"match": "PING", "reply": "PONG"},
        {"match": r"\(as text\)", "reply": "Thought: ok\nFinal Answer: text mode"},
        {"match": "Q: answer now", "reply": '{"action": "final-answer", "answer": "42"}'},
        {"match": "Q: call", "reply": '{"action": "weather", "args": {"city": "Paris"}}'},
    ]}))
    client = await prompt_flow(stack, script, templates(
        ping={"prompt": "PING"},
        step={"prompt": "Q: {{question}}", "decision": {"first-step": "tool", "after-result": "observation",
                                                        "text-template": "text"}},
        text={"prompt": "Q: {{question}} (as text)"},
    ))
    schema = ds.decision_schema([("weather", {"type": "object", "properties": {"city": {"type": "string"}},
                                              "required": ["city"]})])

    async def ask(question: str, history: list[dict], props: dict[str, str] | None = None,
                  timeout: float = 10.0) -> PromptResponse:
        terms = {"question": json.dumps(question), "history": json.dumps(history)}
        return await client.request(PromptRequest(id="step", terms=terms), timeout=timeout,
                                    properties=props if props is not None else {ds.PROPERTY: json.dumps(schema)})

    await until_served(lambda: client.request(PromptRequest(id="ping", terms={}), timeout=1.0), "prompt-template",
                       ok=without_error)

    assert json.loads((await ask("call", [])).text) == {"action": "weather", "args": {"city": "Paris"}}
    # The first step must call a tool: the answer was taken out of the schema the LLM got.
    r = await ask("answer now", [])
    assert r.error.type == "llm-error" and "does not follow the request's schema" in r.error.message
    # After an error any step is allowed, the answer included.
    failed = [{"thought": "", "action": "weather", "arguments": {}, "observation": "Error: no city"}]
    assert json.loads((await ask("answer now", failed)).text)["answer"] == "42"
    # After a result the template answers with it; the LLM (no rule matches) is not asked.
    done = [{"thought": "", "action": "weather", "arguments": {"city": "Paris"}, "observation": "Sunny"}]
    r = await ask("nothing matches", done)
    assert (r.error, json.loads(r.text)) == (None, {"action": "final-answer", "answer": "Sunny"})
    # Without a schema (an upstream agent) the text template is used; a broken schema is an error.
    r = await ask("call", [], props={})
    assert (r.error, r.text) == (None, "Thought: ok\nFinal Answer: text mode")
    r = await ask("call", [], props={ds.PROPERTY: "[oops"})
    assert "property 'decision-schema' is not JSON" in r.error.message


async def test_a_template_over_its_render_budget_is_an_llm_error_and_holds_up_nothing(stack, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [{"match": "PING", "reply": "PONG"}]}))
    loop = "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}PING"
    client = await prompt_flow(stack, script, templates(
        ping={"prompt": "PING"}, spin={"prompt": loop}, huge={"prompt": "{{ 'x' * 10**10 }}"}))
    await until_served(lambda: client.request(PromptRequest(id="ping"), timeout=1.0), "prompt-template",
                       ok=without_error)
    finished: list[str] = []

    async def ask(tid: str) -> PromptResponse:
        r = await client.request(PromptRequest(id=tid), timeout=30)
        finished.append(tid)
        return r

    slow = asyncio.ensure_future(ask("spin"))
    await asyncio.sleep(0)  # sent first
    fast = await ask("ping")
    spun = await slow
    # The 10^8-iteration render ran in a worker thread: the request behind it was answered first.
    assert fast.text == "PONG" and finished == ["ping", "spin"]
    assert spun.error.type == "llm-error"
    assert spun.error.message == ("template 'spin' is over its render budget: rendering took more "
                                  "than 1s of CPU time")
    huge = await ask("huge")
    assert huge.error.type == "llm-error" and "over its render budget: str * 10000000000" in huge.error.message
