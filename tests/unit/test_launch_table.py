"""tg-launch's component table and restart policy, as data."""

from __future__ import annotations

import json
import re

import pytest
from trustgraph.launch.components import (
    COMPONENTS,
    FRAMEWORK,
    Component,
    ComponentError,
    load_components,
    with_extra,
)
from trustgraph.launch.supervisor import RestartPolicy
from trustgraph.launch.tool_services import registered


def test_the_stack_cannot_run_without_config_svc_and_gateway():
    essential = {c.name for c in COMPONENTS if c.essential}
    assert essential == {"config-svc", "api-gateway"}


def test_extra_components_replace_by_name_and_append(tmp_path):
    f = tmp_path / "c.json"
    f.write_text(json.dumps([
        {"name": "llm", "command": "/bin/true", "args": ["-x"]},
        {"name": "stand-in", "command": "/bin/true", "essential": True, "listens": "here"},
    ]))
    extra = load_components(f)
    assert extra[0] == Component("llm", "/bin/true", ("-x",))
    table = with_extra(COMPONENTS, extra)
    assert [c.command for c in table if c.name == "llm"] == ["/bin/true"]  # every LLM variant replaced
    assert table[-1] == Component("stand-in", "/bin/true", essential=True, listens="here")
    assert [c.name for c in table[:-2]] == [c.name for c in COMPONENTS if c.name != "llm"]


@pytest.mark.parametrize("text, says", [
    ("{", "cannot read"),
    ('{"name": "x"}', "JSON list"),
    ('[{"name": "x"}]', "item 0 needs"),
    ('[{"name": "x", "command": "y", "colour": "red"}]', "unknown fields ['colour']"),
])
def test_bad_component_definitions_are_refused_saying_why(tmp_path, text, says):
    f = tmp_path / "c.json"
    f.write_text(text)
    with pytest.raises(ComponentError, match=says.replace("[", r"\[")):
        load_components(f)


def test_back_off_doubles_up_to_its_cap():
    assert [RestartPolicy().delay(n) for n in range(1, 7)] == [2, 4, 8, 16, 30, 30]
    assert RestartPolicy(backoff=0.5).delay(3) == 2.0


def test_launch_passes_the_agents_limits_through_only_when_given(tmp_path):
    from trustgraph.launch.launcher import Launcher, parse_args
    agent = next(c for c in COMPONENTS if c.name == "agent")

    def argv(*flags: str) -> list[str]:
        launcher = Launcher(parse_args(["--data-dir", str(tmp_path), *flags]))
        return launcher._child(agent, "pulsar://127.0.0.1:1", {"pulsar_admin_url": "http://127.0.0.1:2",
                                                               "approval_key": "/d/approval.key"}, 1).argv

    given = argv("--max-iterations", "3", "--tool-timeout", "7.5")
    assert given[given.index("--max-iterations") + 1] == "3"
    assert given[given.index("--tool-timeout") + 1] == "7.5"
    assert "--max-iterations" not in argv() and "--tool-timeout" not in argv()   # the agent's defaults
    given = argv("--min-confidence", "0.3", "--no-argument-check")
    assert given[given.index("--min-confidence") + 1] == "0.3" and "--no-argument-check" in given
    assert "--argument-check" in argv("--argument-check")
    given = argv("--tie-ratio", "0")
    assert float(given[given.index("--tie-ratio") + 1]) == 0
    assert "--tie-ratio" not in argv()
    given = argv("--ranker-lead", "0.1", "--model-sure", "0.9")
    assert given[given.index("--ranker-lead") + 1] == "0.1" and given[given.index("--model-sure") + 1] == "0.9"
    assert "--ranker-lead" not in argv() and "--model-sure" not in argv()
    assert not any("argument-check" in a or "min-confidence" in a for a in argv())
    # and the broker's admin URL, so a tool on an interface nothing serves fails at once
    assert given[given.index("--pulsar-admin-url") + 1] == "http://127.0.0.1:2"
    # and the stack's approval key, so a dialog paused for approval outlives an agent's restart
    assert given[given.index("--approval-key-file") + 1] == "/d/approval.key"


def test_launch_gives_the_embedded_llm_the_model_and_names_it(tmp_path, monkeypatch):
    from trustgraph.launch.launcher import Launcher, parse_args
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")   # --model wins over it
    model = tmp_path / "tiny-model.Q4.gguf"
    launcher = Launcher(parse_args(["--data-dir", str(tmp_path), "--model", str(model)]))
    (llm,) = [c for c in launcher.selected() if c.name == "llm"]
    child = launcher._child(llm, "pulsar://127.0.0.1:1", {"llm_model": model.name}, 1)
    assert (llm.command, child.argv[child.argv.index("--model") + 1]) == ("text-completion-llamacpp", str(model))
    assert child.where == "embedded tiny-model.Q4.gguf"
    # Without it, the embedded LLM's own default, named as before.
    monkeypatch.delenv("OPENAI_BASE_URL")
    launcher = Launcher(parse_args(["--data-dir", str(tmp_path)]))
    (llm,) = [c for c in launcher.selected() if c.name == "llm"]
    child = launcher._child(llm, "pulsar://127.0.0.1:1", {"llm_model": "SmolLM2-135M-Instruct"}, 1)
    assert "--model" not in child.argv and child.where == "embedded SmolLM2-135M-Instruct"


