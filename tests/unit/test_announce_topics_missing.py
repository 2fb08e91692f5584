"""Announce, probe and serving topics a cluster cannot open: serving goes on, one WARNING says why.

Upstream 2.11's topology has no ``tg/config`` namespace, where our 2.1 defaults
put those topics; an Apache Pulsar cluster then refuses to open them.  The
in-memory transport plays that cluster (``refuse_namespace``), and the open's
patience is cut to nothing so the test waits for no retry.
"""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from trustgraph.base import DynamicToolService
from trustgraph.base.messaging import lost_calls
from trustgraph.base.processors.flags import add_processor_args
from trustgraph.base.testing import MemoryBroker, memory_pubsub, worker
from trustgraph.base.tool_services import optional_topics
from trustgraph.base.tool_services.service_directory import ServiceDirectory
from trustgraph.compat.v211.topics import ANNOUNCE_211, PROBE_211, SERVING_211
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse
from trustgraph.topics import ANNOUNCE, PROBE, SERVING, tool_service_topics

REQ, RESP = tool_service_topics("unit-missing-ns")


class Weather(DynamicToolService):
    default_topic = "unit-missing-ns"
    tools = [{"name": "weather", "description": "Current weather in a city",
              "arguments": [{"name": "city", "type": "string", "description": "The city"}]}]

    async def invoke(self, config, arguments):  # 2.11's signature: no user
        return f"sunny in {arguments['city']}"


@pytest.fixture(autouse=True)
def impatient(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(optional_topics, "OPEN_PATIENCE", 0.0)
    monkeypatch.setattr(lost_calls, "OPEN_PATIENCE", 0.0)


def warnings(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and text in r.getMessage()]


def final(r: ToolServiceResponse) -> bool:
    return r.end_of_stream


async def settled() -> None:
    """Let callbacks scheduled with call_soon (coalesced changes, probe answers) run."""
    for _ in range(3):
        await asyncio.sleep(0)


async def test_a_service_serves_when_its_announce_namespace_is_missing(caplog: pytest.LogCaptureFixture) -> None:
    broker = MemoryBroker()
    broker.refuse_namespace("tg/config")
    caplog.set_level(logging.INFO)
    async with worker(Weather, broker=broker, id="weather") as w:   # start() returned: not held
        (answer,) = await w.call(REQ, RESP, ToolServiceRequest(config="{}", arguments='{"city": "Oslo"}'),
                                 ToolServiceResponse, until=final)
        assert (answer.error, answer.response) == (None, "sunny in Oslo")
        assert w.processor.announcer is not None and not w.processor.announcer.announcing
        (line,) = warnings(caplog, "announcements of weather are off")
        assert f"cannot open {ANNOUNCE}" in line and "TopicNotFound" in line
        assert "tg-init-trustgraph" in line and "--announce-queue" in line and "--wire 2.11" in line
        assert "\n" not in line
        # The serving notice could not be sent either: said once, however many topics it serves.
        (serving,) = warnings(caplog, f"Cannot open {SERVING}")
        assert "deadlines" in serving


async def test_a_reader_keeps_its_configured_tools_when_announcements_are_off(
        caplog: pytest.LogCaptureFixture) -> None:
    broker = MemoryBroker()
    broker.refuse_namespace("tg/config")
    d = ServiceDirectory(memory_pubsub(broker, "reader"), name="agent-service-directory")
    await d.start()   # returns: the reader starts, with its configured descriptors only
    try:
        assert not d.following and d.announced() == {}
        (line,) = warnings(caplog, "announcements are off for agent-service-directory")
        assert f"cannot open {ANNOUNCE}" in line and "config only" in line and "--announce-probe-queue" in line
    finally:
        await d.stop()


async def test_announcements_come_on_once_the_namespace_exists(caplog: pytest.LogCaptureFixture) -> None:
    broker = MemoryBroker()
    broker.refuse_namespace("tg/config")
    caplog.set_level(logging.INFO)
    async with worker(Weather, broker=broker, id="weather") as w:
        reopening = w.processor.announcer._reopening
        assert reopening is not None and not w.processor.announcer.announcing
        broker.refuse_namespace("tg/config", refused=False)   # someone ran tg-init-trustgraph
        reopening.retry_now()
        await asyncio.wait_for(reopening.reopened.wait(), 10)   # a hang bound, not a timing claim
        assert w.processor.announcer.announcing
        assert any("on again after 1 retry" in r.getMessage() for r in caplog.records)
        d = ServiceDirectory(memory_pubsub(broker, "reader"))
        await d.start()
        try:
            await settled()
            assert d.live("weather") is True
        finally:
            await d.stop()


async def test_under_2_11_everything_lives_in_tg_notify(caplog: pytest.LogCaptureFixture) -> None:
    # A 2.11 topology: no tg/config at all.  Service and reader both speak 2.11.
    broker = MemoryBroker()
    broker.refuse_namespace("tg/config")
    d = ServiceDirectory(memory_pubsub(broker, "reader"), topic=ANNOUNCE_211, probe_topic=PROBE_211)
    await d.start()
    try:
        async with worker(Weather, broker=broker, id="weather", wire="2.11") as w:
            assert (w.processor.announce_queue, w.processor.announce_probe_queue) == (ANNOUNCE_211, PROBE_211)
            assert w.processor.pubsub.serving_topic == SERVING_211
            await settled()
            assert w.processor.announcer.announcing and d.live("weather") is True
            (answer,) = await w.call(REQ, RESP, ToolServiceRequest(config="{}", arguments='{"city": "Rome"}'),
                                     ToolServiceResponse, until=final)
            assert answer.response == "sunny in Rome"
            assert [json.loads(m.data())["first"] for m in broker.sent[SERVING_211]] == [True]
        assert warnings(caplog, "") == []
    finally:
        await d.stop()


def test_the_announce_flags_default_by_wire() -> None:
    import argparse
    parser = argparse.ArgumentParser()
    add_processor_args(parser)

    def made(argv: list[str]) -> Weather:
        params = vars(parser.parse_args(argv))
        return Weather(**{**params, "id": "w", "metrics": False, "follow_config": False,
                          "pubsub": memory_pubsub(MemoryBroker(), "w")})

    p = made([])
    assert (p.wire.name, p.announce_queue, p.announce_probe_queue, p.pubsub.serving_topic) == (
        "2.1", ANNOUNCE, PROBE, SERVING)
    p = made(["--wire", "2.11"])
    assert (p.wire.name, p.announce_queue, p.announce_probe_queue, p.pubsub.serving_topic) == (
        "2.11", ANNOUNCE_211, PROBE_211, SERVING_211)
    p = made(["--wire", "2.11", "--announce-queue", "non-persistent://acme/ns/a"])
    assert (p.announce_queue, p.announce_probe_queue) == ("non-persistent://acme/ns/a", PROBE_211)
