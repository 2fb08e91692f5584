"""What a process's broker connections did, read from its producers' and consumers' states.

pulsar-client reconnects by itself and tells nobody, so :class:`PubSub`
polls ``is_connected()`` of every producer and consumer it has open and
feeds each reading to a :class:`ConnectionWatch`, which says when the
connection was lost (:class:`Lost`) and when it is whole again
(:class:`Back`).  The decisions are kept here, apart from the polling, so
that they are unit-tested on readings without a broker.

Three facts shape it:

* **A loss may last a tenth of a second.**  pulsar-lite killed and started
  again is back within 0.1 s, and pulsar-client reconnects each part 0.1 s
  after its connection dropped (its back-off's first step, never shorter).
  A process that missed such a loss told nobody which of its consumers had
  been away, and a request sent into that gap waited out its deadline
  (``make reliability``, kill -9 of the broker: a reading every 0.25 s
  missed the loss in about half the processes, and lost a request in 2 runs
  of 3).  So the readings come every :data:`WATCH_EVERY` seconds, in a
  thread of their own: on the event loop, a step of work or a loaded
  machine holding the loop for 0.1 s would hide a loss as surely.

* **Only open parts count.**  A part that is being closed reports itself
  disconnected for as long as the close takes (pulsar-client's ``Closing``
  state); counted, every fetch of a config too big for one message (a
  client made and closed per fetch) was a "lost connection" that ended every
  call in flight in the process, with no TCP connection changed.  The
  caller passes only the parts it still uses (``PubSub.remove`` forgets a
  part before closing it).
* **Each consumer comes back at its own time.**  After a broker restart each
  producer and consumer reconnects with a back-off of its own, so the last
  part may come back seconds after the first.  A request topic is served
  again from the moment its consumer resubscribed, not from the moment the
  last part of the process did: :attr:`Back.resubscribed` gives, per
  consumer topic, the last reading that saw no consumer of it connected
  and the first that saw one again; the resubscription happened in
  between, so the readings' interval is also the precision of those times.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

#: Seconds between two readings: well under pulsar-client's shortest time away (0.1 s, the first
#: step of its reconnect back-off), so no loss goes unseen, and the precision of the time each
#: consumer resubscribed.  Measured on pulsar-lite: 40 µs a reading of 30 parts, and an idle
#: process used 0.5-0.7 % of a core instead of 0.07 % with a reading every 0.25 s.
WATCH_EVERY = 0.02


@dataclass(frozen=True)
class Lost:
    """The first reading that saw a part disconnected (wall-clock)."""

    at: float


@dataclass(frozen=True)
class Resubscribed:
    """When a consumer topic had a connected consumer again (wall-clock readings)."""

    down: float    # the last reading that saw none: nothing sent before reached the topic's subscription
    up: float      # the first reading that saw one again


@dataclass(frozen=True)
class Back:
    """Every part is connected again after a :class:`Lost`."""

    lost_at: float                 # wall-clock of the Lost
    down_for: float                # seconds from the Lost to this reading
    #: Per consumer topic seen without a connected consumer during the loss.
    resubscribed: dict[str, Resubscribed] = field(default_factory=dict)


class ConnectionWatch:
    """Readings in, :class:`Lost` and :class:`Back` out (at most one each per loss)."""

    def __init__(self) -> None:
        self._lost_wall: float | None = None
        self._lost_mono = 0.0
        self._down: dict[str, float] = {}
        self._up: dict[str, float] = {}

    @property
    def lost(self) -> bool:
        """Whether a loss is going on."""
        return self._lost_wall is not None

    def observe(self, states: Iterable[tuple[str | None, bool]], wall: float, mono: float) -> Lost | Back | None:
        """One reading: ``(topic, connected)`` per open consumer, ``(None, connected)`` per open producer.

        ``wall`` (``time.time()``) dates what is told to other processes, ``mono``
        (``time.monotonic()``) measures how long the loss lasted.
        """
        consumers: dict[str, bool] = {}
        whole = True
        for topic, connected in states:
            whole = whole and connected
            if topic is not None:
                consumers[topic] = consumers.get(topic, False) or connected
        event: Lost | Back | None = None
        if not whole and self._lost_wall is None:
            self._lost_wall, self._lost_mono, self._down, self._up = wall, mono, {}, {}
            event = Lost(wall)
        if self._lost_wall is None:
            return event
        for topic, served in consumers.items():
            if not served:
                self._down[topic] = wall
                self._up.pop(topic, None)
            elif topic in self._down and topic not in self._up:
                self._up[topic] = wall
        if whole:
            event = Back(self._lost_wall, mono - self._lost_mono,
                         {t: Resubscribed(down, self._up.get(t, wall)) for t, down in self._down.items()})
            self._lost_wall, self._down, self._up = None, {}, {}
        return event
