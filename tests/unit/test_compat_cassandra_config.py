"""Upstream 2.1.4's trustgraph.base.cassandra_config: the same flags, variables, defaults and precedence."""

from __future__ import annotations

import argparse
from types import SimpleNamespace

import pytest
from trustgraph.base.cassandra_config import (
    add_cassandra_args,
    get_cassandra_config_from_params,
    get_cassandra_defaults,
    resolve_cassandra_config,
)

VARS = ("CASSANDRA_HOST", "CASSANDRA_USERNAME", "CASSANDRA_PASSWORD", "CASSANDRA_KEYSPACE")


@pytest.fixture
def env(monkeypatch):
    """No Cassandra variables unless the test sets them: ``env(CASSANDRA_HOST="h")``."""
    for var in VARS:
        monkeypatch.delenv(var, raising=False)

    def set_(**values: str) -> None:
        for var, v in values.items():
            monkeypatch.setenv(var, v)

    return set_


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser()
    add_cassandra_args(p)
    return p


def help_text() -> str:
    """``--help`` on one line (argparse wraps it to the terminal)."""
    return " ".join(parser().format_help().split())


def test_defaults_come_from_the_environment_when_it_is_read(env):
    assert get_cassandra_defaults() == {"host": "cassandra", "username": None, "password": None, "keyspace": None}
    env(CASSANDRA_HOST="h1,h2", CASSANDRA_USERNAME="u", CASSANDRA_KEYSPACE="ks")
    assert get_cassandra_defaults() == {"host": "h1,h2", "username": "u", "password": None, "keyspace": "ks"}


def test_flags_default_to_the_environment_and_the_command_line_wins(env):
    args = parser().parse_args([])
    assert (args.cassandra_host, args.cassandra_username, args.cassandra_password, args.cassandra_keyspace) == (
        "cassandra", None, None, None)
    env(CASSANDRA_HOST="env-host", CASSANDRA_USERNAME="env-user", CASSANDRA_PASSWORD="env-pass")
    args = parser().parse_args([])
    assert (args.cassandra_host, args.cassandra_username, args.cassandra_password) == (
        "env-host", "env-user", "env-pass")
    args = parser().parse_args(["--cassandra-host", "cli-host", "--cassandra-username", "cli-user",
                                "--cassandra-password", "cli-pass", "--cassandra-keyspace", "cli-ks"])
    assert resolve_cassandra_config(args) == (["cli-host"], "cli-user", "cli-pass", "cli-ks")


def test_help_says_where_a_default_came_from_and_never_shows_the_password(env):
    text = help_text()
    assert "Cassandra host list, comma-separated (default: cassandra)" in text
    assert "[from CASSANDRA_HOST]" not in text and "<set>" not in text
    assert "(default: service-specific)" in text
    env(CASSANDRA_HOST="help-h1,help-h2", CASSANDRA_USERNAME="help-user", CASSANDRA_PASSWORD="help-pass",
        CASSANDRA_KEYSPACE="help-ks")
    text = help_text()
    assert "help-h1,help-h2" in text and "[from CASSANDRA_HOST]" in text
    assert "(default: help-user) [from CASSANDRA_USERNAME]" in text
    assert "(default: <set>) [from CASSANDRA_PASSWORD]" in text and "help-pass" not in text
    assert "(default: help-ks) [from CASSANDRA_KEYSPACE]" in text


@pytest.mark.parametrize(("host", "hosts"), [
    ("single-host", ["single-host"]),
    ("host1,host2,host3", ["host1", "host2", "host3"]),
    (" host1 , host2 ,", ["host1", "host2"]),
    (["list-host1", "list-host2"], ["list-host1", "list-host2"]),
    ("", ["cassandra"]),           # empty: not given
    ("   ", []),                   # given, but names no host (as upstream)
])
def test_hosts_are_split_for_the_driver(env, host, hosts):
    assert resolve_cassandra_config(host=host)[0] == hosts


def test_precedence_explicit_then_args_then_environment_then_default(env):
    assert resolve_cassandra_config() == (["cassandra"], None, None, None)
    env(CASSANDRA_HOST="e1,e2", CASSANDRA_USERNAME="env-user", CASSANDRA_PASSWORD="env-pass")
    assert resolve_cassandra_config() == (["e1", "e2"], "env-user", "env-pass", None)
    partial = SimpleNamespace(cassandra_host="args-host", cassandra_username=None, cassandra_password=None)
    assert resolve_cassandra_config(partial) == (["args-host"], "env-user", "env-pass", None)
    full = SimpleNamespace(cassandra_host="a1,a2", cassandra_username="args-user", cassandra_password="args-pw")
    assert resolve_cassandra_config(full) == (["a1", "a2"], "args-user", "args-pw", None)
    assert resolve_cassandra_config(full, host="x", username="xu", password="xp") == (["x"], "xu", "xp", None)
    assert resolve_cassandra_config(object()) == (["e1", "e2"], "env-user", "env-pass", None)


def test_the_keyspace_is_the_flags_then_the_environments_then_the_services(env):
    assert resolve_cassandra_config(default_keyspace="svc")[3] == "svc"
    env(CASSANDRA_KEYSPACE="env-ks")
    assert resolve_cassandra_config(default_keyspace="svc")[3] == "env-ks"
    assert resolve_cassandra_config(SimpleNamespace(cassandra_keyspace="cli-ks"), default_keyspace="svc")[3] == "cli-ks"


def test_from_params_reads_only_the_cassandra_names(env):
    params = {"cassandra_host": "p1,p2", "cassandra_username": "pu", "cassandra_password": "pp",
              "graph_host": "old-host", "cassandra_user": "old-user", "cassandra_keyspace": "ignored"}
    assert get_cassandra_config_from_params(params) == (["p1", "p2"], "pu", "pp", None)
    assert get_cassandra_config_from_params({"graph_host": "old", "cassandra_user": "old",
                                             "cassandra_password": "p"}) == (["cassandra"], None, "p", None)
    env(CASSANDRA_HOST="fallback", CASSANDRA_USERNAME="fu", CASSANDRA_PASSWORD="fp")
    assert get_cassandra_config_from_params({}, default_keyspace="svc") == (["fallback"], "fu", "fp", "svc")
