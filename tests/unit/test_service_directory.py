"""Self-announcing tool services, on the in-memory transport: announcer, directory and catalog."""

from __future__ import annotations

import asyncio
import json

from trustgraph.base import DynamicToolService
from trustgraph.base.testing import MemoryBroker, memory_pubsub, worker
from trustgraph.base.tool_services.announcer import Announcer
from trustgraph.base.tool_services.service_directory import ServiceDirectory
from trustgraph.catalog import build_catalog
from trustgraph.topics import tool_service_topics

REQ, RESP = tool_service_topics("unit-weather")


class Weather(DynamicToolService):
    default_topic = "unit-weather"
    config_params = ["units"]
    idempotent = True
    tools = [{"name": "weather", "description": "Current weather in a city", "units": "metric",
              "arguments": [{"name": "city", "type": "string", "description": "The city"}],
              "examples": ["Do I need an umbrella in Oslo?"]}]

    async def invoke(self, user, config, arguments):
        return f"sunny in {arguments['city']} ({config.get('units')})"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def directory(broker: MemoryBroker, **kw) -> tuple[ServiceDirectory, list[int]]:
    changes: list[int] = []
    d = ServiceDirectory(memory_pubsub(broker, "reader"), on_change=lambda: changes.append(1), **kw)
    await d.start()
    return d, changes


async def settled() -> None:
    """Let callbacks scheduled with call_soon (coalesced changes) run."""
    for _ in range(3):
        await asyncio.sleep(0)


async def test_a_running_service_is_in_the_catalog_with_no_config_step():
    broker = MemoryBroker()
    d, changes = await directory(broker)
    async with worker(Weather, broker=broker, id="weather-service"):
        await settled()
        assert d.live("weather-service") is True and changes
        catalog = build_catalog({}, d.announced())
        tool = catalog.tools["weather"]
        assert (tool.source, tool.key, tool.queues, dict(tool.config)) == (
            "announced", "weather-service/weather", (REQ, RESP), {"units": "metric"})
        assert tool.service.idempotent is True
        assert tool.schema["properties"] == {"city": {"type": "string", "description": "The city"}}
        assert tool.examples == ("Do I need an umbrella in Oslo?",)   # announced with the tool
    # A clean stop withdraws it at once, and the change is reported.
    await settled()
    assert d.live("weather-service") is False
    assert d.announced() == {}
    assert "weather" not in build_catalog({}, d.announced()).tools
    # Its tools are remembered, so a call of one is told "its service stopped", not "no such tool".
    assert d.stopped_service_of("weather") == "weather-service" and d.stopped_service_of("other") is None
    # ... and what they were, so a question about one is told the same (steps.gone_nearer).
    [(service, offered)] = d.stopped_tools()
    assert service == "weather-service" and offered["name"] == "weather" and offered["description"]
    await d.stop()


async def test_replicas_share_one_entry_while_any_lives():
    broker = MemoryBroker()
    d, _ = await directory(broker)
    descriptor = {"id": "svc", "request-queue": REQ, "response-queue": RESP}
    replicas = [Announcer(memory_pubsub(broker, f"r{i}"), service="svc", descriptor=descriptor, tools={})
                for i in range(2)]
    for r in replicas:
        await r.start()
    await settled()
    assert len(d.services["svc"].replicas) == 2
    await replicas[0].stop()
    await settled()
    assert d.live("svc") is True and d.live_for("other-id", REQ) is True
    await replicas[1].stop()
    await settled()
    assert d.live("svc") is False and d.live_for("other-id", REQ) is False
    assert d.live("never-seen") is None and d.live_for("never-seen", "non-persistent://x/y/z") is None
    await d.stop()


