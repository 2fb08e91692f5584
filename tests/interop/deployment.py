"""One mixed deployment for the interop rows: upstream 2.1.4 processes and ours on one broker.

It runs on a broker of its own with every default topic (config, flow, the push topic),
because upstream's api-gateway follows config on the default push topic and has no flag to
move it, and because that is what a real deployment upgraded in place looks like.

Processes (each ``--id`` is its key in ``active-flow``, so one blueprint picks whose agent,
whose prompt service and whose LLM a flow uses):

=================  ========  ============================================================
id                 whose     what
=================  ========  ============================================================
config-svc         ours      config and flows (SQLite in the test's directory)
api-gateway        ours      on ``gateway``
text-completion    ours      ``text-completion-scripted`` with :data:`SCRIPT`
openai-llm         ours      ``text-completion-openai`` against ``openai_stand_in.py`` (127.0.0.1)
our-prompt         ours      prompt-template
our-prompt-boot    ours      prompt-template on the bootstrap templates (:data:`BOOTSTRAP_TYPE`)
our-agent          ours      agent-manager-react
joke-service       ours      the example tool service, topic ``joke``
up-agent           upstream  agent-manager-react 2.1.4
up-agent-boot      upstream  agent-manager-react 2.1.4, for the bootstrap-template flow
up-agent-openai    upstream  agent-manager-react 2.1.4, for the OpenAI flow
up-prompt          upstream  prompt-template 2.1.4
up-prompt-boot     upstream  prompt-template 2.1.4 on the bootstrap templates
up-joke-service    upstream  joke-service 2.1.4, topic ``up-joke``
up-api-gateway     upstream  api-gateway 2.1.4 on ``upstream_gateway``
=================  ========  ============================================================

Flows: ``up-agent-flow`` (upstream agent, our prompt service, our LLM) and
``our-agent-flow`` (our agent, upstream's prompt service, our LLM), with a test
template whose history is in the prompt text, where the scripted LLM sees it;
``up-agent-boot-flow`` and ``our-agent-boot-flow`` the same with the shipped
agent-react template of ``config-examples`` (its prefix, stop strings and
replay travel as properties the scripted LLM cannot match, so those flows
answer one-step questions); ``up-agent-openai-flow``: upstream's agent, our
prompt service on the bootstrap templates, and our ``text-completion-openai``
in front of an OpenAI-compatible stand-in, which sees only the chat messages
(so it answers a joke question in two steps only if the history is in them).  Tools: ``tell-joke`` (our joke service) and
``tell-upstream-joke`` (upstream's).

Ours report ready through ``$TG_READY_FILE`` once their config and flows are in
place.  Upstream's processes have no readiness signal: each row first makes
sure (:meth:`Deployment.warm`) that the parts it needs answer a real call.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support import BIN, Proc, wait_for
from trustgraph.base.launching.broker import EmbeddedBroker, free_port

from interop.venvs import Venv

QUESTION_OURS = "Tell me a joke about cats"
QUESTION_UPSTREAM = "Tell me an upstream joke about cats"
ANSWER = "Here is the joke you asked for."

#: The agent-react template of the deployment: what both ibis and Jinja2 parse, with the
#: history in the prompt text (where the scripted LLM can see it).
AGENT_TEMPLATE = {
    "prompt": ("Tools:\n{% for tool in tools %}{{ tool.name }}: {{ tool.description }}\n{% endfor %}"
               "Question: {{ question }}\n"
               "{% for step in history %}Thought: {{ step.thought }}\nAction: {{ step.action }}\n"
               "Observation: {{ step.observation }}\n{% endfor %}"),
    "response-type": "text",
}
GREET_TEMPLATE = {"prompt": "Greet {{ name }} in one line.", "response-type": "text"}

#: The scripted LLM: a tool call for a joke question, the final answer once an observation
#: is in the prompt, and "pong" for the probes.
SCRIPT = {
    "rules": [
        # First: the bootstrap template's worked examples mention the joke tools too.
        {"match": r"Question: ping\n", "reply": "Thought: a probe\nFinal Answer: pong"},
        {"match": r"Observation: Hey ", "reply": f"Thought: I have the joke\nFinal Answer: {ANSWER}"},
        {"match": r"Question: [^\n]*upstream joke",
         "reply": 'Thought: I will use tell-upstream-joke\nAction: tell-upstream-joke\nArgs: {"topic": "cats"}'},
        {"match": r"Question: [^\n]*joke",
         "reply": 'Thought: I will use tell-joke\nAction: tell-joke\nArgs: {"topic": "cats"}'},
        {"match": r"Greet Ada in one line", "reply": "Hello there, Ada! Nice to meet you."},
    ],
}

AGENT_KEYS = ("text-completion", "prompt", "mcp-tool", "graph-rag", "structured-query", "embeddings",
              "row-embeddings-query")


def _queues(kind: str, flow: str = "{id}") -> dict[str, str]:
    return {"request": f"non-persistent://tg/request/{kind}:{flow}",
            "response": f"non-persistent://tg/response/{kind}:{flow}"}


def blueprint(agent: str, prompt: str, llm: str = "text-completion") -> dict[str, Any]:
    """A flow blueprint whose agent is processor ``agent``, whose prompt service is ``prompt``
    and whose LLM service is ``llm``."""
    agent_spec = {"next": _queues("agent")["request"], **_queues("agent")}
    for key in AGENT_KEYS:
        kind = "row-embeddings" if key == "row-embeddings-query" else key
        agent_spec[f"{key}-request"] = _queues(kind)["request"]
        agent_spec[f"{key}-response"] = _queues(kind)["response"]
    prompt_spec = {**_queues("prompt"), "text-completion-request": _queues("text-completion")["request"],
                   "text-completion-response": _queues("text-completion")["response"]}
    return {
        "description": f"interop: agent {agent}, prompt {prompt}",
        "parameters": {},
        "blueprint": {},
        "flow": {f"{agent}:{{id}}": agent_spec, f"{prompt}:{{id}}": prompt_spec,
                 f"{llm}:{{id}}": _queues("text-completion")},
        "interfaces": {kind: _queues(kind) for kind in ("agent", "prompt", "text-completion")},
    }


FLOWS = {"up-agent-flow": blueprint("up-agent", "our-prompt"),
         "our-agent-flow": blueprint("our-agent", "up-prompt"),
         # The shipped agent-react template (config-examples), under config type BOOTSTRAP_TYPE.
         "up-agent-boot-flow": blueprint("up-agent-boot", "our-prompt-boot"),
         "our-agent-boot-flow": blueprint("our-agent", "up-prompt-boot"),
         "up-agent-openai-flow": blueprint("up-agent-openai", "our-prompt-boot", "openai-llm")}

BOOTSTRAP_TYPE = "prompt-bootstrap"
EXAMPLES = Path(__file__).resolve().parents[2] / "config-examples"


def bootstrap_prompts() -> dict[str, Any]:
    """The bootstrap config's prompt type (system, index, the shipped templates), as config items."""
    bootstrap = json.loads((EXAMPLES / "bootstrap.json").read_text())
    items = dict(bootstrap["config"]["prompt"])
    for key, name in bootstrap.get("files", {}).items():
        kind, _, item = key.partition("/")
        if kind == "prompt":  # every template the bootstrap ships (the index may list several)
            items[item] = json.loads((EXAMPLES / name).read_text())
    return items


