"""Collection management: list, update and delete a user's collections."""

from dataclasses import dataclass, field

from ...topics import topic
from ..core.primitives import Error


@dataclass
class CollectionMetadata:
    """One collection of a user."""

    user: str = ""
    collection: str = ""
    name: str = ""
    description: str = ""
    tags: list[str] = field(default_factory=list)


@dataclass
class CollectionManagementRequest:
    """list-collections, update-collection or delete-collection."""

    operation: str = ""
    user: str = ""
    collection: str = ""
    timestamp: str = ""
    name: str = ""
    description: str = ""
    tags: list[str] | None = field(default_factory=list)
    tag_filter: list[str] | None = field(default_factory=list)
    limit: int = 0


@dataclass
class CollectionManagementResponse:
    """The collections an operation returned (``timestamp`` is ISO 8601)."""

    error: Error | None = None
    timestamp: str = ""
    collections: list[CollectionMetadata] | None = field(default_factory=list)


collection_request_queue = topic("collection", qos="q0", namespace="request")
collection_response_queue = topic("collection", qos="q0", namespace="response")
