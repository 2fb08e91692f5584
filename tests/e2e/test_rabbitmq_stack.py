"""The whole stack on a RabbitMQ the user runs: ``tg-launch --pubsub-backend rabbitmq --rabbitmq-*`` on a
real node (fixture ``rabbitmq``), the scripted model, and ``tg-invoke-agent`` answered by the joke
service's tool; no embedded broker started, and the password on no process's command line."""

from __future__ import annotations

import json

import psutil
import pytest
from support import ONLY_JOKE_SERVICE, descendants

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
