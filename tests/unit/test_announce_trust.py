"""Whose announcements count: owners, conflicts, withdrawals, fail-fast and the caps (in-memory transport).

Announcements are published as records on the announce topic, the way a
stranger on the broker would send them, and the real ServiceDirectory reads
them; the catalog built from what it hands over is checked too.
"""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from trustgraph.base.testing import MemoryBroker, memory_pubsub
from trustgraph.base.tool_services import service_directory as sd
from trustgraph.base.tool_services.announcer import Announcer, withdraw_hash
from trustgraph.base.tool_services.catalog_feed import configured_services
from trustgraph.base.tool_services.service_directory import ServiceDirectory
from trustgraph.catalog import build_catalog
from trustgraph.schema import ToolServiceAnnouncement
from trustgraph.topics import ANNOUNCE, tool_service_topics

REQ, RESP = tool_service_topics("trust-weather")
EVIL_REQ, EVIL_RESP = tool_service_topics("trust-evil")
DESCRIPTOR = {"id": "weather-service", "request-queue": REQ, "response-queue": RESP}
TOOLS = {"weather": {"name": "weather", "description": "Current weather", "type": "tool-service",
                     "service": "weather-service"}}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def settled() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


class Bus:
    """A directory under test, and a stranger's producer on its announce topic."""

    def __init__(self, **kw) -> None:
        self.broker = MemoryBroker()
        self.clock = FakeClock()
        self.changes = 0
        self.directory = ServiceDirectory(memory_pubsub(self.broker, "reader"), on_change=self._changed,
                                          clock=self.clock, **kw)
        self.stranger = memory_pubsub(self.broker, "stranger")
        self._out = None

    def _changed(self) -> None:
        self.changes += 1

    async def start(self, past_window: bool = True) -> Bus:
        await self.directory.start()
        self._out = await self.stranger.producer(ANNOUNCE)
        if past_window:
            self.clock.now += sd.START_WINDOW + 1
        return self

    async def say(self, service: str = "weather-service", replica: str = "r-evil", state: str = "up",
                  descriptor: dict | str = DESCRIPTOR, tools: dict | str = TOOLS, lease: float = 10.0,
                  withdraw_hash: str = "", withdraw_key: str = "") -> None:
        await self._out.send(ToolServiceAnnouncement(
            service=service, replica=replica, state=state, lease=lease,
            descriptor=descriptor if isinstance(descriptor, str) else json.dumps(descriptor),
            tools=tools if isinstance(tools, str) else json.dumps(tools),
            withdraw_hash=withdraw_hash, withdraw_key=withdraw_key))
        await settled()

    async def replica(self, descriptor: dict = DESCRIPTOR, tools: dict = TOOLS,
                      service: str = "weather-service") -> Announcer:
        a = Announcer(memory_pubsub(self.broker, f"svc-{id(descriptor)}-{len(tools)}"), service=service,
                      descriptor=descriptor, tools=tools)
        await a.start()
        await settled()
        return a

    async def stop(self) -> None:
        await self.directory.stop()


@pytest.fixture
async def bus():
    b = Bus()
    yield await b.start()
    await b.stop()


async def test_a_down_without_the_replicas_secret_withdraws_nothing(bus, caplog):
    real = await bus.replica()
    assert bus.directory.live("weather-service") is True
    with caplog.at_level(logging.WARNING):
        # The replica id is public (GET /api/v1/tool-services lists it); its secret is not.
        await bus.say(replica=real.replica, state="down", withdraw_key="guess")
        await bus.say(replica=real.replica, state="down")
    assert bus.directory.live("weather-service") is True
    assert "a 'down' without that replica's withdraw key is not from that replica" in caplog.text
    # An "up" under the replica's id with another hash cannot re-key it either (nor one that is not ASCII).
    await bus.say(replica=real.replica, withdraw_hash="é\u202e")
    await bus.say(replica=real.replica, state="down", withdraw_key="é")
    await bus.say(replica=real.replica, withdraw_hash=withdraw_hash("mine"))
    await bus.say(replica=real.replica, state="down", withdraw_key="mine")
    assert bus.directory.live("weather-service") is True
    await real.stop()   # the replica's own goodbye shows the secret
    await settled()
    assert bus.directory.live("weather-service") is False


