"""Choosing the broker: ``--pubsub-backend`` and upstream 2.11's ``--rabbitmq-*`` flags (names, variables,
defaults; the flag wins over the variable), Kafka refused in one line, the password kept out of what a
process shows, and a processor built on the RabbitMQ transport its flags name (no broker needed)."""

from __future__ import annotations

import argparse

import pytest
from trustgraph.base.launching.stack import LOCK_FILE, RunFiles, running_stack
from trustgraph.base.processors.async_processor import AsyncProcessor, StartRefused
from trustgraph.base.processors.broker_choice import choose_backend, stack_hint
from trustgraph.base.processors.flags import TokenFileError, amqp_url, rabbitmq_password
from trustgraph.base.safety.secrets import secret_values

ENV = ("PUBSUB_BACKEND", "RABBITMQ_HOST", "RABBITMQ_PORT", "RABBITMQ_USERNAME", "RABBITMQ_PASSWORD",
       "RABBITMQ_PASSWORD_FILE", "RABBITMQ_VHOST")


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def parse(*argv: str) -> argparse.Namespace:
    """The flags read now (defaults come from the environment when the parser is made)."""
    parser = argparse.ArgumentParser(prog="p")
    AsyncProcessor.add_args(parser)
    return parser.parse_args(list(argv))


def rabbit(args: argparse.Namespace) -> tuple:
    return (args.pubsub_backend, args.rabbitmq_host, args.rabbitmq_port, args.rabbitmq_username,
            args.rabbitmq_password, args.rabbitmq_vhost)


def test_the_defaults_are_pulsar_and_upstreams_rabbitmq_settings_on_this_machine(env, tmp_path) -> None:
    # No backend said: a processor looks for a running stack's RabbitMQ, else uses Pulsar.
    assert rabbit(parse()) == (None, "localhost", 5672, "guest", None, "/")
    env.setenv("TRUSTGRAPH_DATA", str(tmp_path))
    assert choose_backend(vars(parse()))[0] == "pulsar"
    assert rabbitmq_password(vars(parse())) == "guest"


def test_the_environment_sets_the_defaults_and_flags_win(env) -> None:
    for name, value in [("PUBSUB_BACKEND", "rabbitmq"), ("RABBITMQ_HOST", "mq.env"), ("RABBITMQ_PORT", "5673"),
                        ("RABBITMQ_USERNAME", "env-user"), ("RABBITMQ_PASSWORD", "env-pass"),
                        ("RABBITMQ_VHOST", "env-vhost")]:
        env.setenv(name, value)
    assert rabbit(parse()) == ("rabbitmq", "mq.env", 5673, "env-user", "env-pass", "env-vhost")
    flags = parse("--pubsub-backend", "pulsar", "--rabbitmq-host", "mq.flag", "--rabbitmq-port", "5674",
                  "--rabbitmq-username", "flag-user", "--rabbitmq-password", "flag-pass", "--rabbitmq-vhost", "v")
    assert rabbit(flags) == ("pulsar", "mq.flag", 5674, "flag-user", "flag-pass", "v")


@pytest.mark.parametrize("where", ["flag", "env"])
def test_kafka_is_refused_in_one_line_that_says_where_the_docs_say_why(env, where, capsys) -> None:
    if where == "env":
        env.setenv("PUBSUB_BACKEND", "kafka")
    with pytest.raises(SystemExit) as exited:
        parse(*(["--pubsub-backend", "kafka"] if where == "flag" else []))
    assert exited.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error == ("p: error: argument --pubsub-backend: the kafka backend is not shipped "
                     "(docs/running.md, \"Brokers\", says why and how it would plug in); use one of: pulsar, rabbitmq")
    with pytest.raises(SystemExit):
        parse("--pubsub-backend", "mqtt")
    assert "unknown backend 'mqtt'; use one of: pulsar, rabbitmq" in capsys.readouterr().err


def test_the_password_file_wins_and_a_bad_one_says_what_to_do(env, tmp_path) -> None:
    (tmp_path / "pw").write_text("from-file\n")
    env.setenv("RABBITMQ_PASSWORD", "from-env")
    assert rabbitmq_password(vars(parse("--rabbitmq-password-file", str(tmp_path / "pw")))) == "from-file"
    assert rabbitmq_password(vars(parse())) == "from-env"
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(TokenFileError, match="the RabbitMQ password file .* is empty"):
        rabbitmq_password({"rabbitmq_password_file": str(tmp_path / "empty")})
    with pytest.raises(TokenFileError, match="--rabbitmq-password-file"):
        rabbitmq_password({"rabbitmq_password_file": str(tmp_path / "missing")})


