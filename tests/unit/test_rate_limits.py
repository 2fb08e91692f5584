"""The one retry of a rate-limited backend (trustgraph.base.messaging.rate_limits), as our LLM services
and upstream 2.1.4's consumers and service bases use it."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from trustgraph.base.messaging import rate_limits
from trustgraph.base.messaging.rate_limits import RateLimitRetry
from trustgraph.compat.v214 import handling
from trustgraph.compat.v214.handling import retry_rate_limited
from trustgraph.exceptions import TooManyRequests


class Clock:
    """The helper's clock and its pauses: a pause moves the time on at once."""

    def __init__(self) -> None:
        self.now = 0.0

    def time(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(rate_limits, "time", c)
    monkeypatch.setattr(rate_limits, "asyncio", c)
    monkeypatch.setattr(handling, "time", c)
    return c


class Backend:
    """Says "too many requests" for its first ``busy`` calls (every call when None), then answers;
    ``calls`` holds the time of each call."""

    def __init__(self, busy: int | None, clock: Clock | None = None) -> None:
        self.busy = busy
        self.clock = clock
        self.calls: list[float] = []

    async def __call__(self) -> str:
        self.calls.append(self.clock.time() if self.clock else time.time())
        if self.busy is None or len(self.calls) <= self.busy:
            raise TooManyRequests(f"slow down {len(self.calls)}")
        return "answer"


async def test_limited_then_answered_counts_logs_and_returns_the_answer(caplog):
    backend = Backend(busy=2)
    seen: list[int] = []
    retry = RateLimitRetry(
        0.01,
        on_limited=lambda: seen.append(retry.count),
        message="Backend rate-limited (%(count)d); asking again in %(every)gs",
    )
    with caplog.at_level(logging.WARNING, logger="trustgraph.base.messaging.rate_limits"):
        assert await retry.run(backend) == "answer"
    assert len(backend.calls) == 3 and retry.count == 2 and seen == [1, 2]
    assert [r.getMessage() for r in caplog.records] == [
        "Backend rate-limited (1); asking again in 0.01s",
        "Backend rate-limited (2); asking again in 0.01s",
    ]


async def test_no_try_starts_at_or_after_until_and_the_last_rate_limit_is_raised(clock, caplog):
    backend = Backend(busy=None, clock=clock)
    seen: list[int] = []
    retry = RateLimitRetry(10, until=clock.now + 40, on_limited=lambda: seen.append(retry.count))
    with pytest.raises(TooManyRequests) as raised, caplog.at_level(logging.WARNING):
        await retry.run(backend)
    # Tries at 0, 10, 20 and 30 s; one at 40 would start at ``until``: the fourth rate limit is raised.
    assert backend.calls == [0, 10, 20, 30] and str(raised.value) == "slow down 4"
    # Each rate limit is counted, the last one too; only the pauses are logged.
    assert retry.count == 4 and seen == [1, 2, 3, 4]
    assert [r.getMessage() for r in caplog.records] == [
        f"Rate limited ({n}); trying again in 10s" for n in (1, 2, 3)
    ]


async def test_without_until_the_callers_timeout_ends_the_waiting():
    backend = Backend(busy=None)
    retry = RateLimitRetry(0.05)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.2):
            await retry.run(backend)
    assert retry.count == len(backend.calls) >= 1


async def test_any_other_error_passes_straight_through():
    calls = 0

    async def broken() -> str:
        nonlocal calls
        calls += 1
        raise ValueError("not a rate limit")

    retry = RateLimitRetry(10.0)
    start = time.monotonic()
    with pytest.raises(ValueError, match="not a rate limit"):
        await retry.run(broken)
    assert calls == 1 and retry.count == 0 and time.monotonic() - start < 5


async def test_wait_alone_serves_work_that_decides_itself_what_is_tried_again():
    retry = RateLimitRetry(0.01, until=time.time() + 60)
    await retry.wait(TooManyRequests("first"))
    assert retry.count == 1
    late = RateLimitRetry(0.01, until=time.time() - 1)
    error = TooManyRequests("too late")
    with pytest.raises(TooManyRequests) as raised:
        await late.wait(error)
    assert raised.value is error and late.count == 1


async def test_upstreams_retry_gives_up_at_its_bound_or_the_callers_deadline_and_keeps_its_log_line(
    clock, caplog
):
    counted: list[int] = []
    backend = Backend(busy=None, clock=clock)
    with (
        pytest.raises(TooManyRequests),
        caplog.at_level(logging.WARNING, logger="trustgraph.compat.v214.handling"),
    ):
        await retry_rate_limited(
            backend, every=10, deadline=clock.now + 25, on_limited=lambda: counted.append(1)
        )
    assert backend.calls == [0, 10, 20] and len(counted) == 3
    assert [r.getMessage() for r in caplog.records] == ["Rate limited; trying again in 10 s"] * 2
    backend = Backend(busy=None, clock=clock)
    start = clock.now
    with pytest.raises(TooManyRequests):
        await retry_rate_limited(backend, every=10, give_up_after=15)
    assert backend.calls == [start, start + 10]