def test_model_is_refused_with_an_llm_that_does_not_run_it(capsys):
    from trustgraph.launch.launcher import parse_args
    with pytest.raises(SystemExit) as exit:
        parse_args(["--model", "m.gguf", "--llm", "openai"])
    assert exit.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "tg-launch: error: --model is a GGUF file for the embedded LLM; --llm openai does not run it")


SECRETS = {"GATEWAY_SECRET": "g-secret", "OPENAI_TOKEN": "sk-secret", "OPENAI_BASE_URL": "http://u:p@llm/v1",
           "MCP_SERVER_TOKEN": "m-secret", "PULSAR_API_KEY": "pulsar-key", "AWS_SECRET_ACCESS_KEY": "aws",
           "TRUSTGRAPH_TOKEN": "cli-token", "HTTPS_PROXY": "http://user:pw@proxy:3128"}


def test_each_child_gets_only_the_secrets_it_needs(tmp_path, monkeypatch):
    from trustgraph.launch.launcher import Launcher, parse_args
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LANG", "C.UTF-8")
    launcher = Launcher(parse_args(["--data-dir", str(tmp_path)]))
    values = {"data_dir": str(tmp_path), "gateway_port": 1, "host": "127.0.0.1", "gateway_host": "x",
              "pulsar_admin_url": "", "openai_url": "", "llm_script": "", "llm_model": "m", "mcp_port": 2,
              "stack_status": "", "mcp_host": "127.0.0.1", "mcp_shown": "localhost",
              "approval_key": str(tmp_path / "approval.key")}
    seen = {}
    for comp in COMPONENTS:
        env = launcher._child(comp, "pulsar://127.0.0.1:1", values, 1).env
        assert env["LANG"] == "C.UTF-8", comp.name  # the rest of the environment is passed on
        seen[comp.command] = sorted(k for k in SECRETS if k in env)
    broker_only = ["PULSAR_API_KEY"]
    assert seen == {
        "config-svc": broker_only, "api-gateway": ["GATEWAY_SECRET", "PULSAR_API_KEY"],
        "prompt-template": broker_only, "text-completion-llamacpp": broker_only,
        "text-completion-openai": ["HTTPS_PROXY", "OPENAI_BASE_URL", "OPENAI_TOKEN", "PULSAR_API_KEY"],
        "text-completion-scripted": broker_only, "agent-manager-react": broker_only,
        "mcp-tool": ["HTTPS_PROXY", "PULSAR_API_KEY"],
        # The gateway's secret opens mcp-server too.
        "mcp-server": ["GATEWAY_SECRET", "MCP_SERVER_TOKEN", "PULSAR_API_KEY"],
        # Every registered tool service (joke-service among them): the broker's key, nothing else.
        **{s.name: broker_only for s in registered()}}


def test_the_registered_tool_services_run_after_the_agent_each_under_its_command():
    """Found through the entry-point group, not listed: a new one edits neither the table nor this test."""
    services = registered()
    assert "joke-service" in [s.name for s in services]
    names = [c.name for c in COMPONENTS]
    after = names.index("agent") + 1
    assert [(c.name, c.command, c.args, c.secrets) for c in COMPONENTS[after:after + len(services)]] == [
        (s.name, s.name, (), ()) for s in services]
    joke = next(c for c in COMPONENTS if c.name == "joke-service")
    assert joke.listens == "non-persistent://tg/request/joke"   # its class's topic, for the status line
    assert [c for c in COMPONENTS if c.name not in {s.name for s in services}] == list(FRAMEWORK)
    assert not {s.name for s in services} & {c.name for c in FRAMEWORK}   # none takes a framework name
    from trustgraph.launch.launcher import parse_args
    assert parse_args([f"--no-{s.name}" for s in services]).no == [s.name for s in services]


def test_a_registered_service_that_cannot_be_loaded_still_has_its_component(monkeypatch):
    """Its module's error is its own process's to report (tg-launch names its log), not tg-launch's."""
    from importlib.metadata import EntryPoint

    from trustgraph.launch import components, tool_services
    eps = [EntryPoint("b-service", "no_such_module_here:Processor", tool_services.GROUP),
           EntryPoint("a-service", "trustgraph.tool_service.joke:Processor", tool_services.GROUP),
           EntryPoint("agent", "trustgraph.tool_service.joke:Processor", tool_services.GROUP)]
    monkeypatch.setattr(tool_services, "entry_points", lambda group: eps if group == tool_services.GROUP else [])
    assert [(c.name, c.listens) for c in components.tool_service_components()] == [
        ("a-service", "non-persistent://tg/request/joke"), ("b-service", "")]   # "agent" stays the framework's



@pytest.mark.parametrize("item, says", [
    ('"x"', 'item 0 must be a JSON object with at least "name" and "command"'),
    ('{"name": "x", "command": "y", "args": "-v"}', "item 0 field 'args': input should be a valid list"),
    ('{"name": "x", "command": "y", "args": ["-v", 2]}', "item 0 field 'args.1': input should be a valid string"),
    ('{"name": "x", "command": "y", "essential": "yes"}', "item 0 field 'essential': input should be a valid boolean"),
])
def test_a_component_field_of_the_wrong_type_is_named(tmp_path, item, says):
    """A wrong type was taken as it came before (``"args": "-v"`` ran the command with ``-`` and ``v``)."""
    f = tmp_path / "c.json"
    f.write_text(f"[{item}]")
    with pytest.raises(ComponentError, match=re.escape(says)):
        load_components(f)