async def test_a_replica_that_misses_its_lease_is_withdrawn():
    broker = MemoryBroker()
    clock = FakeClock()
    d, changes = await directory(broker, clock=clock)
    killed = Announcer(memory_pubsub(broker, "r"), service="svc", lease=10.0,
                       descriptor={"id": "svc", "request-queue": REQ, "response-queue": RESP}, tools={})
    await killed.start()
    await settled()
    assert d.live("svc") is True
    changes.clear()
    clock.now += 9.9
    d.sweep()
    assert d.live("svc") is True and changes == []
    clock.now += 0.2  # past the lease, and no heartbeat came (as after kill -9)
    d.sweep()
    await settled()
    assert d.live("svc") is False and changes == [1]
    await d.stop()


async def test_a_reader_started_later_learns_the_service_from_its_probe():
    broker = MemoryBroker()
    # A lease of 300 s: the next heartbeat is 100 s away, so only the probe can explain a quick answer.
    a = Announcer(memory_pubsub(broker, "r"), service="svc", lease=300.0,
                  descriptor={"id": "svc", "request-queue": REQ, "response-queue": RESP}, tools={})
    await a.start()
    d, _ = await directory(broker)
    await settled()
    assert d.live("svc") is True
    await a.stop()
    await d.stop()


def test_a_configured_descriptor_wins_and_the_conflict_is_reported():
    announced = {"weather-service": type("A", (), {
        "descriptor": json.dumps({"id": "weather-service", "request-queue": "non-persistent://tg/request/x",
                                  "response-queue": "non-persistent://tg/response/x"}),
        "tools": json.dumps({"weather": {"name": "weather", "description": "announced one"}})})()}
    config = {"tool-service": {"weather-service": json.dumps(
                  {"id": "weather-service", "request-queue": REQ, "response-queue": RESP})},
              "tool": {"wx": json.dumps({"type": "tool-service", "name": "weather", "description": "configured",
                                         "service": "weather-service"})}}
    catalog = build_catalog(config, announced)
    assert catalog.tools["weather"].description == "configured"
    assert catalog.services["weather-service"].request_queue == REQ
    # Announced with other queues: not the configured service, so none of its tools are used either.
    assert [str(w) for w in catalog.warnings] == [
        "tool-service/weather-service: field 'request-queue': a running service announces itself under this "
        f"id with other queues (non-persistent://tg/request/x, not this descriptor's {REQ}); the configured "
        "descriptor is used, so its tools' calls go where that service does not listen: make the two agree"]
    assert catalog.errors == ()
    # Announced with the configured queues: its tools join, and a configured tool keeps its name.
    announced["weather-service"].descriptor = json.dumps({"id": "weather-service", "request-queue": REQ,
                                                          "response-queue": RESP})
    catalog = build_catalog(config, announced)
    assert catalog.tools["weather"].description == "configured"
    assert [str(w) for w in catalog.warnings] == [
        "tool/weather-service/weather: field 'name': announced tool 'weather' is not used: the configured "
        "tool/wx has that name"]


def test_a_bad_announcement_is_reported_and_leaves_the_rest():
    announced = {"svc": type("A", (), {"descriptor": json.dumps({"request-queue": "nowhere"}),
                                        "tools": "{}"})()}
    catalog = build_catalog({}, announced)
    assert [e.field for e in catalog.errors] == ["request-queue", "response-queue"]
    assert all(e.reason.endswith("(announced by the service)") for e in catalog.errors)


def test_declared_tools_are_checked_with_the_catalog():
    class Broken(Weather):
        tools = [{"name": "weather"}]  # no description

    class TooLong(Weather):
        tools = [{**Weather.tools[0], "examples": ["Do I need an umbrella in Oslo?", "?" * 300]}]

    assert Weather(id="w", metrics=False).declared_problems() == []
    assert Broken(id="w", metrics=False).declared_problems() == [
        "tool/w/weather: field 'description': required field is missing"]
    assert TooLong(id="w", metrics=False).declared_problems() == [
        "tool/w/weather: field 'examples[1]': is 300 characters long, over the limit of 200; give a question "
        "as a user would ask it"]
