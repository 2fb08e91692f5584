"""A user's flow processor written for upstream 2.1's ``FlowProcessor`` calls our services, on a real broker.

The processor (``upstream_flow_processor.py``: ``ConsumerSpec``, ``ProducerSpec``,
``PromptClientSpec``, ``ToolServiceClientSpec``, a config handler) runs as a
process of its own beside our config-svc, prompt-template (with our scripted
model behind it) and joke-service (a DynamicToolService): a topic sent to it
comes back as a joke from the tool service and the prompt service's rating
of it, the rating streamed or not; a tool service error comes back as the
processor's own error reply.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flow_stack import Stack, pair, uid, until_served
from trustgraph.schema import PromptRequest, PromptResponse, TextCompletionRequest, TextCompletionResponse

PROCESSOR = Path(__file__).with_name("upstream_flow_processor.py")


@pytest.fixture
async def stack(broker, spawn, tmp_path):
    s = Stack(broker, spawn, tmp_path)
    yield s
    await s.close()


def prompts() -> dict[tuple[str, str], str]:
    return {("prompt", "template.rate"): json.dumps({"prompt": "Rate this joke: {{ joke }}"}),
            ("prompt", "template.ping"): json.dumps({"prompt": "PING"}),
            ("prompt", "template-index"): json.dumps(["rate", "ping"]),
            ("prompt", "system"): json.dumps("You rate jokes.")}


@pytest.mark.slow
async def test_a_users_upstream_flow_processor_calls_our_prompt_service_and_tool_service(stack, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [{"match": "Rate this joke: Hey alice!", "reply": "eight out of ten"},
                                            {"match": "PING", "reply": "PONG"}],
                                  "default": "no rating"}))
    flow = f"f-{uid()}"
    llm_id, prompt_id, joke, mine = f"tc-{uid()}", f"prompt-{uid()}", f"joke-{uid()}", f"explainer-{uid()}"
    tc, pr, me = pair(f"text-completion-{uid()}"), pair(f"prompt-{uid()}"), pair(f"explainer-{uid()}")
    own = uid()   # announce topics of this test alone
    announce = ("--announce-queue", f"non-persistent://tg/config/announce-{own}",
                "--announce-probe-queue", f"non-persistent://tg/config/probe-{own}")
    stack.start("text-completion-scripted", llm_id, "--script", str(script))
    stack.start("prompt-template", prompt_id)
    stack._spawn("joke-service", "-t", joke, *announce, broker=stack.broker, wait=False)
    processor = stack.start("python", mine, lead=(str(PROCESSOR),))
    stack.ready()
    await stack.put({
        ("active-flow", llm_id): json.dumps({flow: {"request": tc[0], "response": tc[1]}}),
        ("active-flow", prompt_id): json.dumps({flow: {
            "request": pr[0], "response": pr[1],
            "text-completion-request": tc[0], "text-completion-response": tc[1]}}),
        ("active-flow", mine): json.dumps({flow: {
            "request": me[0], "response": me[1], "prompt-request": pr[0], "prompt-response": pr[1],
            "joke-request": f"non-persistent://tg/request/{joke}",
            "joke-response": f"non-persistent://tg/response/{joke}"}}),
        ("joke-explainer", "style"): json.dumps("pun"),
        **prompts()})

    # prompt-template answers once its model's flow is up too.
    prompt = stack.client(pr, PromptRequest, PromptResponse)
    await until_served(lambda: prompt.request(PromptRequest(id="ping", terms={}), timeout=5), "prompt-template",
                       ok=lambda r: r.error is None and r.text == "PONG")

    explainer = stack.client(me, TextCompletionRequest, TextCompletionResponse)
    r = await until_served(lambda: explainer.request(TextCompletionRequest(prompt="cats"), timeout=10),
                           "the user's processor", ok=lambda r: r.error is None)
    joke_text, rating = r.response.split("\n-- ")
    assert joke_text.startswith("Hey alice! Here's a pun for you:") and "cat" in joke_text.lower()
    assert (rating, r.end_of_stream) == ("eight out of ten", True)

    # The rating streamed through prompt-template: the chunks join to the same text.
    r = await explainer.request(TextCompletionRequest(prompt="cats", streaming=True), timeout=30)
    assert (r.error, r.response) == (None, f"{joke_text}\n-- eight out of ten")
    assert "Rating streamed in" in processor.output()

    # A tool service error is the processor's to report: it came back as an exception of the client.
    await stack.put({("joke-explainer", "style"): json.dumps("limerick-of-doom")})
    r = await until_served(lambda: explainer.request(TextCompletionRequest(prompt="cats"), timeout=10),
                           "the new style", ok=lambda r: r.error is not None)
    assert r.error.type == "explainer-error" and "limerick-of-doom" in r.error.message
    logged = processor.output()
    assert f"on request of flow {flow}" in logged and "Joke style limerick-of-doom" in logged
