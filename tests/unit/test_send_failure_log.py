"""A send that fails while the broker is away is not an ERROR line per message.

Measured: a user's tool service left running when the stack stopped logged nine
ERROR lines every 30 s (its heartbeats timing out) after the one line that said
the broker was gone, for as long as the stack stayed down.
"""

from __future__ import annotations

import asyncio
import logging

import pulsar
from trustgraph.base.messaging.pubsub import Producer


class _Client:
    def __init__(self, connected: bool) -> None:
        self.connected = connected

    def is_connected(self) -> bool:
        return self.connected


def _levels(caplog, connected: bool, result: pulsar.Result) -> list[int]:
    caplog.clear()
    loop = asyncio.new_event_loop()
    try:
        p = Producer(_Client(connected), "non-persistent://tg/request/x", loop)
        with caplog.at_level(logging.DEBUG, logger="trustgraph.base.messaging.producer"):
            p._log_failure(result, None)
    finally:
        loop.close()
    return [r.levelno for r in caplog.records if "send to" in r.getMessage()]


def test_a_failure_while_disconnected_or_closed_is_debug_and_one_while_connected_an_error(caplog):
    assert _levels(caplog, False, pulsar.Result.Timeout) == [logging.DEBUG]
    assert _levels(caplog, True, pulsar.Result.AlreadyClosed) == [logging.DEBUG]
    assert _levels(caplog, True, pulsar.Result.Timeout) == [logging.ERROR]
    assert _levels(caplog, True, pulsar.Result.Ok) == []
