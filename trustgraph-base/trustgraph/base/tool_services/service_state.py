"""What the service directory remembers of one service id, and which of its replica sets owns the id.

:class:`~trustgraph.base.tool_services.service_directory.ServiceDirectory`
follows the announce topic and times the leases; the records it keeps, and the
ownership rule of docs/trust-model.md they apply, are here, so the rule reads
in one place: replicas announcing the same descriptor and tools form a
:class:`ReplicaSet`; the one live set that may own the id owns it (a
configured service's set only when its queues are the configured ones, never
a set heard while another owned the id), and when several may, none does.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Replica:
    """One process of a service, as last heard from."""

    id: str
    expires: float        # the receiver's monotonic clock
    heard: float          # the receiver's wall clock, when last heard
    sent: float           # the sender's wall clock, as it said
    withdraw_hash: str = ""  # "": it cannot withdraw itself (only its lease ends it)


@dataclass(frozen=True)
class Configured:
    """What a ``tool-service`` config item says about its id: the queues that own it."""

    queues: tuple[str, str] | None   # None: the item has no usable queues (no set can match)
    announces: bool = False          # its announcements may fail calls fast


@dataclass
class ReplicaSet:
    """The live replicas that announce one descriptor and one set of tools under an id."""

    fingerprint: str
    descriptor: str               # JSON text, as announced
    tools: str                    # JSON text, as announced
    queues: tuple[str, str] | None  # its descriptor's (request, response) Pulsar URLs
    created: float                # the receiver's monotonic clock
    conflicted: bool = False      # heard while another set owned the id: never the owner
    replicas: dict[str, Replica] = field(default_factory=dict)

    @property
    def request_queue(self) -> str | None:
        return self.queues[0] if self.queues else None

    def may_own(self, conf: Configured | None) -> bool:
        """Whether this set may own its id: any set when no config names it, else only the configured queues'."""
        return conf is None or (conf.queues is not None and self.queues == conf.queues)


@dataclass
class ServiceState:
    """Everything announced under one service id: its sets, and which one owns the id."""

    service: str
    sets: dict[str, ReplicaSet] = field(default_factory=dict)
    owner: str | None = None       # fingerprint of the owning set
    since: float = 0.0             # monotonic: when the owner took the id (first come, first named)
    last_heard: float = 0.0        # wall clock, the owner's last heartbeat
    went_down: float | None = None  # monotonic, when the owner's last replica left
    queue: str | None = None       # the owner's request queue, kept after it went down
    offered: str = ""              # the owner's tools (JSON text), kept after it went down
    reported: set[str] = field(default_factory=set)  # conflicting sets already warned about

    @property
    def owner_set(self) -> ReplicaSet | None:
        return self.sets.get(self.owner) if self.owner is not None else None

    @property
    def descriptor(self) -> str:
        s = self.owner_set
        return s.descriptor if s is not None else ""

    @property
    def tools(self) -> str:
        s = self.owner_set
        return s.tools if s is not None else ""

    @property
    def replicas(self) -> dict[str, Replica]:
        """The owner's replicas (the ones whose word counts)."""
        s = self.owner_set
        return s.replicas if s is not None else {}

    @property
    def request_queue(self) -> str | None:
        """The owner's request queue (the last owner's, once it went down)."""
        s = self.owner_set
        return s.request_queue if s is not None else self.queue

    @property
    def live(self) -> bool:
        return bool(self.replicas)

    @property
    def conflicts(self) -> list[ReplicaSet]:
        """The live sets that announce this id and are not used."""
        return [s for fp, s in self.sets.items() if fp != self.owner and s.replicas]

    def find(self, replica: str) -> tuple[ReplicaSet, Replica] | None:
        for s in self.sets.values():
            r = s.replicas.get(replica)
            if r is not None:
                return s, r
        return None

    def replica_count(self) -> int:
        return sum(len(s.replicas) for s in self.sets.values())

    def elect(self, conf: Configured | None, clock: Callable[[], float]) -> bool:
        """Make the owner the one live set that may own the id, or none (none live, or several at once).

        ``conf`` is what config says of this id; ``clock`` the directory's
        monotonic clock.  True when the id passed from one owning set to
        another, which the directory reports.
        """
        candidates = [s for s in self.sets.values() if s.replicas and not s.conflicted and s.may_own(conf)]
        new = candidates[0].fingerprint if len(candidates) == 1 else None
        old = self.owner
        if new == old:
            return False
        self.owner = new
        if new is not None:
            self.since = clock()
            self.went_down = None
            self.queue = self.sets[new].request_queue
            self.offered = self.sets[new].tools
            self.last_heard = max(r.heard for r in self.sets[new].replicas.values())
            return old is not None
        if not candidates:
            self.went_down = clock()
        return False

    def why_not(self, rset: ReplicaSet, conf: Configured | None) -> str:
        """Why a live set of this id does not own it (for the conflict's WARNING and the snapshot)."""
        if conf is not None and not rset.may_own(conf):
            configured = conf.queues[0] if conf.queues else "none usable"
            return (f"its request queue {rset.request_queue} is not the configured one ({configured}): "
                    "the configured descriptor owns the id")
        if rset.conflicted:
            return ("it announced another descriptor or other tools under an id that running replicas "
                    "owned: not used, even after they stop (restart it once no other replica runs)")
        return ("several replica sets announced this id with different descriptors at once: none is used "
                "while more than one is live")


def fingerprint(descriptor: str, tools: str) -> str:
    """What tells replica sets apart: the hash of the descriptor and tools they announce."""
    return hashlib.sha256(f"{descriptor}\0{tools}".encode("utf-8", "surrogatepass")).hexdigest()


def same_hash(a: str, b: str) -> bool:
    """Two hashes compared in constant time (as bytes: a stranger's text need not be ASCII)."""
    return hmac.compare_digest(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass"))
