"""A user's LLM provider written for upstream 2.1's ``LlmService`` serves our agent, on a real broker.

The provider (``upstream_llm_provider.py``, plain and streaming) runs as a
process of its own beside our config-svc, prompt-template, joke-service and
agent-manager-react: the agent's question goes through prompt-template to the
provider, whose decision calls the joke tool; the answer comes back, streamed
and not.  The provider's own wire is checked too: upstream's
TextCompletionResponse, chunk by chunk, and an error as upstream sends it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_stand_ins import flow_definition, service_descriptor, service_tool
from flow_stack import Stack, pair, uid, until_served
from trustgraph.schema import (
    AgentRequest,
    AgentResponse,
    AgentStep,
    PromptRequest,
    PromptResponse,
    TextCompletionRequest,
    TextCompletionResponse,
)

PROVIDER = Path(__file__).with_name("upstream_llm_provider.py")
EXAMPLES = Path(__file__).resolve().parents[2] / "config-examples"
MAX_ITERATIONS = 10


@pytest.fixture
async def stack(broker, spawn, tmp_path):
    s = Stack(broker, spawn, tmp_path)
    yield s
    await s.close()


def bootstrap_prompts() -> dict[tuple[str, str], str]:
    """The prompt config tg-launch loads (the agent's templates), plus a ``ping`` template."""
    boot = json.loads((EXAMPLES / "bootstrap.json").read_text())
    values = {("prompt", k): json.dumps(v) for k, v in boot["config"]["prompt"].items()}
    for key, name in boot["files"].items():
        if key.startswith("prompt/"):
            values[("prompt", key.split("/", 1)[1])] = (EXAMPLES / name).read_text()
    values[("prompt", "template.ping")] = json.dumps({"prompt": "PING"})
    values[("prompt", "template-index")] = json.dumps([*boot["config"]["prompt"]["template-index"], "ping"])
    return values


def answer_of(responses: list[AgentResponse]) -> str:
    """The final answer, from a streamed dialog's answer chunks or the non-streamed final message."""
    if any(r.chunk_type for r in responses):
        return "".join(r.content for r in responses if r.chunk_type == "answer")
    return responses[-1].answer


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["plain", "streaming"])
async def test_a_users_upstream_provider_serves_our_agent(stack, kind):
    flow = f"f-{uid()}"
    agent = flow_definition(flow)
    llm_id, prompt_id, agent_id, joke = f"tc-{uid()}", f"prompt-{uid()}", f"agent-{uid()}", f"joke-{uid()}"
    tc = pair(f"text-completion-{uid()}")
    own = uid()   # announce topics of this test alone: no other test's tool services reach this agent
    announce = ("--announce-queue", f"non-persistent://tg/config/announce-{own}",
                "--announce-probe-queue", f"non-persistent://tg/config/probe-{own}")
    provider = stack.start("python", llm_id, "-m", "user-default", lead=(str(PROVIDER), kind))
    stack.start("prompt-template", prompt_id)
    stack._spawn("joke-service", "-t", joke, *announce, broker=stack.broker, wait=False)
    stack.start("agent-manager-react", agent_id, *announce)
    stack.ready()
    await stack.put({
        ("active-flow", llm_id): json.dumps({flow: {"request": tc[0], "response": tc[1], "model": "flow-model"}}),
        ("active-flow", prompt_id): json.dumps({flow: {
            "request": agent["prompt-request"], "response": agent["prompt-response"],
            "text-completion-request": tc[0], "text-completion-response": tc[1]}}),
        ("active-flow", agent_id): json.dumps({flow: agent}),
        ("tool", "tell-joke"): json.dumps(service_tool("tell-joke", joke, style="pun")),
        ("tool-service", joke): json.dumps(service_descriptor(joke, [{"name": "style"}])),
        **bootstrap_prompts()})

    # The provider on its own: upstream's records on the wire.
    llm = stack.client(tc, TextCompletionRequest, TextCompletionResponse)
    r = await until_served(lambda: llm.request(TextCompletionRequest(system="s", prompt="PING"), timeout=5),
                           "the provider")
    assert (r.error, r.response, r.model, r.in_token, r.out_token, r.end_of_stream) == \
        (None, "PONG", "flow-model", 2, 1, True)
    chunks = [c async for c in llm.stream(TextCompletionRequest(prompt="one two three", streaming=True),
                                          final=lambda c: c.end_of_stream, timeout=10)]
    assert "".join(c.response for c in chunks) == "You said 3 words"
    assert len(chunks) == (5 if kind == "streaming" else 2)  # a chunk per word, or the whole text
    assert (chunks[-1].end_of_stream, chunks[-1].in_token, chunks[-1].out_token) == (True, 3, 4)
    r = await llm.request(TextCompletionRequest(prompt="please fail"), timeout=10)
    assert (r.error.type, r.error.message, r.end_of_stream) == ("llm-error", "the rules do not cover this", True)

    # prompt-template in front of it.
    prompt = stack.client((agent["prompt-request"], agent["prompt-response"]), PromptRequest, PromptResponse)
    r = await until_served(lambda: prompt.request(PromptRequest(id="ping", terms={}), timeout=5),
                           "prompt-template", ok=lambda r: r.error is None)
    assert r.text == "PONG"

    # Our agent: the provider's decision calls the joke tool, whose result is the answer.
    ask = stack.client((agent["request"], agent["response"]), AgentRequest, AgentResponse)
    probe = AgentRequest(question="probe", history=[AgentStep()] * MAX_ITERATIONS)
    await until_served(lambda: ask.request(probe, timeout=5), "the agent")
    for streaming in (False, True):
        question = AgentRequest(question="Tell me a joke about cats", user="alice", streaming=streaming)
        got = [m async for m in ask.stream(question, final=lambda m: m.end_of_dialog, timeout=60)]
        assert not any(m.error for m in got), got
        answer = answer_of(got)
        assert answer.startswith("Hey alice! Here's a pun for you:"), got
        assert "cat" in answer.lower()
    logged = provider.output()
    if kind == "streaming":
        assert "generate_content_stream model=flow-model" in logged
    assert "generate_content model=flow-model temperature=0.0" in logged
    assert "cannot constrain output to a JSON Schema" in logged  # the agent's schema: not for this provider
