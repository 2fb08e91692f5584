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

With ``--wire 2.11`` it also serves upstream 2.11's config protocol (config
per workspace, notify then fetch: :mod:`.config_ops_211`) and 2.11's flow
operations (:mod:`.flow_ops_211`), from the same store.  2.11's system config
queue is the very topic 2.1's config requests use, so one consumer takes both
and tells them apart by the request's ``workspace`` key, which every 2.11
sender writes and no 2.1 sender has: a request without it is 2.1's and is
answered exactly as before, over the ``default`` workspace, which is 2.1's
view of the config.  Every change, from either side, bumps the one version
and goes out both ways: the whole default workspace on 2.1's push topic, and
2.11's notice of the changed types and workspaces on ``notify:tg:config``.
It registers the default workspace in ``__workspaces__`` (upstream's IAM
service does; in a new store as what the store starts with, at version 0, so
a new store still reads as new: tg-launch loads its bootstrap only into one)
and serves each registered workspace's own config and flow queues, at most
``--max-workspaces`` of them, and only names that can be topics
(:mod:`.workspaces`).

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trustgraph.base.messaging.pubsub import Consumer, Message, Producer
from trustgraph.base.messaging.serving import Replies, Reply, ServiceError
from trustgraph.base.processors import config_parts
from trustgraph.base.processors.async_processor import AsyncProcessor, StartRefused, env_default
from trustgraph.base.processors.config_source import DIGEST, STORE, config_digest
from trustgraph.base.wire import WIRE_21, WIRE_211
from trustgraph.compat.v211 import schema as v211
from trustgraph.schema import (
    ConfigPush,
    ConfigRequest,
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
from .config_ops_211 import Config211Operations, notice
from .flow_ops import FlowOperations
from .flow_ops_211 import Flow211Operations
from .store import ConfigStore
from .workspaces import DEFAULT_MAX_WORKSPACES, listed, servable, unserved_lines

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


#: What config-svc writes for a workspace it registers (upstream's IAM service writes the same).
WORKSPACE_ENTRY = '{"enabled": true}'


@dataclass
class AnyWireConfigRequest:
    """A request on the config topic 2.1 and 2.11 share: 2.11's fields, ``workspace`` None when absent.

    Every 2.11 sender writes ``workspace`` (upstream's encoder writes every
    field), no 2.1 sender does: None marks a 2.1 request.
    """

    operation: str = ""
    workspace: str | None = None
    keys: list[v211.ConfigKey] = field(default_factory=list)
    type: str = ""
    values: list[v211.ConfigValue] = field(default_factory=list)


def default_store_path() -> str:
    """``$TRUSTGRAPH_DATA/config.db``, else the XDG data dir (``~/.local/share/trustgraph``)."""
    base = os.environ.get("TRUSTGRAPH_DATA")
    if not base:
        xdg = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
        base = os.path.join(xdg, "trustgraph")
    return os.path.join(base, "config.db")


class Processor(AsyncProcessor):
    """The config service: one store, two request topics, one push topic (2.11: and its queues)."""

    wires = (WIRE_21, WIRE_211)

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
        # 2.11: its operations, its notice producer, and each workspace's queues served.
        self.serves_211 = self.wire.name == WIRE_211
        self.max_workspaces = params.get("max_workspaces") or DEFAULT_MAX_WORKSPACES
        self.config_ops_211 = Config211Operations(self.store, self.max_workspaces)
        self._notify_211: Producer | None = None
        self._workspaces: dict[str, list[Consumer]] = {}

    async def start(self) -> None:
        await super().start()
        self._push = await self.pubsub.producer(self.config_push_queue)
        self._notify = await self.pubsub.producer(config_notice_topic(self.config_push_queue))
        if self.serves_211:
            self._notify_211 = await self.pubsub.producer(v211.CONFIG_NOTIFY)
            await self._register_default_workspace()
        # The stamp is known before the first request is served (a processor checks the start push).
        snapshot = await asyncio.to_thread(self._snapshot)
        self._stamp = snapshot[2]
        request_schema = AnyWireConfigRequest if self.serves_211 else ConfigRequest
        await self.serve(self.config_request_topic, request_schema, self.on_config_request,
                         replies=CONFIG_REPLIES, subscription=self.id,
                         response_topic=self.config_response_topic, concurrency=16,
                         name="config-request")
        await self.serve(self.flow_request_topic, FlowRequest, self.on_flow_request,
                         replies=FLOW_REPLIES, subscription=self.id,
                         response_topic=self.flow_response_topic, concurrency=16,
                         name="flow-request")
        await self.push(snapshot)
        if self.serves_211:
            await self._serve_registered()
        logger.info("Config store %s (%s) at version %d", self.store.path, self.store_id, self.store.version())
        if self.serves_211:
            logger.info("Serving TrustGraph 2.11's config protocol too (notices on %s; workspaces %s)",
                        v211.CONFIG_NOTIFY, listed(self._workspaces))

    async def _register_default_workspace(self) -> None:
        """List the default workspace in ``__workspaces__`` when it is not: 2.11's flow service and
        workspace processors learn the workspaces there (upstream's IAM service writes it).

        A new store gets it as its starting content, at version 0 (:meth:`ConfigStore.seed`):
        it is config-svc's bookkeeping, not a change anyone asked for, and a store at version 0 is
        what tg-launch loads its bootstrap into.  Counted as a change, it made every new store
        read as one holding config, and ``TRUSTGRAPH_WIRE=2.11 tg-launch`` never bootstrapped."""
        def register() -> bool:
            entry = [(v211.WORKSPACE_TYPE, v211.DEFAULT_WORKSPACE, WORKSPACE_ENTRY)]
            with self.store.locked():
                if self.store.get(v211.WORKSPACE_TYPE, v211.DEFAULT_WORKSPACE, workspace=v211.WORKSPACES):
                    return False
                if not self.store.seed(entry, workspace=v211.WORKSPACES):
                    self.store.apply(puts=entry, workspace=v211.WORKSPACES)
                return True
        if await asyncio.to_thread(register):
            logger.info("Registered workspace %s in %s", v211.DEFAULT_WORKSPACE, v211.WORKSPACES)

    async def _serve_registered(self) -> None:
        """Serve the workspaces the store lists, those config-svc can (:func:`.workspaces.servable`).

        A name written before the checks of :mod:`.workspaces` existed, or one whose queues the
        broker refuses, is one WARNING and left unserved: config-svc starts and serves the rest.
        """
        registered = await asyncio.to_thread(self.store.keys, v211.WORKSPACE_TYPE, workspace=v211.WORKSPACES)
        plan = servable(registered, self.max_workspaces)
        for line in unserved_lines(plan, self.max_workspaces):
            logger.warning("%s", line)
        for workspace in plan.serve:
            try:
                await self._serve_workspace(workspace)
            except Exception as e:
                logger.warning("Workspace %r, registered in %s, is not served: its queues cannot be opened "
                               "(%s)", workspace, v211.WORKSPACES, e)

    async def _serve_workspace(self, workspace: str) -> None:
        """Serve a workspace's own 2.11 config and flow queues (``request:tg:config:<ws>``...)."""
        if workspace in self._workspaces:
            return
        queue = v211.workspace_queue
        config_ops = self.config_ops_211
        flow_ops = Flow211Operations(self.store.view(workspace))

        async def on_config(msg: Message, reply: Reply) -> None:
            await self._reply_211(msg, reply, lambda body: config_ops.handle(body, workspace))

        async def on_flow(msg: Message, reply: Reply) -> None:
            response, _stamp = await self._handle(flow_ops.handle, msg.value)
            await reply.send(from_dict(FlowResponse, response))

        self._workspaces[workspace] = [
            await self.serve(v211.to_pulsar(queue(v211.config_request_queue, workspace)), v211.ConfigRequest,
                             on_config, replies=CONFIG_REPLIES, subscription=self.id,
                             response_topic=v211.to_pulsar(queue(v211.config_response_queue, workspace)),
                             concurrency=16, name=f"config-request-{workspace}"),
            await self.serve(v211.to_pulsar(queue(v211.flow_request_queue, workspace)), FlowRequest,
                             on_flow, replies=FLOW_REPLIES, subscription=self.id,
                             response_topic=v211.to_pulsar(queue(v211.flow_response_queue, workspace)),
                             concurrency=16, name=f"flow-request-{workspace}"),
        ]
        logger.info("Serving workspace %s's config and flow queues", workspace)

    async def _unserve_workspace(self, workspace: str) -> None:
        consumers = self._workspaces.pop(workspace, None)
        if consumers:
            await self.pubsub.remove(*consumers)
            logger.info("Workspace %s removed: its config and flow queues are no longer served", workspace)

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
        serving 2.11 too, then 2.11's notice of what changed."""
        version, data, stamp = snapshot or await asyncio.to_thread(self._snapshot)
        changes = self.store.take_changes()
        self._stamp = stamp
        await self._push_21(version, data, stamp)
        if self._notify_211 is not None:
            record = from_dict(v211.ConfigPush, notice(version, changes))
            await self._notify_211.send(record, {STORE: self.store_id})
            logger.debug("Notified config version %d: %s", version, record.changes)
            if record.workspace_changes is not None:
                await self._follow_workspaces(record.workspace_changes)

    async def _follow_workspaces(self, changes: v211.WorkspaceChanges) -> None:
        """Serve the queues of workspaces just registered, stop those of removed ones.

        Their names were checked when written (:mod:`.workspaces`); queues the broker still
        refuses are an ERROR line: the change that registered them is written and was notified.
        """
        for workspace in changes.created:
            try:
                await self._serve_workspace(workspace)
            except Exception as e:
                logger.error("Workspace %r registered, but its queues cannot be served: %s", workspace, e)
        for workspace in changes.deleted:
            await self._unserve_workspace(workspace)

    async def _push_21(self, version: int, data: bytes, stamp: dict[str, str]) -> None:
        if config_parts.fits(data):
            await self._push.send(data, stamp)
            logger.debug("Pushed config version %d", version)
            return
        if self._too_big is None:
            logger.warning(config_parts.push_size_line(version, len(data)))
        self._too_big = version
        await self._notify.send(ConfigPush(version=version, config={}), {STORE: self.store_id})
        logger.debug("Config version %d (%d bytes) announced for fetching", version, len(data))

    async def _handle(self, handle: Callable[[dict[str, Any]], tuple[dict[str, Any], bool]],
                      request: Any) -> tuple[dict[str, Any], dict[str, str]]:
        """Run one request: its response, and the stamp of the version it saw."""
        body = to_dict(request)
        async with self._write_lock:
            response, changed = await asyncio.to_thread(handle, body)
            if changed:
                await self.push()
            return response, dict(self._stamp)

    async def _reply_211(self, msg: Message, reply: Reply,
                         handle: Callable[[dict[str, Any]], tuple[dict[str, Any], bool]]) -> None:
        """Answer a 2.11 config request (a reply too big for one message is a config-error)."""
        body, _stamp = await self._handle(handle, msg.value)
        await reply.send(from_dict(v211.ConfigResponse, body), {STORE: self.store_id})

    async def on_config_request(self, msg: Message, reply: Reply) -> None:
        if self.serves_211 and msg.value.workspace is not None:
            await self._reply_211(msg, reply, self.config_ops_211.handle)
            return
        body, stamp = await self._handle(self.config_ops.handle, msg.value)
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
        response, _stamp = await self._handle(self.flow_ops.handle, msg.value)
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
