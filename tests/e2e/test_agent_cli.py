"""The agent on a launched stack: the scripted model over REST and websocket, then the real SmolLM2."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import jsonschema
import pytest
from support import ANNOUNCING_SERVICE as SERVICE
from support import ONLY_JOKE_SERVICE, Proc, bounded_llm, wait_for

# The bootstrap template asks for a structured decision; the scripted model enforces the
# schema it gets, as llama.cpp's grammar does, so a reply outside it would be an error.
ACTION = json.dumps({"action": "tell-joke", "args": {"topic": "cats"}})
JOKE = "The cat ran for mayor and won by a whisker."
WEATHER = json.dumps({"action": "weather", "args": {"city": "Paris"}})


@pytest.fixture(scope="module")
def scripted(stack_factory, tmp_path_factory):
    script = tmp_path_factory.mktemp("script") / "script.json"
    script.write_text(json.dumps({"rules": [
        # The ReAct text template (an upstream agent's, or text mode): its format, not JSON.
        {"match": "Final Answer:.*Question: Tell me a joke about cats", "replies": [
            'Thought: a joke tool fits\nAction: tell-joke\nArgs: {"topic": "cats"}',
            "Thought: I have the result, so I know the answer\nFinal Answer: a cat joke, as text"]},
        {"match": "Question: Tell me a joke about cats", "reply": ACTION},
        {"match": "Question: What is the weather in Paris", "reply": WEATHER},
    ], "default": "no rule matched"}))
    return stack_factory("--llm", "scripted", "--llm-script", str(script))


def test_agent_streams_action_observation_and_answers_from_the_tool(scripted):
    r = scripted.cli("tg-invoke-agent", "-q", "Tell me a joke about cats", "-v", "-U", "alice")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == '🛠️ tell-joke {"topic": "cats"}'
    assert lines[1] == "💡 Hey alice! Here's a pun for you:"      # the joke tool service ran
    # After a tool result the bootstrap template answers with it (after-result: observation).
    assert lines[-1] == JOKE and "Hey alice! Here's a pun for you:" in lines[-3]


def test_agent_non_streaming_over_websocket(scripted):
    r = scripted.cli("tg-invoke-agent", "-q", "Tell me a joke about cats", "--no-streaming", "-v")
    assert r.returncode == 0, r.stderr
    assert "💡 Hey trustgraph! Here's a pun for you:" in r.stdout
    assert r.stdout.rstrip().endswith(JOKE)


def test_agent_over_rest_returns_the_final_message(scripted):
    body = json.dumps({"question": "Tell me a joke about cats", "user": "bob"}).encode()
    req = urllib.request.Request(scripted.url + "api/v1/flow/default/service/agent", data=body,
                                 headers={"Content-Type": "application/json"})
    reply = json.loads(urllib.request.urlopen(req, timeout=60).read())
    assert reply["answer"] == f"Hey bob! Here's a pun for you:\n\n{JOKE}"
    assert reply["end_of_dialog"] is True


def test_a_blank_question_is_refused_in_one_line_not_answered(scripted):
    for question in ("", "   ", " \n\t"):
        for streaming in ([], ["--no-streaming"]):
            r = scripted.cli("tg-invoke-agent", "-q", question, *streaming)
            assert (r.returncode, r.stdout) == (2, ""), r.stderr
            assert r.stderr == ('tg-invoke-agent: error: the question is empty: ask a question, '
                                'e.g. -q "What is the weather in Paris?"\n')
            # The gateway refuses it too, for any other client, before the agent sees it.
            body = json.dumps({"question": question, "streaming": not streaming}).encode()
            req = urllib.request.Request(scripted.url + "api/v1/flow/default/service/agent", data=body,
                                         headers={"Content-Type": "application/json"})
            assert json.loads(urllib.request.urlopen(req, timeout=60).read()) == {"error": {
                "type": "gateway-error",
                "message": "Bad request: the agent request's question is empty: ask a question"}}


def test_text_mode_template_still_works(scripted, tmp_path):
    # The ReAct text template as agent-react (a template without "decision", like upstream's):
    # the agent reads ReAct text, and the scripted model gets no schema to enforce.
    text = (Path(__file__).resolve().parents[2] / "config-examples" / "prompt-agent-react-text.json")
    put = scripted.cli("tg-put-config-item", "prompt/template.agent-react", input=text.read_text())
    assert put.returncode == 0, put.stderr
    try:
        # prompt-template reloads on the config push: ask until the dialog shows the text form.
        def text_form() -> subprocess.CompletedProcess | None:
            r = scripted.cli("tg-invoke-agent", "-q", "Tell me a joke about cats", "-v")
            assert r.returncode == 0, r.stdout + r.stderr
            return r if "a cat joke, as text" in r.stdout else None

        r = wait_for("the dialog in the text form", text_form, 60)
        assert r.returncode == 0, r.stderr
        assert "🤔 a joke tool fits" in r.stdout and '🛠️ tell-joke {"topic": "cats"}' in r.stdout
        assert r.stdout.rstrip().splitlines()[-1] == "a cat joke, as text"
    finally:
        boot = (Path(__file__).resolve().parents[2] / "config-examples" / "prompt-agent-react.json")
        assert scripted.cli("tg-put-config-item", "prompt/template.agent-react",
                            input=boot.read_text()).returncode == 0


def test_show_tools_lists_the_tool_services(scripted):
    r = scripted.cli("tg-show-tools")
    assert r.returncode == 0, r.stderr
    assert "tell-joke" in r.stdout and "tell-dad-joke" in r.stdout
    assert "joke-service" in r.stdout and "style=dad-joke" in r.stdout


@pytest.mark.timeout(600)   # the real model on a loaded machine: a hang bound, not a speed
def test_real_smollm2_makes_schema_valid_calls_of_a_tool_added_while_it_runs(stack_factory, tmp_path):
    """The embedded 135M model with the bootstrap template, as a user meets it: the joke tools,
    then a weather service started while the stack runs; every call it makes follows the
    called tool's argument schema (llama.cpp's grammar), and the dialog answers from the tool."""
    # Each step's decision is a JSON object of a few short strings (300 characters at most
    # each, decision_schema.STRING_LIMIT): 256 tokens hold one, and bound a step's time.
    # The joke service's tools only: a service added in-tree would change what the model is shown.
    s = stack_factory(*bounded_llm(tmp_path, 256), *ONLY_JOKE_SERVICE)
    # A question the model is sure of: for "a joke about ..." it weighs the two joke tools
    # nearly alike (a toss-up, asked back), for "a dad joke about ..." it is not torn.  The
    # service has no joke about weekends, and says so.
    r = s.cli("tg-invoke-agent", "-q", "Tell me a dad joke about the weekend", "-v", timeout=120)
    assert r.returncode == 0, r.stderr + s.child_logs()
    assert "💡 Hey trustgraph! I have no dad-joke about " in r.stdout and "so here's a general one" in r.stdout

    ready = tmp_path / "weather.ready"
    weather = Proc([sys.executable, str(SERVICE), "--id", "weather-service", "-t", "weather-e2e",
                    "-p", s.broker_url(), "--no-metrics"], tmp_path / "weather.log",
                   env={"TG_READY_FILE": str(ready)}).start()
    try:
        weather.wait_ready(ready)
        def with_weather() -> dict | None:
            c = json.loads(urllib.request.urlopen(s.url + "api/v1/tool-catalog", timeout=30).read())
            return c if any(t["name"] == "weather" for t in c["tools"]) else None

        catalog = wait_for("the weather tool in the catalog", with_weather, 60)
        schemas = {t["name"]: t["input-schema"] for t in catalog["tools"]}
        r = s.cli("tg-invoke-agent", "-q", "What is the weather in Paris?", "-v", timeout=120)
    finally:
        weather.stop()
    assert r.returncode == 0, r.stderr + s.child_logs()
    lines = r.stdout.rstrip().splitlines()
    calls = [line.removeprefix("🛠️ ").split(" ", 1) for line in lines if line.startswith("🛠️ ")]
    assert calls, r.stdout
    for name, args in calls:
        assert name in schemas, r.stdout
        jsonschema.validate(json.loads(args), schemas[name])
    # After the last observation: the observation itself, then the answer, which is the same text.
    tail = r.stdout[r.stdout.rindex("💡 ") + 2:].strip()
    result = tail[:(len(tail) - 1) // 2]
    assert tail == f"{result}\n{result}" and not result.startswith("Error:"), r.stdout


def test_show_tools_reports_descriptor_errors_of_every_type(scripted):
    r = scripted.cli("tg-put-config-item", "tool/oops", "--force", input='{"type": "no-such-type", "name": "oops"}')
    assert r.returncode == 0, r.stderr
    r = scripted.cli("tg-put-config-item", "tool/lost", input=json.dumps(
        {"type": "tool-service", "name": "lost", "description": "d", "service": "missing-service"}))
    assert r.returncode == 0, r.stderr
    lost = "tool/lost: field 'service': unknown tool service 'missing-service'"
    assert r.stderr == f"tg-put-config-item: warning: {lost}\n"   # the command said it at once
    agent_log = scripted.data_dir / "logs" / "agent.log"

    def reported() -> str | None:
        out = scripted.cli("tg-show-tools").stdout
        return out if "tool/oops" in out and "tool/lost" in out and lost in agent_log.read_text() else None

    out = wait_for("both descriptor errors reported", reported, 60)
    errors = out.split("Descriptor errors:", 1)[1]
    assert "tool/oops" in errors and "no-such-type" in errors
    assert "tool/lost" in errors and "missing-service" in errors
    assert errors.count("tool/lost") == 1            # reported once, not by both checkers
    assert "tell-joke" in out                        # the good tools are still listed
    # One problem, one wording: the command, tg-show-tools, the gateway and the agent.
    assert f"  {lost}\n" in errors
    with urllib.request.urlopen(scripted.url + "api/v1/tool-service/errors", timeout=30) as resp:
        assert lost in json.loads(resp.read())
    assert f"Tool descriptor skipped: {lost}" in agent_log.read_text()


def test_a_config_dump_moves_into_a_stack_and_its_tools_are_used(scripted, tmp_path):
    """The migration path from another deployment: its ``tg-show-config`` dump, with one tool
    more, imported into the running stack with ``tg-import-config`` (dry run first); the tool
    reaches the catalog, and importing the same dump again writes nothing."""
    r = scripted.cli("tg-show-config")
    assert r.returncode == 0, r.stderr
    version, body = r.stdout.split("\n", 1)
    config = json.loads(body)
    pun = dict(json.loads(config["tool"]["tell-joke"]), name="tell-pun", description="Tell a pun")
    config["tool"]["tell-pun"] = json.dumps(pun)
    dump = tmp_path / "config.txt"
    dump.write_text(f"{version}\n{json.dumps(config, indent=4)}\n")

    r = scripted.cli("tg-import-config", str(dump), "--dry-run")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "would set tool/tell-pun (new)"
    assert r.stdout.splitlines()[-1].startswith("Dry run: 1 new, 0 changed, ")
    r = scripted.cli("tg-import-config", str(dump))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("set tool/tell-pun (new)\nImported 1 item(s) (1 new, 0 changed, ")
    wait_for("the imported tool in tg-show-tools",
             lambda: "tell-pun" in scripted.cli("tg-show-tools").stdout, detail=scripted.child_logs)
    r = scripted.cli("tg-import-config", str(dump))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Imported 0 item(s) (0 new, 0 changed, ")
    # The module's other tests share this stack: leave its tools as they were.
    assert scripted.cli("tg-delete-config-item", "--type", "tool", "--key", "tell-pun").returncode == 0


def test_a_tool_whose_service_nothing_runs_ends_the_dialog_as_unavailable_naming_it(scripted):
    """A tool described in config whose service is not running: the call ends the dialog at once as
    ``tool-unavailable`` (exit 5, docs/agent.md's table), naming the tool and its service without
    ``-v``, never as a wait for the deadline or a guess of the model's."""
    service = {"id": "weather-service", "request-queue": "non-persistent://tg/request/weather-e2e",
               "response-queue": "non-persistent://tg/response/weather-e2e"}
    tool = {"type": "tool-service", "name": "weather", "description": "Current weather in a city",
            "service": "weather-service", "arguments": [{"name": "city", "type": "string", "description": "The city"}]}
    for key, value in (("tool-service/weather-service", service), ("tool/weather", tool)):
        r = scripted.cli("tg-put-config-item", key, input=json.dumps(value))
        assert r.returncode == 0, r.stderr
    try:
        wait_for("the weather tool in tg-show-tools",
                 lambda: "weather" in scripted.cli("tg-show-tools").stdout, detail=scripted.child_logs)
        r = scripted.cli("tg-invoke-agent", "-q", "What is the weather in Paris?")
        assert r.returncode == 5, r.stdout + r.stderr
        line = r.stderr.strip().splitlines()[-1]
        assert line.startswith("tg-invoke-agent: error: agent-error: Tool 'weather' cannot be used now"), line
        assert "weather-service" in line and r.stdout.strip() == "", r.stdout
    finally:
        # The module's other tests share this stack: leave its tools as they were.
        for key in ("tool/weather", "tool-service/weather-service"):
            kind, name = key.split("/")
            assert scripted.cli("tg-delete-config-item", "--type", kind, "--key", name).returncode == 0
