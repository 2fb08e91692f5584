"""Load the bootstrap config into an empty config store, as upstream's init does.

The bootstrap file lists config items (inline JSON values, or files next to
it) and the flows to start.  Nothing is written unless the store is at
version 0, so a restart never overwrites what a user changed.  Version 0 is
a store nobody has written to: what config-svc writes there itself (under
``--wire 2.11``, the default workspace's registration) does not count a
version (``ConfigStore.seed``).
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.base.messaging.pubsub import CONFIG_LANE
from trustgraph.base.processors import config_parts
from trustgraph.base.processors.broker_choice import stack_hint
from trustgraph.schema import ConfigRequest, ConfigResponse, ConfigValue, FlowRequest, FlowResponse
from trustgraph.topics import CONFIG_REQUEST, CONFIG_RESPONSE, FLOW_REQUEST, FLOW_RESPONSE

logger = logging.getLogger(__name__)


class BootstrapError(RuntimeError):
    """The bootstrap file is unusable or config-svc refused part of it."""


def read_bootstrap(path: Path) -> tuple[list[ConfigValue], list[dict[str, Any]]]:
    """Parse the bootstrap file into config values and flows to start.

    Format::

        {"config": {"<type>": {"<key>": <JSON value> }},
         "files":  {"<type>/<key>": "relative/path.json"},
         "flows":  [{"id": "default", "blueprint": "...", "description": "...",
                     "parameters": {}}]}

    Values are stored as JSON text (strings too, with their quotes), as
    upstream's init does.
    """
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise BootstrapError(f"cannot read bootstrap {path}: {e}") from e
    values: list[ConfigValue] = []
    for type_, items in (doc.get("config") or {}).items():
        for key, value in items.items():
            values.append(ConfigValue(type=type_, key=key, value=json.dumps(value)))
    for ref, rel in (doc.get("files") or {}).items():
        type_, _, key = ref.partition("/")
        if not key:
            raise BootstrapError(f"bootstrap files entry {ref!r} must be TYPE/KEY")
        file = path.parent / rel
        try:
            text = file.read_text()
            json.loads(text)
        except (OSError, ValueError) as e:
            raise BootstrapError(f"bootstrap file {file} for {ref}: {e}") from e
        values.append(ConfigValue(type=type_, key=key, value=text.strip()))
    return values, list(doc.get("flows") or [])


#: Makes tg-launch's own PubSub on a broker other than Pulsar (RabbitMQ's: the launcher's).
Connect = Callable[[], PubSub]


def _pubsub(pulsar_url: str, api_key: str | None, connect: Connect | None) -> PubSub:
    return connect() if connect is not None else PubSub(pulsar_url, processor="tg-launch", api_key=api_key,
                                                        hint=stack_hint)


def _config_client(ps: PubSub) -> RequestResponseClient:
    return RequestResponseClient(
        ps, request_topic=CONFIG_REQUEST, response_topic=CONFIG_RESPONSE,
        request_schema=ConfigRequest, response_schema=ConfigResponse,
        subscription=f"tg-launch--config--{uuid.uuid4()}", lane=CONFIG_LANE)


async def bootstrap(pulsar_url: str, path: Path, timeout: float = 30.0, api_key: str | None = None,
                    connect: Connect | None = None) -> int:
    """Load ``path`` when the store is empty.

    Returns the store's version before: 0 when the file was loaded, else the
    version of the config that was kept (so the caller can say so).
    ``api_key`` is tg-launch's own Pulsar token, when the broker wants one;
    ``connect`` makes the PubSub instead (a stack on RabbitMQ).
    """
    values, flows = read_bootstrap(path)
    ps = _pubsub(pulsar_url, api_key, connect)
    try:
        config = _config_client(ps)
        flow = RequestResponseClient(
            ps, request_topic=FLOW_REQUEST, response_topic=FLOW_RESPONSE,
            request_schema=FlowRequest, response_schema=FlowResponse,
            subscription=f"tg-launch--flow--{uuid.uuid4()}")
        # The whole config may be megabytes: it comes in parts (trustgraph.base.processors.config_parts).
        current = await config_parts.request(config, ConfigRequest(operation="config"), timeout=timeout)
        if current.error is not None:
            raise BootstrapError(f"config-svc: {current.error.message}")
        if current.version:
            logger.info("Config store at version %d: bootstrap skipped", current.version)
            return current.version
        r = await config.request(ConfigRequest(operation="put", values=values), timeout=timeout)
        if r.error is not None:
            raise BootstrapError(f"config-svc refused the bootstrap config: {r.error.message}")
        for f in flows:
            r = await flow.request(FlowRequest(
                operation="start-flow", flow_id=f["id"], blueprint_name=f["blueprint"],
                description=f.get("description", f["id"]),
                parameters={k: str(v) for k, v in (f.get("parameters") or {}).items()},
            ), timeout=timeout)
            if r.error is not None:
                raise BootstrapError(f"starting flow {f['id']}: {r.error.message}")
        logger.info("Bootstrap config loaded from %s (%d items, %d flows)", path, len(values), len(flows))
        return 0
    finally:
        await ps.close()


async def put_config(pulsar_url: str, values: list[ConfigValue], timeout: float = 30.0,
                     api_key: str | None = None, connect: Connect | None = None) -> None:
    """Write config items that a tg-launch flag sets (``--announced-tools``), whatever the store holds."""
    ps = _pubsub(pulsar_url, api_key, connect)
    try:
        r = await _config_client(ps).request(ConfigRequest(operation="put", values=values), timeout=timeout)
        if r.error is not None:
            raise BootstrapError(f"config-svc refused {', '.join(f'{v.type}/{v.key}' for v in values)}: "
                                 f"{r.error.message}")
    finally:
        await ps.close()
