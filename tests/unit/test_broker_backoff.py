"""PubSub's retries while a broker call fails (on tenacity): the waits double up to their cap,
the first failure is one WARNING and later ones DEBUG with the wait (a service started before
its stack waits quietly), success after failures is one INFO line, and it gives up, with the
failure in one line, when the next wait would pass the connect deadline."""

from __future__ import annotations

import logging

import pytest
from trustgraph.base.messaging import broker_retry
from trustgraph.base.messaging.pubsub import PubSub, PubSubError
from trustgraph.base.messaging.transport import Capabilities

LOGGER = "trustgraph.base.messaging.broker_retry"


class ConnectError(Exception):
    """A transport's "the broker is away" error (pulsar-client has one of this name)."""


class Away:
    """A transport whose broker answers probes (``problems``, then None) and whose opens raise
    :class:`ConnectError`, which it says is worth retrying."""

    capabilities = Capabilities(name="away", reconnects=False)
    retryable = (ConnectError,)
    open_advice: str | None = None

    def __init__(self, problems: tuple[str, ...] = ()) -> None:
        self.problems = list(problems)

    async def problem(self) -> str | None:
        return self.problems.pop(0) if self.problems else None

    def close(self) -> None:
        pass


def flaky(failures: int):
    """A broker call that fails ``failures`` times with a retryable error, then answers 42."""
    calls = []

    def fn() -> int:
        calls.append(1)
        if len(calls) <= failures:
            raise ConnectError("broker not there")
        return 42
    return fn, calls


async def test_a_failing_open_is_retried_with_doubling_waits_and_said_once_loudly(monkeypatch, caplog):
    monkeypatch.setattr(broker_retry, "OPEN_DELAYS", (0.01, 0.02))
    ps = PubSub("pulsar://unused:6650", transport=Away(), connect_timeout=None)
    fn, calls = flaky(3)
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        assert await ps._retrying("open x", fn) == 42
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == LOGGER]
    assert len(calls) == 4
    assert lines == [
        ("WARNING", "open x on pulsar://unused:6650 failed (ConnectError: broker not there); retrying"),
        ("DEBUG", "open x on pulsar://unused:6650 failed (ConnectError: broker not there); retrying in 0.02s "
                  "(attempt 3)"),
        ("DEBUG", "open x on pulsar://unused:6650 failed (ConnectError: broker not there); retrying in 0.02s "
                  "(attempt 4)"),
        ("INFO", "open x on pulsar://unused:6650 succeeded after 3 failed attempts"),
    ]


async def test_waiting_for_the_broker_is_one_warning_then_debug_then_one_info(monkeypatch, caplog):
    """A processor started before its stack: at its default level (INFO) two lines, however long it waits."""
    monkeypatch.setattr(broker_retry, "FIRST_DELAY", 0.01)
    monkeypatch.setattr(broker_retry, "MAX_DELAY", 0.01)
    ps = PubSub("pulsar://127.0.0.1:1", transport=Away(("connection refused",) * 3), connect_timeout=None)
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        await ps._reachable()
    levels = [r.levelname for r in caplog.records if r.name == LOGGER]
    assert levels == ["WARNING", "DEBUG", "DEBUG", "INFO"]
    last = [r for r in caplog.records if r.name == LOGGER][-1]
    assert last.getMessage() == "Broker pulsar://127.0.0.1:1 reachable after 3 failed attempts"


async def test_a_failing_open_gives_up_when_the_next_wait_passes_the_deadline(monkeypatch):
    monkeypatch.setattr(broker_retry, "OPEN_DELAYS", (60.0, 60.0))
    ps = PubSub("pulsar://unused:6650", transport=Away(), connect_timeout=1.0)
    fn, calls = flaky(5)
    with pytest.raises(PubSubError, match=r"^open x on pulsar://unused:6650 failed \(ConnectError: broker not there\)$"):
        await ps._retrying("open x", fn)
    assert len(calls) == 1          # no wait of 60 s that would end past the 1 s deadline


async def test_an_error_that_is_not_the_brokers_is_not_retried():
    ps = PubSub("pulsar://unused:6650", transport=Away(), connect_timeout=None)

    def fn() -> None:
        raise ValueError("a bug of ours")
    with pytest.raises(ValueError, match="a bug of ours"):
        await ps._retrying("open x", fn)


async def test_an_unreachable_broker_is_one_line_once_the_deadline_is_near():
    ps = PubSub("pulsar://127.0.0.1:1", connect_timeout=0.5)   # port 1: nothing listens
    with pytest.raises(PubSubError, match="127.0.0.1:1"):
        await ps._reachable()


async def test_the_transports_advice_ends_each_failed_opens_line(monkeypatch, caplog):
    monkeypatch.setattr(broker_retry, "OPEN_DELAYS", (0.01, 0.02))
    away = Away()
    away.open_advice = "the broker URL usually looks like pulsar://host:6650"
    ps = PubSub("http://gateway:8088", transport=away, connect_timeout=None)
    fn, _calls = flaky(1)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert await ps._retrying("open x", fn) == 42
    assert [r.getMessage() for r in caplog.records if r.name == LOGGER] == [
        "open x on http://gateway:8088 failed (ConnectError: broker not there); "
        "the broker URL usually looks like pulsar://host:6650; retrying"]
