"""tg-launch and the tg-* config/flow commands, as a user runs them."""

from __future__ import annotations

import json
import time

import pytest

from .conftest import alive, descendants

LIGHT = ("--no-llm", "--no-prompt", "--no-agent")


@pytest.fixture(scope="module")
def stack(stack_factory):
    return stack_factory(*LIGHT)


def test_launch_prints_where_components_listen(stack):
    out = stack.output()
    for line in ("broker         pulsar://127.0.0.1:", "config-svc", f"api-gateway    http://localhost:{stack.gateway_port}/",
                 "joke-service", "bootstrap      loaded"):
        assert line in out, out


def test_config_round_trip_through_the_cli(stack, tmp_path):
    r = stack.cli("tg-put-config-item", "widget/w1", input='{"size": 3}\n')
    assert (r.returncode, r.stdout.strip()) == (0, "Configuration item set: widget/w1"), r.stderr
    f = tmp_path / "w2.json"
    f.write_text('{"size": 4}')
    assert stack.cli("tg-put-config-item", "--type", "widget", "--key", "w2", "--file", str(f)).returncode == 0
    assert stack.cli("tg-put-config-item", "--type", "widget", "--key", "w3", "--stdin",
                     input='"three"').returncode == 0
    r = stack.cli("tg-get-config-item", "--type", "widget", "--key", "w1")
    assert (r.returncode, json.loads(r.stdout)) == (0, {"size": 3})
    r = stack.cli("tg-list-config-items", "--type", "widget")
    assert r.stdout.split() == ["w1", "w2", "w3"]
    r = stack.cli("tg-delete-config-item", "--type", "widget", "--key", "w2")
    assert r.stdout.strip() == "Configuration item deleted: widget/w2"
    r = stack.cli("tg-show-config")
    assert r.returncode == 0 and r.stdout.startswith("Version: ")
    body = json.loads(r.stdout.split("\n", 1)[1])
    assert set(body["widget"]) == {"w1", "w3"}
    assert "tell-joke" in body["tool"]


def test_invalid_json_is_refused_before_writing(stack):
    r = stack.cli("tg-put-config-item", "tool/broken", input='{"name": "x",}')
    assert r.returncode != 0
    assert len(r.stderr.strip().splitlines()) == 1 and "JSON" in r.stderr
    r = stack.cli("tg-list-config-items", "--type", "tool")
    assert "broken" not in r.stdout.split()


def test_flows_show_start_stop(stack):
    r = stack.cli("tg-show-flows")
    assert r.returncode == 0 and "default" in r.stdout and "agent" in r.stdout
    r = stack.cli("tg-start-flow", "-n", "agent", "-i", "second", "-d", "Second flow")
    assert r.returncode == 0, r.stderr
    assert "second" in stack.cli("tg-show-flows").stdout
    r = stack.cli("tg-start-flow", "-n", "agent", "-i", "second", "-d", "again")
    assert r.returncode != 0 and "Flow already exists" in r.stderr
    assert stack.cli("tg-stop-flow", "-i", "second").returncode == 0
    assert "second" not in stack.cli("tg-show-flows").stdout


def test_failures_exit_nonzero_with_one_line(stack):
    r = stack.cli("tg-get-config-item", "--type", "widget", "--key", "nope")
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1
    r = stack.cli("tg-show-config", env={"TRUSTGRAPH_URL": "http://127.0.0.1:9/"})
    assert r.returncode != 0
    assert "http://127.0.0.1:9/" in r.stderr and "make run" in r.stderr


def test_restart_keeps_config_and_sigterm_leaves_no_process(stack_factory):
    s = stack_factory(*LIGHT)
    assert s.cli("tg-put-config-item", "widget/keep", input='"kept"').returncode == 0
    assert "bootstrap      loaded" in s.output()
    kids = descendants(s.proc.pid)
    assert len(kids) >= 4  # broker, config-svc, api-gateway, joke-service
    assert s.stop() == 0
    time.sleep(0.5)
    assert [p for p in kids if alive(p)] == []
    # Same data dir again: the config is still there and bootstrap is skipped.
    s.start()
    r = s.cli("tg-get-config-item", "widget/keep")
    assert r.stdout.strip() == '"kept"'
    assert "bootstrap      loaded" not in s.output()


def test_invoke_tool_service_by_tool_and_by_service(stack):
    r = stack.cli("tg-invoke-tool-service", "-n", "tell-joke", "-a", "topic=cats", "-U", "alice")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Hey alice! Here's a pun for you:\n\n")
    r = stack.cli("tg-invoke-tool-service", "-n", "tell-dad-joke", "--arguments", '{"topic": "dogs"}',
                  "--no-streaming")
    assert r.returncode == 0 and r.stdout.startswith("Hey trustgraph! Here's a dad-joke for you:")
    r = stack.cli("tg-invoke-tool-service", "-s", "joke-service", "--config", '{"style": "one-liner"}',
                  "-a", "topic=coffee")
    assert r.returncode == 0 and "one-liner" in r.stdout


def test_invoke_tool_service_errors_exit_nonzero(stack):
    r = stack.cli("tg-invoke-tool-service", "-n", "no-such-tool")
    assert r.returncode != 0 and "no-such-tool" in r.stderr
    r = stack.cli("tg-invoke-tool-service", "-s", "joke-service", "--config", '{"style": "sonnet"}')
    assert r.returncode != 0
    assert "tool-service-error" in r.stderr and "sonnet" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
