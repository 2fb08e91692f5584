"""A send that fails while the broker is away is not an ERROR line per message.

Measured: a user's tool service left running when the stack stopped logged nine
ERROR lines every 30 s (its heartbeats timing out) after the one line that said
the broker was gone, for as long as the stack stayed down.
"""

from __future__ import annotations

import asyncio
import logging

from trustgraph.base.messaging.pubsub import Producer


class _Transported:
    """A transport's producer, as connected as the test says."""

    def __init__(self, connected: bool) -> None:
        self.connected = connected

    def is_connected(self) -> bool:
        return self.connected

    def close(self) -> None:
        pass


def _levels(caplog, connected: bool, problem: str | None, closed: bool = False) -> list[int]:
    caplog.clear()
    loop = asyncio.new_event_loop()
    try:
        p = Producer(_Transported(connected), "non-persistent://tg/request/x", loop)
        if closed:
            p.close()
        with caplog.at_level(logging.DEBUG, logger="trustgraph.base.messaging.producer"):
            p._log_failure(problem)
    finally:
        loop.close()
    return [r.levelno for r in caplog.records if "send to" in r.getMessage()]


def test_a_failure_while_disconnected_or_closed_is_debug_and_one_while_connected_an_error(caplog):
    assert _levels(caplog, False, "Result.Timeout") == [logging.DEBUG]
    assert _levels(caplog, True, "Result.AlreadyClosed", closed=True) == [logging.DEBUG]
    assert _levels(caplog, True, "Result.Timeout") == [logging.ERROR]
    assert _levels(caplog, True, None) == []


def test_the_line_names_the_topic_and_the_transports_reason(caplog):
    _levels(caplog, True, "Result.Timeout")
    assert [r.getMessage() for r in caplog.records] == [
        "send to non-persistent://tg/request/x failed: Result.Timeout"]
