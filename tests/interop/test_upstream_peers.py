"""Upstream's Python client, prompt templates and DynamicToolService against ours."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from pathlib import Path

import pytest
from gateway_stack import stack  # noqa: F401 - our config-svc and api-gateway
from tool_calls import first_answer

pytestmark = [pytest.mark.interop, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]


def upstream_python(venv, code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv.python), "-c", code, *args], capture_output=True, text=True, timeout=120)


API_SCRIPT = """
import sys, json
from trustgraph.api import Api, ConfigValue, ConfigKey
api = Api(sys.argv[1])
kind = sys.argv[2]
api.config().put([ConfigValue(type=kind, key="a", value='"1"')])
got = api.config().get([ConfigKey(type=kind, key="a")])
flows = api.flow().list()
api.flow().put_blueprint("bp-" + kind, {"description": "d", "interfaces": {}, "blueprint": {}, "flow": {}})
api.flow().start("bp-" + kind, "f-" + kind, "typed", parameters={"n": 1, "b": True})
params = api.flow().get("f-" + kind)["parameters"]
api.flow().stop("f-" + kind)
print(json.dumps({"value": got[0].value, "flows": isinstance(flows, list), "params": params}))
"""


def test_upstream_python_client_against_our_gateway(upstream_venv, stack, row) -> None:  # noqa: F811
    kind = f"t{uuid.uuid4().hex[:6]}"
    r = upstream_python(upstream_venv, API_SCRIPT, stack.url, kind)
    ok = r.returncode == 0
    out = json.loads(r.stdout) if ok else {}
    ok = ok and out == {"value": '"1"', "flows": True, "params": {"n": "1", "b": "True"}}
    row("upstream trustgraph.api.Api (config, flow, typed flow parameters)", "upstream client -> our gateway",
        ok, "" if ok else (r.stderr.strip().splitlines() or [""])[-1][:160])
    assert ok, r.stdout + r.stderr


PROMPT_SCRIPT = """
import json, os, sys, asyncio
from trustgraph.template.prompt_manager import PromptManager
path = sys.argv[1]
config = json.load(open(path))
prompt = {"system": json.dumps(config["config"]["prompt"]["system"]),
          "template-index": json.dumps(config["config"]["prompt"]["template-index"])}
for key, name in config["files"].items():
    if key.startswith("prompt/"):
        prompt[key.split("/", 1)[1]] = open(os.path.join(os.path.dirname(path), name)).read()
pm = PromptManager()
pm.load_config(prompt)
terms = {"question": "Q?", "tools": [], "tool_names": "", "context": "", "history": []}
for tid in config["config"]["prompt"]["template-index"]:
    print(pm.render(tid, terms))
"""


def test_upstream_prompt_template_loads_our_bootstrap_config(upstream_venv, row) -> None:
    # Every template of the bootstrap: agent-react's 'prompt' (what upstream's ibis reads; our
    # service prefers 'prompt-jinja2') and agent-react-text are the ReAct text form.
    r = upstream_python(upstream_venv, PROMPT_SCRIPT, str(REPO / "config-examples" / "bootstrap.json"))
    ok = r.returncode == 0 and r.stdout.count("Question: Q?") == 2 and r.stdout.count("Final Answer") >= 2
    row("upstream prompt-template (PromptManager, ibis) loads bootstrap agent-react", "our config -> upstream",
        ok, "" if ok else (r.stderr.strip().splitlines() or [""])[-1][:160])
    assert ok, r.stdout + r.stderr


async def test_our_client_calls_upstreams_dynamic_tool_service(upstream_venv, broker, row, tmp_path) -> None:
    topic = f"interop-{uuid.uuid4().hex[:6]}"
    server = subprocess.Popen([str(upstream_venv.python), str(REPO / "bench" / "peers" / "upstream_server.py"),
                               "-p", broker.url, "-t", topic, "--no-metrics"],
                              stdout=subprocess.DEVNULL, stderr=open(tmp_path / "server.log", "wb"))
    try:
        text = await first_answer(broker.url, topic, {}, {"text": "hello"}, what="an answer of the upstream service",
                                  detail=lambda: (tmp_path / "server.log").read_text(),
                                  gone=lambda: None if server.poll() is None else f"exited {server.poll()}")
        ok = text == "hello"
        row("upstream DynamicToolService", "our ToolServiceClient -> upstream service", ok)
        assert ok
    finally:
        server.terminate()
        server.wait(10)
        await asyncio.sleep(0)