def test_the_password_is_masked_in_logs_and_absent_from_help_and_the_url(env, capsys) -> None:
    env.setenv("RABBITMQ_PASSWORD", "s3cret-pass")
    params = vars(parse("--rabbitmq-username", "u", "--rabbitmq-host", "h", "--rabbitmq-vhost", "/"))
    assert "s3cret-pass" in secret_values(params)
    assert secret_values(vars(parse("--rabbitmq-password", ""))) == []   # the default guest is no secret
    assert amqp_url(params) == "amqp://h:5672/%2F"
    with pytest.raises(SystemExit):
        parse("--help")
    assert "s3cret-pass" not in capsys.readouterr().out


def test_a_rabbitmq_processor_uses_the_transport_its_flags_name(env, caplog) -> None:
    env.setenv("RABBITMQ_PASSWORD", "pw-from-env")
    params = vars(parse("--pubsub-backend", "rabbitmq", "--rabbitmq-host", "127.0.0.1", "--rabbitmq-port", "1",
                        "--rabbitmq-username", "alice", "--rabbitmq-vhost", "tg", "--no-metrics"))
    p = AsyncProcessor(**{**params, "id": "flags-test"})
    try:
        t = p.pubsub.transport
        assert (type(t).__name__, t.host, t.port, t.username, t.vhost) == ("RabbitMQTransport", "127.0.0.1", 1,
                                                                          "alice", "tg")
        assert t.topology is p.wire.rabbitmq_topology()
        assert (p.backend, p.pubsub.url) == ("rabbitmq", "amqp://127.0.0.1:1/tg")
        assert p.broker_source == "user alice, from --rabbitmq-* or $RABBITMQ_*"
        assert t.capabilities.limitations and "pw-from-env" not in repr(t)
    finally:
        t.close()


LAUNCH_VALUES = {"data_dir": "/d", "gateway_port": 1, "host": "127.0.0.1", "gateway_host": "x", "pulsar_admin_url": "",
                 "openai_url": "", "llm_script": "", "llm_model": "m", "mcp_port": 2, "stack_status": "",
                 "mcp_host": "127.0.0.1", "mcp_shown": "localhost", "approval_key": "/d/approval.key"}


def test_tg_launch_passes_rabbitmq_to_every_child_with_the_password_never_on_a_command_line(env, tmp_path) -> None:
    from trustgraph.launch.components import COMPONENTS
    from trustgraph.launch.launcher import Launcher, parse_args

    base = ["--data-dir", str(tmp_path), "--pubsub-backend", "rabbitmq", "--rabbitmq-host", "mq", "--rabbitmq-port",
            "5673", "--rabbitmq-username", "tg", "--rabbitmq-vhost", "v"]
    (tmp_path / "pw").write_text("file-pass\n")
    env.setenv("RABBITMQ_PASSWORD", "env-pass")
    for flags, argv_tail, password_env in [
            (["--rabbitmq-password-file", "pw"], ["--rabbitmq-password-file", str(tmp_path / "pw")], None),
            ([], [], "env-pass")]:
        env.chdir(tmp_path)
        launcher = Launcher(parse_args([*base, *flags]))
        for comp in COMPONENTS:
            child = launcher._child(comp, "", LAUNCH_VALUES, 1)
            assert child.argv[child.argv.index("--pubsub-backend"):][:10 + len(argv_tail)] == [
                "--pubsub-backend", "rabbitmq", "--rabbitmq-host", "mq", "--rabbitmq-port", "5673",
                "--rabbitmq-username", "tg", "--rabbitmq-vhost", "v", *argv_tail], comp.name
            assert "--pulsar-host" not in child.argv and not {"file-pass", "env-pass"} & set(child.argv)
            assert child.env.get("RABBITMQ_PASSWORD") == password_env, comp.name
    assert launcher.exposure().broker_host is None   # nothing of ours listens for the broker


