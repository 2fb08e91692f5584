"""The one topic grammar: 2.1's URLs and generic names, and 2.11's ``class:topicspace:topic``."""

from __future__ import annotations

import pytest
from trustgraph.topics import (
    ANNOUNCE,
    CONFIG_PUSH,
    CONFIG_REQUEST,
    CONFIG_RESPONSE,
    SERVING,
    Topic,
    TopicError,
    config_response_queue,
    parse,
    queue,
    to_pulsar,
)


@pytest.mark.parametrize(("name", "url"), [
    # Upstream 2.11.1's Pulsar backend: flow is persistent, the rest non-persistent,
    # and the class becomes the namespace of the topicspace (the tenant).
    ("flow:tg:text-completion-request", "persistent://tg/flow/text-completion-request"),
    ("request:tg:config", "non-persistent://tg/request/config"),
    ("response:tg:config", "non-persistent://tg/response/config"),
    ("notify:tg:config", "non-persistent://tg/notify/config"),
    ("request:tg:joke", "non-persistent://tg/request/joke"),
    ("response:tg:joke", "non-persistent://tg/response/joke"),
    # Per-workspace queues: everything after the second colon is the topic.
    ("request:tg:config:default", "non-persistent://tg/request/config:default"),
    ("flow:tg:agent:ws1:my-flow", "persistent://tg/flow/agent:ws1:my-flow"),
    # Another topicspace is another tenant.
    ("request:acme:joke", "non-persistent://acme/request/joke"),
])
def test_2_11_queue_names_map_as_2_11_maps_them(name: str, url: str) -> None:
    assert to_pulsar(name) == url


def test_the_2_11_form_is_what_queue_formats() -> None:
    assert queue("text-completion-request") == "flow:tg:text-completion-request"
    assert to_pulsar(queue("joke", cls="request")) == "non-persistent://tg/request/joke"


@pytest.mark.parametrize(("name", "url"), [
    ("non-persistent://tg/request/joke", "non-persistent://tg/request/joke"),
    ("persistent://tg/flow/agent:default", "persistent://tg/flow/agent:default"),
    ("q0/tg/request/config", "non-persistent://tg/request/config"),
    ("q1/tg/flow/x", "persistent://tg/flow/x"),
    ("q2/tg/config/config", "persistent://tg/config/config"),
    ("q0/tg/request/agent:default", "non-persistent://tg/request/agent:default"),
])
def test_every_2_1_form_is_unchanged(name: str, url: str) -> None:
    assert to_pulsar(name) == url


@pytest.mark.parametrize("name", ["rpc:tg:joke", "Request:tg:joke", "non-persistent:tg:joke",
                                  "q0:tg:joke"])
def test_an_unknown_queue_class_is_named(name: str) -> None:
    with pytest.raises(TopicError, match=r"unknown queue class .*flow, request, response, notify"):
        to_pulsar(name)


@pytest.mark.parametrize("name", [
    "request:tg",            # two parts
    "request:joke",
    "request::joke",         # empty topicspace
    "request:tg:",           # empty topic
    ":tg:joke",              # empty class
    "request:tg:jo ke",      # white space
    "request:tg:a/b",        # a slash: a legacy Pulsar name, not what the author meant
    "request:t/g:joke",
    "request:tg:joke\n",
    "non-persistent://tg/request/joke\n",
    "non-persistent://tg:request:joke",
])
def test_bad_shapes_are_refused_with_the_forms_expected(name: str) -> None:
    with pytest.raises(TopicError, match="is not a valid topic: expected .*class:topicspace:topic"):
        to_pulsar(name)


def test_a_non_string_is_refused() -> None:
    with pytest.raises(TopicError):
        to_pulsar(None)  # type: ignore[arg-type]



@pytest.mark.parametrize(("name", "persistent", "tenant", "namespace", "local"), [
    ("persistent://tg/flow/agent:default", True, "tg", "flow", "agent:default"),
    ("non-persistent://tg/request/joke", False, "tg", "request", "joke"),
    ("q0/tg/response/config", False, "tg", "response", "config"),
    ("q1/tg/flow/x", True, "tg", "flow", "x"),
    ("q2/tg/config/config", True, "tg", "config", "config"),
    ("flow:tg:text-completion-request", True, "tg", "flow", "text-completion-request"),
    ("request:tg:config:default", False, "tg", "request", "config:default"),
    ("notify:acme:config", False, "acme", "notify", "config"),
])
def test_every_form_parses_to_one_topic_value(name, persistent, tenant, namespace, local) -> None:
    t = parse(name)
    assert (t.persistent, t.tenant, t.namespace, t.name) == (persistent, tenant, namespace, local)
    assert t.namespace_path == f"{tenant}/{namespace}" and t.path == f"{tenant}/{namespace}/{local}"
    assert t.pulsar_url == to_pulsar(name)
    assert parse(t.pulsar_url) == t            # the URL names the same topic
    assert t == Topic(persistent, tenant, namespace, local)


def test_the_well_known_topics_persist_as_their_urls_say() -> None:
    assert [parse(t).persistent for t in (CONFIG_PUSH, CONFIG_REQUEST, CONFIG_RESPONSE, ANNOUNCE, SERVING)] == [
        True, False, False, False, False]
    assert parse(config_response_queue) == parse(CONFIG_RESPONSE)   # 2.1's generic name and its URL


@pytest.mark.parametrize(("name", "says"), [
    ("request:tg", "expected"),
    ("non-persistent://tg/request/joke\n", "expected"),
    ("rpc:tg:joke", "unknown queue class 'rpc'"),
    ("q7/tg/request/x", "unknown quality of service 'q7'"),
    (None, "expected"),
    (["q0/tg/request/x"], "expected"),       # not even hashable: refused, not a TypeError
])
def test_junk_is_refused_by_parse_with_the_forms_expected(name, says) -> None:
    with pytest.raises(TopicError, match="is not a valid topic") as e:
        parse(name)  # type: ignore[arg-type]
    assert says in str(e.value)
    with pytest.raises(TopicError):          # asked again (nothing of it remembered): the same refusal
        parse(name)  # type: ignore[arg-type]
