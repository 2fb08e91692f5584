"""Topics and subscriptions as RabbitMQ exchanges and queues, per wire: ours, and upstream 2.11.1's
argument for argument (a peer's declaration of the same queue must match, or RabbitMQ refuses it)."""

from __future__ import annotations

import pytest
from trustgraph.base.messaging.rabbitmq_topology import (
    MAX_NAME_BYTES,
    OURS,
    PERSISTENT,
    QUORUM,
    TRANSIENT,
    ExchangeSpec,
    NameTooLong,
    QueueSpec,
)
from trustgraph.base.wire import wire_for
from trustgraph.compat.v211.rabbitmq_topology import UPSTREAM_211
from trustgraph.topics import TopicError


def test_every_form_of_a_name_is_one_exchange_named_as_upstream_211_names_it():
    for name in ("non-persistent://tg/request/joke", "request:tg:joke", "q0/tg/request/joke"):
        assert OURS.exchange(name) == UPSTREAM_211.exchange(name) == ExchangeSpec("tg.request.joke")
    # 2.11 keeps the colons of a per-workspace queue in the topic part.
    assert OURS.exchange("request:tg:config:default").name == "tg.request.config:default"
    assert OURS.exchange("persistent://tg/flow/text-completion-request").name == "tg.flow.text-completion-request"
    spec = OURS.exchange("flow:tg:chunk-load")
    assert (spec.kind, spec.durable, spec.auto_delete) == ("fanout", True, False)


@pytest.mark.parametrize("name, subscription, own, expected", [
    # a persistent topic's shared subscription: replicated, kept across restarts
    ("persistent://tg/flow/prompt-request", "prompt", False,
     QueueSpec("tg.flow.prompt-request.prompt", durable=True, exclusive=False, auto_delete=False, arguments=QUORUM)),
    # a request topic's shared subscription dies with its last consumer: a request nobody serves is unroutable
    ("non-persistent://tg/request/joke", "joke-service", False,
     QueueSpec("tg.request.joke.joke-service", durable=False, exclusive=False, auto_delete=True)),
    # one caller's own responses
    ("non-persistent://tg/response/joke", "agent-3f2a", True,
     QueueSpec("tg.response.joke.agent-3f2a", durable=False, exclusive=True, auto_delete=True)),
    # one process's own subscription of a persistent topic is not left behind to fill up
    ("persistent://tg/config/config-push", "gateway-91ab", True,
     QueueSpec("tg.config.config-push.gateway-91ab", durable=False, exclusive=True, auto_delete=True)),
])
def test_our_queues_keep_what_the_pulsar_topology_keeps(name, subscription, own, expected):
    assert OURS.queue(name, subscription, own=own) == expected


@pytest.mark.parametrize("name, own, durable, exclusive, auto_delete", [
    ("flow:tg:prompt-request", False, True, False, False),
    ("request:tg:config", False, False, False, False),      # kept while no replica runs
    ("response:tg:config", False, False, True, True),       # 2.11: every response subscriber has its own
    ("notify:tg:config", False, False, True, True),
    ("request:tg:config", True, False, True, True),         # ours that is one consumer's own, on any class
])
def test_upstream_211_queues_match_its_declarations(name, own, durable, exclusive, auto_delete):
    spec = UPSTREAM_211.queue(name, "sub", own=own)
    assert (spec.durable, spec.exclusive, spec.auto_delete, dict(spec.arguments)) == (
        durable, exclusive, auto_delete, {})
    assert spec.name == f"{UPSTREAM_211.exchange(name).name}.sub"


def test_messages_of_persistent_topics_are_persistent_on_both_wires():
    for topology in (OURS, UPSTREAM_211):
        assert topology.delivery_mode("flow:tg:chunk-load") == PERSISTENT
        assert topology.delivery_mode("request:tg:joke") == TRANSIENT


def test_each_wire_object_gives_its_topology():
    assert wire_for("2.1").rabbitmq_topology() is OURS
    assert wire_for("2.11").rabbitmq_topology() is UPSTREAM_211


def test_bad_names_are_refused_in_one_line():
    with pytest.raises(TopicError):
        OURS.exchange("not a topic")
    with pytest.raises(NameTooLong, match=f"at most {MAX_NAME_BYTES}"):
        OURS.queue("non-persistent://tg/request/joke", "s" * 300, own=False)
