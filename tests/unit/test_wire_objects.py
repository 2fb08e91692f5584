"""A processor's wire object answers for each edge where the wire changes what it does, as the branches
on the wire's name did: its announce topics, where config assigns its flows, how it follows config."""

from __future__ import annotations

import json
import re

import pytest
from trustgraph.base.processors.config_follower import PushFollowing
from trustgraph.base.processors.flow_processor import ACTIVE_FLOWS, FlowProcessor
from trustgraph.base.testing import MemoryBroker, memory_pubsub
from trustgraph.base.wire import WIRES, wire_for
from trustgraph.compat.v211.config_follow import NotifyFollowing
from trustgraph.compat.v211.topics import ANNOUNCE_211, PROBE_211, SERVING_211
from trustgraph.topics import ANNOUNCE, PROBE, SERVING

DEFINITION = {"request": "non-persistent://tg/request/echo:f", "model": "m"}


class Echo(FlowProcessor):
    wires = WIRES


@pytest.mark.parametrize(
    ("wire", "announce", "flow_type", "written", "unreadable", "following"),
    [
        # 2.1: announcements in tg/config; flows in active-flow/<id>, a bad item leaving every flow as it is.
        ("2.1", (ANNOUNCE, PROBE, SERVING), "active-flow", {"echo": {"f": DEFINITION}},
         ({"active-flow": {"echo": "[]"}}, None), PushFollowing),
        # 2.11: in tg/notify (its topology has no tg/config); one processor:<id> item per flow, a bad
        # one only itself left out.
        ("2.11", (ANNOUNCE_211, PROBE_211, SERVING_211), "processor:echo",
         {"f": {"topics": {"request": DEFINITION["request"]}, "parameters": {"model": "m"}}},
         ({"processor:echo": {"f": "[]"}}, {}), NotifyFollowing),
    ],
)
def test_each_wire_answers_for_its_edges(wire, announce, flow_type, written, unreadable, following):
    ours = wire_for(wire)
    assert ours.name == wire
    assert ours.announce_topics() == announce
    assert all(t.startswith(f"non-persistent://tg/{'config' if wire == '2.1' else 'notify'}/") for t in announce)

    flows = ours.component("flow-assignment", ACTIVE_FLOWS)
    assert flows.config_type("echo") == flow_type
    config = flows.assignment({}, "echo", "f", DEFINITION)
    assert {t: {k: json.loads(v) for k, v in items.items()} for t, items in config.items()} == {flow_type: written}
    assert flows.read(config, "echo") == {"f": DEFINITION}     # what start-flow writes reads back
    assert flows.read(config, "other") == {}
    bad, read = unreadable
    assert flows.read(bad, "echo") == read
    # A flow consumer's subscription, as that wire's upstream names it (2.11 adds the workspace), so a
    # replica of upstream's processor and ours share one.
    assert flows.subscription("echo", "f", "request") == {"2.1": "echo--f--request",
                                                          "2.11": "echo--default--f--request"}[wire]

    # A processor chooses them once, from its wire.
    p = Echo(id="echo", pubsub=memory_pubsub(MemoryBroker(), "echo"), metrics=False, wire=wire)
    assert p.wire is ours and p.flow_assignment is flows
    assert type(p.config_follower.following) is following
    assert (p.announce_queue, p.announce_probe_queue, p.pubsub.serving_topic) == announce


def test_an_unknown_wire_is_refused_naming_the_wires():
    with pytest.raises(ValueError, match=re.escape(f"no TrustGraph wire '9': one of {', '.join(WIRES)}")):
        wire_for("9")
    assert WIRES == ("2.1", "2.11")
