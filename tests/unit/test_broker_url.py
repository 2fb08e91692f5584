"""Broker URLs (checked before anything connects) and the run files of a stack's data dir."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import pytest
from trustgraph.base.launching.stack import AlreadyRunning, RunFiles, running_stack
from trustgraph.base.messaging.broker_url import BrokerUrlError, parse_broker_url, split_hosts, unreachable
from trustgraph.base.messaging.pubsub import PubSub
from trustgraph.base.processors.broker_choice import choose_admin_url, choose_broker_url, stack_hint


@pytest.mark.parametrize("url, hosts", [
    ("pulsar://127.0.0.1:6650", (("127.0.0.1", 6650),)),
    ("pulsar://broker", (("broker", 6650),)),
    ("pulsar+ssl://b1:7000,b2:7001", (("b1", 7000), ("b2", 7001))),
    ("http://pulsar:8080/", (("pulsar", 8080),)),
])
def test_good_urls(url, hosts):
    assert parse_broker_url(url).hosts == hosts


@pytest.mark.parametrize("url, says", [
    ("127.0.0.1:6650", "it needs a scheme; did you mean pulsar://127.0.0.1:6650?"),
    ("", "it needs a scheme"),
    ("ftp://h:1", "unknown scheme 'ftp'"),
    ("pulsar://", "no host"),
    ("pulsar://h:port", "bad port in 'h:port'"),
])
def test_bad_urls_say_what_is_wrong(url, says):
    with pytest.raises(BrokerUrlError, match="malformed broker URL") as e:
        parse_broker_url(url)
    assert says in str(e.value)
    with pytest.raises(BrokerUrlError):  # before any connection is tried
        PubSub(url)


@pytest.mark.parametrize("hosts, nodes", [
    ("rabbit", (("rabbit", 5672),)),
    ("r1:5673, r2,[::1]:5674", (("r1", 5673), ("r2", 5672), ("::1", 5674))),
])
def test_a_cluster_s_nodes_in_the_order_given(hosts, nodes):
    # RabbitMQ's --rabbitmq-host takes a cluster's nodes so (the transport's failover order).
    assert split_hosts(hosts, 5672) == nodes


@pytest.mark.parametrize("hosts, says", [("r1,", "no host in ''"), ("r1:x", "bad port in 'r1:x'")])
def test_a_bad_node_is_named(hosts, says):
    with pytest.raises(BrokerUrlError, match=says):
        split_hosts(hosts, 5672)


@pytest.fixture
def no_env(monkeypatch, tmp_path):
    monkeypatch.delenv("PULSAR_HOST", raising=False)
    monkeypatch.setenv("TRUSTGRAPH_DATA", str(tmp_path / "data"))
    return tmp_path / "data"


def test_choice_order_flag_env_stack_default(no_env, monkeypatch):
    url, why = choose_broker_url(None)
    assert (url, why) == ("pulsar://localhost:6650", f"the default; no running stack found in {no_env}")
    stack = RunFiles(no_env)
    stack.acquire(gateway="http://localhost:8088/")
    try:
        stack.set_pulsar_url("pulsar://127.0.0.1:7777")
        assert choose_broker_url(None) == (
            "pulsar://127.0.0.1:7777", f"the running stack's, from {no_env / 'pulsar-url'}")
        monkeypatch.setenv("PULSAR_HOST", "pulsar://env:1")
        assert choose_broker_url(None) == ("pulsar://env:1", "from $PULSAR_HOST")
        assert choose_broker_url("pulsar://flag:2") == ("pulsar://flag:2", "from -p/--pulsar-host")
    finally:
        stack.release()


def test_admin_url_choice_order_flag_env_stack_default(no_env, monkeypatch):
    monkeypatch.delenv("PULSAR_ADMIN_URL", raising=False)
    assert choose_admin_url(None) == ("http://localhost:8080", f"the default; no running stack found in {no_env}")
    stack = RunFiles(no_env)
    stack.acquire(gateway="http://localhost:8088/")
    try:
        stack.set_pulsar_url("pulsar://127.0.0.1:7777", "http://127.0.0.1:7778")
        assert choose_admin_url(None) == ("http://127.0.0.1:7778", f"the running stack's, from {no_env}")
        monkeypatch.setenv("PULSAR_ADMIN_URL", "http://env:1")
        assert choose_admin_url(None) == ("http://env:1", "from $PULSAR_ADMIN_URL")
        assert choose_admin_url("http://flag:2") == ("http://flag:2", "from the command line")
        stack.set_pulsar_url("pulsar://external:6650")   # an external broker: its admin URL is not known
        monkeypatch.delenv("PULSAR_ADMIN_URL")
        assert choose_admin_url(None)[0] == "http://localhost:8080"
    finally:
        stack.release()


def test_the_unreachable_line_ends_with_the_hint_its_caller_gives(no_env):
    url = "pulsar://127.0.0.1:1"
    assert unreachable(url, "connection refused") == f"cannot reach the broker at {url}: connection refused"
    assert unreachable(url, "refused", lambda u: None) == f"cannot reach the broker at {url}: refused"
    # A processor's: the running stack's broker, read when the line is written.
    assert unreachable(url, "refused", stack_hint) == (
        f"cannot reach the broker at {url}: refused; no stack is running in {no_env}: start one with "
        f"`make run`, or give the broker URL with -p")
    # A URL given with -p (or $PULSAR_HOST) is not asked for again: whether a broker listens there is.
    assert unreachable(url, "refused", functools.partial(stack_hint, given=True)) == (
        f"cannot reach the broker at {url}: refused; check that a broker listens there; no stack is "
        f"running in {no_env} (`make run` starts one, which a service joins without -p)")
    stack = RunFiles(no_env)
    stack.acquire(gateway="http://localhost:8088/")
    try:
        stack.set_pulsar_url("pulsar://127.0.0.1:7777")
        assert unreachable(url, "refused", stack_hint).endswith(
            f"; the stack running in {no_env} uses pulsar://127.0.0.1:7777 (in {no_env / 'pulsar-url'})")
        assert unreachable("pulsar://127.0.0.1:7777", "refused", stack_hint).endswith(
            f"; this is the broker of the stack running in {no_env}, which may be (re)starting")
    finally:
        stack.release()


def test_a_dead_stacks_leftovers_are_ignored(no_env):
    no_env.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    (no_env / "tg-launch.lock").write_text(json.dumps({"pid": int(dead), "pulsar": "pulsar://x:1"}))
    (no_env / "pulsar-url").write_text("pulsar://x:1\n")
    assert running_stack() is None
    assert choose_broker_url(None)[0] == "pulsar://localhost:6650"


def test_one_holder_per_data_dir_and_release_removes_its_files(tmp_path):
    first = RunFiles(tmp_path)
    first.acquire(gateway="http://localhost:8088/")
    first.set_pulsar_url("pulsar://127.0.0.1:6650")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "agent.ready").write_text("1")
    with pytest.raises(AlreadyRunning) as e:
        RunFiles(tmp_path).acquire(gateway="http://localhost:9999/")
    assert f"already running on {tmp_path} (pid {os.getpid()}, gateway http://localhost:8088/)" in str(e.value)
    # The refused one changed nothing.
    assert running_stack(tmp_path).gateway == "http://localhost:8088/"
    first.release()
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert running_stack(tmp_path) is None
