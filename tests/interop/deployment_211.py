"""A TrustGraph 2.11.1 deployment with our agent in place of upstream's, for the interop rows.

One broker, given as a :class:`~deployment.BrokerAccess`: pulsar-lite, or a RabbitMQ node with every
process on ``--pubsub-backend rabbitmq`` (2.11.1's and ours take the same ``--rabbitmq-*`` flags and
``$RABBITMQ_PASSWORD``; ours with ``--wire 2.11`` declare 2.11.1's exchanges and queues).  The
processes run from upstream 2.11.1's own console scripts (``.interop/upstream-2.11``, PyPI) but for
the three of ours that take the place of upstream's:

================  ========  ==================================================================
id                whose     what
================  ========  ==================================================================
config-svc        ours      ``config-svc --wire 2.11`` (SQLite in the test's directory) in place
                            of 2.11's config-svc *and* flow-svc, which keep config in Cassandra
no-auth-svc       upstream  2.11.1's IAM service that allows everything (default workspace)
api-gateway       upstream  2.11.1's gateway on ``gateway`` (first-frame websocket auth)
text-completion   upstream  2.11.1's ``text-completion-openai`` against ``openai_stand_in.py``
prompt            upstream  2.11.1's ``prompt-template`` (ibis) with :data:`AGENT_TEMPLATE` and
                            the ``question`` template (the ``text-completion`` tool's)
mcp-tool          upstream  2.11.1's ``mcp-tool`` against ``mcp-stand-in`` (config ``mcp/shout``)
mcp-stand-in      ours      an MCP server on 127.0.0.1 (``tests/integration/mcp_stand_in.py``,
                            the official SDK, streamable HTTP)
agent-manager     ours      ``agent-manager-react --wire 2.11``
joke-service      ours      ``joke-service --wire 2.11``, topic ``joke``
up-joke-service   upstream  2.11.1's ``joke-service``, topic ``up-joke`` (a DynamicToolService: on
                            RabbitMQ it never starts, :data:`DYNAMIC_ON_RABBITMQ`)
================  ========  ==================================================================

The ids are the processor names of :data:`BLUEPRINT`, written in 2.11's form (entries
``"<processor>:{id}"`` with ``topics`` of 2.11 queue names, as upstream's own blueprints are), so
a started flow is the ``processor:<id>`` items each of them reads.  The configuration goes in as
a 2.11 operator puts it in: through 2.11.1's gateway with 2.11.1's commands
(``tg-put-config-item``, ``tg-put-flow-blueprint``, ``tg-start-flow``), which reach our config-svc
over 2.11's config and flow protocols; the tool-service descriptors name their queues in 2.11's
form (``request:tg:joke``).  Besides the two joke tools (``tool-service``) the agent has
``ask-llm`` (``text-completion``: the prompt service's ``question`` template, so 2.11.1's
prompt-template and text-completion-openai) and ``shout-it`` (``mcp-tool``: 2.11.1's mcp-tool
calling the MCP server's ``shout``).

Readiness: ours write ``$TG_READY_FILE``; upstream's say nothing, so a real call is the signal
(:meth:`Deployment.warm`).  2.11.1's gateway starts serving only after it has asked the IAM
service for a JWT signing key 30 times, 2 s apart (``IamAuth.start``): the no-auth service has
none, so the gateway listens about a minute after it starts, whatever else is ready.  The
gateway listens on every interface (2.11.1 has no flag for the address); the LLM stand-in on
127.0.0.1 only.

The rows of both brokers (``test_upstream_211_deployment.py``, ``test_upstream_211_rabbitmq.py``) ask
and read the same way, with the helpers below the deployment: 2.11.1's ``tg-invoke-agent -v``
(:func:`invoke`), what it printed (:func:`printed_joke`) and the stand-in's record of the LLM calls.
A row that both modules run is one body here (the ``*_row`` functions), given the broker's words for
its direction; each module's test of it calls that body.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from deployment import AGENT_TEMPLATE, BrokerAccess, Deployment, DeploymentError, joke_tool, post
from dialogs import cli_words, words
from openai_stand_in import LLM_ANSWER, LLM_QUESTION, LLM_SAYS, MCP_ANSWER, SHOUT_TEXT, SHOUTED
from rows import interop_row
from support import Proc
from trustgraph.base.launching.broker import free_port, wait_for_port

from interop.venvs import Venv

HERE = Path(__file__).resolve().parent
FLOW = "agent-211"
BLUEPRINT_NAME = "agent-211"
#: The stand-in answers "... and repeat it" with the tool's result in the final answer.
QUESTION = "Tell me a joke about cats and repeat it"
QUESTION_UPSTREAM = "Tell me an upstream joke about cats and repeat it"
THOUGHTS = ["I will use tell-joke", "I have the joke"]
THOUGHTS_UPSTREAM = ["I will use tell-upstream-joke", "I have the joke"]
ANSWER = "Here is the joke you asked for."
#: Routed by the stand-in to the text-completion tool, and to the mcp-tool tool.
QUESTION_LLM = "Ask the model which word rhymes with cat and repeat it"
THOUGHTS_LLM = ["I will use ask-llm", "I have the model's answer"]
QUESTION_MCP = "Shout hello cats and repeat it"
THOUGHTS_MCP = ["I will use shout-it", "I have the shout"]
MCP_SERVER = HERE.parent / "integration" / "mcp_stand_in.py"

#: The topics our agent-manager-react opens in a flow, each a client of another flow service.
AGENT_CLIENTS = {"text-completion": "text-completion", "prompt": "prompt", "mcp-tool": "mcp-tool",
                 "graph-rag": "graph-rag", "structured-query": "structured-query", "embeddings": "embeddings",
                 "row-embeddings-query": "row-embeddings"}


def _request(kind: str) -> str:
    return f"request:tg:{kind}:{{workspace}}:{{id}}"


def _response(kind: str) -> str:
    return f"response:tg:{kind}:{{workspace}}:{{id}}"


def _pair(kind: str) -> dict[str, str]:
    return {"request": _request(kind), "response": _response(kind)}


def blueprint() -> dict[str, Any]:
    """A 2.11 flow blueprint: 2.11.1's text-completion, prompt and mcp-tool processors and our agent."""
    agent = {**_pair("agent"), "next": _request("agent")}
    for spec, kind in AGENT_CLIENTS.items():
        agent[f"{spec}-request"] = _request(kind)
        agent[f"{spec}-response"] = _response(kind)
    return {
        "description": "interop: our agent-manager-react in a 2.11.1 deployment",
        "parameters": {},
        "blueprint": {},
        "flow": {
            "agent-manager:{id}": {"topics": agent},
            "prompt:{id}": {"topics": {**_pair("prompt"),
                                       "text-completion-request": _request("text-completion"),
                                       "text-completion-response": _response("text-completion")}},
            "text-completion:{id}": {"topics": _pair("text-completion")},
            "mcp-tool:{id}": {"topics": _pair("mcp-tool")},
        },
        "interfaces": {kind: _pair(kind) for kind in ("agent", "prompt", "text-completion", "mcp-tool")},
    }


