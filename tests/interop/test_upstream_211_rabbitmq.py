"""Our agent in a TrustGraph 2.11.1 deployment on RabbitMQ: the 2.11 rows of
``test_upstream_211_deployment.py`` with every process on a real RabbitMQ node instead of pulsar-lite.

The same deployment (``deployment_211.py``), started once for the module on a RabbitMQ node of its
own: 2.11.1's api-gateway, no-auth IAM, prompt-template, text-completion-openai, mcp-tool and
joke-service, from ``.interop/upstream-2.11`` (PyPI), beside our config-svc, agent and joke-service
with ``--wire 2.11``, each given ``--pubsub-backend rabbitmq`` and the node's ``--rabbitmq-host``,
``-port``, ``-username`` and ``-vhost``, the password in ``$RABBITMQ_PASSWORD`` (2.11.1's processors
read it there, as ours do).  No Pulsar runs: an answer at all means both sides are on RabbitMQ, ours
declaring 2.11.1's exchanges and queues (``trustgraph.compat.v211.rabbitmq_topology``; a declaration
that differed would be refused by the broker, and the process would not start).

Each row runs 2.11.1's own ``tg-invoke-agent -v`` against 2.11.1's gateway and checks what it
printed as the Pulsar rows do: both thoughts, the tool's result as the observation and in the
answer, and the dialog's LLM calls streamed or whole as the command asked.  The tool services:
ours (``joke-service --wire 2.11``), and 2.11.1's own ``mcp-tool``, a flow ``ToolService`` calling a
real MCP server.  2.11.1's ``joke-service`` is a ``DynamicToolService``, which cannot serve on
RabbitMQ at all (:data:`~deployment_211.DYNAMIC_ON_RABBITMQ`): its row is recorded failing with
that reason, and passes if a release of upstream's serves.

The node is the module's own (not the session's ``rabbitmq``): 2.11.1's request queues outlive
their consumers, and the deployment's names (``tg.request.config...``) must meet no other test's.
Marked ``long`` as the Pulsar rows are (2.11.1's gateway waits a minute for a signing key).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator

import pytest
from deployment import Deployment, DeploymentError, rabbitmq_access
from deployment_211 import (
    DYNAMIC_ON_RABBITMQ,
    FLAGS,
    FLOW,
    QUESTION_UPSTREAM,
    THOUGHTS_UPSTREAM,
    ask_our_joke,
    direction,
    invoke,
    mcp_tool_row,
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
from support import wait_for
from trustgraph.compat.v211.rabbitmq_topology import UPSTREAM_211 as UPSTREAM_211_TOPOLOGY

from interop.venvs import UPSTREAM_211, Venv

pytestmark = [pytest.mark.interop, pytest.mark.long, pytest.mark.timeout(900),
              pytest.mark.xdist_group("upstream-211-rabbitmq")]

ON_RABBITMQ = "; every process on one RabbitMQ node (--pubsub-backend rabbitmq, 2.11.1's exchanges and queues)"


@pytest.fixture(scope="module")
def venv_211() -> Venv:
    return UPSTREAM_211.ensure()


@pytest.fixture(scope="module")
def deployment(venv_211, rabbitmq_site, tmp_path_factory) -> Iterator[Deployment]:
    tmp = tmp_path_factory.mktemp("deployment-211-rabbitmq")
    node = rabbitmq_site.node().start()
    with running_211(node, tmp, venv_211, rabbitmq_access(node)) as d:
        yield d


@pytest.fixture(scope="module")
def our_joke(deployment: Deployment, venv_211: Venv) -> str:
    """What our joke service answers a 2.11 request, asked by 2.11.1's own request-response client
    on 2.11.1's own RabbitMQ backend."""
    return ask_our_joke(deployment, venv_211)


@pytest.mark.parametrize("flags", FLAGS)
def test_2_11s_cli_gets_our_agents_answer_from_our_tool_service(deployment, venv_211, our_joke, row, flags):
    our_tool_service_row(row, deployment, venv_211, our_joke, flags, broker=ON_RABBITMQ)


@pytest.mark.parametrize("flags", FLAGS)
def test_2_11s_cli_gets_our_agents_answer_from_2_11s_mcp_tool(deployment, venv_211, row, flags):
    """2.11.1's own tool service on RabbitMQ: its mcp-tool, a flow ToolService."""
    mcp_tool_row(row, deployment, venv_211, flags, "2.11.1's mcp-tool as the tool (shout-it)", broker=ON_RABBITMQ)


@pytest.mark.parametrize("flags", FLAGS)
def test_2_11s_cli_gets_our_agents_answer_from_a_text_completion_tool(deployment, venv_211, row, flags):
    """The tool's question is a second request of the dialog on the same RabbitMQ queues."""
    text_completion_row(row, deployment, venv_211, flags, broker=ON_RABBITMQ)


UPSTREAM_JOKE_PEER = "2.11.1 tg-invoke-agent -v (streaming), 2.11.1's joke-service (a DynamicToolService) as the tool"
UPSTREAM_JOKE_DIRECTION = direction("2.11.1's joke-service", broker=ON_RABBITMQ)
KNOWN_BROKEN = {(UPSTREAM_JOKE_PEER, UPSTREAM_JOKE_DIRECTION): DYNAMIC_ON_RABBITMQ}


def whole_log(d: Deployment, name: str) -> str:
    """A process's whole log (``Deployment.log`` gives its end)."""
    return d.procs[name].log.read_text(errors="replace")


def serving_or_refused(d: Deployment, name: str) -> str:
    """The line in 2.11.1's DynamicToolService's log that says how its start went: that it started
    (it has subscribed), or why its start failed."""
    pattern = re.compile(rf"^.*(Tool service {re.escape(name)} started|Exception: .*)$", re.MULTILINE)
    found = wait_for(f"2.11.1's {name} started or refused", lambda: pattern.search(whole_log(d, name)), 120,
                     detail=lambda: d.log(name), gone=d.procs[name].exited)
    return found.group(1)


