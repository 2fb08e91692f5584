"""Our agent-manager-react in place of upstream's inside a TrustGraph 2.11.1 deployment.

One deployment (``deployment_211.py``) is shared by the module and started once (one xdist
group): upstream 2.11.1's api-gateway, no-auth IAM, prompt-template, text-completion-openai,
mcp-tool and joke-service, run from ``.interop/upstream-2.11`` (PyPI), beside our config-svc, agent and
joke-service, each of ours with ``--wire 2.11``.  The LLM is an OpenAI-compatible stand-in of
ours on 127.0.0.1 (``openai_stand_in.py``) that answers by rules from what 2.11.1's openai
processor sends it.  Each row runs 2.11.1's own ``tg-invoke-agent -v`` against 2.11.1's gateway
and checks what it printed: the two thoughts, the observation (the joke the tool service told,
asked of that service directly beforehand) and the answer, which repeats the joke, so the tool's
words went agent -> prompt-template -> LLM and back out through the gateway to the command; and,
from the stand-in's record of its requests, that both LLM calls of the dialog were streamed when
the command streamed and whole with ``--no-streaming`` (so the mode went through every hop).
Two rows more put a built-in tool type on 2.11.1's services the same way: ``text-completion``
(the model's answer to the tool's question, through 2.11.1's prompt-template and
text-completion-openai) and ``mcp-tool`` (2.11.1's mcp-tool calling a real MCP server).

The gateway alone takes about a minute to listen (it asks the no-auth IAM 30 times for a
signing key it never has), so the module is marked ``long``: ``make interop`` runs it,
``make test`` does not.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator

import pytest
from deployment import Deployment
from deployment_211 import (
    FLAGS,
    FLOW,
    QUESTION,
    QUESTION_UPSTREAM,
    THOUGHTS_UPSTREAM,
    ask_our_joke,
    direction,
    invoke,
    mcp_tool_row,
    mode,
    our_tool_service_row,
    printed_joke,
    ready_agent,
    rest_agent_row,
    running_211,
    seen,
    show_flows_row,
    text_completion_row,
    upstream_joke_texts,
)
from dialogs import words
from rows import interop_row
from tool_calls import first_answer
from trustgraph.base.launching.broker import EmbeddedBroker

from interop.venvs import UPSTREAM_211, Venv

pytestmark = [pytest.mark.interop, pytest.mark.long, pytest.mark.timeout(900),
              pytest.mark.xdist_group("upstream-211-deployment")]


@pytest.fixture(scope="module")
def venv_211() -> Venv:
    return UPSTREAM_211.ensure()


@pytest.fixture(scope="module")
def deployment(venv_211, tmp_path_factory) -> Iterator[Deployment]:
    tmp = tmp_path_factory.mktemp("deployment-211")
    broker = EmbeddedBroker(tmp / "broker")
    broker.start()
    with running_211(broker, tmp, venv_211) as d:
        yield d


@pytest.fixture(scope="module")
def our_joke(deployment: Deployment, venv_211: Venv) -> str:
    """What our joke service answers a 2.11 request (no user) for the agent's call, asked by
    2.11.1's own request-response client."""
    return ask_our_joke(deployment, venv_211)


@pytest.fixture(scope="module")
def upstream_jokes(deployment: Deployment, venv_211: Venv) -> set[str]:
    """Every answer 2.11.1's joke service can give the agent's call (it picks at random), once
    the service answers at all (it has no readiness signal)."""
    text = asyncio.run(first_answer(deployment.broker.url, "up-joke", {"style": "pun"}, {"topic": "cats"},
                                    what="an answer of 2.11.1's joke-service",
                                    detail=deployment.logs, gone=deployment.procs["up-joke-service"].exited))
    assert text, deployment.log("up-joke-service")
    jokes = upstream_joke_texts(venv_211)
    assert text in jokes, text
    return jokes


