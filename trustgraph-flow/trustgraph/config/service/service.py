"""config-svc: stores configuration, manages flows, pushes the full config on every change.

Requests arrive on the config and flow request topics (upstream 2.1.4's operations).
Every mutating request is written to the embedded SQLite store in one
transaction *before* the reply, so a put the client saw acknowledged survives
a crash of this process.  After each change, and once at start, the whole
config goes out on the push topic for every processor that follows it.

Every push, notice and reply carries the store's identity and (replies and
pushes) the digest of the whole config at that version
(:mod:`trustgraph.base.processors.config_source`): processors check a push with a
``get`` before applying it, so a push that config-svc did not send is not
applied, and a store whose history restarted is followed.

A config of any size stays readable (:mod:`trustgraph.base.processors.config_parts`): a
reply too big for one message goes in parts to a caller that asked for them
(an upstream caller gets an error naming the size), and a config too big to
push is announced on the notice topic instead, for our processors to fetch.

Where a wire adds to that (its own records on the config topic, its own
queues, a notice of each change), the processor's :class:`.protocol.ConfigProtocol`,
chosen once from its wire, does it; ours adds nothing.

Replies go through the shared reply path (:mod:`trustgraph.base.messaging.serving`):
a request without an ``id`` property is dropped before it is applied, since
nobody could see its outcome (a put nobody hears about must not change the
config either), and an undecodable one with an id gets a config-error or
flow-error reply.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trustgraph.base.messaging.pubsub import Message, Producer
from trustgraph.base.messaging.serving import Replies, Reply, ServiceError
from trustgraph.base.processors import config_parts
from trustgraph.base.processors.async_processor import AsyncProcessor, StartRefused, env_default
from trustgraph.base.processors.config_source import DIGEST, STORE, config_digest
from trustgraph.base.wire import WIRES
from trustgraph.schema import (
    ConfigPush,
    ConfigResponse,
    FlowRequest,
    FlowResponse,
)
from trustgraph.schema.codec import encode, from_dict, to_dict
from trustgraph.topics import (
    CONFIG_REQUEST,
    CONFIG_RESPONSE,
    FLOW_REQUEST,
    FLOW_RESPONSE,
    config_notice_topic,
)

from .config_ops import ConfigOperations
from .flow_ops import FlowOperations
from .protocol import ROLE, ConfigProtocol
from .store import ConfigStore

logger = logging.getLogger(__name__)

#: Upstream config-svc's flags naming its Cassandra store.
CASSANDRA_FLAGS = ("--cassandra-host", "--cassandra-username", "--cassandra-password")

default_ident = "config-svc"

# Replies wait for the broker's receipt: a client that saw its put answered
# may send the next request at once.  Undecodable requests get the decoder's
# reason as the message, without a prefix, as before the shared reply path.
CONFIG_REPLIES = Replies(error_record=lambda error: ConfigResponse(error=error),
                         error_type="config-error", malformed_prefix="", confirm=True)
FLOW_REPLIES = Replies(error_record=lambda error: FlowResponse(error=error),
                       error_type="flow-error", malformed_prefix="", confirm=True)

#: ``--max-workspaces``' default: the most workspaces config-svc serves, each on queues of its own,
#: on a wire that has them.  A deployment on one machine has a few, a multi-tenant one tens to
#: hundreds; a thousand costs about 200 MB (config-svc and broker together) and about 15 s of
#: config-svc's start on a loaded 2-core machine, well inside tg-launch's 90 s wait for it.
DEFAULT_MAX_WORKSPACES = 1000


def default_store_path() -> str:
    """``$TRUSTGRAPH_DATA/config.db``, else the XDG data dir (``~/.local/share/trustgraph``)."""
    base = os.environ.get("TRUSTGRAPH_DATA")
    if not base:
        xdg = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
        base = os.path.join(xdg, "trustgraph")
    return os.path.join(base, "config.db")


class Processor(AsyncProcessor):
    """The config service: one store, two request topics, one push topic (and its wire's protocol)."""

    #: Every wire: what one changes is its protocol's (:mod:`.protocol`).
    wires = WIRES

    def __init__(self, **params: Any) -> None:
        params.setdefault("id", default_ident)
        given = [flag for flag in CASSANDRA_FLAGS if params.get(flag[2:].replace("-", "_"))]
        if given:
            # Upstream's config-svc keeps the config in Cassandra; starting empty here instead
            # would leave every running processor ignoring the new, lower versions.
            raise StartRefused(
                f"{given[0]} is upstream's Cassandra store, which this config-svc does not read (it keeps "
                "the config in SQLite, --store); to move a deployment's config, dump it from the old "
                "stack (tg-show-config > config.txt) and load it into this one (tg-import-config "
                "config.txt), then start config-svc without the --cassandra-* flags")
        super().__init__(**params)
        self.store = ConfigStore(params.get("store") or default_store_path())
        self.config_ops = ConfigOperations(self.store)
        self.flow_ops = FlowOperations(self.store)
        self.config_request_topic = params.get("config_request_queue") or CONFIG_REQUEST
        self.config_response_topic = params.get("config_response_queue") or CONFIG_RESPONSE
        self.flow_request_topic = params.get("flow_request_queue") or FLOW_REQUEST
        self.flow_response_topic = params.get("flow_response_queue") or FLOW_RESPONSE
        # One change at a time, so pushes leave in version order.
        self._write_lock = asyncio.Lock()
        self._push: Producer | None = None
        self._notify: Producer | None = None
        self._too_big: int | None = None  # the last version too big to push, once logged
        self.store_id = self.store.identity()
        # What every reply says config-svc holds: the store and the digest of its current config.
        self._stamp: dict[str, str] = {STORE: self.store_id}
        #: What the wire adds to the shared topics (:mod:`.protocol`), chosen once.
        self.protocol: ConfigProtocol = self.wire.component(ROLE, ConfigProtocol)(self, params)

    async def start(self) -> None:
        await super().start()
        self._push = await self.pubsub.producer(self.config_push_queue)
        self._notify = await self.pubsub.producer(config_notice_topic(self.config_push_queue))
        await self.protocol.open()
        # The stamp is known before the first request is served (a processor checks the start push).
        snapshot = await asyncio.to_thread(self._snapshot)
        self._stamp = snapshot[2]
        await self.serve(self.config_request_topic, self.protocol.request_schema, self.on_config_request,
                         replies=CONFIG_REPLIES, subscription=self.id,
                         response_topic=self.config_response_topic, concurrency=16,
                         name="config-request")
        await self.serve(self.flow_request_topic, FlowRequest, self.on_flow_request,
                         replies=FLOW_REPLIES, subscription=self.id,
                         response_topic=self.flow_response_topic, concurrency=16,
                         name="flow-request")
        await self.push(snapshot)
        logger.info("Config store %s (%s) at version %d", self.store.path, self.store_id, self.store.version())
        await self.protocol.serve()

    async def stop(self) -> None:
        await super().stop()
        self.store.close()

    def _snapshot(self) -> tuple[int, bytes, dict[str, str]]:
        """The current version, its push encoded, and its stamp (a worker thread's job: megabytes)."""
        version, config = self.store.snapshot()
        return version, encode(ConfigPush(version=version, config=config)), {
            STORE: self.store_id, DIGEST: config_digest(config)}

    async def push(self, snapshot: tuple[int, bytes, dict[str, str]] | None = None) -> None:
        """Send the whole config at the current version, or, when it is too big, a notice of it;
        then the wire's protocol tells its followers what changed."""
        version, data, stamp = snapshot or await asyncio.to_thread(self._snapshot)
        changes = self.store.take_changes()
        self._stamp = stamp
        await self._push_whole(version, data, stamp)
        await self.protocol.changed(version, changes)

    async def _push_whole(self, version: int, data: bytes, stamp: dict[str, str]) -> None:
        if config_parts.fits(data):
            await self._push.send(data, stamp)
            logger.debug("Pushed config version %d", version)
            return
        if self._too_big is None:
            logger.warning(config_parts.push_size_line(version, len(data)))
        self._too_big = version
        await self._notify.send(ConfigPush(version=version, config={}), {STORE: self.store_id})
        logger.debug("Config version %d (%d bytes) announced for fetching", version, len(data))

    async def run_request(self, handle: Callable[[dict[str, Any]], tuple[dict[str, Any], bool]],
                          request: Any) -> tuple[dict[str, Any], dict[str, str]]:
        """Run one request with ``handle`` (an operations table's), one change at a time, pushing
        what it changed: its response, and the stamp of the version it saw."""
        body = to_dict(request)
        async with self._write_lock:
            response, changed = await asyncio.to_thread(handle, body)
            if changed:
                await self.push()
            return response, dict(self._stamp)

    async def on_config_request(self, msg: Message, reply: Reply) -> None:
        if await self.protocol.answer(msg, reply):
            return
        body, stamp = await self.run_request(self.config_ops.handle, msg.value)
        response = from_dict(ConfigResponse, body)
        try:
            parts = config_parts.split(response)
        except config_parts.PartsError as e:
            raise ServiceError(str(e)) from None
        if len(parts) == 1:
            await reply.send(parts[0][1], stamp)
            return
        if config_parts.PARTS not in msg.properties:
            raise ServiceError(config_parts.too_large(sum(len(data) for _, data in parts)))
        page = msg.properties.get(config_parts.PART)
        if page is not None:  # one part, the one asked for (config_parts.request asks page by page)
            try:
                i = int(page)
            except ValueError:
                i = 0
            if not 1 <= i <= len(parts):
                raise ServiceError(f"no part {page!r} of a reply in {len(parts)} parts")
            await reply.send(parts[i - 1][1], {**stamp, **config_parts.part_property(i, len(parts))})
            return
        logger.debug("Reply %s in %d parts", reply.id, len(parts))
        for i, (_record, data) in enumerate(parts, 1):
            await reply.send(data, {**stamp, **config_parts.part_property(i, len(parts))})

    async def on_flow_request(self, msg: Message, reply: Reply) -> None:
        response, _stamp = await self.run_request(self.flow_ops.handle, msg.value)
        await reply.send(from_dict(FlowResponse, response))

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument(
            "--store",
            default=env_default("TRUSTGRAPH_CONFIG_STORE"),
            help="SQLite file of the config store (default: $TRUSTGRAPH_DATA/config.db "
            "or ~/.local/share/trustgraph/config.db)",
        )
        # --config-request-queue and --config-response-queue: every processor's (AsyncProcessor).
        parser.add_argument("--flow-request-queue", default=FLOW_REQUEST)
        parser.add_argument("--flow-response-queue", default=FLOW_RESPONSE)
        parser.add_argument(
            "--max-workspaces", type=_at_least_one, default=DEFAULT_MAX_WORKSPACES,
            help="with --wire 2.11: the most workspaces served, each on queues of its own; a put "
            f"registering one more is refused (default {DEFAULT_MAX_WORKSPACES:,})",
        )
        # Upstream's flags for its Cassandra store: known, so that a start given them is refused
        # with what to do instead (above), not with argparse's "unrecognized arguments".
        for flag in CASSANDRA_FLAGS:
            parser.add_argument(flag, default=None, help=argparse.SUPPRESS)


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {text}")
    return value


def run() -> None:
    Processor.launch(default_ident, __doc__)
