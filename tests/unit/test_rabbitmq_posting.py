"""The RabbitMQ transport's own loop, without a broker: work posted from other threads.

A send, an ack and a settle are each handed to the transport's loop from another thread;
``post`` runs them in the order posted, and those made while a wake-up of the loop is pending
ride on it (the bench's RabbitMQ rows: bench/notes.md).  The transport connects to nothing until
a producer or consumer is opened, so port 1 is never dialled.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from support import wait_for
from trustgraph.base.messaging.rabbitmq_transport import RabbitMQTransport


@pytest.fixture
def transport() -> Iterator[RabbitMQTransport]:
    t = RabbitMQTransport("127.0.0.1", 1, "u", "p")
    try:
        yield t
    finally:
        t.close()


def test_posts_run_on_the_loop_in_order_and_share_a_wake_up(transport) -> None:
    loop_thread: list[threading.Thread] = []
    ran: list[int] = []
    wake_ups: list[object] = []
    real = transport.loop.call_soon_threadsafe

    def counted(callback, *args):
        wake_ups.append(callback)
        return real(callback, *args)

    transport.loop.call_soon_threadsafe = counted   # this loop object's own attribute
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:   # keeps the loop busy while the others are posted
        loop_thread.append(threading.current_thread())
        holding.set()
        release.wait(30)

    transport.post(hold)
    assert holding.wait(30)
    for i in range(100):
        transport.post(ran.append, i)
    release.set()
    wait_for("the posts run", lambda: len(ran) == 100, 30)
    assert ran == list(range(100))
    assert loop_thread[0] is not threading.current_thread()
    # One wake-up for hold, one for the hundred posted while the loop was busy with it.
    assert len(wake_ups) == 2


def test_a_failing_post_does_not_strand_the_ones_after_it(transport) -> None:
    ran: list[str] = []
    escaped: list[dict] = []   # what would leave the posted work to the loop's handler (and strand the rest)
    transport.loop.set_exception_handler(lambda _loop, context: escaped.append(context))

    def fails() -> None:
        raise RuntimeError("boom")

    holding, release = threading.Event(), threading.Event()
    transport.post(lambda: (holding.set(), release.wait(30)))
    assert holding.wait(30)
    transport.post(ran.append, "before")
    transport.post(fails)
    transport.post(ran.append, "after")
    release.set()
    wait_for("the posts after the failure run", lambda: ran == ["before", "after"], 30)
    assert escaped == []


def test_a_post_to_a_closed_transport_raises(transport) -> None:
    transport.close()
    with pytest.raises(RuntimeError):
        transport.post(print, "never")
