"""config-svc: stores configuration, manages flows, pushes the full config on every change.

Requests arrive on the config and flow request topics (WIRE.md sections 3-5).
Every mutating request is written to the embedded SQLite store in one
transaction *before* the reply, so a put the client saw acknowledged survives
a crash of this process.  After each change, and once at start, the whole
config goes out on the push topic for every processor that follows it.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from trustgraph.base import AsyncProcessor
from trustgraph.base.async_processor import env_default
from trustgraph.base.pubsub import Message, Producer
from trustgraph.base.topics import CONFIG_REQUEST, CONFIG_RESPONSE, FLOW_REQUEST, FLOW_RESPONSE
from trustgraph.schema import (
    ConfigPush,
    ConfigRequest,
    ConfigResponse,
    Error,
    FlowRequest,
    FlowResponse,
)
from trustgraph.schema.codec import from_dict, to_dict

from .config_ops import ConfigOperations
from .flow_ops import FlowOperations
from .store import ConfigStore

logger = logging.getLogger(__name__)

default_ident = "config-svc"


def default_store_path() -> str:
    """``$TRUSTGRAPH_DATA/config.db``, else the XDG data dir (``~/.local/share/trustgraph``)."""
    base = os.environ.get("TRUSTGRAPH_DATA")
    if not base:
        xdg = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
        base = os.path.join(xdg, "trustgraph")
    return os.path.join(base, "config.db")


class Processor(AsyncProcessor):
    """The config service: one store, two request topics, one push topic."""

    def __init__(self, **params: Any) -> None:
        params.setdefault("id", default_ident)
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
        self._config_out: Producer | None = None
        self._flow_out: Producer | None = None

    async def start(self) -> None:
        await super().start()
        self._push = await self.pubsub.producer(self.config_push_queue)
        self._config_out = await self.pubsub.producer(self.config_response_topic)
        self._flow_out = await self.pubsub.producer(self.flow_response_topic)
        await self.pubsub.consumer(
            self.config_request_topic,
            self.id,
            ConfigRequest,
            handler=self.on_config_request,
            concurrency=16,
            name="config-request",
            malformed=self._config_malformed,
        )
        await self.pubsub.consumer(
            self.flow_request_topic,
            self.id,
            FlowRequest,
            handler=self.on_flow_request,
            concurrency=16,
            name="flow-request",
            malformed=self._flow_malformed,
        )
        await self.push()
        logger.info("Config store %s at version %d", self.store.path, self.store.version())

    async def stop(self) -> None:
        await super().stop()
        self.store.close()

    async def push(self) -> None:
        """Send the whole config at the current version."""
        version, config = await asyncio.to_thread(self.store.snapshot)
        await self._push.send(ConfigPush(version=version, config=config))
        logger.debug("Pushed config version %d", version)

    async def _handle(self, ops: Any, request: Any) -> dict[str, Any]:
        body = to_dict(request)
        async with self._write_lock:
            response, changed = await asyncio.to_thread(ops.handle, body)
            if changed:
                await self.push()
        return response

    async def on_config_request(self, msg: Message) -> None:
        response = await self._handle(self.config_ops, msg.value)
        await self._reply(self._config_out, ConfigResponse, response, msg.id)

    async def on_flow_request(self, msg: Message) -> None:
        response = await self._handle(self.flow_ops, msg.value)
        await self._reply(self._flow_out, FlowResponse, response, msg.id)

    async def _reply(
        self, producer: Producer, schema: type, response: dict[str, Any], rid: str | None
    ) -> None:
        if rid is None:
            logger.warning("Request without id property answered nowhere: nobody could match a reply")
            return
        await producer.send(from_dict(schema, response), {"id": rid})

    async def _config_malformed(self, props: dict[str, str], reason: str) -> None:
        if "id" in props:
            await self._config_out.send(
                ConfigResponse(error=Error(type="config-error", message=reason)), {"id": props["id"]}
            )

    async def _flow_malformed(self, props: dict[str, str], reason: str) -> None:
        if "id" in props:
            await self._flow_out.send(
                FlowResponse(error=Error(type="flow-error", message=reason)), {"id": props["id"]}
            )

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument(
            "--store",
            default=env_default("TRUSTGRAPH_CONFIG_STORE"),
            help="SQLite file of the config store (default: $TRUSTGRAPH_DATA/config.db "
            "or ~/.local/share/trustgraph/config.db)",
        )
        parser.add_argument("--config-request-queue", default=CONFIG_REQUEST)
        parser.add_argument("--config-response-queue", default=CONFIG_RESPONSE)
        parser.add_argument("--flow-request-queue", default=FLOW_REQUEST)
        parser.add_argument("--flow-response-queue", default=FLOW_RESPONSE)
        # Accepted for compatibility with upstream deployments (Cassandra store); unused.
        for flag in ("--cassandra-host", "--cassandra-username", "--cassandra-password"):
            parser.add_argument(flag, default=None, help=argparse.SUPPRESS)


def run() -> None:
    Processor.launch(default_ident, __doc__)
