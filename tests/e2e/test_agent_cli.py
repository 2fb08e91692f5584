"""The agent on a launched stack: the scripted model over REST and websocket, then the real SmolLM2."""

from __future__ import annotations

import json
import urllib.request

import pytest

ACTION = 'Thought: I will use the tell-joke tool.\nAction: tell-joke\nArgs: {"topic": "cats"}'
FINAL = "Final Answer: Here is your cat joke."


@pytest.fixture(scope="module")
def scripted(stack_factory, tmp_path_factory):
    script = tmp_path_factory.mktemp("script") / "script.json"
    # One rule whose replies are consumed in order: each dialog is an action, then a final answer.
    script.write_text(json.dumps({"rules": [{"match": "Question: Tell me a joke about cats",
                                             "replies": [ACTION, FINAL, ACTION, FINAL, ACTION, FINAL]}],
                                  "default": "Final Answer: no rule matched"}))
    return stack_factory("--llm", "scripted", "--llm-script", str(script))


def test_agent_streams_thought_tool_observation_answer(scripted):
    r = scripted.cli("tg-invoke-agent", "-q", "Tell me a joke about cats", "-v", "-U", "alice")
    assert r.returncode == 0, r.stderr
    lines = r.stdout
    assert "🤔 I will use the tell-joke tool." in lines
    assert "💡 Hey alice! Here's a pun for you:" in lines      # the joke tool service ran
    assert lines.rstrip().endswith("Here is your cat joke.")


def test_agent_non_streaming_over_websocket(scripted):
    r = scripted.cli("tg-invoke-agent", "-q", "Tell me a joke about cats", "--no-streaming", "-v")
    assert r.returncode == 0, r.stderr
    assert "💡 Hey trustgraph! Here's a pun for you:" in r.stdout
    assert r.stdout.rstrip().endswith("Here is your cat joke.")


def test_agent_over_rest_returns_the_final_message(scripted):
    body = json.dumps({"question": "Tell me a joke about cats", "user": "bob"}).encode()
    req = urllib.request.Request(scripted.url + "api/v1/flow/default/service/agent", data=body,
                                 headers={"Content-Type": "application/json"})
    reply = json.loads(urllib.request.urlopen(req, timeout=60).read())
    assert reply["answer"] == "Here is your cat joke."
    assert reply["end_of_dialog"] is True


def test_show_tools_lists_the_tool_services(scripted):
    r = scripted.cli("tg-show-tools")
    assert r.returncode == 0, r.stderr
    assert "tell-joke" in r.stdout and "tell-dad-joke" in r.stdout
    assert "joke-service" in r.stdout and "style=dad-joke" in r.stdout


def test_real_smollm2_dialog_calls_the_tool_service(stack_factory):
    """The embedded 135M model with the bootstrap template: the dialog completes and the tool ran."""
    s = stack_factory()
    r = s.cli("tg-invoke-agent", "-q", "Tell me a joke about programming", "-v", timeout=120)
    assert r.returncode == 0, r.stderr + s.child_logs()
    assert "💡 Hey trustgraph! Here's a pun for you:" in r.stdout
    answer = r.stdout.rstrip().splitlines()[-1]
    assert answer and not answer.startswith(("🤔", "💡"))


def test_show_tools_reports_descriptor_errors_of_every_type(scripted):
    r = scripted.cli("tg-put-config-item", "tool/oops", "--force", input='{"type": "no-such-type", "name": "oops"}')
    assert r.returncode == 0, r.stderr
    r = scripted.cli("tg-put-config-item", "tool/lost", input=json.dumps(
        {"type": "tool-service", "name": "lost", "description": "d", "service": "missing-service"}))
    assert r.returncode == 0, r.stderr
    lost = "tool/lost: field 'service': unknown tool service 'missing-service'"
    assert r.stderr == f"tg-put-config-item: warning: {lost}\n"   # the command said it at once
    agent_log = scripted.data_dir / "logs" / "agent.log"
    for _ in range(50):
        out = scripted.cli("tg-show-tools").stdout
        if "tool/oops" in out and "tool/lost" in out and lost in agent_log.read_text():
            break
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
