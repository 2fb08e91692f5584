"""The gateway's view of which request topics nothing serves."""

from __future__ import annotations

from trustgraph.base.messaging.unserved import GRACE, POLL, UnservedTopics

TOPIC = "non-persistent://tg/request/embeddings:default"
KEY = "tg/request/embeddings:default"


def test_a_topic_without_consumers_for_the_grace_period_is_unserved():
    u = UnservedTopics("http://broker:8080")
    t = 100.0
    while t < 100.0 + GRACE:
        u.take({}, t)
        assert not u.unserved(TOPIC, t)  # too early: the gauge may lag a processor that just started
        t += POLL
    u.take({}, t)
    assert u.unserved(TOPIC, t)


def test_a_consumer_seen_within_the_grace_period_keeps_it_served():
    u = UnservedTopics("http://broker:8080")
    u.take({KEY: 1}, 100.0)
    u.take({KEY: 0}, 100.0 + GRACE - 1)  # e.g. restarting
    assert not u.unserved(TOPIC, 100.0 + GRACE - 1)
    u.take({KEY: 0}, 100.0 + GRACE + 1)
    assert u.unserved(TOPIC, 100.0 + GRACE + 1)
    u.take({KEY: 1}, 100.0 + GRACE + 3)  # back
    assert not u.unserved(TOPIC, 100.0 + GRACE + 3)


def test_without_recent_readings_nothing_is_refused():
    never = UnservedTopics(None)
    assert not never.unserved(TOPIC, 1000.0)
    stale = UnservedTopics("http://broker:8080")
    stale.take({}, 100.0)
    assert not stale.unserved(TOPIC, 100.0 + GRACE + 10 * POLL)


def test_why_says_what_a_caller_is_told_and_nothing_while_served():
    u = UnservedTopics("http://broker:8080")
    u.take({KEY: 1}, 100.0)
    assert u.why(TOPIC, 100.0) is None
    u.take({KEY: 0}, 100.0 + GRACE + 1)
    assert u.why(TOPIC, 100.0 + GRACE + 1).startswith(f"nothing serves {TOPIC}: the broker has counted")


def test_a_topic_listed_late_gets_its_own_grace():
    # A tool service started while the stack runs: the broker lists its topic at once, with no
    # consumer until its next refresh; the readings began long before, and that must not matter.
    u = UnservedTopics("http://broker:8080")
    for t in range(100, 200, int(POLL)):
        u.take({}, float(t))
    assert u.unserved(TOPIC, 200.0)                          # never listed: a route nothing runs
    u.take({KEY: 0}, 202.0)                                  # listed: its grace starts now
    assert not u.unserved(TOPIC, 202.0)
    u.take({KEY: 0}, 202.0 + GRACE - 1)
    assert not u.unserved(TOPIC, 202.0 + GRACE - 1)
    u.take({KEY: 0}, 202.0 + GRACE)
    assert u.unserved(TOPIC, 202.0 + GRACE)                  # nothing came: refused, as before
    u.take({KEY: 1}, 202.0 + GRACE + POLL)
    assert not u.unserved(TOPIC, 202.0 + GRACE + POLL)


def test_a_topic_a_processor_says_it_serves_is_served_before_the_gauge_shows_it():
    # The LLM service loads its model while the prompt service's producer has listed its topic
    # already: unserved by the grace, then it subscribes and says so; the gauge shows the
    # consumer only at its next refresh, and a call made meanwhile must not be refused.
    u = UnservedTopics("http://broker:8080")
    u.take({KEY: 0}, 100.0)
    u.take({KEY: 0}, 100.0 + GRACE)
    assert u.unserved(TOPIC, 100.0 + GRACE)
    u.heard(TOPIC, 100.0 + GRACE + 1)
    u.take({KEY: 0}, 100.0 + GRACE + 2)                      # the gauge, not refreshed yet
    assert not u.unserved(TOPIC, 100.0 + GRACE + 2)
    # a process that said so and then died is unserved again once the gauge has had its grace
    u.take({KEY: 0}, 100.0 + 2 * GRACE + 1)
    assert u.unserved(TOPIC, 100.0 + 2 * GRACE + 1)
