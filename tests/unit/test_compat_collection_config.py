"""Upstream 2.1.4's CollectionConfigHandler on our config follower: a store follows the config's collections."""

from __future__ import annotations

import logging

from trustgraph.base import CollectionConfigHandler, FlowProcessor
from trustgraph.base.collection_config_handler import CollectionConfigHandler as AtUpstreamPath
from trustgraph.base.testing import worker


class Store(CollectionConfigHandler, FlowProcessor):
    """A store written as upstream's are: the mixin first, the handler registered in __init__."""

    def __init__(self, **params):
        super().__init__(**params)
        self.register_config_handler(self.on_collection_config)
        self.calls: list[tuple] = []
        self.fail_create: set[str] = set()
        self.fail_delete: set[str] = set()

    async def create_collection(self, user, collection, metadata):
        self.calls.append(("create", user, collection, metadata))
        if collection in self.fail_create:
            raise RuntimeError(f"cannot create {collection}")

    async def delete_collection(self, user, collection):
        # Forgotten before the store deletes it: writes are refused from then on.
        self.calls.append(("delete", user, collection, self.collection_exists(user, collection)))
        if collection in self.fail_delete:
            raise RuntimeError(f"cannot delete {collection}")


class Unfinished(CollectionConfigHandler, FlowProcessor):
    def __init__(self, **params):
        super().__init__(**params)
        self.register_config_handler(self.on_collection_config)


def test_one_class_at_both_upstream_paths():
    assert AtUpstreamPath is CollectionConfigHandler


async def test_new_collections_are_created_changed_ones_noted_removed_ones_deleted():
    async with worker(Store) as w:
        store = w.processor
        await w.configure({"collection": {"alice:docs": {"name": "Docs"}, "bob:notes": {"name": "Notes"}}})
        assert sorted(store.calls) == [("create", "alice", "docs", {"name": "Docs"}),
                                       ("create", "bob", "notes", {"name": "Notes"})]
        assert store.collection_exists("alice", "docs") and not store.collection_exists("alice", "notes")

        store.calls.clear()
        await w.configure({"collection": {"alice:docs": {"name": "Documents"}, "bob:notes": {"name": "Notes"}}})
        assert store.calls == []
        assert store.known_collections[("alice", "docs")] == {"name": "Documents"}

        await w.configure({"collection": {"alice:docs": {"name": "Documents"}}})
        assert store.calls == [("delete", "bob", "notes", False)]
        assert not store.collection_exists("bob", "notes")


async def test_the_handler_runs_on_every_version_the_follower_applies():
    async with worker(Store) as w:
        await w.configure({"collection": {"alice:docs": {}}})
        # Another type changes: the collections are unchanged, nothing is created or deleted.
        await w.configure({"prompt": {"p": "x"}})
        assert w.processor.calls == [("create", "alice", "docs", {})]
        # The type gone from the config: no collections any more (as upstream).
        w.config.pop("collection")
        await w.configure({})
        assert w.processor.calls[-1] == ("delete", "alice", "docs", False)


async def test_bad_items_are_skipped_and_the_rest_applies(caplog):
    caplog.set_level(logging.INFO)
    async with worker(Store) as w:
        store = w.processor
        await w.configure({"collection": {"no-colon": {}, "alice:docs": {}, "carol:a:b": {"x": 1}}})
        assert sorted(c[1:3] for c in store.calls) == [("alice", "docs"), ("carol", "a:b")]
        assert "no-colon" in caplog.text

        # A value that is not JSON: a known collection is kept (not deleted), a new one not created.
        store.calls.clear()
        await w.configure({"collection": {"alice:docs": "{not json", "dave:new": "{nor this"}})
        assert store.calls == [("delete", "carol", "a:b", False)]
        assert store.collection_exists("alice", "docs") and not store.collection_exists("dave", "new")


async def test_a_store_that_fails_is_logged_and_tried_again_at_the_next_version(caplog):
    async with worker(Store) as w:
        store = w.processor
        store.fail_create.add("flaky")
        await w.configure({"collection": {"alice:flaky": {}, "alice:fine": {}}})
        assert store.collection_exists("alice", "fine") and not store.collection_exists("alice", "flaky")
        assert "cannot create flaky" in caplog.text

        store.fail_create.clear()
        store.fail_delete.add("fine")
        await w.configure({"collection": {"alice:flaky": {}}})
        assert ("create", "alice", "flaky", {}) in store.calls[-2:]
        assert store.collection_exists("alice", "flaky")
        # A failed delete still forgets the collection: the config says it is gone.
        assert not store.collection_exists("alice", "fine") and "cannot delete fine" in caplog.text


async def test_a_section_that_is_not_a_map_changes_nothing(caplog):
    async with worker(Store) as w:
        await w.configure({"collection": {"alice:docs": {}}})
        await w.processor.on_collection_config({"collection": ["alice:docs"]}, 99)
        assert w.processor.collection_exists("alice", "docs")
        assert "not a map" in caplog.text


async def test_a_store_without_create_collection_is_logged_not_fatal(caplog):
    async with worker(Unfinished) as w:
        await w.configure({"collection": {"alice:docs": {}}})
        assert not w.processor.collection_exists("alice", "docs")
        assert "must implement create_collection" in caplog.text
        # The processor still follows the config.
        await w.configure({"collection": {}})
        assert w.processor.config_version == w.version
