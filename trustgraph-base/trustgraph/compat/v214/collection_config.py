"""Upstream 2.1.4's ``CollectionConfigHandler``: a store follows the collections the config declares.

Upstream's librarian declares each collection as an item of the config's
``collection`` type (key ``<user>:<collection>``, value the collection's
metadata as JSON), and every store that keeps data per collection mixes this
class in and registers :meth:`~CollectionConfigHandler.on_collection_config`
as a config handler: a collection that appears is created in the store, one
that disappears is deleted from it, and writes to a collection the config
does not hold are refused (:meth:`~CollectionConfigHandler.collection_exists`).

On our base the handler runs on our config follower
(:meth:`trustgraph.base.AsyncProcessor.register_config_handler`): each
version config-svc confirms, one handler at a time, with the whole config.
What it does with the items is upstream's, but a section that is not a map
changes nothing (upstream would fail on it; deleting every collection because
of one bad push would be worse), and it logs at INFO only what changed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

logger = logging.getLogger(__name__)

#: The config type holding the collections.
COLLECTION_TYPE = "collection"


class CollectionConfigHandler:
    """Mix in before the processor base: ``class Processor(CollectionConfigHandler, FlowProcessor)``.

    Then, in ``__init__``, ``self.register_config_handler(self.on_collection_config)``,
    and implement :meth:`create_collection` and :meth:`delete_collection`.
    """

    def __init__(self, **kwargs: Any) -> None:
        #: ``(user, collection)`` -> metadata, for every collection the store holds.
        self.known_collections: dict[tuple[str, str], Any] = {}
        super().__init__(**kwargs)

    async def on_collection_config(self, config: Mapping[str, Any], version: int) -> None:
        """Create the collections new in ``config``, delete those gone from it, note changed metadata.

        One bad item (a key without ``:``, a value that is not JSON, a store
        that fails to create) is logged and skipped; the others still apply.
        An item whose value cannot be read still counts as present, so it is
        not deleted; a collection the store failed to create is tried again
        at the next version.  A deleted collection is forgotten before the
        store deletes it, so writes are refused from then on.
        """
        section = config.get(COLLECTION_TYPE) if config else None
        if section is None:
            section = {}
        if not isinstance(section, Mapping):
            logger.warning("Config version %s: the %r section is not a map (%s), collections unchanged",
                           version, COLLECTION_TYPE, type(section).__name__)
            return
        logger.debug("Collections in config version %s: %d", version, len(section))
        present: set[tuple[str, str]] = set()
        for key, value in section.items():
            user, sep, collection = str(key).partition(":")
            if not sep:
                logger.warning("Ignoring collection key %r (expected user:collection)", key)
                continue
            present.add((user, collection))
            try:
                metadata = json.loads(value)
                if (user, collection) not in self.known_collections:
                    logger.info("Collection %s/%s is new: creating it", user, collection)
                    await self.create_collection(user, collection, metadata)
                    self.known_collections[(user, collection)] = metadata
                elif self.known_collections[(user, collection)] != metadata:
                    logger.info("Collection %s/%s: metadata changed", user, collection)
                    self.known_collections[(user, collection)] = metadata
            except Exception as e:
                logger.error("Collection %s/%s not applied: %s", user, collection, e, exc_info=True)
        for user, collection in set(self.known_collections) - present:
            logger.info("Collection %s/%s was removed: deleting it", user, collection)
            del self.known_collections[(user, collection)]
            try:
                await self.delete_collection(user, collection)
            except Exception as e:
                logger.error("Deleting collection %s/%s failed: %s", user, collection, e, exc_info=True)

    async def create_collection(self, user: str, collection: str, metadata: Any) -> None:
        """Make the collection in the store (a subclass's work)."""
        raise NotImplementedError("Storage service must implement create_collection method")

    async def delete_collection(self, user: str, collection: str) -> None:
        """Remove the collection and its data from the store (a subclass's work)."""
        raise NotImplementedError("Storage service must implement delete_collection method")

    def collection_exists(self, user: str, collection: str) -> bool:
        """Whether the config holds this collection (and the store created it): writes check this."""
        return (user, collection) in self.known_collections


__all__ = ["CollectionConfigHandler"]