def joke_service(sid: str, topic: str) -> dict[str, Any]:
    return {"id": sid, "request-queue": f"non-persistent://tg/request/{topic}",
            "response-queue": f"non-persistent://tg/response/{topic}",
            "config-params": [{"name": "style", "required": False}]}


def joke_tool(name: str, service: str) -> dict[str, Any]:
    return {"type": "tool-service", "name": name, "description": f"The {name} tool", "service": service,
            "style": "pun", "arguments": [{"name": "topic", "type": "string", "description": "the topic"}]}


CONFIG = {
    "prompt": {"system": "You are a helpful assistant.", "template-index": ["agent-react", "greet"],
               "template.agent-react": AGENT_TEMPLATE, "template.greet": GREET_TEMPLATE},
    "tool-service": {"joke-service": joke_service("joke-service", "joke"),
                     "up-joke-service": joke_service("up-joke-service", "up-joke")},
    "tool": {"tell-joke": joke_tool("tell-joke", "joke-service"),
             "tell-upstream-joke": joke_tool("tell-upstream-joke", "up-joke-service")},
}
CONFIG[BOOTSTRAP_TYPE] = bootstrap_prompts()


class DeploymentError(RuntimeError):
    """A part of the deployment did not come up or does not answer; the message says which."""


def answered(body: Any) -> bool:
    """Whether a gateway's reply came from the service: not a timeout, routing or connection error."""
    if not isinstance(body, dict):
        return False
    error = body.get("error")
    if error is None:
        return True
    return isinstance(error, dict) and error.get("type") not in (None, "", "gateway-error")


