"""Upstream 2.1.4's own agent-manager-react on our trustgraph-base, running a dialog on pulsar-lite.

``.interop/flow-on-ours`` holds our trustgraph-base with upstream's trustgraph-flow 2.1.4
(``interop/venvs.py``): upstream's agent is an ``AgentService`` with seven flow client specs
(``PromptClientSpec`` ...), and calls a tool service through ``ToolServiceClient`` made with
upstream's keywords; all of it is our compatibility layer there.  It runs as a process beside our
config-svc, prompt-template, ``text-completion-scripted`` (deployment.SCRIPT: a tool call, then
the answer once the observation is in the prompt) and joke-service, and answers a question by
calling the joke tool, streamed and not.
"""

from __future__ import annotations

import json

import pytest
from deployment import AGENT_KEYS, AGENT_TEMPLATE, ANSWER, SCRIPT, joke_service, joke_tool
from flow_stack import pair, uid, until_served
from support import Proc
from trustgraph.schema import AgentRequest, AgentResponse

pytestmark = [pytest.mark.interop, pytest.mark.long, pytest.mark.timeout(900)]

PEER = "upstream agent-manager-react 2.1.4 on our base"


async def test_upstreams_agent_runs_a_dialog_with_our_services_on_our_base(flow_on_ours, stack, procs,
                                                                          tmp_path, row):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    flow, tag = "f", uid()
    llm_id, prompt_id, agent_id, joke = f"tc-{tag}", f"prompt-{tag}", f"agent-{tag}", f"joke-{tag}"
    tc, pr, ag = pair(f"text-completion-{tag}"), pair(f"prompt-{tag}"), pair(f"agent-{tag}")
    agent_flow = {"request": ag[0], "next": ag[0], "response": ag[1],
                  "prompt-request": pr[0], "prompt-response": pr[1],
                  "text-completion-request": tc[0], "text-completion-response": tc[1]}
    for key in AGENT_KEYS:   # the clients this dialog does not use: topics nothing serves
        agent_flow.setdefault(f"{key}-request", f"non-persistent://tg/request/{key}-{tag}")
        agent_flow.setdefault(f"{key}-response", f"non-persistent://tg/response/{key}-{tag}")
    own = uid()
    stack.start("text-completion-scripted", llm_id, "--script", str(script))
    stack.start("prompt-template", prompt_id)
    stack._spawn("joke-service", "-t", joke, "--announce-queue", f"non-persistent://tg/config/announce-{own}",
                 "--announce-probe-queue", f"non-persistent://tg/config/probe-{own}", broker=stack.broker,
                 wait=False)
    ready = tmp_path / "upstream-agent-ready"
    proc = Proc([str(flow_on_ours.bin("agent-manager-react")), *stack.follow(agent_id), "--no-metrics",
                 "--no-loki-enabled", "--pulsar-host", stack.broker.url], tmp_path / "upstream-agent.log",
                env={"TG_READY_FILE": str(ready)}).start()
    procs.append(proc)
    stack.ready()
    proc.wait_ready(ready, 60)
    await stack.put({
        ("active-flow", llm_id): json.dumps({flow: {"request": tc[0], "response": tc[1]}}),
        ("active-flow", prompt_id): json.dumps({flow: {
            "request": pr[0], "response": pr[1],
            "text-completion-request": tc[0], "text-completion-response": tc[1]}}),
        ("active-flow", agent_id): json.dumps({flow: agent_flow}),
        ("prompt", "system"): json.dumps("You are a helpful assistant."),
        ("prompt", "template-index"): json.dumps(["agent-react"]),
        ("prompt", "template.agent-react"): json.dumps(AGENT_TEMPLATE),
        ("tool-service", joke): json.dumps(joke_service(joke, joke)),
        ("tool", "tell-joke"): json.dumps(joke_tool("tell-joke", joke))})
    ask = stack.client(ag, AgentRequest, AgentResponse)

    probe = AgentRequest(question="ping", user="alice")
    await until_served(lambda: ask.request(probe, timeout=10), "upstream's agent", total=90,
                       ok=lambda r: r.error is None)
    for streaming in (False, True):
        question = AgentRequest(question="Tell me a joke about cats", user="alice", streaming=streaming)
        got = [m async for m in ask.stream(question, final=lambda m: m.end_of_dialog, timeout=60)]
        errors = [m.error.message for m in got if m.error]
        if streaming:
            answer = "".join(m.content for m in got if m.chunk_type == "answer")
            observation = "".join(m.content for m in got if m.chunk_type == "observation")
        else:
            answer = got[-1].answer
            observation = "".join(m.observation or "" for m in got)
        ok = not errors and answer == ANSWER and observation.startswith("Hey alice! Here's a pun for you:")
        row(PEER, f"question → joke tool (our joke-service) → answer{', streamed' if streaming else ''}", ok,
            f"{len(got)} messages; observation {observation[:40]!r}; errors {errors}")
        assert ok, got
