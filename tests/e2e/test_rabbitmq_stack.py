"""The whole stack on a RabbitMQ the user runs: ``tg-launch --pubsub-backend rabbitmq --rabbitmq-*`` on a
real node (fixture ``rabbitmq``), the scripted model, and ``tg-invoke-agent`` answered by the joke
service's tool; no embedded broker started, and the password on no process's command line; a tool
service started by hand with no broker flags joins the stack's RabbitMQ, and the operators' commands
find it there."""

from __future__ import annotations

import json
import sys

import psutil
import pytest
from support import ANNOUNCING_SERVICE, ONLY_JOKE_SERVICE, Proc, descendants, wait_for

ACTION = json.dumps({"action": "tell-joke", "args": {"topic": "cats"}})


@pytest.fixture(scope="module")
def on_rabbitmq(stack_factory, rabbitmq, tmp_path_factory):
    here = tmp_path_factory.mktemp("rabbitmq-stack")
    script = here / "script.json"
    script.write_text(json.dumps({"rules": [{"match": "Question: Tell me a joke about cats", "reply": ACTION}],
                                  "default": "no rule matched"}))
    password = here / "password"
    password.write_text(rabbitmq.password + "\n")
    return stack_factory("--pubsub-backend", "rabbitmq", "--rabbitmq-host", rabbitmq.host,
                         "--rabbitmq-port", str(rabbitmq.port), "--rabbitmq-username", rabbitmq.username,
                         "--rabbitmq-password-file", str(password), "--rabbitmq-vhost", rabbitmq.vhost,
                         "--llm", "scripted", "--llm-script", str(script), "--no-mcp-tool", "--no-mcp-server",
                         *ONLY_JOKE_SERVICE)


def test_the_agent_answers_from_the_joke_service_on_rabbitmq(on_rabbitmq, rabbitmq) -> None:
    r = on_rabbitmq.cli("tg-invoke-agent", "-q", "Tell me a joke about cats", "-v", "-U", "alice")
    assert r.returncode == 0, f"{r.stderr}\n{on_rabbitmq.child_logs()}"
    lines = r.stdout.splitlines()
    assert lines[0] == '🛠️ tell-joke {"topic": "cats"}'
    assert lines[1] == "💡 Hey alice! Here's a pun for you:"      # the joke tool service ran
    out = on_rabbitmq.output()
    assert f"amqp://{rabbitmq.host}:{rabbitmq.port}/%2F (RabbitMQ, user {rabbitmq.username}, external)" in out
    assert not (on_rabbitmq.data_dir / "broker").exists()         # no pulsar-lite was started


def test_no_process_of_the_stack_has_the_password_on_its_command_line(on_rabbitmq, rabbitmq) -> None:
    pids = descendants(on_rabbitmq.proc.pid) | {on_rabbitmq.proc.pid}
    lines = []
    for pid in pids:
        try:
            lines.append(" ".join(psutil.Process(pid).cmdline()))
        except psutil.NoSuchProcess:
            continue
    assert sum("--pubsub-backend rabbitmq" in line for line in lines) >= 5, lines  # every processor on it
    assert not [line for line in lines if rabbitmq.password in line]
    logs = on_rabbitmq.output() + on_rabbitmq.child_logs()
    assert rabbitmq.password not in logs


#: The environment of a process started by hand in the stack's data directory: no broker named.
BY_HAND = {"PUBSUB_BACKEND": "", "PULSAR_HOST": "", "PULSAR_ADMIN_URL": "", "RABBITMQ_HOST": "",
           "RABBITMQ_PORT": "", "RABBITMQ_PASSWORD": "", "RABBITMQ_PASSWORD_FILE": ""}


def test_a_service_started_by_hand_joins_the_stacks_rabbitmq_and_is_called(on_rabbitmq, rabbitmq, tmp_path) -> None:
    ready = tmp_path / "forecast.ready"
    env = {**BY_HAND, "TRUSTGRAPH_DATA": str(on_rabbitmq.data_dir), "TG_READY_FILE": str(ready)}
    service = Proc([sys.executable, str(ANNOUNCING_SERVICE), "--id", "forecast-by-hand", "-t", "forecast-hand",
                    "--tool", "forecast", "--no-metrics"], tmp_path / "forecast.log", env=env).start()
    try:
        service.wait_ready(ready)
        r = wait_for("the hand-started service answering", lambda: (r := on_rabbitmq.cli(
            "tg-invoke-tool-service", "-n", "forecast", "-a", "city=Oslo")).returncode == 0 and r, 60)
    finally:
        service.stop()
    assert r.stdout.strip() == "It is sunny in Oslo (metric), trustgraph."
    log = service.output()
    assert (f"broker amqp://{rabbitmq.host}:{rabbitmq.port}/%2F (user {rabbitmq.username}, the running stack's, "
            f"from {on_rabbitmq.data_dir / 'tg-launch.lock'})") in log, log
    assert rabbitmq.password not in log


def test_the_operators_commands_find_the_stacks_rabbitmq(on_rabbitmq, rabbitmq) -> None:
    env = {**BY_HAND, "TRUSTGRAPH_DATA": str(on_rabbitmq.data_dir)}
    r = on_rabbitmq.cli("tg-verify-system-status", "--global-timeout", "60", env=env)
    assert (r.returncode, r.stderr) == (0, ""), r.stdout
    first = r.stdout.splitlines()[0]
    assert first == (f"OK    RabbitMQ: amqp://{rabbitmq.host}:{rabbitmq.port}/%2F takes user {rabbitmq.username} "
                     f"(the running stack's, from {on_rabbitmq.data_dir / 'tg-launch.lock'})"), r.stdout
    r = on_rabbitmq.cli("tg-init-trustgraph", env=env)
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.splitlines()[-1] == "Initialisation complete."
    assert "nothing to create there" in r.stdout
    r = on_rabbitmq.cli("tg-init-trustgraph", "-c", '{"a": {"b": 1}}', env=env)
    assert r.returncode == 1 and "tg-import-config FILE" in r.stderr.splitlines()[-1]
