"""Calls that can no longer be answered end at once, not at their deadlines.

Request and response topics are non-persistent (``non-persistent://tg/request/...``, as upstream's): a
request a process had taken when it died, and any message in flight when the
broker died, are gone.  Before, each such call waited for its deadline (the
gateway's is 120 s), holding its client's in-flight slot and, in the service
that made it, the concurrency slot of the request it served; measured: after
the LLM service was killed and served again 3.5 s later, fresh agent requests
failed for about 100 s.  Two events tell a caller its call is lost:

* **A service started again after it died.**  A processor of ours that a
  supervisor started again in place of one that died (``$TG_RESTARTED=1``;
  tg-launch sets it on every restart) says so on
  :data:`~trustgraph.topics.SERVING` when it starts consuming a request
  topic (:func:`~trustgraph.base.messaging.serving.serve`).  A client waiting on that
  topic fails the calls it sent before with :class:`CallLost`.  A process
  started for the first time says so (``first``), and that ends nothing: it
  may be one more replica on a shared subscription, and the calls the others
  are working on must go on (it tells callers the topic is served, before the
  broker's gauge does: ``unserved``).  A process that starts listening asks
  who serves what (:data:`WHO_SERVES`), and every process of ours answers as a
  first start would, so it knows the processes started before it as well.
  A service started again by a supervisor that does not set the variable,
  or an upstream 2.1.4 one, leaves its callers to their deadlines.
* **The connection to the broker was lost** (``PubSub``'s watcher: any of
  the process's producers and consumers reconnecting, which on a cluster
  includes a topic moving to another broker): every call waiting on a
  non-persistent response topic fails.  The watcher reads every 20 ms, in a
  thread of its own, so it sees a loss as short as pulsar-client's (0.1 s:
  see :mod:`.connection_watch`); each process that saw one says so once it
  is back (a notice for topic ``*`` carrying when it lost the connection,
  sent a few times over some seconds since the others reconnect at their
  own pace), and every process ends the calls
  it sent before then; it also says again that it serves its request topics,
  each since its own consumer was seen back (``reconnected``: its callers
  say the lost connection ended what they end, not a restart), naming the
  requests that reached that consumer since it was last seen down (a request sent before and not
  named was dropped; one named, or sent after, is being served, however late
  the process's other parts come back).

A call is dated when it reached the broker's connection: one sent while its
producer was reconnecting waits in pulsar-client's queue and goes out once
the producer is back, so it is dated by its receipt, and no notice about
what was lost before then ends it.

One :class:`CallWatch` per ``PubSub`` follows both for all its clients.

The notices go on ``PubSub.serving_topic`` (:data:`~trustgraph.topics.SERVING`,
or its 2.11 twin under ``--wire 2.11``), a non-persistent topic: a notice sent
before a process subscribed never reaches it.  So a process subscribes before
it relies on them (:meth:`CallWatch.listen`): a client sends its first call,
and a service says it serves a topic, only once its process hears them.  They
are an extension a process can do without, so the topic is opened with a short
patience: a namespace the cluster does not have is one WARNING per process
(calls then keep their deadlines), and holds a start no longer than that.

The same events tell a service that its own callers gave up: a caller of
ours ends every call it sent before a loss it heard of (its own, or a notice
for ``*``), and this process hears of the same losses.  So work begun for a
request that reached this process before the latest of them is work for a
caller who was told the call failed (:meth:`CallWatch.lost_since`); the
agent checks it before each step of a dialog, so a tool is not called again
for a dialog whose caller was told it failed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
import weakref
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from ...schema import ServingStarted
from ...topics import TopicError, parse, to_pulsar
from .connection_watch import Resubscribed

logger = logging.getLogger(__name__)

#: The notice topic that means "every topic": its sender lost the broker at ``sent``.
ANY_TOPIC = "*"
#: The notice topic that asks "who serves what?": every process of ours says again, as a first
#: start would, which request topics it serves.  A process that starts following the notices
#: asks once, so that it knows the topics served by processes started before it, which the
#: broker's consumer gauge may not count yet (``unserved``: calls to them are not held).
WHO_SERVES = "?"
#: Seconds between two rounds of answers to :data:`WHO_SERVES`: probes that come within it
#: share one round, so a flood of probes costs one round per gap, not a round each.
ANSWER_GAP = 0.5
#: Set to "1" by a supervisor in the environment of a process it starts in place of one that died.
RESTARTED_ENV = "TG_RESTARTED"


def restarted() -> bool:
    """Whether this process replaces one that died (so the requests that one had are lost)."""
    return os.environ.get(RESTARTED_ENV) == "1"


#: Delays (seconds, one after the other) of the repeated broker-back notices.
BROKER_BACK_REPEATS = (0.0, 1.0, 2.0, 4.0)
#: Seconds a process back from an outage waits before it says which requests reached each of
#: its request topics: one sent just before its consumer was seen back may still be in transit.
LATE_ARRIVALS = 0.25
#: Seconds the serving topic's opening retries errors a later attempt may not get.
OPEN_PATIENCE = 5.0
#: The most request ids one notice lists: far more than arrive in the fraction of a second
#: between a resubscription and the notice; past it the oldest are left out (their callers
#: end them, and may run them again).
MAX_RECEIVED = 10_000


class Loss(NamedTuple):
    """A broker connection that was lost: when (wall-clock), and by whom (None: this process)."""

    at: float
    by: str | None


class CallWatch:
    """The clients of one ``PubSub`` whose waiting calls a restart or a lost connection ends."""

    def __init__(self, pubsub: Any) -> None:
        self.pubsub = pubsub
        self.instance = str(uuid.uuid4())
        self._clients: weakref.WeakSet[Any] = weakref.WeakSet()
        self._following: asyncio.Task | None = None
        self._producer: Any = None
        self._producer_failed = False  # said once; notices are then not sent (calls keep deadlines)
        self._producing: asyncio.Lock | None = None
        self._tasks: set[asyncio.Task] = set()
        self._served: dict[str, float] = {}  # request topics this process consumes, since when
        self._answer: asyncio.TimerHandle | None = None   # the next round of WHO_SERVES answers
        self._answered = -ANSWER_GAP                       # when the last round went (monotonic)
        # While an outage lasts (until the notices after it are written): the requests that
        # reach each served topic (Pulsar URL), with when, so the notices can spare them.
        self._outages = 0
        self._arrivals: dict[str, deque[tuple[float, str]]] | None = None
        # The latest broker connection loss heard of: callers end what they sent before it.
        self._last_loss: Loss | None = None
        # Told of each request topic another process says it now serves (unserved.py).
        self._serving_listeners: list[Callable[[str], None]] = []

    def listen(self) -> asyncio.Task:
        """The subscription to the notices, begun by the first part of this process that needs
        it (once per PubSub); wait for it (``asyncio.wait``: one waiter's cancellation must not
        cancel it for the others) before anything that relies on hearing them.

        The notice topic is non-persistent: a notice published before the subscription is in
        place is dropped, not delivered late.  So a client's calls are watched only once it
        listens (:meth:`follow`), a question (:data:`WHO_SERVES`) is asked, and a served topic
        said, only after: a process that asks after that notice went hears the answer, and
        one that asked before it hears the notice itself.  The task ends once the notices can
        be heard, or once the subscription failed within :data:`OPEN_PATIENCE` (one WARNING;
        calls keep their deadlines), so it holds no start for longer than that.
        """
        if self._following is None:
            self._following = asyncio.get_running_loop().create_task(self._subscribe())
        return self._following

    def follow(self, client: Any) -> None:
        """Watch ``client``'s calls (a ``RequestResponseClient``, which awaits :meth:`listen`
        before its first call)."""
        self._clients.add(client)
        self.listen()

    def on_serving(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(topic)`` (a Pulsar URL) whenever a process says it now serves
        ``topic``, first start or restart; subscribes once per PubSub, then asks the processes
        already running which topics they serve (:data:`WHO_SERVES`), so the listener hears of
        those too."""
        self._serving_listeners.append(listener)
        self.listen()
        if len(self._serving_listeners) == 1:
            task = asyncio.get_running_loop().create_task(self._ask_who_serves())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _ask_who_serves(self) -> None:
        await asyncio.wait([self.listen()])   # subscribed first: else the answers are dropped
        await self.serving(WHO_SERVES, time.time(), first=True)

    def forget(self, client: Any) -> None:
        self._clients.discard(client)

    async def _subscribe(self) -> None:
        topic = self.pubsub.serving_topic
        try:
            await self.pubsub.consumer(topic, f"{self.pubsub.processor or 'client'}--serving--{self.instance}",
                                       ServingStarted, direct=self._on_started, name="serving-started",
                                       patience=OPEN_PATIENCE, own=True)
        except Exception as e:  # without it, calls keep their deadlines
            logger.warning("Not following %s (%s): calls to a restarted service end at their deadlines; "
                           "create its namespace (tg-init-trustgraph creates tg/config), or run with "
                           "--wire 2.11 in a 2.11 deployment", topic, e)
            return
        # pulsar-lite may drop what another connection publishes just after subscribe() returns.
        await asyncio.sleep(self.pubsub.subscribe_settle)

    def _on_started(self, msg: Any) -> None:
        notice: ServingStarted = msg.value
        if notice.instance == self.instance:
            return
        if notice.topic == WHO_SERVES:
            if self._served and self._answer is None:
                wait = max(0.0, self._answered + ANSWER_GAP - time.monotonic())
                self._answer = asyncio.get_running_loop().call_later(wait, self._answer_who_serves)
            return
        if notice.topic == ANY_TOPIC:
            self._heard_loss(notice.sent or time.time(), notice.processor or "a process")
            reason = (f"{notice.processor or 'a process'} lost its broker connection: "
                      f"what was in flight then is gone")
            for client in list(self._clients):
                if not parse(client.response_topic).persistent:
                    client.fail_pending(reason, before=notice.sent or None)
            return
        for listener in self._serving_listeners:
            try:
                listener(notice.topic)
            except Exception:   # a listener's bug must not stop the lost calls' ending
                logger.exception("Serving notice listener failed")
        if notice.first:
            return   # one more replica, or a first start: nothing anyone sent was lost
        if notice.reconnected:
            reason = (f"the broker connection was lost: {notice.processor or 'the service'} consumed "
                      f"{notice.topic} again only after the request went")
        else:
            reason = (f"{notice.processor or 'a service'} started again on {notice.topic}: "
                      f"the request was lost with the process that had it")
        spare = frozenset(notice.received or ())
        for client in list(self._clients):
            if _url(client.request_topic) == notice.topic:
                # Only what went before the new consumer was there, and did not reach it.
                client.fail_pending(reason, before=notice.sent or None, spare=spare)

    def _answer_who_serves(self) -> None:
        """One round of answers to :data:`WHO_SERVES`: each served topic, as a first start says it
        (it ends no call)."""
        self._answer = None
        self._answered = time.monotonic()
        for topic, since in sorted(self._served.items()):
            task = asyncio.get_running_loop().create_task(self.serving(topic, since, first=True))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def connection_lost(self, at: float | None = None) -> None:
        """The broker connection went (at wall-clock ``at``, now by default): every call waiting on
        a non-persistent topic is lost.

        From now until the notices after the outage are written, the requests that reach
        this process's request topics are noted (:meth:`arrived`).
        """
        self._heard_loss(time.time() if at is None else at, None)
        self._outages += 1
        if self._arrivals is None:
            self._arrivals = {}
        for client in list(self._clients):
            if not parse(client.response_topic).persistent:
                client.fail_pending("the connection to the broker was lost: the request or its reply is gone")

    def _heard_loss(self, at: float, by: str | None) -> None:
        if self._last_loss is None or at > self._last_loss.at:
            self._last_loss = Loss(at, by)

    def lost_since(self, started: float) -> Loss | None:
        """The latest loss of a broker connection heard of, when it came after ``started``
        (wall-clock); else None.  With one, a call that reached this process at ``started``
        has been (or will be) ended by its caller.

        A caller of ours ends what it sent before any loss it hears of, and a call reaches
        this process after it was sent, so a loss after ``started`` is after the sending.  A
        constant-time check, for a service to make before each further step of the work.
        """
        last = self._last_loss
        return last if last is not None and last.at > started else None

    def arrived(self, topic: str, request_id: str) -> None:
        """A request reached served topic ``topic`` (a Pulsar URL); kept only during an outage."""
        arrivals = self._arrivals
        if arrivals is not None:
            kept = arrivals.get(topic)
            if kept is None:
                kept = arrivals[topic] = deque(maxlen=MAX_RECEIVED)
            kept.append((time.time(), request_id))

    def close(self) -> None:
        """Cancel the notices still to be sent (the PubSub is closing)."""
        for task in list(self._tasks):
            task.cancel()
        if self._answer is not None:
            self._answer.cancel()
            self._answer = None
        if self._following is not None and not self._following.done():
            self._following.cancel()

    def broker_back(self, lost_at: float, resubscribed: Mapping[str, Resubscribed] | None = None) -> None:
        """This process is reconnected after losing the broker at ``lost_at`` (wall-clock): tell the others.

        ``resubscribed``: per consumer topic (a Pulsar URL), when it had a connected consumer
        again (:class:`~.connection_watch.Back`); see :meth:`served_again`.
        """
        task = asyncio.get_running_loop().create_task(self._tell_broker_back(lost_at, dict(resubscribed or {})))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def served_again(self, resubscribed: Mapping[str, Resubscribed]) -> dict[str, tuple[float, list[str]]]:
        """Each request topic this process serves whose consumer was seen down: since when it is
        served again, and the ids of the requests that reached it since it was last seen down.

        A call to it sent before then went to no subscription, and is lost, unless its id is
        listed: it arrived once the consumer had resubscribed (between the last reading that
        saw it down and the first that saw it back), and is being served.  Not the time the
        whole process was back: its parts reconnect each at its own pace (seconds apart after
        a broker restart), and ending the calls that reached the consumer in between told
        their callers "failed" while the work went on.  A topic whose consumer was never seen
        down needs no notice: the notice for ``*`` covers what was sent before the loss.
        """
        out: dict[str, tuple[float, list[str]]] = {}
        arrivals = self._arrivals or {}
        for topic in sorted(self._served):
            url = _url(topic)
            seen = resubscribed.get(url)
            if seen is not None:
                out[topic] = (seen.up, [rid for at, rid in arrivals.get(url, ()) if at >= seen.down])
        return out

    async def _tell_broker_back(self, lost_at: float, resubscribed: dict[str, Resubscribed]) -> None:
        outage = self._outages
        await self.serving(ANY_TOPIC, lost_at)
        again: dict[str, tuple[float, list[str]]] = {}
        if resubscribed:
            await asyncio.sleep(LATE_ARRIVALS)
            again = self.served_again(resubscribed)
        if outage == self._outages:  # no new loss meanwhile, which would need its own notes
            self._arrivals = None
        for topic, (since, received) in again.items():
            await self.serving(topic, since, received=received, reconnected=True)
        # Repeated: a process that reconnects later than us would miss a single notice.
        for delay in BROKER_BACK_REPEATS[1:]:
            await asyncio.sleep(delay)
            await self.serving(ANY_TOPIC, lost_at)
            for topic, (since, received) in again.items():
                await self.serving(topic, since, received=received, reconnected=True)

    async def serving(self, topic: str, since: float, received: list[str] | None = None,
                      first: bool = False, reconnected: bool = False) -> None:
        """Tell every caller that this process consumes request topic ``topic`` since ``since``
        (wall-clock, when the subscription was made), and that the requests ``received`` reached
        it before (it is remembered, to say so again after a broker outage).  ``first``: a first
        start, which ends nobody's calls (it may be one more replica); ``reconnected``: back
        after a lost broker connection, not a restart (what its callers are told)."""
        if topic not in (ANY_TOPIC, WHO_SERVES):
            self._served.setdefault(topic, since)
        if self._producing is None:
            self._producing = asyncio.Lock()
        if self._producer_failed:
            logger.debug("Not saying that %s is served: %s could not be opened", topic,
                         self.pubsub.serving_topic)
            return
        try:
            async with self._producing:
                if self._producer_failed:
                    return
                if self._producer is None:
                    try:
                        self._producer = await self.pubsub.producer(self.pubsub.serving_topic,
                                                                    patience=OPEN_PATIENCE)
                    except Exception as e:
                        self._producer_failed = True
                        logger.warning("Cannot open %s (%s): this process's callers' lost calls end at "
                                       "their deadlines; create its namespace (tg-init-trustgraph creates "
                                       "tg/config), or run with --wire 2.11 in a 2.11 deployment",
                                       self.pubsub.serving_topic, e)
                        return
            if topic not in (ANY_TOPIC, WHO_SERVES):
                # It answers WHO_SERVES, so it listens before it says it serves (:meth:`listen`);
                # subscribed only once the producer opened, or one WARNING would become two.
                listening = self.listen()
                if not listening.done():
                    await asyncio.wait([listening])
            self._producer.send_nowait(ServingStarted(
                topic=topic if topic in (ANY_TOPIC, WHO_SERVES) else _url(topic), processor=self.pubsub.processor,
                instance=self.instance, sent=since, received=list(received or []), first=first,
                reconnected=reconnected))
        except Exception as e:
            logger.warning("Could not say that %s is served (%s): its callers' lost calls end at "
                           "their deadlines", topic, e)


def _url(topic: str) -> str:
    try:
        return to_pulsar(topic)
    except TopicError:
        return topic