def test_2_11s_cli_gets_our_agents_answer_from_2_11s_dynamic_tool_service(deployment, venv_211, row):
    """2.11.1's joke-service, as on Pulsar; on 2.11.1's RabbitMQ backend it never serves (KNOWN_BROKEN)."""
    with interop_row(row, UPSTREAM_JOKE_PEER, UPSTREAM_JOKE_DIRECTION, KNOWN_BROKEN) as r:
        said = serving_or_refused(deployment, "up-joke-service")
        if "started" not in said:
            raise DeploymentError(f"2.11.1's joke-service did not start: {said}")
        ready_agent(deployment)
        told = {words(j) for j in upstream_joke_texts(venv_211)}
        out, streamed = invoke(deployment, venv_211, QUESTION_UPSTREAM, [])
        joke = printed_joke(out, THOUGHTS_UPSTREAM, lambda j: j in told)
        r.check(joke is not None, lambda: f"printed {out!r}")
        r.check(streamed == [True] * 2, lambda: f"LLM calls streamed: {streamed}")
        r.saw(seen(joke, streamed))


def test_2_11s_gateway_rest_agent_route(deployment, our_joke, row):
    rest_agent_row(row, deployment, our_joke, broker=ON_RABBITMQ)


def test_2_11s_show_flows_lists_the_flow_started_through_2_11s_flow_protocol(deployment, venv_211, row):
    show_flows_row(row, deployment, venv_211, broker=ON_RABBITMQ)


#: Run by 2.11.1's Python: the queue its own ConsumerSpec (the subscription) and RabbitMQ backend (the
#: exchange) give processor ARGV[1]'s flow consumer ARGV[4] of flow ARGV[3] in workspace ARGV[2], on queue ARGV[5].
UPSTREAM_QUEUE = """
import asyncio, sys
from types import SimpleNamespace
from trustgraph.base.async_rabbitmq_backend import AsyncRabbitMQBackend
from trustgraph.base.consumer_spec import ConsumerSpec
proc_id, workspace, flow, spec, topic = sys.argv[1:6]
got = {}
class Pool:
    async def add_consumer(self, **kw):
        got.update(kw)
processor = SimpleNamespace(id=proc_id, receiver_pool=Pool())
asyncio.run(ConsumerSpec(spec, None, None).register(
    SimpleNamespace(workspace=workspace, name=flow, consumer={}), processor, {"topics": {spec: topic}}))
exchange = AsyncRabbitMQBackend(host="unused")._parse_topic(got["topic"])[0]
print(exchange, f"{exchange}.{got['subscription']}")
"""


def upstream_queue(venv: Venv, processor: str, spec: str, topic: str) -> tuple[str, str]:
    """The exchange, and the queue 2.11.1's ``processor`` would consume ``spec`` of the flow from."""
    out = subprocess.run([str(venv.python), "-c", UPSTREAM_QUEUE, processor, "default", FLOW, spec, topic],
                         capture_output=True, text=True, timeout=60, check=True).stdout.split()
    return out[0], out[1]


def test_our_agent_consumes_the_queue_2_11s_agent_would(deployment, venv_211, row):
    """On 2.11.1's topology a request queue outlives its consumers, so our agent put in place of 2.11.1's
    (the same --id) must consume the queue 2.11.1's left: named by 2.11.1's own code, and the only one."""
    node = deployment.broker
    with interop_row(row, "2.11.1's queue names (its ConsumerSpec and RabbitMQ backend, from .interop/upstream-2.11)",
                     "our agent-manager-react --wire 2.11 consumes the queue of the agent's request topic that "
                     "2.11.1's agent-manager-react of the same --id would, and no other is bound there" + ON_RABBITMQ) as r:
        ready_agent(deployment)
        exchange, theirs = upstream_queue(venv_211, "agent-manager", "request", f"request:tg:agent:default:{FLOW}")
        listed = json.loads(node.ctl("list_queues", "name", "consumers", "--formatter", "json"))
        bound = {q["name"]: int(q["consumers"]) for q in listed if q["name"].startswith(f"{exchange}.")}
        r.check(list(bound) == [theirs] and bound[theirs] >= 1, lambda: f"queues of {exchange}: {bound}")
        r.saw(f"one queue, {theirs}, with {bound.get(theirs)} consumer(s): ours")


def test_every_process_is_on_rabbitmq_and_none_died(deployment):
    """After the rows: every process still runs (none crashed on a message); each of ours says it is on
    the node, with 2.11.1's topology, each of 2.11.1's that it connected to it; the password is in no log
    and no command line."""
    node = deployment.broker
    dead = {name: proc.p.returncode for name, proc in deployment.procs.items() if proc.p.poll() is not None}
    assert not dead, (dead, deployment.logs())
    ours = ("config-svc", "agent-manager", "joke-service")
    theirs = ("no-auth-svc", "api-gateway", "text-completion", "prompt", "mcp-tool", "up-joke-service")
    for name in ours:
        log = whole_log(deployment, name)
        assert f"broker amqp://{node.host}:{node.port}/%2F (user {node.username}" in log, name
        # What 2.11.1's queues cannot do that ours can, said once at start.
        assert log.count(f"On rabbitmq, {UPSTREAM_211_TOPOLOGY.limitations[0]}") == 1, name
    for name in theirs:
        assert f"Async RabbitMQ connected to {node.host}:{node.port}" in whole_log(deployment, name), name
    for name, proc in deployment.procs.items():
        assert node.password not in whole_log(deployment, name) and node.password not in " ".join(proc.args), name