def joke_service_211(sid: str, topic: str) -> dict[str, Any]:
    """A tool-service descriptor naming its queues as 2.11 does (``request:tg:<topic>``)."""
    return {"id": sid, "request-queue": f"request:tg:{topic}", "response-queue": f"response:tg:{topic}",
            "config-params": [{"name": "style", "required": False}]}


#: The text-completion tool's template, as 2.11.1's agent asks for it (``question``).
QUESTION_TEMPLATE = {"prompt": "{{ question }}", "response-type": "text"}
ASK_LLM = {"type": "text-completion", "name": "ask-llm", "description": "Asks the language model a question"}
SHOUT_IT = {"type": "mcp-tool", "name": "shout-it", "description": "Says a text in capitals", "mcp-tool": "shout",
            "arguments": [{"name": "text", "type": "string", "description": "the text"}]}

#: What goes into the default workspace, as (type, key, value); :func:`config` adds the MCP server's.
CONFIG: list[tuple[str, str, Any]] = [
    ("prompt", "system", "You are a helpful assistant."),
    ("prompt", "template.agent-react", AGENT_TEMPLATE),
    ("prompt", "template.question", QUESTION_TEMPLATE),
    ("tool", "ask-llm", ASK_LLM),
    ("tool", "shout-it", SHOUT_IT),
    ("tool-service", "joke-service", joke_service_211("joke-service", "joke")),
    ("tool-service", "up-joke-service", joke_service_211("up-joke-service", "up-joke")),
    ("tool", "tell-joke", joke_tool("tell-joke", "joke-service")),
    ("tool", "tell-upstream-joke", joke_tool("tell-upstream-joke", "up-joke-service")),
    # What 2.11's tg-show-flows lists of a flow (upstream's bootstrap writes one per service kind).
    ("interface-description", "agent", {"description": "Agent", "kind": "request-response", "visible": True}),
]


