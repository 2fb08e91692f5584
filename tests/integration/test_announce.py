"""Self-announcing tool services as real processes on the broker, with the agent following them.

The service is ``announcing_service.py`` (a DynamicToolService declaring a
``weather`` tool), started and killed as a real process; the agent is the
in-process harness of ``agent_stand_ins.py`` with announce topics of its own,
which the services of each test are given too.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
import uuid
from pathlib import Path

import pytest
from agent_stand_ins import AgentHarness, call, final, last_observation, observations, service_tool
from support import Proc, wait_for_async
from trustgraph.base import PubSub
from trustgraph.base.tool_services.service_directory import ServiceDirectory
from trustgraph.base.tool_services.tool_service_client import ServiceUnavailable, ToolServiceClients
from trustgraph.catalog import ToolServiceDescriptor
from trustgraph.schema.services.agent import OUTCOME_UNAVAILABLE

SCRIPT = Path(__file__).with_name("announcing_service.py")


@pytest.fixture
async def agent(broker):
    made: list[AgentHarness] = []

    async def make(**params):
        h = await AgentHarness(broker, **params).start()
        made.append(h)
        await h.configure()
        return h

    yield make
    for h in made:
        await h.stop()


@pytest.fixture
def services(broker, tmp_path):
    """Start announcing services as real processes on the announce topics of ``topics``."""
    procs: list[Proc] = []

    def start(topics: dict[str, str], *args: str, sid: str = "weather-service", topic: str | None = None) -> Proc:
        n = len(procs)
        ready = tmp_path / f"ready-{n}"
        argv = [sys.executable, str(SCRIPT), "--id", sid, "-t", topic or f"weather-{uuid.uuid4().hex[:6]}",
                "-p", broker.url, "--no-metrics", "--announce-queue", topics["announce_queue"],
                "--announce-probe-queue", topics["announce_probe_queue"], *args]
        proc = Proc(argv, tmp_path / f"service-{n}.log", env={"TG_READY_FILE": str(ready)}).start()
        proc.wait_ready(ready)
        procs.append(proc)
        return proc

    yield start
    for p in procs:
        p.stop()


async def until(what: str, probe, timeout: float = 60.0) -> float:
    """``wait_for_async`` that returns how long the wait took."""
    t0 = time.monotonic()
    await wait_for_async(what, probe, timeout, every=0.02)
    return time.monotonic() - t0


async def test_a_new_service_is_used_by_the_agent_with_no_config_step(agent, services):
    a = await agent()
    assert "weather" not in a.proc.registry.tools
    # A 60 s lease: the first heartbeat after the start is 20 s away.
    services(a.announce, "--announce-lease", "60")
    # Announced at start, before its ready file: the agent knows it at once, not at a heartbeat.
    took = await until("weather tool", lambda: "weather" in a.proc.registry.tools)
    assert took < 15, "known from the announcement at start, not from a heartbeat"
    a.model.replies = [call("weather", city="Oslo"), final(last_observation)]
    got = await a.ask("What is the weather in Oslo?", user="ann")
    assert got[-1].answer == "It is sunny in Oslo (metric), ann."
    tool = a.proc.registry.tools["weather"]
    assert (tool.source, tool.key) == ("announced", "weather-service/weather")


async def test_a_clean_stop_withdraws_the_tools_at_once(agent, services):
    a = await agent()
    proc = services(a.announce, "--announce-lease", "60")
    await until("weather tool", lambda: "weather" in a.proc.registry.tools)
    proc.stop()  # SIGTERM: the service says goodbye
    took = await until("withdrawal", lambda: "weather" not in a.proc.registry.tools)
    assert took < 30, "withdrawn at once, not after the 60 s lease"
    assert a.proc.feed.directory.live("weather-service") is False


async def test_after_kill_9_the_tools_go_within_the_lease(agent, services):
    a = await agent()
    proc = services(a.announce, "--announce-lease", "2")
    await until("weather tool", lambda: "weather" in a.proc.registry.tools)
    killed = time.monotonic()
    proc.kill()
    await until("withdrawal", lambda: "weather" not in a.proc.registry.tools)
    assert time.monotonic() - killed < 2 + 10  # the 2 s lease, with room for a loaded machine


async def test_replicas_share_one_entry_and_the_tool_stays_while_any_lives(agent, services):
    a = await agent()
    topic = f"weather-{uuid.uuid4().hex[:6]}"
    first = services(a.announce, topic=topic)
    second = services(a.announce, topic=topic)
    directory = a.proc.feed.directory
    await until("two replicas", lambda: len(directory.services.get("weather-service").replicas) == 2
                if "weather-service" in directory.services else False)
    first.kill()
    first.p.wait()
    a.model.replies = [call("weather", city="Rome"), final(last_observation)]
    got = await a.ask("weather?")   # the other replica serves (shared subscription)
    assert got[-1].answer.startswith("It is sunny in Rome")
    assert "weather" in a.proc.registry.tools
    second.stop()
    await until("withdrawal", lambda: "weather" not in a.proc.registry.tools)


async def test_an_agent_started_after_the_service_learns_its_tools_at_once(broker, agent, services):
    topics = {"announce_queue": f"non-persistent://tg/config/a-{uuid.uuid4().hex[:6]}",
              "announce_probe_queue": f"non-persistent://tg/config/p-{uuid.uuid4().hex[:6]}"}
    # A 60 s lease: the next heartbeat is 20 s away, so only the agent's probe explains a quick start.
    services(topics, "--announce-lease", "60")
    h = AgentHarness(broker, announce=topics)
    await h.start()
    try:
        await h.configure()
        took = await until("weather tool", lambda: "weather" in h.proc.registry.tools)
        assert took < 20, "learned from the probe, within one heartbeat"
    finally:
        await h.stop()


async def test_a_configured_tool_of_a_dead_service_fails_at_once(agent, services):
    a = await agent(tool_timeout=60)
    topic = f"weather-{uuid.uuid4().hex[:6]}"
    proc = services(a.announce, topic=topic, sid="forecast")
    # "announces": a configured service's announcements may fail its calls fast only when it says so.
    descriptor = {"id": "forecast", "request-queue": f"non-persistent://tg/request/{topic}",
                  "response-queue": f"non-persistent://tg/response/{topic}", "announces": True}
    await a.configure(tools={"fc": service_tool("forecast", "forecast", args=("city",))},
                      services={"forecast": descriptor})
    directory = a.proc.feed.directory
    await until("live service", lambda: directory.live("forecast") is True)
    proc.stop()
    await until("service down", lambda: directory.live("forecast") is False)
    a.model.replies = [call("forecast", city="Paris"), final(last_observation)]
    t0 = time.monotonic()
    got = await a.ask("forecast?", timeout=60)
    assert time.monotonic() - t0 < 30, "not the tool's 60 s deadline"
    # The question is plainly about the listed tool that cannot be used: the dialog ends naming it
    # and why, before the model is asked or the call made (steps.gone_nearer).
    assert got[-1].outcome == OUTCOME_UNAVAILABLE and not observations(got) and a.model.calls == []
    assert got[-1].error.message == ("Tool 'forecast' cannot be used now: tool service 'forecast' is not running: "
                                     f"no replica is live, so nothing serves non-persistent://tg/request/{topic}")


async def test_a_service_that_never_announces_keeps_its_deadline(broker):
    # An upstream 2.1.4 service never announces: the pool cannot know it is down, so it waits.
    ps = PubSub(broker.url, processor="test")
    directory = ServiceDirectory(ps)
    await directory.start()
    pool = ToolServiceClients(ps, liveness=directory.live_for)
    silent = ToolServiceDescriptor.model_validate({"id": "upstream", "request-queue": "non-persistent://tg/request/u",
                                                   "response-queue": "non-persistent://tg/response/u"})
    try:
        with pytest.raises(TimeoutError) as e:
            await pool.invoke(silent, "u", {}, {}, timeout=0.5)
        assert not isinstance(e.value, ServiceUnavailable)
    finally:
        await pool.close()
        await directory.stop()
        await ps.close()


async def test_tool_output_streams_through_the_agent(agent, services, tmp_path):
    a = await agent()
    hold = tmp_path / "go"
    services(a.announce, "--stream", "--hold", str(hold))
    await until("weather tool", lambda: "weather" in a.proc.registry.tools)
    a.model.replies = [call("weather", city="Lima"), final("done")]
    seen: list = []
    dialog = asyncio.ensure_future(a.ask("weather?", streaming=True, into=seen))
    # The first word arrives while the service still holds the rest back: it streamed.
    await until("first chunk", lambda: any(r.chunk_type == "observation" and r.content for r in seen))
    assert not any(r.chunk_type == "observation" and r.end_of_message for r in seen), [
        (r.content, r.end_of_message) for r in seen if r.chunk_type == "observation"]
    hold.touch()
    got = await dialog
    chunks = [r for r in got if r.chunk_type == "observation"]
    assert len(chunks) > 2 and [r.end_of_message for r in chunks] == [False] * (len(chunks) - 1) + [True]
    assert "".join(r.content for r in chunks).strip() == "It is sunny in Lima (metric), alice."
    assert a.seen[-1][1].history[-1].observation == "It is sunny in Lima (metric), alice."


async def test_a_descriptor_whose_queues_are_not_those_of_its_running_service_is_one_warning(agent, services,
                                                                                          caplog):
    # A running service announces "forecast" on one topic; the configured descriptor of that id names
    # another (a mistyped queue, or a service started with another -t). Its tools' calls go where
    # nothing listens: before, it loaded without a word. Now one WARNING names both queues, and a
    # rebuild after it (a config change) does not repeat it.
    caplog.set_level(logging.WARNING, logger="trustgraph.agent.react.service")
    a = await agent()
    running, configured = f"wx-{uuid.uuid4().hex[:6]}", f"wx-{uuid.uuid4().hex[:6]}"
    services(a.announce, topic=running, sid="forecast")
    descriptor = {"id": "forecast", "request-queue": f"non-persistent://tg/request/{configured}",
                  "response-queue": f"non-persistent://tg/response/{configured}"}
    await a.configure(tools={"fc": service_tool("forecast", "forecast", args=("city",))},
                      services={"forecast": descriptor})
    both = (f"(non-persistent://tg/request/{running}, not this descriptor's "
            f"non-persistent://tg/request/{configured})")

    def warned() -> list[str]:
        return [r.getMessage() for r in caplog.records
                if r.levelno == logging.WARNING and "tool-service/forecast" in r.getMessage() and both in r.getMessage()]

    await until("the warning naming both queues", warned)
    await a.configure(tools={"fc": service_tool("forecast", "forecast", args=("city",)),
                             "marker": service_tool("marker", "forecast", args=("city",))},
                      services={"forecast": descriptor})
    await until("the marker tool", lambda: "marker" in a.proc.registry.tools)
    assert len(warned()) == 1, warned()
