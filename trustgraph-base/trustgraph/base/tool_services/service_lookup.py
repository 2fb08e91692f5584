"""Finding a tool service by its id: in config, or among the services that announce themselves.

For :meth:`ToolServiceClient.for_service`: a program other than the agent
names a service and gets its queues, the way the agent finds them.  A
``tool-service/<id>`` config item wins (as in the catalog); otherwise the
running services are probed and the first announcement of that id is used.
Both are asked at once, so a lookup takes one round trip when either knows
the service.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

from ...schema import ConfigKey, ConfigRequest, ConfigResponse
from ...topics import ANNOUNCE, CONFIG_REQUEST, CONFIG_RESPONSE, PROBE
from ..messaging.pubsub import CONFIG_LANE, PubSub
from ..messaging.request_response import RequestResponseClient
from ..processors import config_parts
from ..safety import limits
from .service_directory import ServiceDirectory


class ServiceNotFound(LookupError):
    """No config item and no running service has this id."""


async def look_up_service(pubsub: PubSub, service: str, *, timeout: float = 10.0,
                       config_request_queue: str = CONFIG_REQUEST,
                       config_response_queue: str = CONFIG_RESPONSE,
                       announce_queue: str = ANNOUNCE, probe_queue: str = PROBE) -> dict[str, Any]:
    """The ``tool-service`` descriptor of ``service`` (a dict), or :class:`ServiceNotFound`."""
    found = asyncio.Event()
    directory = ServiceDirectory(pubsub, on_change=found.set, topic=announce_queue, probe_topic=probe_queue,
                                 name="service-lookup")
    config = RequestResponseClient(pubsub, request_topic=config_request_queue,
                                   response_topic=config_response_queue, request_schema=ConfigRequest,
                                   response_schema=ConfigResponse,
                                   subscription=f"{pubsub.processor or 'client'}--lookup--{uuid.uuid4()}",
                                   timeout=timeout, lane=CONFIG_LANE)
    async def announced() -> dict[str, Any]:
        while (state := directory.announced().get(service)) is None:
            found.clear()
            await found.wait()
        return limits.loads(state.descriptor or "{}")

    try:
        async with asyncio.timeout(timeout):
            await directory.start()
            configured = asyncio.ensure_future(_configured(config, service))
            running = asyncio.ensure_future(announced())
            try:
                done, _ = await asyncio.wait({configured, running}, return_when=asyncio.FIRST_COMPLETED)
                if configured in done and configured.result() is not None:
                    return configured.result()
                return await running  # not configured (or config-svc is silent): the running one
            finally:
                for task in (configured, running):
                    task.cancel()
                    with contextlib.suppress(BaseException):
                        await task
    except TimeoutError:
        raise ServiceNotFound(f"no tool service '{service}': no config item tool-service/{service} and "
                              f"no running service announced it within {timeout:g}s") from None
    finally:
        await directory.stop()
        await config.stop()


async def _configured(config: RequestResponseClient, service: str) -> dict[str, Any] | None:
    """``tool-service/<service>`` from config-svc; None when it is absent or config-svc is silent."""
    try:
        resp = await config_parts.request(config, ConfigRequest(
            operation="get", keys=[ConfigKey(type="tool-service", key=service)]))
    except TimeoutError:
        return None
    values = resp.values or []
    return limits.object_or_none(values[0].value if values and resp.error is None else None)
