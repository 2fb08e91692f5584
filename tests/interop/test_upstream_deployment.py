"""Upstream 2.1.4's agent, prompt-template, api-gateway and DynamicToolService as real processes.

One mixed deployment (``deployment.py``: upstream's processes and ours on one broker with the
default topics) is shared by the module; the module is one xdist group (``--dist loadgroup``),
so one worker starts it.  Each row asks through a real gateway or command and checks what came
back: the thoughts, the observation (the joke the service told), the answer, the config value.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import pytest
import rows
from deployment import ANSWER, QUESTION_OURS, QUESTION_UPSTREAM, Deployment, post, start
from dialogs import Dialog, cli_words, read_dialog, socket_call, words
from rows import Row
from support import BIN
from trustgraph.agent.react.decisions import NO_TOOL_PREFIX
from trustgraph.base import PubSub, ToolServiceClient
from trustgraph.base.launching.broker import EmbeddedBroker

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600), pytest.mark.xdist_group("upstream-deployment")]

USER = "alice"
THOUGHTS_OURS = ["I will use tell-joke", "I have the joke"]
THOUGHTS_UPSTREAM = ["I will use tell-upstream-joke", "I have the joke"]
GREETING = "Hello there, Ada! Nice to meet you."
MODES = [pytest.param(False, id="non-streaming"), pytest.param(True, id="streaming")]

# Rows known to fail, by (peer, direction), with the reason: INTEROP.md records them FAIL with
# it and the test is an expected failure instead of a red CI; a listed row that passes is
# recorded pass.  The reason names the fix; remove the entry when it lands.
KNOWN_BROKEN: dict[tuple[str, str], str] = {}
AGENT_FLAGS = [pytest.param([], id="streaming"), pytest.param(["--no-streaming"], id="whole")]


@pytest.fixture(scope="module")
def deployment(upstream_venv, tmp_path_factory) -> Iterator[Deployment]:
    tmp = tmp_path_factory.mktemp("deployment")
    broker = EmbeddedBroker(tmp / "broker")
    broker.start()
    try:
        d = start(broker, tmp, upstream_venv)
    except BaseException:
        broker.stop()
        raise
    yield d
    d.stop()
    broker.stop()


@pytest.fixture(scope="module")
def our_joke(deployment: Deployment) -> str:
    """What our joke service answers for the agents' call (user, style pun, topic cats), asked directly."""
    async def ask() -> str:
        ps = PubSub(deployment.broker.url, processor="interop-expect")
        try:
            client = ToolServiceClient(ps, request_topic="non-persistent://tg/request/joke",
                                       response_topic="non-persistent://tg/response/joke")
            return await client.call(USER, {"style": "pun"}, {"topic": "cats"}, timeout=30)
        finally:
            await ps.close()
    return asyncio.run(ask())


