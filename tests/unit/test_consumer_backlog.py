"""A busy consumer of a non-persistent topic keeps taking messages.

On a non-persistent topic the broker drops, silently, a message for a consumer
that has no flow permits left; pausing the listener (right on a persistent
topic, whose broker keeps the backlog) therefore lost requests under a burst.
A non-persistent consumer never pauses; past ``SHED_AT`` waiting messages it
refuses each further one through ``overloaded`` (an error reply at once).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from trustgraph.base.messaging import consumer as consumer_module
from trustgraph.base.messaging.consumer import Consumer
from trustgraph.schema import ToolServiceRequest
from trustgraph.schema.codec import encode


class FakeConsumer:
    """A transport's consumer (``transport.TransportConsumer``), recording what Consumer did."""

    def __init__(self) -> None:
        self.acked: list[str] = []
        self.paused = 0

    def ack(self, msg: Any) -> None:
        self.acked.append(msg.properties()["id"])

    def nack(self, msg: Any) -> None:
        pass

    def pause(self) -> None:
        self.paused += 1

    def resume(self) -> None:
        pass

    def close(self) -> None:
        pass


class FakeMessage:
    def __init__(self, rid: str) -> None:
        self._data = encode(ToolServiceRequest(user=rid))
        self._props = {"id": rid}

    def data(self) -> bytes:
        return self._data

    def properties(self) -> dict[str, str]:
        return self._props


@pytest.fixture
async def release():
    """Set at the end of a test: the handlers held until then finish, and the consumers stop."""
    event = asyncio.Event()
    event.consumers = []
    yield event
    event.set()
    for c in event.consumers:
        await c.stop()


async def _flood(topic: str, n: int, release: asyncio.Event,
                 refusals: int = 0) -> tuple[FakeConsumer, list[tuple[str, str]], asyncio.Event]:
    refused: list[tuple[str, str]] = []
    all_refused = asyncio.Event()

    async def handler(_msg: Any) -> None:
        await release.wait()

    async def overloaded(props: dict[str, str], reason: str) -> None:
        refused.append((props["id"], reason))
        if len(refused) >= refusals:
            all_refused.set()

    c = Consumer(topic=topic, schema=ToolServiceRequest, handler=handler, direct=None, concurrency=1,
                 loop=asyncio.get_running_loop(), name="t", processor="t", overloaded=overloaded)
    fake = FakeConsumer()
    c.attach(fake)
    release.consumers.append(c)
    for i in range(n):
        c.on_message(fake, FakeMessage(str(i)))
    return fake, refused, all_refused


async def test_a_non_persistent_consumer_never_pauses_and_refuses_past_its_bound(monkeypatch, release):
    monkeypatch.setattr(consumer_module, "SHED_AT", 20)
    # 1 running + 20 waiting; the 4 beyond are refused, each told by its id.
    fake, refused, all_refused = await _flood("non-persistent://tg/request/busy", 25, release, refusals=4)
    await asyncio.wait_for(all_refused.wait(), 10)
    assert fake.paused == 0
    assert [rid for rid, _ in refused] == ["21", "22", "23", "24"]
    assert "overloaded" in refused[0][1]
    assert fake.acked == ["21", "22", "23", "24"]


async def test_refusals_are_one_warning_line_per_interval_not_one_per_message(monkeypatch, release, caplog):
    monkeypatch.setattr(consumer_module, "SHED_AT", 20)
    with caplog.at_level(logging.DEBUG, logger="trustgraph.base.messaging.consumer"):
        _fake, refused, all_refused = await _flood("non-persistent://tg/request/busy", 30, release, refusals=9)
        await asyncio.wait_for(all_refused.wait(), 10)
    lines = [r for r in caplog.records if r.getMessage().startswith("Refused")]
    assert [r.levelno for r in lines] == [logging.WARNING] + [logging.DEBUG] * 8
    assert "Refused 1 message(s) on non-persistent://tg/request/busy" in lines[0].getMessage()


async def test_a_persistent_consumer_still_pauses_and_refuses_nothing(monkeypatch, release):
    monkeypatch.setattr(consumer_module, "SHED_AT", 20)
    fake, refused, _ = await _flood("persistent://tg/flow/busy", 25, release)
    await asyncio.sleep(0)
    assert fake.paused == 1
    assert refused == []
