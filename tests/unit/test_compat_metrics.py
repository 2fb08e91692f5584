"""Upstream 2.1.4's metric classes (trustgraph.base.metrics) drive our Prometheus series, under our labels."""

from __future__ import annotations

import uuid

import pytest
from prometheus_client import REGISTRY
from support import wait_for_async
from trustgraph.base import ConsumerMetrics, ProcessorMetrics, ProducerMetrics
from trustgraph.base.messaging import metrics as ours
from trustgraph.base.metrics import SubscriberMetrics
from trustgraph.base.processors.flow_processor import ConsumerSpec, FlowProcessor
from trustgraph.base.testing import worker
from trustgraph.schema import TextDocument


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def pid() -> str:
    """A processor id of the test's own, so counts start at zero."""
    return f"metrics-{uuid.uuid4().hex[:8]}"


def test_upstream_names_are_ours_and_no_metric_is_registered_twice():
    assert ConsumerMetrics.processing_metric is ours.messages_handled
    assert ConsumerMetrics.request_metric is ours.handling_latency
    assert SubscriberMetrics.received_metric is ours.messages_received
    assert SubscriberMetrics.dropped_metric is ours.messages_dropped
    assert ProcessorMetrics.processor_metric is ours.processor_info
    # Made per consumer, as upstream does: nothing new is registered.
    collectors = len(REGISTRY._collector_to_names)
    for _ in range(3):
        ConsumerMetrics("p", "f", "n"), ProducerMetrics("p", "f", "n"), SubscriberMetrics("p", "f", "n")
        ProcessorMetrics("p")
    assert len(REGISTRY._collector_to_names) == collectors
    # Every series name upstream's processors write exists (one metric each: prometheus_client
    # refuses a second, so importing both our metrics and these proves it).
    for name in ("consumer_state", "rate_limit_count_total", "producer_count_total", "subscriber_state",
                 "processing_count_total", "request_latency_count", "received_count_total",
                 "dropped_count_total", "processor_info"):
        assert name in REGISTRY._names_to_collectors, name


def test_consumer_metrics_count_outcomes_time_rate_limits_and_state(pid):
    m = ConsumerMetrics(processor=pid, flow="f1", name="input")
    labels = {"processor": pid, "consumer": "f1/input"}
    m.process("success")
    m.process("success")
    m.process("error")
    m.rate_limit()
    with m.record_time():
        pass
    m.state("running")
    assert value("processing_count_total", **labels, status="success") == 2
    assert value("processing_count_total", **labels, status="error") == 1
    assert value("rate_limit_count_total", **labels) == 1
    assert value("request_latency_count", **labels) == 1
    assert value("consumer_state", **labels, consumer_state="running") == 1
    m.state("stopped")
    assert value("consumer_state", **labels, consumer_state="running") == 0
    assert value("consumer_state", **labels, consumer_state="stopped") == 1


def test_a_consumer_without_a_flow_is_labelled_by_its_name(pid):
    # Upstream's AsyncProcessor makes ConsumerMetrics(processor=id, flow=None, name="config").
    m = ConsumerMetrics(processor=pid, flow=None, name="config")
    assert m.consumer == "config"
    m.process("success")
    assert value("processing_count_total", processor=pid, consumer="config", status="success") == 1


def test_an_unknown_state_is_ignored_not_raised(pid, caplog):
    m = ConsumerMetrics(pid, "f", "input")
    m.state("running")
    m.state("paused")
    SubscriberMetrics(pid, "f", "sub").state("sleeping")
    assert value("consumer_state", processor=pid, consumer="f/input", consumer_state="running") == 1
    assert "paused" in caplog.text and "sleeping" in caplog.text


def test_producer_and_subscriber_metrics(pid):
    ProducerMetrics(processor=pid, flow="f1", name="output").inc()
    s = SubscriberMetrics(processor=pid, flow="f1", name="response")
    s.received()
    s.received()
    s.dropped()           # as upstream's own Subscriber calls it
    s.dropped("full")     # as upstream's signature has it
    s.state("running")
    assert value("producer_count_total", processor=pid, producer="f1/output") == 1
    assert value("received_count_total", processor=pid, consumer="f1/response") == 2
    assert value("dropped_count_total", processor=pid, consumer="f1/response", reason="overloaded") == 2
    assert value("subscriber_state", processor=pid, consumer="f1/response", subscriber_state="running") == 1


def test_processor_info_records_the_parameters_without_their_secrets():
    before = dict(ours.processor_info._value)
    try:
        ProcessorMetrics(processor="info-test").info({
            "pulsar_host": "pulsar://admin:hunter22@broker:6650", "cassandra_password": "s3cret-pw",
            "concurrency": 4, "model": None, "pulsar_api_key": "tok-123456",
            "note": "key tok-123456 here",
        })
        got = ours.processor_info._value
        assert got["id"] == "info-test" and got["concurrency"] == "4" and got["model"] == ""
        assert got["cassandra_password"] == "***" and got["pulsar_api_key"] == "***"
        assert "hunter22" not in got["pulsar_host"] and "broker:6650" in got["pulsar_host"]
        assert "tok-123456" not in got["note"]
    finally:
        ours.processor_info.info(before)


class Counting(FlowProcessor):
    """One consumer, as our flow processors name theirs."""

    def __init__(self, **params):
        super().__init__(**params)
        self.register_specification(ConsumerSpec(name="input", schema=TextDocument, handler=self.on_doc))

    async def on_doc(self, msg, flow):
        pass


async def test_upstream_labels_land_in_the_series_our_flow_consumer_writes():
    async with worker(Counting) as w:
        definition = w.flow_definition("f1")
        await w.open_flow("f1", definition)
        await w.send(definition["input"], TextDocument(text=b"x"))
        labels = {"processor": w.processor.id, "consumer": "f1/input", "status": "success"}
        # Ours counts the message once its handler has returned.
        await wait_for_async("our consumer's count", lambda: value("processing_count_total", **labels) == 1, 30)
        ConsumerMetrics(processor=w.processor.id, flow="f1", name="input").process("success")
        assert value("processing_count_total", **labels) == 2
