"""config-svc on upstream 2.11's wire: 2.11's config protocol beside 2.1's, from the one store.

The ``config-service`` component of :class:`trustgraph.compat.v211.wire.Wire211`:
config-svc run with ``--wire 2.11`` makes one :class:`ConfigProtocol211` and
calls it at the edges :class:`trustgraph.config.service.protocol.ConfigProtocol`
names.  It serves upstream 2.11's config protocol (config per workspace,
notify then fetch: :mod:`.config_ops`) and 2.11's flow operations
(:mod:`.flow_ops`), from the same store as 2.1's:

* 2.11's system config queue is the very topic 2.1's config requests use, so
  one consumer takes both and tells them apart by the request's ``workspace``
  key, which every 2.11 sender writes and no 2.1 sender has: a request without
  it is 2.1's and is answered exactly as before, over the ``default``
  workspace, which is 2.1's view of the config.
* Every change, from either side, bumps the one version and goes out both
  ways: the whole default workspace on 2.1's push topic (the processor's), and
  2.11's notice of the changed types and workspaces on ``notify:tg:config``.
* It registers the default workspace in ``__workspaces__`` (upstream's IAM
  service does; in a new store as what the store starts with, at version 0, so
  a new store still reads as new: tg-launch loads its bootstrap only into one)
  and serves each registered workspace's own config and flow queues, at most
  ``--max-workspaces`` of them, and only names that can be topics
  (:mod:`.workspaces`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trustgraph.base.messaging.pubsub import Consumer, Message, Producer
from trustgraph.base.messaging.serving import Reply
from trustgraph.base.processors.config_source import STORE
from trustgraph.compat.v211 import schema as v211
from trustgraph.config.service.protocol import ConfigProtocol
from trustgraph.config.service.service import CONFIG_REPLIES, DEFAULT_MAX_WORKSPACES, FLOW_REPLIES
from trustgraph.config.service.store import DEFAULT_WORKSPACE, Change
from trustgraph.schema import FlowRequest, FlowResponse
from trustgraph.schema.codec import from_dict

from .config_ops import Config211Operations, notice
from .flow_ops import Flow211Operations
from .workspaces import listed, servable, unserved_lines

if TYPE_CHECKING:
    from trustgraph.config.service.service import Processor

__all__ = ["WORKSPACE_ENTRY", "AnyWireConfigRequest", "ConfigProtocol211"]

logger = logging.getLogger(__name__)

#: What config-svc writes for a workspace it registers (upstream's IAM service writes the same).
WORKSPACE_ENTRY = '{"enabled": true}'

Handle = Callable[[dict[str, Any]], tuple[dict[str, Any], bool]]


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


class ConfigProtocol211(ConfigProtocol):
    """config-svc's 2.11 edges: the workspace registry, each workspace's queues, 2.11's notices."""

    request_schema = AnyWireConfigRequest

    def __init__(self, service: Processor, params: Mapping[str, Any]) -> None:
        super().__init__(service, params)
        self.max_workspaces: int = params.get("max_workspaces") or DEFAULT_MAX_WORKSPACES
        self.config_ops = Config211Operations(service.store, self.max_workspaces)
        self._notify: Producer | None = None
        #: The workspaces served: each one's config and flow consumers.
        self.workspaces: dict[str, list[Consumer]] = {}

    async def open(self) -> None:
        self._notify = await self.service.pubsub.producer(v211.CONFIG_NOTIFY)
        await self._register_default_workspace()

    async def serve(self) -> None:
        await self._serve_registered()
        logger.info("Serving TrustGraph 2.11's config protocol too (notices on %s; workspaces %s)",
                    v211.CONFIG_NOTIFY, listed(self.workspaces))

    async def answer(self, msg: Message, reply: Reply) -> bool:
        if msg.value.workspace is None:
            return False
        await self._reply(reply, self.config_ops.handle, msg.value)
        return True

    async def changed(self, version: int, changes: list[Change]) -> None:
        record = from_dict(v211.ConfigPush, notice(version, changes))
        await self._notify.send(record, {STORE: self.service.store_id})
        logger.debug("Notified config version %d: %s", version, record.changes)
        if record.workspace_changes is not None:
            await self._follow_workspaces(record.workspace_changes)

    async def _reply(self, reply: Reply, handle: Handle, request: Any) -> None:
        """Answer a 2.11 config request (a reply too big for one message is a config-error)."""
        body, _stamp = await self.service.run_request(handle, request)
        await reply.send(from_dict(v211.ConfigResponse, body), {STORE: self.service.store_id})

    async def _register_default_workspace(self) -> None:
        """List the default workspace in ``__workspaces__`` when it is not: 2.11's flow service and
        workspace processors learn the workspaces there (upstream's IAM service writes it).

        A new store gets it as its starting content, at version 0 (:meth:`ConfigStore.seed`):
        it is config-svc's bookkeeping, not a change anyone asked for, and a store at version 0 is
        what tg-launch loads its bootstrap into.  Counted as a change, it made every new store
        read as one holding config, and ``TRUSTGRAPH_WIRE=2.11 tg-launch`` never bootstrapped."""
        store = self.service.store

        def register() -> bool:
            entry = [(v211.WORKSPACE_TYPE, DEFAULT_WORKSPACE, WORKSPACE_ENTRY)]
            with store.locked():
                if store.get(v211.WORKSPACE_TYPE, DEFAULT_WORKSPACE, workspace=v211.WORKSPACES):
                    return False
                if not store.seed(entry, workspace=v211.WORKSPACES):
                    store.apply(puts=entry, workspace=v211.WORKSPACES)
                return True
        if await asyncio.to_thread(register):
            logger.info("Registered workspace %s in %s", DEFAULT_WORKSPACE, v211.WORKSPACES)

    async def _serve_registered(self) -> None:
        """Serve the workspaces the store lists, those config-svc can (:func:`.workspaces.servable`).

        A name written before the checks of :mod:`.workspaces` existed, or one whose queues the
        broker refuses, is one WARNING and left unserved: config-svc starts and serves the rest.
        """
        registered = await asyncio.to_thread(self.service.store.keys, v211.WORKSPACE_TYPE,
                                             workspace=v211.WORKSPACES)
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
        if workspace in self.workspaces:
            return
        service = self.service
        queue = v211.workspace_queue
        config_ops = self.config_ops
        flow_ops = Flow211Operations(service.store.view(workspace))

        async def on_config(msg: Message, reply: Reply) -> None:
            await self._reply(reply, lambda body: config_ops.handle(body, workspace), msg.value)

        async def on_flow(msg: Message, reply: Reply) -> None:
            response, _stamp = await service.run_request(flow_ops.handle, msg.value)
            await reply.send(from_dict(FlowResponse, response))

        self.workspaces[workspace] = [
            await service.serve(v211.to_pulsar(queue(v211.config_request_queue, workspace)), v211.ConfigRequest,
                                on_config, replies=CONFIG_REPLIES, subscription=service.id,
                                response_topic=v211.to_pulsar(queue(v211.config_response_queue, workspace)),
                                concurrency=16, name=f"config-request-{workspace}"),
            await service.serve(v211.to_pulsar(queue(v211.flow_request_queue, workspace)), FlowRequest,
                                on_flow, replies=FLOW_REPLIES, subscription=service.id,
                                response_topic=v211.to_pulsar(queue(v211.flow_response_queue, workspace)),
                                concurrency=16, name=f"flow-request-{workspace}"),
        ]
        logger.info("Serving workspace %s's config and flow queues", workspace)

    async def _unserve_workspace(self, workspace: str) -> None:
        consumers = self.workspaces.pop(workspace, None)
        if consumers:
            await self.service.pubsub.remove(*consumers)
            logger.info("Workspace %s removed: its config and flow queues are no longer served", workspace)

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