def config(mcp_url: str) -> list[tuple[str, str, Any]]:
    """:data:`CONFIG` and the ``mcp`` item both the agent's catalog and 2.11.1's mcp-tool read."""
    return [*CONFIG, ("mcp", "shout", {"url": mcp_url, "remote-name": "shout"})]


def upstream_cli(venv: Venv, command: str, *args: str, timeout: float = 150) -> str:
    """Run one of 2.11.1's commands; its stdout once it succeeded.

    2.11.1's commands print ``Exception: ...`` and exit 0 on failure, so that line fails it too.
    """
    r = subprocess.run([str(venv.bin(command)), *args], capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0 or "Exception" in r.stdout + r.stderr:
        raise DeploymentError(f"{command} failed ({r.returncode}): {(r.stdout + r.stderr).strip()[-300:]}")
    return r.stdout


def ready_gateway(d: Deployment) -> None:
    """2.11.1's gateway answers a config call in the default workspace (it listens, IAM answers,
    and it has found the workspace in ``__workspaces__``)."""
    def attempt(seconds: float) -> Any:
        body = post(f"{d.upstream_gateway}api/v1/config", {"operation": "list", "type": "tool"},
                    timeout=seconds + 1)
        if not isinstance(body, dict) or body.get("error"):
            raise ValueError(f"not answered yet: {body}")
        return body
    # Past its minute of asking IAM for a signing key (the module's docstring), on a loaded machine.
    d.warm("2.11.1's api-gateway (config list)", attempt, timeout=240)


def load(d: Deployment) -> None:
    """The configuration and the flow, through 2.11.1's gateway with 2.11.1's commands."""
    url = d.upstream_gateway
    items = config(d.mcp_url)
    # The puts are independent: run them side by side (each command is a Python start-up).
    running = [subprocess.Popen([str(d.upstream.bin("tg-put-config-item")), "-u", url, "--type", kind,
                                 "--key", key, "--value", json.dumps(value)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for kind, key, value in items]
    failed = []
    for (kind, key, _), p in zip(items, running, strict=True):
        out, _ = p.communicate(timeout=150)
        if p.returncode != 0 or "Exception" in out:
            failed.append(f"{kind}/{key}: {out.strip()[-200:]}")
    if failed:
        raise DeploymentError("tg-put-config-item (2.11.1) failed: " + "; ".join(failed))
    upstream_cli(d.upstream, "tg-put-flow-blueprint", "-u", url, "-n", BLUEPRINT_NAME,
                 "-c", json.dumps(blueprint()))
    upstream_cli(d.upstream, "tg-start-flow", "-u", url, "-n", BLUEPRINT_NAME, "-i", FLOW,
                 "-d", "our agent in a 2.11.1 deployment")


def start_211(broker: Any, tmp: Path, venv: Venv, access: BrokerAccess | None = None) -> Deployment:
    """Start every process on ``broker`` (reached as ``access`` says: by default pulsar-lite's ``-p``),
    load the config and start the flow; each row warms what it needs."""
    d = Deployment(broker, tmp, venv, access=access)
    try:
        d.ours("config-svc", "config-svc", "--wire", "2.11", "--store", str(tmp / "config.db"),
               after_config=False)
        d.procs["config-svc"].wait_ready(d.procs["config-svc"].ready_file, timeout=60)
        # The gateway first: its minute of waiting for a signing key runs while the rest start.
        d.theirs("no-auth-svc", "no-auth-svc", "--no-loki-enabled")
        port = free_port()
        d.upstream_gateway = f"http://127.0.0.1:{port}/"
        d.theirs("api-gateway", "api-gateway", "--port", str(port), "--no-loki-enabled")
        openai_port = free_port()
        d.stand_in("openai-stand-in", HERE / "openai_stand_in.py", str(openai_port))
        d.theirs("text-completion", "text-completion-openai", "--id", "text-completion",
                 "-u", f"http://127.0.0.1:{openai_port}/v1", "-m", "stand-in", "--no-loki-enabled")
        d.theirs("prompt", "prompt-template", "--id", "prompt", "--no-loki-enabled")
        d.theirs("up-joke-service", "joke-service", "--id", "up-joke-service", "-t", "up-joke",
                 "--no-loki-enabled")
        mcp_port = free_port()
        d.mcp_url = f"http://127.0.0.1:{mcp_port}/mcp"
        mcp = d.procs["mcp-stand-in"] = Proc([sys.executable, str(MCP_SERVER), str(mcp_port)],
                                             tmp / "mcp-stand-in.log").start()
        d.theirs("mcp-tool", "mcp-tool", "--id", "mcp-tool", "--no-loki-enabled")
        d.ours("agent-manager", "agent-manager-react", "--wire", "2.11", "--id", "agent-manager",
               after_config=False)
        d.ours("joke-service", "joke-service", "--wire", "2.11", "--no-announce", after_config=False)
        for name in ("openai-stand-in", "agent-manager", "joke-service"):
            d.procs[name].wait_ready(d.procs[name].ready_file, timeout=90)
        wait_for_port("127.0.0.1", mcp_port, 60, mcp.p)
        ready_gateway(d)
        load(d)
        return d
    except BaseException:
        d.stop()
        raise


@contextmanager
def running_211(broker: Any, tmp: Path, venv: Venv, access: BrokerAccess | None = None) -> Iterator[Deployment]:
    """The deployment :func:`start_211` makes on ``broker`` (already started); the broker is stopped
    after the deployment, or at once if the deployment does not start."""
    try:
        d = start_211(broker, tmp, venv, access)
    except BaseException:
        broker.stop()
        raise
    try:
        yield d
    finally:
        d.stop()
        broker.stop()


# -- what the rows of both brokers share ---------------------------------------------------------

FLAGS = [pytest.param([], id="streaming"), pytest.param(["--no-streaming"], id="no-streaming")]

#: Why 2.11.1's joke-service, a DynamicToolService, cannot serve on RabbitMQ (seen in its log).
DYNAMIC_ON_RABBITMQ = (
    "upstream 2.11.1: its DynamicToolService names its queues as Pulsar URLs (non-persistent://tg/request/<topic>, "
    "hard-coded in dynamic_tool_service.py), which its own RabbitMQ backend refuses ('Invalid topic format', it "
    "reads class:topicspace:topic only), so the process retries its start every 4 s and never serves")


def direction(tool: str, entry: str = "2.11.1's tg-invoke-agent -> ", broker: str = "") -> str:
    """Whose process each hop of a row is: the caller, the gateway, the agent, its prompt service,
    its LLM and the tool service; ``broker`` says what carries them when it is not pulsar-lite."""
    return (f"{entry}2.11.1's api-gateway (no-auth IAM) -> our agent-manager-react --wire 2.11 -> 2.11.1's "
            "prompt-template -> 2.11.1's text-completion-openai -> our OpenAI stand-in on 127.0.0.1; tool: "
            f"{tool}; config and flow in our config-svc --wire 2.11 (2.11's needs Cassandra){broker}")


def ready_agent(d: Deployment) -> None:
    """The flow's agent chain answers through 2.11.1's gateway (the probe question, no tool)."""
    d.ready_agent(d.upstream_gateway, FLOW)


def llm_calls(d: Deployment) -> list[dict]:
    """Every request the OpenAI stand-in has had, in order (it appends one JSON line each)."""
    path = d.tmp / "openai-stand-in.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def invoke(d: Deployment, venv: Venv, question: str, flags: list[str]) -> tuple[str, list[bool]]:
    """What ``tg-invoke-agent -v`` printed, and whether each LLM call of the dialog was streamed."""
    before = len(llm_calls(d))
    out = upstream_cli(venv, "tg-invoke-agent", "-u", d.upstream_gateway, "-f", FLOW, "-q", question,
                       "-v", *flags)
    streamed = [call["stream"] for call in llm_calls(d)[before:]
                if question in json.dumps(call["messages"], ensure_ascii=False)]
    return out, streamed


def printed_joke(out: str, thoughts: list[str], joke_ok: Callable[[str], bool], answer: str = ANSWER) -> str | None:
    """The joke (or other tool result) the printout shows between the two thoughts, if ``joke_ok``
    accepts it, and ``None`` otherwise; the printout's words must be thought, joke, thought,
    ``answer`` + joke."""
    said = cli_words(out)
    head, tail = words(thoughts[0]) + " ", " " + words(thoughts[1]) + " " + words(answer) + " "
    if not said.startswith(head) or tail not in said:
        return None
    joke, _, repeated = said[len(head):].partition(tail)
    return joke if joke == repeated and joke_ok(joke) else None


def seen(joke: str | None, streamed: list[bool]) -> str:
    mode = "streamed" if all(streamed) else "whole"
    return (f"printed both thoughts, the joke as the observation and in the answer ({(joke or '')[:60]}...); "
            f"the dialog's {len(streamed)} LLM calls {mode}")


def is_tool_prompt(call: dict) -> bool:
    """An LLM call of the text-completion tool: its ``question`` template, no ReAct prompt."""
    text = json.dumps(call["messages"], ensure_ascii=False)
    return LLM_QUESTION in text and "Question:" not in text


def ready_mcp_tool(d: Deployment) -> dict:
    """2.11.1's mcp-tool answers through 2.11.1's gateway (REST), calling the MCP server's ``shout``."""
    def attempt(seconds: float) -> dict:
        body = post(f"{d.upstream_gateway}api/v1/flow/{FLOW}/service/mcp-tool",
                    {"name": "shout", "parameters": {"text": SHOUT_TEXT}}, timeout=seconds + 1)
        if not isinstance(body, dict) or body.get("text") != SHOUTED:
            raise ValueError(f"not answered yet: {body}")
        return body
    return d.warm("2.11.1's mcp-tool (shout)", attempt, timeout=120)


def ask_our_joke(d: Deployment, venv: Venv) -> str:
    """What our joke service answers a 2.11 request (no user) for the agent's call, asked by
    2.11.1's own request-response client on the deployment's broker (``caller_211.py``)."""
    r = subprocess.run([str(venv.python), str(HERE / "caller_211.py"), d.access.url, "joke"],
                       capture_output=True, text=True, timeout=120, env={**os.environ, **d.access.env})
    got = json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else None
    assert got and got["error"] is None and got["response"], (r.stdout, r.stderr[-2000:])
    return got["response"]


def upstream_joke_texts(venv: Venv) -> set[str]:
    """Every answer 2.11.1's joke service can give the agent's call (it picks at random)."""
    code = ("import json; from trustgraph.tool_service.joke.service import JOKES\n"
            "print(json.dumps(JOKES['animals']['pun']))")
    out = subprocess.run([str(venv.python), "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    return {f"Here's a pun for you:\n\n{joke}" for joke in json.loads(out)}


# -- the rows both brokers run: ``broker`` ends each direction as in :func:`direction` ("" on pulsar-lite)

def mode(flags: list[str]) -> str:
    """How a row's ``tg-invoke-agent`` answers, as its peer names it."""
    return " ".join(flags) or "(streaming)"


def our_tool_service_row(row, d: Deployment, venv: Venv, our_joke: str, flags: list[str], broker: str = "") -> None:
    """2.11.1's CLI gets our agent's answer, our joke-service the tool (``our_joke``: what it told when
    asked directly)."""
    with interop_row(row, f"2.11.1 tg-invoke-agent -v {mode(flags)}, our joke-service as the tool",
                     direction("our joke-service --wire 2.11", broker=broker)) as r:
        ready_agent(d)
        out, streamed = invoke(d, venv, QUESTION, flags)
        joke = printed_joke(out, THOUGHTS, lambda j: j == words(our_joke))
        r.check(joke is not None, lambda: f"printed {out!r}; the service told {our_joke!r}")
        r.check(streamed == [not flags] * 2, lambda: f"LLM calls streamed: {streamed}")
        r.saw(seen(joke, streamed))


def rest_agent_row(row, d: Deployment, our_joke: str, broker: str = "") -> None:
    """2.11.1's gateway answers a REST agent call with the dialog's last message, the answer."""
    with interop_row(row, "2.11.1 api-gateway, REST agent (POST /api/v1/flow/<flow>/service/agent)",
                     direction("our joke-service --wire 2.11", entry="REST -> ", broker=broker)) as r:
        ready_agent(d)
        body = post(f"{d.upstream_gateway}api/v1/flow/{FLOW}/service/agent", {"question": QUESTION})
        r.check(body.get("message_type") == "answer" and body.get("end_of_dialog") is True
                and words(body.get("content") or "") == words(f"{ANSWER} {our_joke}"), lambda: f"body {body}")
        r.saw("one reply, the last message: message_type answer, end_of_dialog, content the answer with the "
              "joke the service told")


def text_completion_row(row, d: Deployment, venv: Venv, flags: list[str], broker: str = "") -> None:
    """Type text-completion: our agent asks the flow's prompt service (2.11.1's prompt-template, its
    ``question`` template), which asks 2.11.1's text-completion-openai, whose model's words are the
    observation and come back in the answer."""
    with interop_row(row, f"2.11.1 tg-invoke-agent -v {mode(flags)}, a text-completion tool (ask-llm)",
                     direction("text-completion (ask-llm) -> 2.11.1's prompt-template (question) -> 2.11.1's "
                               "text-completion-openai -> our OpenAI stand-in", broker=broker)) as r:
        ready_agent(d)
        before = len(llm_calls(d))
        out, streamed = invoke(d, venv, QUESTION_LLM, flags)
        tool_calls = [call for call in llm_calls(d)[before:] if is_tool_prompt(call)]
        said = printed_joke(out, THOUGHTS_LLM, lambda s: s == words(LLM_SAYS), LLM_ANSWER)
        r.check(said is not None, lambda: f"printed {out!r}")
        r.check([call["stream"] for call in tool_calls] == [False],
                lambda: f"the tool's LLM calls (streamed?): {[call['stream'] for call in tool_calls]}")
        r.check(streamed == [not flags] * 2, lambda: f"LLM calls streamed: {streamed}")
        r.saw(f"printed both thoughts, the model's answer to the tool's question ({LLM_SAYS!r}) as the "
              f"observation and in the answer; the tool's one LLM call whole, the dialog's "
              f"{len(streamed)} {'streamed' if all(streamed) else 'whole'}")


def mcp_tool_row(row, d: Deployment, venv: Venv, flags: list[str], tool: str, broker: str = "") -> None:
    """Type mcp-tool: our agent asks the flow's mcp-tool service (2.11.1's), which calls a real MCP
    server; its text is the observation and comes back in the answer.  ``tool``: how the peer names
    the tool."""
    with interop_row(row, f"2.11.1 tg-invoke-agent -v {mode(flags)}, {tool}",
                     direction("mcp-tool (shout-it) -> 2.11.1's mcp-tool -> our MCP server (official SDK, "
                               "streamable HTTP) on 127.0.0.1", broker=broker)) as r:
        ready_agent(d)
        ready_mcp_tool(d)
        out, streamed = invoke(d, venv, QUESTION_MCP, flags)
        said = printed_joke(out, THOUGHTS_MCP, lambda s: s == SHOUTED, MCP_ANSWER)
        r.check(said is not None, lambda: f"printed {out!r}")
        r.check(streamed == [not flags] * 2, lambda: f"LLM calls streamed: {streamed}")
        r.saw(f"printed both thoughts, the MCP server's {SHOUTED!r} as the observation and in the answer; the "
              f"dialog's {len(streamed)} LLM calls {'streamed' if all(streamed) else 'whole'}")


def show_flows_row(row, d: Deployment, venv: Venv, broker: str = "") -> None:
    """The flow went in with 2.11.1's tg-put-flow-blueprint and tg-start-flow, through 2.11.1's gateway
    to our config-svc; its interfaces come back with the workspace and the flow id put in, as 2.11's
    flow service writes them."""
    with interop_row(row, "2.11.1 tg-show-flows", "2.11.1's CLI -> 2.11.1's api-gateway -> our config-svc "
                     "--wire 2.11 (the flow started with 2.11.1's tg-start-flow)" + broker) as r:
        out = upstream_cli(venv, "tg-show-flows", "-u", d.upstream_gateway)
        r.check(f"agent request: request:tg:agent:default:{FLOW}" in out
                and f"agent response: response:tg:agent:default:{FLOW}" in out, lambda: f"printed {out!r}")
        r.saw(f"lists flow {FLOW}, its agent interface request:tg:agent:default:{FLOW} and the response queue")