async def test_another_descriptor_under_a_live_id_is_a_conflict_and_never_used(bus, caplog):
    real = await bus.replica()
    evil = {**DESCRIPTOR, "request-queue": EVIL_REQ, "response-queue": EVIL_RESP, "idempotent": True}
    with caplog.at_level(logging.WARNING):
        await bus.say(descriptor=evil, withdraw_hash=withdraw_hash("k"))
    state = bus.directory.services["weather-service"]
    assert state.request_queue == REQ and sorted(state.replicas) == [real.replica]
    catalog = build_catalog({}, bus.directory.announced())
    assert catalog.services["weather-service"].queues == (REQ, RESP)
    assert catalog.services["weather-service"].idempotent is False   # the conflict's "idempotent" is not believed
    assert any("other replicas announce this id" in str(w) for w in catalog.warnings)
    (entry,) = bus.directory.snapshot()
    assert entry["conflicts"] == [{"replicas": ["r-evil"], "request-queue": EVIL_REQ,
                                   "reason": entry["conflicts"][0]["reason"]}]
    assert "not used, even after they stop" in entry["conflicts"][0]["reason"]
    assert "Tool service weather-service: conflict: replica(s) r-evil" in caplog.text
    # The owner leaves: the conflicting set does not inherit the id.
    await real.stop()
    await settled()
    assert bus.directory.live("weather-service") is False
    assert build_catalog({}, bus.directory.announced()).tools == {}
    # The stranger's set leaves too; a set that announces while nobody owns the id takes it.
    await bus.say(state="down", withdraw_key="k")
    again = await bus.replica()
    assert bus.directory.live("weather-service") is True
    assert build_catalog({}, bus.directory.announced()).services["weather-service"].queues == (REQ, RESP)
    await again.stop()


async def test_sets_heard_together_at_start_are_ambiguous_until_one_is_left():
    bus = await Bus().start(past_window=False)
    try:
        real = await bus.replica()
        await bus.say(descriptor={**DESCRIPTOR, "request-queue": EVIL_REQ}, withdraw_hash=withdraw_hash("k"))
        # Both answered the start probe: the reader cannot know which came first, so neither is used.
        assert bus.directory.announced() == {}
        assert bus.directory.live("weather-service") is None
        await bus.say(state="down", withdraw_key="k")
        assert bus.directory.services["weather-service"].request_queue == REQ
        assert bus.directory.live("weather-service") is True
        await real.stop()
    finally:
        await bus.stop()


async def test_a_stranger_cannot_put_a_configured_service_in_fail_fast(bus):
    config = {"weather-service": json.dumps(DESCRIPTOR)}
    bus.directory.configure(configured_services(config))
    # The configured service never announces; a stranger says it is up, then down.
    await bus.say(withdraw_hash=withdraw_hash("k"))
    await bus.say(state="down", withdraw_key="k")
    assert bus.directory.live("weather-service") is None
    assert bus.directory.live_for("weather-service", REQ) is None
    # With other queues it is not even one of its replicas.
    await bus.say(descriptor={**DESCRIPTOR, "request-queue": EVIL_REQ}, replica="r2")
    assert bus.directory.services["weather-service"].owner is None
    assert "not the configured one" in bus.directory.snapshot()[0]["conflicts"][0]["reason"]
    assert bus.directory.live_for("weather-service", REQ) is None


async def test_a_configured_service_that_says_it_announces_fails_fast_on_its_own_word(bus):
    bus.directory.configure(configured_services({"weather-service": json.dumps({**DESCRIPTOR, "announces": True})}))
    real = await bus.replica()
    assert bus.directory.live_for("weather-service", REQ) is True
    await real.stop()
    await settled()
    assert bus.directory.live_for("weather-service", REQ) is False


async def test_caps_refuse_what_is_too_big_and_say_so(bus, caplog):
    with caplog.at_level(logging.DEBUG, logger="trustgraph.base.tool_services.service_directory"):
        await bus.say(service="huge", tools={"t": {"name": "t", "description": "x" * (sd.MAX_DESCRIPTION + 1)}})
        await bus.say(service="many", tools={f"t{i}": {"name": f"t{i}", "description": "d"}
                                             for i in range(sd.MAX_TOOLS + 1)})
        await bus.say(service="arg", tools={"t": {"name": "t", "description": "d", "arguments": [
            {"name": "a", "type": "string", "description": "y" * (sd.MAX_DESCRIPTION + 1)}]}})
        await bus.say(service="fat", descriptor={**DESCRIPTOR, "pad": "p" * sd.MAX_ANNOUNCEMENT})
    assert bus.directory.services == {}
    refused = [r for r in caplog.records if "refused" in r.getMessage()]
    assert [r.getMessage().split(": ", 1)[1] for r in refused] == [
        "the description of tool 't' is 2,049 characters, over the limit of 2,048",
        "it offers 33 tools, over the limit of 32 per service",
        "the description of argument 'a' of the tool 't' is 2,049 characters, over the limit of 2,048",
        f"its descriptor and tools are {len(json.dumps({**DESCRIPTOR, 'pad': 'p' * sd.MAX_ANNOUNCEMENT})) + len(json.dumps(TOOLS)):,} "
        "characters, over the limit of 65,536"]
    # One WARNING per kind per 10 s: the second and third content refusals went at DEBUG.
    assert [r.levelname for r in refused] == ["WARNING", "DEBUG", "DEBUG", "WARNING"]


