"""The broker's consumer counts (Prometheus text) and how tg-show-flows marks what nobody serves."""

from __future__ import annotations

import json

from trustgraph.base.messaging.broker_consumers import consumer_counts
from trustgraph.cli.show_flows import NOT_SERVED, flow_rows

# As pulsar-lite 0.2 writes it: short topic name beside the namespace.
LITE = """\
# HELP pulsar_consumers_count Connected consumers on the topic
# TYPE pulsar_consumers_count gauge
pulsar_consumers_count{cluster="pulsar-lite",namespace="tg/request",partition="-1",topic="agent:default"} 1
pulsar_consumers_count{cluster="pulsar-lite",namespace="tg/request",partition="-1",topic="prompt:default"} 0
pulsar_subscription_consumers_count{cluster="pulsar-lite",namespace="tg/request",subscription="s",topic="x"} 4
pulsar_broker_consumers_count 7
"""
# As Apache Pulsar writes it: the full topic URL.
APACHE = """\
pulsar_consumers_count{cluster="standalone",namespace="tg/request",topic="non-persistent://tg/request/agent:default"} 2.0
"""


def test_both_label_styles_give_the_same_keys():
    assert consumer_counts(LITE) == {"tg/request/agent:default": 1, "tg/request/prompt:default": 0}
    assert consumer_counts(APACHE) == {"tg/request/agent:default": 2}
    assert consumer_counts("garbage\n{}\n") == {}


FLOW = {"description": "d", "blueprint-name": "agent", "parameters": {}, "interfaces": {
    "agent": {"request": "non-persistent://tg/request/agent:default",
              "response": "non-persistent://tg/response/agent:default"},
    "prompt": {"request": "q0/tg/request/prompt:default", "response": "q0/tg/response/prompt:default"},
    "text-load": "persistent://tg/flow/text-load:default",
}}


def test_unserved_interfaces_are_marked_and_nothing_without_counts():
    reply = {"flow": json.dumps(FLOW)}
    rows = dict(flow_rows("default", reply, consumer_counts(LITE)))
    assert NOT_SERVED not in rows["agent"]
    assert rows["prompt"].endswith("\n" + NOT_SERVED)      # generic topic form, count 0
    assert rows["text-load"].endswith("\n" + NOT_SERVED)   # send-only, nobody at all
    assert all(NOT_SERVED not in value for _, value in flow_rows("default", reply))
