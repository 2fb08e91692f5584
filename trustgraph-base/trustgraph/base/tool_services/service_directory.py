"""Which tool services are running: what they announce, whether any replica is live, and whose word counts.

Tool services announce themselves (``announcer.py``): a heartbeat every
third of a lease on :data:`~trustgraph.topics.ANNOUNCE`, a ``down``
message on a clean stop.  A :class:`ServiceDirectory` follows that topic for
a reader (the agent, the gateway, mcp-server): a replica is live until its
lease runs out on the reader's own clock (so clocks need not agree), a
service is live while any replica of its owner is, and a service that was
seen and has no live replica left is known to be down, so a call to it can
fail at once instead of waiting for its deadline.  A service never seen says
nothing (an upstream 2.1.4 service never announces): callers keep today's
deadline behaviour.

Anything on the broker can publish on the announce topic, so the directory
believes only what an announcer cannot take from another (docs/trust-model.md):

* **An id has one owner.**  Replicas that announce the same descriptor and
  tools form a *set*.  The owner of an id is the configured descriptor when a
  person put one in config (a set counts only when its queues are the
  configured ones), and otherwise the first set that was live.  A set that
  appears while another owns the id is a *conflict*: reported (one WARNING,
  and in :meth:`snapshot`) and never used, not even after the owner leaves
  (a stranger waiting beside a service must not inherit it at its next
  restart).  Two sets heard at once when the reader starts (before it could
  know which came first) are *ambiguous*: neither is used while both live.
* **Only a replica withdraws itself.**  Each ``up`` carries the SHA-256 of a
  secret of the replica's, and its ``down`` must show the secret.  An ``up``
  under a known replica id with another hash, or another descriptor, is
  ignored.
* **Fail-fast only on the word of the owner.**  A configured service is never
  failed fast on announcements unless its descriptor says it announces
  (``"announces": true``): otherwise anyone could announce it "up" and then
  "down" and have every call to it refused while it runs.
* **Bounded** (the limits are in :mod:`.directory_limits`).  An announcement
  over :data:`MAX_ANNOUNCEMENT` characters, with more than :data:`MAX_TOOLS`
  tools or a description over :data:`MAX_DESCRIPTION` characters, is refused;
  at most :data:`MAX_SERVICES` services are remembered (those with no live
  replica are forgotten first, and all of them after :data:`REMEMBER_DOWN`),
  at most :data:`MAX_SETS` sets and :data:`MAX_REPLICAS` replicas per service.
  Refusals are one WARNING line per kind per 10 s, with their count.

On start the directory sends a probe (:data:`~trustgraph.topics.PROBE`)
and running services answer with a heartbeat at once, so a reader that
starts after them knows them within milliseconds, not a heartbeat later.

``on_change`` runs (coalesced, on the loop) when what the directory would
hand the catalog changes: a service coming up or going down, or another set
owning it.  Heartbeats that change nothing cost a dict update each.

What is remembered of each service, and the ownership rule, are in
:mod:`.service_state`; this module follows the topic and times the leases.

A reader needs none of it to use the configured descriptors: when the topics
cannot be opened (a namespace the cluster does not have), :meth:`start`
returns after one WARNING saying announcements are off and what to do, the
directory stays empty, and a few quiet retries follow in the background
(``optional_topics``).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ...schema import ToolServiceAnnouncement, ToolServiceProbe
from ...topics import ANNOUNCE, PROBE
from ..descriptors.models import queues_of
from ..messaging.pubsub import Consumer, Message, Producer, PubSub
from ..safety import limits
from . import optional_topics
from .announcer import withdraw_hash
from .directory_limits import (
    MAX_ANNOUNCEMENT,
    MAX_DESCRIPTION,
    MAX_LEASE,
    MAX_REPLICAS,
    MAX_SERVICES,
    MAX_SETS,
    MAX_TOOLS,
    MIN_LEASE,
    REMEMBER_DOWN,
    ThrottledWarnings,
    clamp_lease,
    content_problem,
    finite,
)
from .optional_topics import Reopening
from .service_state import Configured, Replica, ReplicaSet, ServiceState, fingerprint, same_hash

logger = logging.getLogger(__name__)

# The records and the limits were defined here; their names are still imported from here.
__all__ = ["ChangeHandler", "Configured", "MAX_ANNOUNCEMENT", "MAX_DESCRIPTION", "MAX_LEASE", "MAX_REPLICAS",
           "MAX_SERVICES", "MAX_SETS", "MAX_TOOLS", "MIN_LEASE", "REMEMBER_DOWN", "Replica", "ReplicaSet",
           "START_WINDOW", "ServiceDirectory", "ServiceState", "content_problem"]

#: Seconds after the start probe in which sets that disagree are ambiguous, not first-come.
START_WINDOW = 2.0

ChangeHandler = Callable[[], "Awaitable[None] | None"]


class ServiceDirectory:
    """Follows the announce topic; answers "is this service running?" and "what does it offer?"."""

    def __init__(self, pubsub: PubSub, *, on_change: ChangeHandler | None = None,
                 name: str = "service-directory", clock: Callable[[], float] = time.monotonic,
                 topic: str = ANNOUNCE, probe_topic: str = PROBE, max_services: int = MAX_SERVICES) -> None:
        self.pubsub = pubsub
        self.topic = topic
        self.probe_topic = probe_topic
        self.name = name
        self.on_change = on_change
        self.max_services = max_services
        self._clock = clock
        self.services: dict[str, ServiceState] = {}
        self.configured: dict[str, Configured] = {}
        self._warnings = ThrottledWarnings(clock, logger)
        self._consumer: Consumer | None = None
        self._probe: Producer | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._window_ends = -math.inf
        self._change_pending = False
        self._tasks: set[asyncio.Task] = set()
        self._reopening: Reopening | None = None
        self._opening = topic

    @property
    def following(self) -> bool:
        """Whether the announce topic is open (False: announcements are off, config only)."""
        return self._consumer is not None

    async def start(self) -> None:
        """Follow the announcements, then ask the running services to announce themselves.

        Never raises for the topics: see the module's docstring.
        """
        def off(e: BaseException) -> None:
            logger.warning("Tool-service announcements are off for %s: cannot open %s (%s); it uses the "
                           "tool services in config only, and a call to a stopped one waits for its "
                           "deadline; %s; retrying in the background", self.name, self._opening,
                           optional_topics.reason(e), optional_topics.what_to_do(self._opening))

        self._reopening = await optional_topics.open_or_retry(
            f"Tool-service announcements for {self.name}", self._open, off)

    async def _open(self) -> None:
        """Subscribe, open the probe producer and probe; on failure nothing stays open."""
        patience = optional_topics.OPEN_PATIENCE
        try:
            self._opening = self.topic
            self._consumer = await self.pubsub.consumer(
                self.topic, f"{self.pubsub.processor or 'reader'}--announce--{uuid.uuid4()}",
                ToolServiceAnnouncement, direct=self._on_message, name=self.name, patience=patience, own=True)
            self._opening = self.probe_topic
            self._probe = await self.pubsub.producer(self.probe_topic, patience=patience)
        except Exception:
            parts = [p for p in (self._consumer, self._probe) if p is not None]
            self._consumer = self._probe = None
            if parts:
                await self.pubsub.remove(*parts)
            raise
        await asyncio.sleep(self.pubsub.subscribe_settle)  # let the subscription see the answers
        self._window_ends = self._clock() + START_WINDOW
        await self.probe()

    async def probe(self) -> None:
        """Ask every running service for a heartbeat now."""
        if self._probe is not None:
            await self._probe.send(ToolServiceProbe(requester=self.pubsub.processor or self.name))

    async def stop(self) -> None:
        if self._reopening is not None:
            await self._reopening.stop()
        if self._timer is not None:
            self._timer.cancel()
        parts = [p for p in (self._consumer, self._probe) if p is not None]
        self._consumer = self._probe = None
        await self.pubsub.remove(*parts)
        for task in list(self._tasks):
            task.cancel()

    def configure(self, services: Mapping[str, Configured]) -> None:
        """The services a person put in config (by config key and by descriptor id): they own their ids."""
        services = dict(services)
        if services == self.configured:
            return
        self.configured = services
        changed = False
        for state in self.services.values():
            before = self._view(state)
            self._elect(state)
            changed = changed or self._view(state) != before
        if changed:
            self._changed()

    # -- what callers ask -------------------------------------------------------------
    def live(self, service: str) -> bool | None:
        """True: a replica of the owner is live; False: it was running and none is left; None: not known.

        A configured service whose descriptor does not say ``"announces": true``
        is never False: nothing announced about it may refuse its calls.
        """
        state = self.services.get(service)
        if state is None:
            return None
        if state.live:
            return True
        conf = self.configured.get(service)
        if state.went_down is None or (conf is not None and not conf.announces):
            return None
        return False

    def live_for(self, service_id: str, request_queue: str | None = None) -> bool | None:
        """:meth:`live` of a service by id, or else by the request queue it announces."""
        found = self.live(service_id)
        if found is not None or request_queue is None:
            return found
        conf = self.configured.get(service_id)
        may_refuse = conf is None or conf.announces
        for sid, state in self.services.items():
            if state.request_queue == request_queue:
                if state.live:
                    return True
                if may_refuse and self.live(sid) is False:
                    return False
        return None

    def stopped_service_of(self, tool: str) -> str | None:
        """The id of a service known to be down whose last announcement offered ``tool``, or None.

        The catalog holds only live services' tools, so without this a call
        of a tool whose service stopped reads as a call of a tool that never
        existed ("no tool of that name") instead of "its service stopped".
        """
        return next((sid for sid, offer in self.stopped_tools() if offer.get("name") == tool), None)

    def stopped_tools(self) -> list[tuple[str, dict[str, Any]]]:
        """``(service id, tool)`` for each tool the last announcement of a service known to be down
        offered (``tool``: its descriptor as announced, ``name`` set): what the agent can tell a
        question about was meant for, though it cannot be called now."""
        out: list[tuple[str, dict[str, Any]]] = []
        for sid, state in self.services.items():
            if state.live or not state.offered:
                continue
            try:
                offered = limits.loads(state.offered)
            except ValueError:
                continue
            if isinstance(offered, dict):
                tools = [{**t, "name": name} if isinstance(t, dict) else {"name": name} for name, t in offered.items()]
            elif isinstance(offered, list):
                tools = [t for t in offered if isinstance(t, dict)]
            else:
                tools = []
            out += [(sid, t) for t in tools if isinstance(t.get("name"), str)]
        return out

    def announced(self) -> dict[str, ServiceState]:
        """What the catalog adds to the configured services: those with a live owner, and the
        configured ones that other replicas announce (no owner; their ``conflicts``, to report)."""
        return {sid: s for sid, s in self.services.items()
                if s.live or (sid in self.configured and s.conflicts)}

    def snapshot(self) -> list[dict[str, Any]]:
        """Every known service, for people (``GET /api/v1/tool-services``), its conflicts included."""
        now = time.time()
        out = []
        for sid in sorted(self.services):
            s = self.services[sid]
            out.append({"id": sid, "live": self.live(sid), "replicas": sorted(s.replicas),
                        "last-heartbeat-seconds-ago": round(now - s.last_heard, 1) if s.last_heard else None,
                        "conflicts": [{"replicas": sorted(c.replicas), "request-queue": c.request_queue,
                                       "reason": s.why_not(c, self.configured.get(sid))} for c in s.conflicts]})
        return out

    # -- the topic ----------------------------------------------------------------------
    def _on_message(self, msg: Message) -> None:
        a: ToolServiceAnnouncement = msg.value
        if not a.service or not a.replica:
            logger.debug("Announcement without service or replica id ignored")
            return
        if a.state == "down":
            self._withdraw(a)
        else:
            self._heartbeat(a)

    def _refuse(self, kind: str, a: ToolServiceAnnouncement, why: str) -> None:
        self._warnings.say(kind, "Announcement of tool service %s by replica %s refused: %s",
                           a.service, a.replica, why)

    def _heartbeat(self, a: ToolServiceAnnouncement) -> None:
        descriptor, tools = a.descriptor or "", a.tools or ""
        size = len(descriptor) + len(tools)
        if size > MAX_ANNOUNCEMENT:
            self._refuse("size", a, f"its descriptor and tools are {size:,} characters, over the limit of "
                         f"{MAX_ANNOUNCEMENT:,}")
            return
        lease = clamp_lease(a.lease)
        now = self._clock()
        fp = fingerprint(descriptor, tools)
        state = self.services.get(a.service)
        found = state.find(a.replica) if state is not None else None
        if found is not None:
            rset, replica = found
            if not same_hash(replica.withdraw_hash, a.withdraw_hash or ""):
                self._refuse("impostor", a, "it names a running replica with another withdraw hash, so it is not "
                             "from that replica")
                return
            if rset.fingerprint != fp:
                self._refuse("changed", a, "that replica announced another descriptor or other tools before, "
                             "and a replica's descriptor does not change while it runs")
                return
            replica.expires, replica.heard, replica.sent = now + lease, time.time(), finite(a.sent)
            if rset.fingerprint == state.owner:
                state.last_heard = replica.heard
            return
        if state is None or fp not in state.sets:
            problem = content_problem(tools)
            if problem is not None:
                self._refuse("content", a, problem)
                return
        if state is None:
            if len(self.services) >= self.max_services and not self._forget_one():
                self._refuse("full", a, f"{len(self.services)} services with live replicas are known, the "
                             f"limit; it is taken once one of them stops")
                return
            state = self.services[a.service] = ServiceState(a.service)
        if state.replica_count() >= MAX_REPLICAS:
            self._refuse("replicas", a, f"the service has {MAX_REPLICAS} live replicas, the limit")
            return
        rset = state.sets.get(fp)
        if rset is None:
            if len(state.sets) >= MAX_SETS:
                self._refuse("sets", a, f"{MAX_SETS} different descriptors are announced under this id, the limit")
                return
            owner = state.owner_set
            rset = state.sets[fp] = ReplicaSet(
                fp, descriptor, tools, queues_of(descriptor), now,
                conflicted=owner is not None and bool(owner.replicas) and now >= self._window_ends)
        before = self._view(state)
        rset.replicas[a.replica] = Replica(a.replica, now + lease, time.time(), finite(a.sent),
                                           a.withdraw_hash or "")
        logger.info("Tool service %s: replica %s is up (lease %gs)", a.service, a.replica, lease)
        self._elect(state)
        if fp == state.owner:
            state.last_heard = time.time()
        self._report_conflicts(state)
        self._schedule_expiry(now + lease)
        if self._view(state) != before:
            self._changed()

    def _withdraw(self, a: ToolServiceAnnouncement) -> None:
        state = self.services.get(a.service)
        found = state.find(a.replica) if state is not None else None
        if found is None:
            logger.debug("Tool service %s: 'down' of unknown replica %s ignored", a.service, a.replica)
            return
        rset, replica = found
        if not replica.withdraw_hash or not same_hash(withdraw_hash(a.withdraw_key or ""), replica.withdraw_hash):
            self._refuse("withdraw", a, "a 'down' without that replica's withdraw key is not from that replica "
                         "(it is withdrawn when its lease ends)")
            return
        before = self._view(state)
        self._remove(state, rset, a.replica)
        logger.info("Tool service %s: replica %s stopped (%d left)", a.service, a.replica, len(state.replicas))
        self._elect(state)
        if self._view(state) != before:
            self._changed()

    def _remove(self, state: ServiceState, rset: ReplicaSet, replica: str) -> None:
        del rset.replicas[replica]
        if not rset.replicas:
            del state.sets[rset.fingerprint]
            state.reported.discard(rset.fingerprint)

    # -- who owns an id ----------------------------------------------------------------
    def _elect(self, state: ServiceState) -> None:
        """Elect the owner of the id (:meth:`ServiceState.elect`), and say when it moved to another set."""
        if state.elect(self.configured.get(state.service), self._clock):
            logger.info("Tool service %s: now owned by replicas %s", state.service, ", ".join(sorted(state.replicas)))

    def _report_conflicts(self, state: ServiceState) -> None:
        for rset in state.conflicts:
            if rset.fingerprint in state.reported:
                continue
            state.reported.add(rset.fingerprint)
            logger.warning("Tool service %s: conflict: replica(s) %s (request queue %s) not used: %s",
                           state.service, ", ".join(sorted(rset.replicas)), rset.request_queue,
                           state.why_not(rset, self.configured.get(state.service)))

    def _view(self, state: ServiceState) -> tuple[bool, str | None, frozenset[str]]:
        """What the catalog sees of a service: whether it is live, which set owns it, its conflicts."""
        return state.live, state.owner, frozenset(c.fingerprint for c in state.conflicts)

    def _forget_one(self) -> bool:
        """Make room: forget the service without live replicas that went down first."""
        gone = [s for s in self.services.values() if not s.sets]
        if not gone:
            return False
        oldest = min(gone, key=lambda s: s.went_down if s.went_down is not None else -math.inf)
        del self.services[oldest.service]
        return True

    # -- leases ------------------------------------------------------------------------
    def _schedule_expiry(self, at: float | None = None) -> None:
        """Run :meth:`sweep` at the earliest lease end (``at``: one more lease end, ``None``: recompute)."""
        if at is not None and self._timer is not None and self._timer_at is not None and self._timer_at <= at:
            return  # an earlier sweep is due anyway, and it reschedules
        if at is None:
            expiries = [r.expires for s in self.services.values() for rs in s.sets.values()
                        for r in rs.replicas.values()]
            at = min(expiries) if expiries else None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = self._timer_at = None
        if at is not None:
            loop = asyncio.get_running_loop()
            # The monotonic clock is the loop's clock unless a test gave another one.
            self._timer = loop.call_later(max(0.0, at - self._clock()), self.sweep)
            self._timer_at = at

    def sweep(self) -> None:
        """Withdraw the replicas whose lease has run out (the expiry timer calls it; tests may too)."""
        self._timer = self._timer_at = None
        now = self._clock()
        changed = False
        for state in list(self.services.values()):
            before = self._view(state)
            for rset in list(state.sets.values()):
                for rid in [rid for rid, r in rset.replicas.items() if r.expires <= now]:
                    self._remove(state, rset, rid)
                    self._warnings.say("lease", "Tool service %s: replica %s missed its lease; withdrawn",
                                       state.service, rid)
            self._elect(state)
            changed = changed or self._view(state) != before
            if not state.sets and (state.went_down is None or now - state.went_down > REMEMBER_DOWN):
                del self.services[state.service]  # never owned, or remembered long enough
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

