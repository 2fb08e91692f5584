"""Which tool services are running: what they announce, and whether any replica is live.

Tool services announce themselves (``announcer.py``): a heartbeat every
third of a lease on :data:`~trustgraph.base.topics.ANNOUNCE`, a ``down``
message on a clean stop.  A :class:`ServiceDirectory` follows that topic for
a reader (the agent, the gateway): a replica is live until its lease runs
out on the reader's own clock (so clocks need not agree), a service is live
while any replica is, and a service that was seen and has no live replica
left is known to be down, so a call to it can fail at once instead of
waiting for its deadline.  A service never seen says nothing (an upstream
2.1.4 service never announces): callers keep today's deadline behaviour.

On start the directory sends a probe (:data:`~trustgraph.base.topics.PROBE`)
and running services answer with a heartbeat at once, so a reader that
starts after them knows them within milliseconds, not a heartbeat later.

``on_change`` runs (coalesced, on the loop) when what the directory would
hand the catalog changes: a service coming up or going down, or announcing
other tools.  Heartbeats that change nothing cost a dict update each.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..schema import ToolServiceAnnouncement, ToolServiceProbe
from . import limits
from .pubsub import Consumer, Message, Producer, PubSub
from .topics import ANNOUNCE, PROBE

logger = logging.getLogger(__name__)

# Leases outside this range are clamped: a replica cannot make itself live
# for an hour, nor flap by announcing a lease shorter than its heartbeat.
MIN_LEASE = 1.0
MAX_LEASE = 300.0
#: How long a service that went down is remembered (for fail-fast), after its last replica.
REMEMBER_DOWN = 24 * 3600.0


@dataclass
class Replica:
    """One process of a service, as last heard from."""

    id: str
    expires: float        # the receiver's monotonic clock
    heard: float          # the receiver's wall clock, when last heard
    sent: float           # the sender's wall clock, as it said


@dataclass
class ServiceState:
    """What a service last announced, and its replicas."""

    service: str
    descriptor: str = ""          # JSON text, as announced
    tools: str = ""               # JSON text, as announced
    replicas: dict[str, Replica] = field(default_factory=dict)
    last_heard: float = 0.0       # wall clock
    went_down: float | None = None  # monotonic, when the last replica left
    request_queue: str | None = None  # from the descriptor, to find a service by its queue

    @property
    def live(self) -> bool:
        return bool(self.replicas)


ChangeHandler = Callable[[], "Awaitable[None] | None"]


def _request_queue(descriptor: str | None) -> str | None:
    try:
        value = limits.loads(descriptor or "")
    except ValueError:
        return None
    queue = value.get("request-queue") if isinstance(value, dict) else None
    return queue if isinstance(queue, str) else None


class ServiceDirectory:
    """Follows the announce topic; answers "is this service running?" and "what does it offer?"."""

    def __init__(self, pubsub: PubSub, *, on_change: ChangeHandler | None = None,
                 name: str = "service-directory", clock: Callable[[], float] = time.monotonic,
                 topic: str = ANNOUNCE, probe_topic: str = PROBE) -> None:
        self.pubsub = pubsub
        self.topic = topic
        self.probe_topic = probe_topic
        self.name = name
        self.on_change = on_change
        self._clock = clock
        self.services: dict[str, ServiceState] = {}
        self._consumer: Consumer | None = None
        self._probe: Producer | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._change_pending = False
        self._tasks: set[asyncio.Task] = set()

    async def start(self) -> None:
        """Follow the announcements, then ask the running services to announce themselves."""
        self._consumer = await self.pubsub.consumer(
            self.topic, f"{self.pubsub.processor or 'reader'}--announce--{uuid.uuid4()}",
            ToolServiceAnnouncement, direct=self._on_message, name=self.name)
        self._probe = await self.pubsub.producer(self.probe_topic)
        await asyncio.sleep(self.pubsub.subscribe_settle)  # let the subscription see the answers
        await self.probe()

    async def probe(self) -> None:
        """Ask every running service for a heartbeat now."""
        if self._probe is not None:
            await self._probe.send(ToolServiceProbe(requester=self.pubsub.processor or self.name))

    async def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        parts = [p for p in (self._consumer, self._probe) if p is not None]
        self._consumer = self._probe = None
        await self.pubsub.remove(*parts)
        for task in list(self._tasks):
            task.cancel()

    # -- what callers ask -------------------------------------------------------------
    def live(self, service: str) -> bool | None:
        """True: a replica is live; False: it was running and none is left; None: never seen."""
        state = self.services.get(service)
        return None if state is None else state.live

    def live_for(self, service_id: str, request_queue: str | None = None) -> bool | None:
        """:meth:`live` of a service by id, or else by the request queue it announces."""
        found = self.live(service_id)
        if found is not None or request_queue is None:
            return found
        for state in self.services.values():
            if state.request_queue == request_queue:
                return state.live
        return None

    def stopped_service_of(self, tool: str) -> str | None:
        """The id of a service known to be down whose last announcement offered ``tool``, or None.

        The catalog holds only live services' tools, so without this a call
        of a tool whose service stopped reads as a call of a tool that never
        existed ("no tool of that name") instead of "its service stopped".
        """
        for sid, state in self.services.items():
            if state.live or not state.tools:
                continue
            try:
                offered = limits.loads(state.tools)
            except ValueError:
                continue
            names = offered.keys() if isinstance(offered, dict) else (
                t.get("name") for t in offered if isinstance(t, dict)) if isinstance(offered, list) else ()
            if tool in names:
                return sid
        return None

    def announced(self) -> dict[str, ServiceState]:
        """The services with a live replica (what the catalog adds to the configured ones)."""
        return {sid: s for sid, s in self.services.items() if s.live}

    def snapshot(self) -> list[dict[str, Any]]:
        """Every known service, for people (``GET /api/v1/tool-services``)."""
        now = time.time()
        out = []
        for sid in sorted(self.services):
            s = self.services[sid]
            out.append({"id": sid, "live": s.live, "replicas": sorted(s.replicas),
                        "last-heartbeat-seconds-ago": round(now - s.last_heard, 1) if s.last_heard else None})
        return out

    # -- the topic ----------------------------------------------------------------------
    def _on_message(self, msg: Message) -> None:
        a: ToolServiceAnnouncement = msg.value
        if not a.service or not a.replica:
            logger.debug("Announcement without service or replica id ignored")
            return
        state = self.services.get(a.service)
        if state is None:
            state = self.services[a.service] = ServiceState(a.service)
        before = (state.live, state.descriptor, state.tools)
        now = self._clock()
        if a.state == "down":
            state.replicas.pop(a.replica, None)
            logger.info("Tool service %s: replica %s stopped (%d left)", a.service, a.replica,
                        len(state.replicas))
        else:
            lease = min(max(float(a.lease or 0.0), MIN_LEASE), MAX_LEASE)
            if a.replica not in state.replicas:
                logger.info("Tool service %s: replica %s is up (lease %gs)", a.service, a.replica, lease)
            state.replicas[a.replica] = Replica(a.replica, now + lease, time.time(), float(a.sent or 0.0))
            if (a.descriptor or "") != state.descriptor:
                state.request_queue = _request_queue(a.descriptor)
            state.descriptor, state.tools = a.descriptor or "", a.tools or ""
            state.last_heard = time.time()
        if not state.live and before[0]:
            state.went_down = now
        elif state.live:
            state.went_down = None
        self._schedule_expiry()
        if (state.live, state.descriptor, state.tools) != before:
            self._changed()

    def _schedule_expiry(self) -> None:
        expiries = [r.expires for s in self.services.values() for r in s.replicas.values()]
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if expiries:
            loop = asyncio.get_running_loop()
            # The monotonic clock is the loop's clock unless a test gave another one.
            delay = max(0.0, min(expiries) - self._clock())
            self._timer = loop.call_later(delay, self.sweep)

    def sweep(self) -> None:
        """Withdraw the replicas whose lease has run out (the expiry timer calls it; tests may too)."""
        self._timer = None
        now = self._clock()
        changed = False
        for state in list(self.services.values()):
            gone = [rid for rid, r in state.replicas.items() if r.expires <= now]
            for rid in gone:
                del state.replicas[rid]
                logger.warning("Tool service %s: replica %s missed its lease; withdrawn", state.service, rid)
            if gone and not state.live:
                state.went_down = now
                changed = True
            if state.went_down is not None and now - state.went_down > REMEMBER_DOWN:
                del self.services[state.service]
        self._schedule_expiry()
        if changed:
            self._changed()

    def _changed(self) -> None:
        """Run ``on_change`` once for a burst of changes (one rebuild, not one per message)."""
        if self.on_change is None or self._change_pending:
            return
        self._change_pending = True
        asyncio.get_running_loop().call_soon(self._run_change)

    def _run_change(self) -> None:
        self._change_pending = False
        try:
            result = self.on_change()
        except Exception:
            logger.exception("Service directory change handler failed")
            return
        if asyncio.iscoroutine(result):
            task = asyncio.ensure_future(result)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