async def test_a_flood_of_ids_is_bounded_and_the_gone_are_forgotten_first(caplog):
    bus = await Bus(max_services=50).start()
    try:
        with caplog.at_level(logging.WARNING):
            for i in range(200):
                await bus.say(service=f"flood-{i}", replica=f"r{i}", lease=1.0)
        assert len(bus.directory.services) == 50
        assert "services with live replicas are known, the limit" in caplog.text
        assert caplog.text.count("services with live replicas are known") == 1  # throttled
        bus.clock.now += 2  # their leases end
        bus.directory.sweep()
        await settled()
        assert all(not s.live for s in bus.directory.services.values())
        real = await bus.replica()   # room is made by forgetting the gone
        assert bus.directory.live("weather-service") is True and len(bus.directory.services) == 50
        await real.stop()
    finally:
        await bus.stop()


async def test_replicas_and_sets_per_service_are_bounded(bus):
    for i in range(sd.MAX_REPLICAS + 10):
        await bus.say(replica=f"r{i}")
    assert bus.directory.services["weather-service"].replica_count() == sd.MAX_REPLICAS
    for i in range(sd.MAX_SETS + 3):
        await bus.say(replica=f"s{i}", tools={"t": {"name": f"t{i}", "description": "d"}})
    assert len(bus.directory.services["weather-service"].sets) <= sd.MAX_SETS


async def test_a_lease_that_is_not_a_number_cannot_keep_a_replica_for_ever(bus):
    await bus.say(lease=float("nan"))
    assert bus.directory.live("weather-service") is True
    bus.clock.now += sd.MIN_LEASE + 0.1
    bus.directory.sweep()
    assert bus.directory.live("weather-service") is False


def _announced(descriptor: dict, tools: dict, since: float) -> object:
    return type("A", (), {"descriptor": json.dumps(descriptor), "tools": json.dumps(tools), "since": since,
                          "conflicts": ()})()


def test_a_tool_name_stays_with_the_service_that_announced_it_first():
    first = _announced(DESCRIPTOR, TOOLS, since=1.0)
    later = _announced({"id": "copycat", "request-queue": EVIL_REQ, "response-queue": EVIL_RESP},
                       {"weather": {"name": "weather", "description": "mine now"}}, since=2.0)
    # "aaa" sorts first: the order is when each took its id, not the id.
    catalog = build_catalog({}, {"aaa-copycat": later, "weather-service": first})
    assert catalog.tools["weather"].service_key == "weather-service"
    assert [str(w) for w in catalog.warnings] == [
        "tool/aaa-copycat/weather: field 'name': announced tool 'weather' is not used: weather-service/weather "
        "announced a tool of that name first, and keeps it"]


@pytest.mark.parametrize(("policy", "tools"), [
    (None, {"weather", "joke"}), ('"all"', {"weather", "joke"}), ('"configured"', {"joke"}),
    ('["weather-service"]', {"weather"}), ('["nobody"]', set()), ('"everything"', {"joke"}), ("[1]", {"joke"}),
])
def test_the_announced_tools_policy_says_whose_tools_are_used(policy, tools):
    joke_req, joke_resp = tool_service_topics("trust-joke")
    joke = {"id": "joke-service", "request-queue": joke_req, "response-queue": joke_resp}
    announced = {"weather-service": _announced(DESCRIPTOR, TOOLS, 1.0),
                 "joke-service": _announced(joke, {"joke": {"name": "joke", "description": "a joke"}}, 2.0)}
    config = {"tool-service": {"joke-service": json.dumps(joke)}}
    if policy is not None:
        config["tool-policy"] = {"announced": policy}
    catalog = build_catalog(config, announced)
    assert set(catalog.tools) == tools
    bad = [str(e) for e in catalog.errors]
    if policy in ('"everything"', "[1]"):
        assert bad and bad[0].startswith("tool-policy/announced: field '(json)': ") and \
            bad[0].endswith("(read as \"configured\" until it is fixed)")
    else:
        assert bad == []
    if "weather" not in tools:
        assert any("announced-tools policy (tool-policy/announced)" in str(w) for w in catalog.warnings)


def test_configured_services_are_known_by_key_and_by_id():
    got = configured_services({"wx": json.dumps({**DESCRIPTOR, "announces": True}), "bad": "{", "q": '{"id": 1}'})
    assert got["wx"] == got["weather-service"] == sd.Configured((REQ, RESP), True)
    assert got["bad"] == got["q"] == sd.Configured(None, False)
    assert configured_services({"wx": json.dumps({**DESCRIPTOR, "announces": "yes"})})["wx"].announces is False


def test_a_put_of_a_bad_policy_is_refused_naming_what_it_takes():
    from trustgraph.catalog import check_item

    assert check_item({}, "tool-policy", "announced", '"configured"').errors == ()
    (error,) = check_item({}, "tool-policy", "announced", '"everything"').errors
    assert str(error).startswith("tool-policy/announced: field '(json)': unknown policy \"everything\"; it must be")