def _answered(body: Any) -> Any:
    """``body`` if the service answered it, else a ValueError saying what came instead (not ready yet)."""
    if not answered(body):
        raise ValueError(f"not answered yet: {body}")
    return body


def post(url: str, body: dict[str, Any], timeout: float = 60.0, deadline: float | None = None) -> Any:
    """POST JSON, give back the JSON answer (HTTP 200 expected, as both gateways answer)."""
    headers = {"Content-Type": "application/json"}
    if deadline is not None:
        headers["TrustGraph-Deadline"] = f"{time.time() + deadline:.3f}"
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


@dataclass(frozen=True)
class BrokerAccess:
    """How every process of a deployment, ours and upstream's, reaches its broker.

    ``args`` go on each command line (2.11.1's processors take the broker flags ours take);
    ``env`` holds what must not: a RabbitMQ password, which both read from ``$RABBITMQ_PASSWORD``,
    so no process list shows it.  ``url`` names the broker without a password (for lines, and for
    a caller of the test's own).
    """

    url: str
    args: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)


def pulsar_access(url: str) -> BrokerAccess:
    """A Pulsar-protocol broker (pulsar-lite) at ``url``: ``-p URL``, as every process takes it."""
    return BrokerAccess(url, ("-p", url))


def rabbitmq_access(node: Any) -> BrokerAccess:
    """A RabbitMQ node (``tests/rabbitmq_nodes.py``): ``--pubsub-backend rabbitmq`` and the node's
    ``--rabbitmq-*`` flags, the password in the environment."""
    return BrokerAccess(
        f"amqp://{node.username}@{node.host}:{node.port}/",
        ("--pubsub-backend", "rabbitmq", "--rabbitmq-host", node.host, "--rabbitmq-port", str(node.port),
         "--rabbitmq-username", node.username, "--rabbitmq-vhost", node.vhost),
        {"RABBITMQ_PASSWORD": node.password})