@pytest.mark.parametrize("flags", FLAGS)
def test_2_11s_cli_gets_our_agents_answer_from_our_tool_service(deployment, venv_211, our_joke, row, flags):
    our_tool_service_row(row, deployment, venv_211, our_joke, flags)


@pytest.mark.parametrize("flags", FLAGS)
def test_2_11s_cli_gets_our_agents_answer_from_2_11s_tool_service(deployment, venv_211, upstream_jokes, row,
                                                                   flags):
    told = {words(j) for j in upstream_jokes}
    with interop_row(row, f"2.11.1 tg-invoke-agent -v {mode(flags)}, 2.11.1's joke-service as the tool",
                     direction("2.11.1's joke-service")) as r:
        ready_agent(deployment)
        out, streamed = invoke(deployment, venv_211, QUESTION_UPSTREAM, flags)
        joke = printed_joke(out, THOUGHTS_UPSTREAM, lambda j: j in told)
        r.check(joke is not None, lambda: f"printed {out!r}")
        r.check(streamed == [not flags] * 2, lambda: f"LLM calls streamed: {streamed}")
        r.saw(seen(joke, streamed))


def test_2_11s_gateway_rest_agent_route(deployment, our_joke, row):
    rest_agent_row(row, deployment, our_joke)


@pytest.mark.parametrize("flags", FLAGS)
def test_2_11s_cli_gets_our_agents_answer_from_a_text_completion_tool(deployment, venv_211, row, flags):
    text_completion_row(row, deployment, venv_211, flags)


@pytest.mark.parametrize("flags", FLAGS)
def test_2_11s_cli_gets_our_agents_answer_from_an_mcp_tool(deployment, venv_211, row, flags):
    mcp_tool_row(row, deployment, venv_211, flags, "an mcp-tool tool (shout-it)")


#: What 2.11.1's CLI prints for any agent error through 2.11.1's gateway (its own agent's too).
GATEWAY_ERROR = "Exception: 'Error' object has no attribute 'code'"
ERROR_PEER = "2.11.1 tg-invoke-agent -p supervisor (an agent error)"
ERROR_DIRECTION = ("2.11.1's tg-invoke-agent -> 2.11.1's api-gateway -> our agent-manager-react --wire 2.11, "
                   "which answers a pattern it does not run with an error naming the orchestrator")
# Rows known to fail, by (peer, direction), with the reason: recorded FAIL with it, the test xfailed.
KNOWN_BROKEN = {(ERROR_PEER, ERROR_DIRECTION): (
    "upstream 2.11.1: its gateway's agent translator reads Error.code, which 2.11.1's Error lacks, so no agent "
    "error reaches a client; the command prints '" + GATEWAY_ERROR + "' at once and exits 0")}


def test_2_11s_cli_and_an_agent_error(deployment, venv_211, row):
    """The agent's error should reach the command; through 2.11.1's gateway none can (KNOWN_BROKEN)."""
    with interop_row(row, ERROR_PEER, ERROR_DIRECTION, KNOWN_BROKEN) as r:
        ready_agent(deployment)
        p = subprocess.run([str(venv_211.bin("tg-invoke-agent")), "-u", deployment.upstream_gateway, "-f", FLOW,
                            "-q", QUESTION, "-p", "supervisor"], capture_output=True, text=True, timeout=150)
        out = (p.stdout + p.stderr).strip()
        r.check("'supervisor'" in out and "orchestrator" in out, lambda: f"printed {out[-300:]!r}")


def test_2_11s_show_flows_lists_the_flow_started_through_2_11s_flow_protocol(deployment, venv_211, row):
    show_flows_row(row, deployment, venv_211)


def test_no_process_died(deployment):
    """Every process of the deployment still runs after the rows: none crashed on a message."""
    dead = {name: proc.p.returncode for name, proc in deployment.procs.items() if proc.p.poll() is not None}
    assert not dead, (dead, deployment.logs())
