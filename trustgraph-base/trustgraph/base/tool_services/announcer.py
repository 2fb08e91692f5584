"""A running tool service makes itself known: heartbeats, answers to probes, a goodbye.

The other half of ``service_directory.py`` (see there, and
``docs/self-announcing.md``).  Every replica of a service sends, on
:data:`~trustgraph.topics.ANNOUNCE`, its descriptor and its tools with
a lease, again every third of the lease, at once when a reader probes, and a
``down`` message when it stops cleanly.  A replica that dies without a word
is withdrawn by every reader when its lease runs out.

Only the replica can withdraw itself: it draws a secret when it starts, puts
the secret's SHA-256 in every ``up`` and the secret itself in its ``down``.
The replica ids are public (``GET /api/v1/tool-services`` lists them), so a
``down`` naming one proves nothing; knowing the secret does.

Announcing is never what serving waits for: when the topics cannot be opened
(a namespace the cluster does not have, a name the broker refuses) the service
serves on, one WARNING says announcements are off and what to do, and a few
quiet retries follow in the background (``optional_topics``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import secrets
import time
import uuid
from typing import Any

from ...schema import ToolServiceAnnouncement, ToolServiceProbe
from ...topics import ANNOUNCE, PROBE
from ..messaging.pubsub import Consumer, Message, Producer, PubSub, PubSubError
from . import optional_topics
from .optional_topics import Reopening

logger = logging.getLogger(__name__)

DEFAULT_LEASE = 10.0


def withdraw_hash(key: str) -> str:
    """What an ``up`` carries of a replica's withdraw key: its SHA-256, in hex."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class Announcer:
    """Announces one replica of a service until :meth:`stop`."""

    def __init__(self, pubsub: PubSub, *, service: str, descriptor: dict[str, Any],
                 tools: dict[str, dict[str, Any]], lease: float = DEFAULT_LEASE,
                 topic: str = ANNOUNCE, probe_topic: str = PROBE) -> None:
        self.pubsub = pubsub
        self.topic = topic
        self.probe_topic = probe_topic
        self.service = service
        self.replica = str(uuid.uuid4())
        self._withdraw_key = secrets.token_hex(32)
        self.withdraw_hash = withdraw_hash(self._withdraw_key)
        self.lease = lease
        self._descriptor = json.dumps(descriptor)
        self._tools = json.dumps(tools)
        self._out: Producer | None = None
        self._probes: Consumer | None = None
        self._task: asyncio.Task | None = None
        self._last = 0.0
        self._answer: asyncio.Handle | None = None
        self._reopening: Reopening | None = None
        self._opening = topic

    def _record(self, state: str) -> ToolServiceAnnouncement:
        return ToolServiceAnnouncement(service=self.service, replica=self.replica, state=state,
                                       lease=self.lease, descriptor=self._descriptor, tools=self._tools,
                                       sent=time.time(), withdraw_hash=self.withdraw_hash,
                                       withdraw_key=self._withdraw_key if state == "down" else "")

    @property
    def announcing(self) -> bool:
        """Whether the topics are open and heartbeats go out."""
        return self._out is not None

    async def start(self) -> None:
        """Announce now, then every third of the lease; answer probes.

        Never raises for the topics: when they cannot be opened, one WARNING, and
        retries in the background (the service serves on either way).
        """
        def off(e: BaseException) -> None:
            failed = self._opening
            logger.warning("Tool-service announcements of %s are off: cannot open %s (%s); it serves its "
                           "requests, and agents and gateways know it only from config; %s; retrying in "
                           "the background", self.service, failed, optional_topics.reason(e),
                           optional_topics.what_to_do(failed))

        self._reopening = await optional_topics.open_or_retry(
            f"Tool-service announcements of {self.service}", self._open, off)

    async def _open(self) -> None:
        """Open both topics, or neither (raising; ``_opening`` is the one that failed)."""
        patience = optional_topics.OPEN_PATIENCE
        try:
            self._opening = self.topic
            self._out = await self.pubsub.producer(self.topic, patience=patience)
            self._opening = self.probe_topic
            self._probes = await self.pubsub.consumer(
                self.probe_topic, f"{self.service}--probe--{self.replica}", ToolServiceProbe,
                direct=self._on_probe, name="announce-probe", patience=patience, own=True)
        except Exception:
            await self._close_parts()
            raise
        self._beat()
        self._task = asyncio.ensure_future(self._heartbeats())
        logger.info("Announcing tool service %s on %s (replica %s, lease %gs)", self.service, self.topic,
                    self.replica, self.lease)

    async def _close_parts(self) -> None:
        parts = [p for p in (self._probes, self._out) if p is not None]
        self._probes = self._out = None
        if parts:
            await self.pubsub.remove(*parts)

    def _beat(self) -> None:
        self._last = time.monotonic()
        try:
            self._out.send_nowait(self._record("up"))
        except PubSubError as e:
            # The broker is away; the next heartbeat tries again, readers wait out the lease.
            logger.warning("Heartbeat of %s not sent: %s", self.service, e)

    async def _heartbeats(self) -> None:
        interval = self.lease / 3
        while True:
            await asyncio.sleep(max(0.0, self._last + interval - time.monotonic()))
            if time.monotonic() - self._last >= interval * 0.99:
                self._beat()

    def _on_probe(self, _msg: Message) -> None:
        # Probes that arrive together (several readers starting) get one heartbeat.
        if self._answer is None:
            self._answer = asyncio.get_running_loop().call_soon(self._answer_probe)

    def _answer_probe(self) -> None:
        self._answer = None
        if self._out is not None:
            self._beat()

    async def stop(self) -> None:
        """Say goodbye (readers withdraw this replica at once), then close."""
        if self._reopening is not None:
            await self._reopening.stop()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._answer is not None:
            self._answer.cancel()
        out, self._out = self._out, None
        if out is not None:
            try:
                await asyncio.wait_for(out.send(self._record("down")), 2.0)
            except (PubSubError, TimeoutError) as e:
                logger.warning("Goodbye of %s not sent (%s); readers withdraw it when its lease ends",
                               self.service, e)
        await self.pubsub.remove(*[p for p in (self._probes, out) if p is not None])