def test_tg_launch_refuses_pulsar_settings_and_a_bad_password_file_with_rabbitmq(env, tmp_path, capsys) -> None:
    from trustgraph.launch.launcher import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--pubsub-backend", "rabbitmq", "-p", "pulsar://h:6650"])
    assert capsys.readouterr().err.splitlines()[-1] == (
        "tg-launch: error: --pulsar-host and --pulsar-token-dir name a Pulsar; with --pubsub-backend rabbitmq "
        "give --rabbitmq-host, --rabbitmq-port, --rabbitmq-username and --rabbitmq-password-file")
    with pytest.raises(SystemExit):
        parse_args(["--pubsub-backend", "rabbitmq", "--rabbitmq-password-file", str(tmp_path / "missing")])
    assert "tg-launch: error: cannot read the RabbitMQ password file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--pubsub-backend", "kafka"])
    assert "the kafka backend is not shipped" in capsys.readouterr().err


def test_a_clusters_nodes_are_named_each_with_its_port_and_a_bad_list_is_one_line():
    from trustgraph.base.processors.async_processor import StartRefused, rabbitmq_transport
    from trustgraph.base.processors.flags import amqp_url

    assert amqp_url({"rabbitmq_host": "h1:5673,h2", "rabbitmq_port": 5672}) == "amqp://h1:5673,h2:5672/%2F"
    assert amqp_url({"rabbitmq_host": "rabbit", "rabbitmq_vhost": "tg"}) == "amqp://rabbit:5672/tg"
    with pytest.raises(StartRefused, match="^--rabbitmq-host: "):
        rabbitmq_transport({"rabbitmq_host": "h1:notaport"}, None, "t")


def test_a_processor_with_no_backend_said_joins_the_running_stacks_rabbitmq(env, tmp_path) -> None:
    """tg-launch on RabbitMQ records its settings (never the password); a processor started by hand
    with no broker flags joins that RabbitMQ, with the stack's password file, its password masked."""
    env.setenv("TRUSTGRAPH_DATA", str(tmp_path))
    (tmp_path / "pw").write_text("stack-pass\n")
    stack = RunFiles(tmp_path)
    stack.acquire(gateway="http://localhost:8088/")
    try:
        stack.set_rabbitmq({"host": "127.0.0.1", "port": "1", "username": "tg", "vhost": "v",
                            "password-file": str(tmp_path / "pw")})
        found = running_stack()
        assert (found.backend, found.pulsar, dict(found.rabbitmq)) == ("rabbitmq", "", {
            "host": "127.0.0.1", "port": "1", "username": "tg", "vhost": "v", "password-file": str(tmp_path / "pw")})
        assert not (tmp_path / "pulsar-url").exists()
        assert "stack-pass" not in (tmp_path / LOCK_FILE).read_text()
        p = AsyncProcessor(**{**vars(parse("--no-metrics")), "id": "joins"})
        try:
            t = p.pubsub.transport
            assert (p.backend, type(t).__name__, t.host, t.port, t.username, t.vhost) == (
                "rabbitmq", "RabbitMQTransport", "127.0.0.1", 1, "tg", "v")
            assert p.broker_source == f"user tg, the running stack's, from {tmp_path / LOCK_FILE}"
            assert t._password == "stack-pass"
            assert "stack-pass" not in logsafe_scrubbed("password stack-pass")
        finally:
            t.close()
        # Said on the command line or in the environment, the backend wins over the stack's.
        assert choose_backend(vars(parse("--pubsub-backend", "pulsar")))[:2] == ("pulsar", vars(parse(
            "--pubsub-backend", "pulsar")))
        env.setenv("PUBSUB_BACKEND", "pulsar")
        assert choose_backend(vars(parse()))[0::2] == ("pulsar", "from $PUBSUB_BACKEND")
        env.delenv("PUBSUB_BACKEND")
        # A Pulsar processor that cannot reach its broker is told where the stack's broker is.
        assert stack_hint("pulsar://localhost:6650") == (
            f"the stack running in {tmp_path} uses RabbitMQ at 127.0.0.1:1: give no broker flags to join it, "
            "or --pubsub-backend rabbitmq and its --rabbitmq-* settings")
        # The stack's password file gone: one line, no traceback.
        (tmp_path / "pw").unlink()
        with pytest.raises(StartRefused, match=r"^joining the stack's RabbitMQ \(the running stack's, from .*\): cannot read the RabbitMQ "
                                               r"password file"):
            AsyncProcessor(**{**vars(parse("--no-metrics")), "id": "joins"})
    finally:
        stack.release()
    assert running_stack() is None and choose_backend(vars(parse()))[0] == "pulsar"


def logsafe_scrubbed(text: str) -> str:
    from trustgraph.base.safety.secrets import scrub
    return scrub(text)
