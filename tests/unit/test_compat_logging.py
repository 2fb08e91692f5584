"""Upstream 2.1.4's trustgraph.base.logging: its flags, and set-up through our safe log handler."""

from __future__ import annotations

import argparse
import logging

import pytest
import trustgraph.base as base
from trustgraph.base.logging import add_logging_args, setup_logging
from trustgraph.base.safety import logsafe, secrets


@pytest.fixture(autouse=True)
def root_logging():
    """Put the root logger back as it was (setup_logging replaces its handlers)."""
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    yield
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in saved[0]:
        root.addHandler(h)
    root.setLevel(saved[1])
    secrets._remembered.clear()


def test_the_names_upstream_exports_are_these():
    assert base.setup_logging is setup_logging and base.add_logging_args is add_logging_args


def test_flags_are_upstreams_with_ours_defaults(monkeypatch):
    monkeypatch.delenv("TRUSTGRAPH_LOG_LEVEL", raising=False)
    parser = argparse.ArgumentParser()
    add_logging_args(parser)
    args = parser.parse_args([])
    assert args.log_level == "INFO" and args.loki_enabled is False
    args = parser.parse_args(["-l", "DEBUG", "--loki-enabled", "--loki-url", "http://loki:3100/x",
                              "--loki-username", "u", "--loki-password", "p"])
    assert (args.log_level, args.loki_enabled, args.loki_url) == ("DEBUG", True, "http://loki:3100/x")
    assert parser.parse_args(["--no-loki-enabled"]).loki_enabled is False
    with pytest.raises(SystemExit):
        parser.parse_args(["--log-level", "LOUD"])
    monkeypatch.setenv("TRUSTGRAPH_LOG_LEVEL", "warning")
    parser = argparse.ArgumentParser()
    add_logging_args(parser)
    assert parser.parse_args([]).log_level == "WARNING"


def test_setup_logging_configures_our_handler_at_the_level_asked(capsys):
    setup_logging({"log_level": "debug", "id": "api-gateway", "loki_enabled": True,
                   "cassandra_password": "pw-very-secret"})
    root = logging.getLogger()
    assert root.level == logging.DEBUG and len(root.handlers) == 1
    assert any(isinstance(f, logsafe.SafeRecords) for f in root.handlers[0].filters)
    logging.getLogger("upstream.gateway").info("connecting with %s\nforged line", "pw-very-secret")
    err = capsys.readouterr().err
    assert "Logging configured with level: DEBUG" in err
    assert "pw-very-secret" not in err and "connecting with ***\\nforged line" in err


def test_setup_logging_takes_a_namespace_and_survives_an_unknown_level(capsys):
    setup_logging(argparse.Namespace(log_level="LOUD"))
    assert logging.getLogger().level == logging.INFO
    assert "Unknown log level 'LOUD'" in capsys.readouterr().err
    setup_logging({})
    assert logging.getLogger().level == logging.INFO