@dataclass
class Deployment:
    broker: Any                 # an EmbeddedBroker, or a RabbitNode (with ``access``)
    tmp: Path
    upstream: Venv
    gateway: str = ""           # ours, "http://127.0.0.1:PORT/"
    upstream_gateway: str = ""  # upstream's
    mcp_url: str = ""           # an MCP server's, where the deployment runs one (2.11's)
    procs: dict[str, Proc] = field(default_factory=dict)
    _warm: dict[str, Any] = field(default_factory=dict)
    #: How the processes reach the broker; by default ``-p`` with the broker's URL (pulsar-lite).
    access: BrokerAccess | None = None

    def __post_init__(self) -> None:
        if self.access is None:
            self.access = pulsar_access(self.broker.url)

    # -- processes -----------------------------------------------------------------
    def ours(self, name: str, command: str, *args: str, after_config: bool = True,
             env: dict[str, str] | None = None) -> Proc:
        ready = self.tmp / f"{name}.ready"
        env = {**self.access.env, **(env or {}), "TG_READY_FILE": str(ready)}
        if after_config:
            env["TG_READY_AFTER_CONFIG"] = "1"
        proc = Proc([str(BIN / command), *args, "--no-metrics", *self.access.args],
                    self.tmp / f"{name}.log", env=env).start()
        proc.ready_file = ready
        self.procs[name] = proc
        return proc

    def stand_in(self, name: str, script: Path, *args: str) -> Proc:
        """A stand-in server of ours (a script run by this Python), ready once it listens."""
        ready = self.tmp / f"{name}.ready"
        proc = Proc([sys.executable, str(script), *args], self.tmp / f"{name}.log",
                    env={"TG_READY_FILE": str(ready), "STAND_IN_RECORD": str(self.tmp / f"{name}.jsonl")}).start()
        proc.ready_file = ready
        self.procs[name] = proc
        return proc

    def theirs(self, name: str, command: str, *args: str) -> Proc:
        proc = Proc([str(self.upstream.bin(command)), *args, "--no-metrics", *self.access.args],
                    self.tmp / f"{name}.log", env=dict(self.access.env)).start()
        self.procs[name] = proc
        return proc

    def log(self, name: str) -> str:
        return self.procs[name].output()

    def logs(self) -> str:
        return "\n".join(f"== {name}\n{proc.output()[-2500:]}" for name, proc in self.procs.items())

    def stop(self) -> None:
        for proc in reversed(list(self.procs.values())):
            proc.stop()

    # -- readiness -------------------------------------------------------------------
    def warm(self, what: str, attempt: Callable[[float], Any], timeout: float = 60.0) -> Any:
        """Repeat ``attempt(seconds)`` (a call bounded by ``seconds``) until it gives a value; once.

        Upstream's processes say nothing when they are subscribed, and upstream's gateway opens
        its subscription for a kind on the first call of that kind (a response published right
        after a subscription may be lost on pulsar-lite), so a real call is the readiness
        signal.  Each attempt gets longer, so a loaded machine is not flooded with calls.  The
        outcome is kept: a part that never came up fails the rows that need it at once, and
        only those.
        """
        if what in self._warm:
            outcome = self._warm[what]
            if isinstance(outcome, DeploymentError):
                raise outcome
            return outcome
        state: dict[str, Any] = {"bound": 2.0, "last": None}

        def tried() -> tuple[Any] | None:
            try:
                value = attempt(state["bound"])
                if value is not None:
                    return (value,)
            except (OSError, ValueError) as e:  # refused, timed out, not JSON yet
                state["last"] = e
            state["bound"] = min(state["bound"] * 1.5, 15.0)
            return None

        def dead() -> str | None:
            gone = {name: proc for name, proc in self.procs.items()
                    if proc.p is not None and proc.p.poll() is not None}
            return "; ".join(f"{name} exited {proc.p.returncode}: {proc.output()[-500:]}"
                             for name, proc in gone.items()) or None

        try:
            # every=0.1: a polling interval for quick refusals ("Invalid flow").
            (value,) = wait_for(what, tried, timeout, gone=dead, every=0.1)
        except pytest.fail.Exception:
            error = DeploymentError(f"{what}: not answering after {timeout:.0f} s "
                                    f"(last: {dead() or state['last']!r})")
            self._warm[what] = error
            raise error from None
        self._warm[what] = value
        return value

    def ready_agent(self, gateway: str, flow: str) -> None:
        """The flow's agent chain answers through ``gateway`` (any answer or service error)."""
        def attempt(seconds: float) -> Any:
            return _answered(post(f"{gateway}api/v1/flow/{flow}/service/agent", {"question": "ping"},
                                  timeout=seconds + 1, deadline=seconds))
        self.warm(f"agent of {flow} through {self.whose(gateway)} gateway", attempt)

    def ready_kind(self, gateway: str, path: str, body: dict[str, Any]) -> None:
        """``POST {gateway}{path}`` with ``body`` answers (warms that route's subscription)."""
        def attempt(seconds: float) -> Any:
            return _answered(post(f"{gateway}{path}", body, timeout=seconds + 1, deadline=seconds))
        self.warm(f"{path} through {self.whose(gateway)} gateway", attempt)

    def ready_tool_service(self, service: str) -> None:
        self.ready_kind(self.gateway, "api/v1/tool-service",
                        {"service": service, "config": {"style": "pun"}, "arguments": {"topic": "cats"}})

    def whose(self, gateway: str) -> str:
        return "upstream's" if gateway == self.upstream_gateway else "our"

    # -- config --------------------------------------------------------------------
    def load_config(self) -> None:
        values = [{"type": t, "key": k, "value": json.dumps(v)} for t, items in CONFIG.items()
                  for k, v in items.items()]
        self._ok(post(f"{self.gateway}api/v1/config", {"operation": "put", "values": values}))
        for name, definition in FLOWS.items():
            self._ok(post(f"{self.gateway}api/v1/flow", {"operation": "put-blueprint", "blueprint-name": name,
                                                         "blueprint-definition": json.dumps(definition)}))
            self._ok(post(f"{self.gateway}api/v1/flow", {"operation": "start-flow", "blueprint-name": name,
                                                         "flow-id": name, "description": name}))

    @staticmethod
    def _ok(body: Any) -> None:
        if isinstance(body, dict) and body.get("error"):
            raise DeploymentError(f"config-svc refused: {body['error']}")


