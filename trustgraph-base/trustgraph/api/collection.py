"""``Collection``: collection management over REST (``POST api/v1/collection-management``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .exceptions import ProtocolException
from .types import CollectionMetadata

if TYPE_CHECKING:
    from .api import Api


def _collection(v: dict[str, Any]) -> CollectionMetadata:
    return CollectionMetadata(user=v["user"], collection=v["collection"], name=v["name"],
                              description=v["description"], tags=v["tags"])


class Collection:
    """List, update and delete a user's collections."""

    def __init__(self, api: Api) -> None:
        self.api = api

    def request(self, request: dict[str, Any]) -> dict[str, Any]:
        """One raw collection operation."""
        return self.api.request("collection-management", request)

    def list_collections(self, user: str, tag_filter: list[str] | None = None) -> list[CollectionMetadata]:
        """A user's collections, optionally only those with some tags."""
        request: dict[str, Any] = {"operation": "list-collections", "user": user}
        if tag_filter:
            request["tag_filter"] = tag_filter
        reply = self.request(request)
        try:
            return [_collection(v) for v in reply.get("collections") or []]
        except (KeyError, TypeError):
            raise ProtocolException("Response not formatted correctly") from None

    def update_collection(self, user: str, collection: str, name: str | None = None,
                          description: str | None = None,
                          tags: list[str] | None = None) -> CollectionMetadata | None:
        """Create or update a collection; returns it as stored, when the service says."""
        request: dict[str, Any] = {"operation": "update-collection", "user": user, "collection": collection}
        for key, value in (("name", name), ("description", description), ("tags", tags)):
            if value is not None:
                request[key] = value
        reply = self.request(request)
        try:
            found = reply.get("collections") or []
            return _collection(found[0]) if found else None
        except (KeyError, TypeError):
            raise ProtocolException("Response not formatted correctly") from None

    def delete_collection(self, user: str, collection: str) -> dict[str, Any]:
        """Delete a collection and its data."""
        self.request({"operation": "delete-collection", "user": user, "collection": collection})
        return {}