@pytest.fixture(scope="module")
def upstream_jokes(upstream_venv) -> set[str]:
    """Every answer upstream's joke service can give for that call (it picks at random)."""
    code = ("import json; from trustgraph.tool_service.joke.service import JOKES\n"
            "print(json.dumps(JOKES['animals']['pun']))")
    out = subprocess.run([str(upstream_venv.python), "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    return {f"Hey {USER}! Here's a pun for you:\n\n{joke}" for joke in json.loads(out)}


def interop_row(row, peer: str, direction: str) -> AbstractContextManager[Row]:
    """One row of this module, known failures (:data:`KNOWN_BROKEN`) expected as such."""
    return rows.interop_row(row, peer, direction, KNOWN_BROKEN)


def check_dialog(r: Row, got: Dialog, streaming: bool, thoughts: list[str],
                 observation_ok: Callable[[str], bool]) -> None:
    """The dialog the script leads to: a tool call, its observation, the answer; in chunks or whole.

    Streamed means every message is a chunk (the answer may come in one); whole means none is.
    """
    r.check(got.complete and got.streamed is streaming, lambda: f"{shape(got, streaming)}: {got}")
    r.check((got.answer_chunks >= 1) is streaming, lambda: f"{got.answer_chunks} answer chunks")
    r.check(got.thoughts == thoughts, lambda: f"thoughts {got.thoughts}")
    r.check(len(got.observations) == 1 and observation_ok(got.observations[0]),
            lambda: f"observations {got.observations}")
    r.check(words(got.answer or "") == ANSWER, lambda: f"answer {got.answer!r}")


def cli(command: str, *args: str, upstream_venv=None) -> str:
    """Run our command (or upstream's, given its venv); its stdout, once it has succeeded."""
    path = upstream_venv.bin(command) if upstream_venv is not None else BIN / command
    r = subprocess.run([str(path), *args], capture_output=True, text=True, timeout=150)
    # Upstream's commands print "Exception: ..." and exit 0 on failure.
    if r.returncode != 0 or "Exception" in r.stdout + r.stderr:
        raise AssertionError(f"{command} failed ({r.returncode}): {(r.stdout + r.stderr).strip()[-300:]}")
    return r.stdout


def mode(streaming: bool) -> str:
    return "streaming" if streaming else "non-streaming"


# -- agents and prompt services, asked through our gateway ------------------------------------

@pytest.mark.parametrize("streaming", MODES)
async def test_upstream_agent_with_our_prompt_llm_and_tool_service(deployment, our_joke, row, streaming):
    with interop_row(row, f"upstream agent-manager-react ({mode(streaming)})",
                     "our gateway -> upstream agent -> our prompt-template, text-completion-scripted, joke-service") as r:
        await asyncio.to_thread(deployment.ready_agent, deployment.gateway, "up-agent-flow")
        frames = await socket_call(deployment.gateway, "agent",
                                   {"question": QUESTION_OURS, "user": USER, "streaming": streaming},
                                   flow="up-agent-flow")
        check_dialog(r, read_dialog(frames), streaming, THOUGHTS_OURS, lambda o: o == our_joke)


@pytest.mark.parametrize("streaming", MODES)
async def test_our_agent_with_upstream_prompt_template(deployment, our_joke, row, streaming):
    with interop_row(row, f"upstream prompt-template under our agent ({mode(streaming)})",
                     "our gateway -> our agent -> upstream prompt-template -> our text-completion-scripted") as r:
        await asyncio.to_thread(deployment.ready_agent, deployment.gateway, "our-agent-flow")
        frames = await socket_call(deployment.gateway, "agent",
                                   {"question": QUESTION_OURS, "user": USER, "streaming": streaming},
                                   flow="our-agent-flow")
        check_dialog(r, read_dialog(frames), streaming, THOUGHTS_OURS, lambda o: o == our_joke)


@pytest.mark.parametrize("streaming", MODES)
async def test_our_agent_calls_upstream_tool_service(deployment, upstream_jokes, row, streaming):
    with interop_row(row, f"upstream joke-service (DynamicToolService) as our agent's tool ({mode(streaming)})",
                     "our agent -> upstream tool service") as r:
        await asyncio.to_thread(deployment.ready_agent, deployment.gateway, "our-agent-flow")
        await asyncio.to_thread(deployment.ready_tool_service, "up-joke-service")
        frames = await socket_call(deployment.gateway, "agent",
                                   {"question": QUESTION_UPSTREAM, "user": USER, "streaming": streaming},
                                   flow="our-agent-flow")
        check_dialog(r, read_dialog(frames), streaming, THOUGHTS_UPSTREAM, lambda o: o in upstream_jokes)


@pytest.mark.parametrize("streaming", MODES)
async def test_upstream_agent_and_tool_service_with_our_parts_between(deployment, upstream_jokes, row, streaming):
    with interop_row(row, f"upstream agent-manager-react + upstream joke-service ({mode(streaming)})",
                     "our gateway -> upstream agent -> our prompt-template, text-completion-scripted; upstream tool service") as r:
        await asyncio.to_thread(deployment.ready_agent, deployment.gateway, "up-agent-flow")
        await asyncio.to_thread(deployment.ready_tool_service, "up-joke-service")
        frames = await socket_call(deployment.gateway, "agent",
                                   {"question": QUESTION_UPSTREAM, "user": USER, "streaming": streaming},
                                   flow="up-agent-flow")
        check_dialog(r, read_dialog(frames), streaming, THOUGHTS_UPSTREAM, lambda o: o in upstream_jokes)


@pytest.mark.parametrize("streaming", MODES)
async def test_our_gateway_prompt_kind_to_upstream_prompt_template(deployment, row, streaming):
    with interop_row(row, f"upstream prompt-template, prompt kind ({mode(streaming)})",
                     "our gateway -> upstream prompt-template -> our text-completion-scripted") as r:
        await asyncio.to_thread(deployment.ready_agent, deployment.gateway, "our-agent-flow")
        frames = await socket_call(deployment.gateway, "prompt",
                                   {"id": "greet", "variables": {"name": "Ada"}, "streaming": streaming},
                                   flow="our-agent-flow")
        text = "".join((f.get("response") or {}).get("text") or "" for f in frames)
        r.check(frames[-1].get("complete") is True and text == GREETING, lambda: f"frames {frames}")
        r.check((len(frames) > 1) is streaming, lambda: f"{len(frames)} frames")


def shape(got: Dialog, streaming: bool) -> str:
    if not got.complete:
        return "the dialog did not complete"
    if got.streamed is None:
        return f"a {mode(streaming)} dialog mixed chunks and whole messages"
    return f"asked {mode(streaming)}, got {mode(bool(got.streamed))}"


def check_one_step(r: Row, got: Dialog, streaming: bool, answer: str = "pong") -> None:
    """The probe question's dialog: one thought, no tool, the answer."""
    r.check(got.complete and got.streamed is streaming, lambda: f"{shape(got, streaming)}: {got}")
    r.check(got.thoughts == ["a probe"] and got.observations == [], lambda: f"steps {got}")
    r.check(words(got.answer or "") == words(answer), lambda: f"answer {got.answer!r}")


@pytest.mark.parametrize("streaming", MODES)
async def test_upstream_agent_with_our_prompt_on_the_bootstrap_template(deployment, row, streaming):
    """The shipped template's prefix ("Thought:") is given back whole, so upstream's parser reads the answer."""
    with interop_row(row, f"upstream agent-manager-react, bootstrap agent-react template ({mode(streaming)})",
                     "our gateway -> upstream agent -> our prompt-template (prefix, stop) -> our text-completion-scripted") as r:
        await asyncio.to_thread(deployment.ready_agent, deployment.gateway, "up-agent-boot-flow")
        frames = await socket_call(deployment.gateway, "agent",
                                   {"question": "ping", "user": USER, "streaming": streaming},
                                   flow="up-agent-boot-flow")
        check_one_step(r, read_dialog(frames), streaming)


@pytest.mark.parametrize("streaming", MODES)
async def test_upstream_agent_with_our_prompt_and_our_openai_processor(deployment, our_joke, row, streaming):
    """A model behind an OpenAI-compatible API sees only the chat messages: it can answer from the
    tool's result only if the dialog's history is in them, and its whole ReAct turns must reach
    upstream's parser with nothing put in front of them."""
    with interop_row(row, f"upstream agent-manager-react, bootstrap template, our text-completion-openai "
                          f"({mode(streaming)})",
                     "our gateway -> upstream agent -> our prompt-template -> our text-completion-openai -> "
                     "an OpenAI-compatible stand-in on 127.0.0.1 (sees only the messages) -> joke-service") as r:
        await asyncio.to_thread(deployment.ready_agent, deployment.gateway, "up-agent-openai-flow")
        frames = await socket_call(deployment.gateway, "agent",
                                   {"question": QUESTION_OURS, "user": USER, "streaming": streaming},
                                   flow="up-agent-openai-flow")
        check_dialog(r, read_dialog(frames), streaming, THOUGHTS_OURS, lambda o: o == our_joke)


@pytest.mark.parametrize("streaming", MODES)
async def test_upstream_prompt_template_on_the_bootstrap_template_under_our_agent(deployment, row, streaming):
    with interop_row(row, f"upstream prompt-template, bootstrap agent-react template ({mode(streaming)})",
                     "our gateway -> our agent -> upstream prompt-template (ibis) -> our text-completion-scripted") as r:
        await asyncio.to_thread(deployment.ready_agent, deployment.gateway, "our-agent-boot-flow")
        frames = await socket_call(deployment.gateway, "agent",
                                   {"question": "ping", "user": USER, "streaming": streaming},
                                   flow="our-agent-boot-flow")
        # No tool gave a result, so our agent marks the answer as the model's own.
        check_one_step(r, read_dialog(frames), streaming, NO_TOOL_PREFIX + "pong")


@pytest.mark.parametrize("flag", AGENT_FLAGS)
def test_upstream_tg_invoke_agent_against_our_gateway(deployment, our_joke, upstream_venv, row, flag):
    with interop_row(row, f"upstream tg-invoke-agent -v {' '.join(flag) or '(streaming)'}",
                     "upstream CLI -> our gateway -> our agent") as r:
        deployment.ready_agent(deployment.gateway, "our-agent-flow")
        out = cli("tg-invoke-agent", "-u", deployment.gateway, "-f", "our-agent-flow", "-q", QUESTION_OURS,
                  "-U", USER, "-v", *flag, upstream_venv=upstream_venv)
        r.check(cli_words(out) == words(f"{THOUGHTS_OURS[0]} {our_joke} {THOUGHTS_OURS[1]} {ANSWER}"),
                lambda: f"printed {out!r}")


# -- upstream's api-gateway in front of our services ------------------------------------------

def test_upstream_gateway_rest_agent_to_our_agent(deployment, row):
    with interop_row(row, "upstream api-gateway, REST agent", "upstream gateway -> our agent") as r:
        deployment.ready_agent(deployment.upstream_gateway, "our-agent-flow")
        body = post(f"{deployment.upstream_gateway}api/v1/flow/our-agent-flow/service/agent",
                    {"question": QUESTION_OURS, "user": USER})
        r.check(words(body.get("answer") or "") == ANSWER, lambda: f"body {body}")


@pytest.mark.parametrize("flag", AGENT_FLAGS)
def test_our_tg_invoke_agent_through_upstream_gateway(deployment, our_joke, row, flag):
    with interop_row(row, f"our tg-invoke-agent -v {' '.join(flag) or '(streaming)'}",
                     "our CLI -> upstream gateway -> our agent") as r:
        deployment.ready_agent(deployment.upstream_gateway, "our-agent-flow")
        out = cli("tg-invoke-agent", "-u", deployment.upstream_gateway, "-f", "our-agent-flow", "-q",
                  QUESTION_OURS, "-U", USER, "-v", *flag)
        # Without our command's own 🛠️ action lines (an extension of ours, not a wire matter).
        shown = "".join(line for line in out.splitlines(keepends=True) if not line.startswith("🛠️"))
        r.check(shown == f"🤔 {THOUGHTS_OURS[0]}\n💡 {our_joke}\n🤔 {THOUGHTS_OURS[1]}\n{ANSWER}\n",
                lambda: f"printed {out!r}")


def test_upstream_tg_invoke_agent_through_upstream_gateway(deployment, our_joke, upstream_venv, row):
    with interop_row(row, "upstream tg-invoke-agent -v (streaming)",
                     "upstream CLI -> upstream gateway -> our agent") as r:
        deployment.ready_agent(deployment.upstream_gateway, "our-agent-flow")
        out = cli("tg-invoke-agent", "-u", deployment.upstream_gateway, "-f", "our-agent-flow", "-q",
                  QUESTION_OURS, "-U", USER, "-v", upstream_venv=upstream_venv)
        r.check(cli_words(out) == words(f"{THOUGHTS_OURS[0]} {our_joke} {THOUGHTS_OURS[1]} {ANSWER}"),
                lambda: f"printed {out!r}")


@pytest.mark.parametrize("whose", ["upstream", "our"])
def test_config_commands_through_upstream_gateway(deployment, upstream_venv, row, whose):
    venv = upstream_venv if whose == "upstream" else None
    url = deployment.upstream_gateway
    kind = f"t{uuid.uuid4().hex[:6]}"
    with interop_row(row, f"{whose} tg-put/get/list/delete-config-item, tg-show-config",
                     "CLI -> upstream gateway -> our config-svc") as r:
        deployment.ready_kind(url, "api/v1/config", {"operation": "config"})
        out = cli("tg-put-config-item", "-u", url, "--type", kind, "--key", "a", "--value", '"1"', upstream_venv=venv)
        r.check(f"Configuration item set: {kind}/a" in out or f"{kind}/a" in out, lambda: f"put printed {out!r}")
        cli("tg-put-config-item", "-u", url, "--type", kind, "--key", "b", "--value", '"2"', upstream_venv=venv)
        out = cli("tg-get-config-item", "-u", url, "--type", kind, "--key", "a", upstream_venv=venv)
        r.check(out.strip() == '"1"', lambda: f"get printed {out!r}")
        out = cli("tg-list-config-items", "-u", url, "--type", kind, upstream_venv=venv)
        r.check(out.split() == ["a", "b"], lambda: f"list printed {out!r}")
        out = cli("tg-show-config", "-u", url, upstream_venv=venv)
        shown = json.loads(out.split("\n", 1)[1]) if out.startswith("Version: ") else {}
        r.check(shown.get(kind) == {"a": '"1"', "b": '"2"'}, lambda: f"show-config printed {out[:200]!r}")
        cli("tg-delete-config-item", "-u", url, "--type", kind, "--key", "a", upstream_venv=venv)
        out = cli("tg-list-config-items", "-u", url, "--type", kind, upstream_venv=venv)
        r.check(out.split() == ["b"], lambda: f"after delete, list printed {out!r}")


def test_our_tg_invoke_prompt_through_upstream_gateway(deployment, row):
    url = deployment.upstream_gateway
    with interop_row(row, "our tg-invoke-prompt", "our CLI -> upstream gateway -> our prompt-template -> our text-completion-scripted") as r:
        deployment.ready_kind(url, "api/v1/flow/up-agent-flow/service/prompt",
                              {"id": "greet", "variables": {"name": "Ada"}})
        out = cli("tg-invoke-prompt", "-u", url, "-f", "up-agent-flow", "greet", "name=Ada")
        r.check(out.strip() == GREETING, lambda: f"printed {out!r}")


def test_our_tg_invoke_llm_through_upstream_gateway(deployment, row):
    url = deployment.upstream_gateway
    with interop_row(row, "our tg-invoke-llm", "our CLI -> upstream gateway -> our text-completion-scripted") as r:
        deployment.ready_kind(url, "api/v1/flow/up-agent-flow/service/text-completion",
                              {"system": "", "prompt": "Greet Ada in one line."})
        out = cli("tg-invoke-llm", "-u", url, "-f", "up-agent-flow", "", "Greet Ada in one line.")
        r.check(out.strip() == GREETING, lambda: f"printed {out!r}")


# -- tool services -------------------------------------------------------------------------

UPSTREAM_CLIENT = """
import asyncio, json, sys, uuid
from trustgraph.base.pulsar_backend import PulsarBackend
from trustgraph.base.tool_service_client import ToolServiceClient
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse

async def main(url, user):
    backend = PulsarBackend(host=url)
    client = ToolServiceClient(
        backend=backend, subscription=f"interop-{uuid.uuid4()}", consumer_name="interop",
        request_topic="non-persistent://tg/request/joke", request_schema=ToolServiceRequest,
        request_metrics=None,
        response_topic="non-persistent://tg/response/joke", response_schema=ToolServiceResponse,
        response_metrics=None)
    await client.start()
    try:
        # A response just after the subscription may be lost on pulsar-lite: bounded retries.
        for attempt in range(6):
            try:
                answer = await client.call(user, {"style": "pun"}, {"topic": "cats"}, timeout=5 * (attempt + 1))
                break
            except Exception as e:
                last = e
        else:
            raise last
        # pulsar-client logs on stdout too: the answer is the line marked ANSWER.
        print("ANSWER " + json.dumps(answer))
    finally:
        await client.stop()
        backend.close()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def test_upstream_tool_service_client_calls_our_service(deployment, our_joke, upstream_venv, row):
    with interop_row(row, "upstream ToolServiceClient", "upstream client -> our joke-service") as r:
        p = subprocess.run([str(upstream_venv.python), "-c", UPSTREAM_CLIENT, deployment.broker.url, USER],
                           capture_output=True, text=True, timeout=150)
        marked = [line for line in p.stdout.splitlines() if line.startswith("ANSWER ")]
        got = json.loads(marked[-1][len("ANSWER "):]) if marked else None
        r.check(got == our_joke, lambda: f"got {got!r}; {(p.stderr.strip().splitlines() or [''])[-1]}")


async def test_our_gateway_tool_route_to_upstream_service(deployment, upstream_jokes, row):
    with interop_row(row, "upstream joke-service via POST /api/v1/tool-service (by tool)",
                     "our gateway -> upstream tool service") as r:
        await asyncio.to_thread(deployment.ready_tool_service, "up-joke-service")
        body = await asyncio.to_thread(post, f"{deployment.gateway}api/v1/tool-service",
                                       {"tool": "tell-upstream-joke", "arguments": {"topic": "cats"}, "user": USER})
        r.check(body.get("response") in upstream_jokes, lambda: f"body {body}")


async def test_our_gateway_socket_tool_service_to_upstream_service(deployment, upstream_jokes, row):
    with interop_row(row, "upstream joke-service via websocket service tool-service (by service)",
                     "our gateway -> upstream tool service") as r:
        await asyncio.to_thread(deployment.ready_tool_service, "up-joke-service")
        frames = await socket_call(deployment.gateway, "tool-service",
                                   {"service": "up-joke-service", "config": {"style": "pun"},
                                    "arguments": {"topic": "cats"}, "user": USER})
        text = "".join((f.get("response") or {}).get("response") or "" for f in frames)
        r.check(frames[-1].get("complete") is True and text in upstream_jokes, lambda: f"frames {frames}")


def test_our_tg_invoke_tool_service_to_upstream_service(deployment, upstream_jokes, row):
    with interop_row(row, "upstream joke-service via our tg-invoke-tool-service",
                     "our CLI -> our gateway -> upstream tool service") as r:
        deployment.ready_tool_service("up-joke-service")
        out = cli("tg-invoke-tool-service", "-u", deployment.gateway, "-n", "tell-upstream-joke",
                  "-a", "topic=cats", "-U", USER)
        r.check(out.rstrip("\n") in upstream_jokes, lambda: f"printed {out!r}")


def test_no_process_died(deployment):
    """Every process of the deployment still runs after the rows: none crashed on a message."""
    dead = {name: proc.p.returncode for name, proc in deployment.procs.items() if proc.p.poll() is not None}
    assert not dead, (dead, deployment.logs())