def start(broker: EmbeddedBroker, tmp: Path, upstream: Venv) -> Deployment:
    """Start everything and load the config; ours are ready, upstream's are probed by each row."""
    d = Deployment(broker, tmp, upstream)
    try:
        (tmp / "script.json").write_text(json.dumps(SCRIPT))
        d.ours("config-svc", "config-svc", "--store", str(tmp / "config.db"), after_config=False)
        port = free_port()
        d.gateway = f"http://127.0.0.1:{port}/"
        d.ours("api-gateway", "api-gateway", "--port", str(port), "--host", "127.0.0.1", after_config=False)
        for name in ("config-svc", "api-gateway"):
            d.procs[name].wait_ready(d.procs[name].ready_file, timeout=60)
        d.load_config()
        # Everything else at once: the two cores start them while we wait.
        d.ours("text-completion", "text-completion-scripted", "--script", str(tmp / "script.json"))
        openai_port = free_port()
        d.stand_in("openai-stand-in", Path(__file__).with_name("openai_stand_in.py"), str(openai_port))
        d.ours("openai-llm", "text-completion-openai", "--id", "openai-llm", "-u",
               f"http://127.0.0.1:{openai_port}/v1", env={"OPENAI_TOKEN": ""})
        d.ours("our-prompt", "prompt-template", "--id", "our-prompt")
        d.ours("our-prompt-boot", "prompt-template", "--id", "our-prompt-boot", "--config-type", BOOTSTRAP_TYPE)
        d.ours("our-agent", "agent-manager-react", "--id", "our-agent")
        d.ours("joke-service", "joke-service", "--no-announce", after_config=False)
        d.theirs("up-agent", "agent-manager-react", "--id", "up-agent", "--no-loki-enabled")
        # A flow per upstream agent: each of its flows runs a dozen blocking receive loops in
        # the default thread pool (6 threads on 2 cores), and two flows made every hop ~1 s.
        d.theirs("up-agent-boot", "agent-manager-react", "--id", "up-agent-boot", "--no-loki-enabled")
        d.theirs("up-agent-openai", "agent-manager-react", "--id", "up-agent-openai", "--no-loki-enabled")
        d.theirs("up-prompt", "prompt-template", "--id", "up-prompt", "--no-loki-enabled")
        d.theirs("up-prompt-boot", "prompt-template", "--id", "up-prompt-boot", "--config-type", BOOTSTRAP_TYPE,
                 "--no-loki-enabled")
        d.theirs("up-joke-service", "joke-service", "--id", "up-joke-service", "-t", "up-joke",
                 "--no-loki-enabled")
        up_port = free_port()
        d.upstream_gateway = f"http://127.0.0.1:{up_port}/"
        d.theirs("up-api-gateway", "api-gateway", "--port", str(up_port))
        for name in ("text-completion", "openai-stand-in", "openai-llm", "our-prompt", "our-prompt-boot",
                     "our-agent", "joke-service"):
            d.procs[name].wait_ready(d.procs[name].ready_file, timeout=60)
        return d
    except BaseException:
        d.stop()
        raise
