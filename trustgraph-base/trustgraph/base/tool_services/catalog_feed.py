"""What a reader of the tool catalog follows: config pushes and the running services.

The agent and the gateway (and anything else that offers tools) need the
catalog of the current config *and* of the services that announce
themselves, rebuilt when either changes.  A :class:`CatalogFeed` owns that:
it registers the processor's config handler for the catalog's config types,
runs a :class:`~trustgraph.base.tool_services.service_directory.ServiceDirectory`, and
calls ``rebuild(config, announced)`` after each change, one rebuild at a
time, so a reader only says what to do with a new catalog.

It also tells the directory which services a person configured: a
configured descriptor owns its id, so only announcements with its queues
count as its replicas, and only one that says ``"announces": true`` lets
announcements fail its calls fast.  Which announced tools a reader may use
at all is the config item ``tool-policy/announced``, read by the catalog
(``trustgraph.catalog.build``), so every reader applies the same policy.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from ..descriptors.models import CATALOG_TYPES, queues_of
from ..safety import limits
from .service_directory import Configured, ServiceDirectory, ServiceState

logger = logging.getLogger(__name__)

Config = dict[str, dict[str, str]]
Rebuild = Callable[[Config, Mapping[str, ServiceState]], Awaitable[None]]


def configured_services(section: Mapping[str, str]) -> dict[str, Configured]:
    """The ``tool-service`` config items as the directory needs them, by config key and by ``id``."""
    out: dict[str, Configured] = {}
    for key, raw in section.items():
        try:
            data = limits.loads(raw or "")
        except ValueError:
            data = None
        data = data if isinstance(data, dict) else {}
        entry = Configured(queues_of(data), data.get("announces") is True)
        out[key] = entry
        sid = data.get("id")
        if isinstance(sid, str) and sid and sid not in section:
            out.setdefault(sid, entry)
    return out


class CatalogFeed:
    """Calls ``rebuild`` whenever the catalog's config or the set of running services changes."""

    def __init__(self, processor: Any, rebuild: Rebuild, *, extra_types: Iterable[str] = ()) -> None:
        self.rebuild = rebuild
        self.config: Config = {}
        self.directory = ServiceDirectory(processor.pubsub, on_change=self._on_services,
                                          name=f"{processor.id}-service-directory",
                                          topic=processor.announce_queue,
                                          probe_topic=processor.announce_probe_queue)
        self._lock = asyncio.Lock()
        processor.register_config_handler(self._on_config, types=[*CATALOG_TYPES, *extra_types])

    async def start(self) -> None:
        """Follow the running services (config arrives through the processor's handler)."""
        await self.directory.start()

    async def stop(self) -> None:
        await self.directory.stop()

    async def _on_config(self, config: Config, version: int) -> None:
        self.config = config
        self.directory.configure(configured_services(config.get("tool-service") or {}))
        await self._rebuild()

    async def _on_services(self) -> None:
        await self._rebuild()

    async def _rebuild(self) -> None:
        async with self._lock:
            await self.rebuild(self.config, self.directory.announced())
