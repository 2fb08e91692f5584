"""``Knowledge``: knowledge cores over REST (``POST api/v1/knowledge``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .terms import to_value  # noqa: F401 - upstream's module exposes it

if TYPE_CHECKING:
    from .api import Api


class Knowledge:
    """List, delete, load into a flow and unload knowledge cores."""

    def __init__(self, api: Api) -> None:
        self.api = api

    def request(self, request: dict[str, Any]) -> dict[str, Any]:
        """One raw knowledge operation."""
        return self.api.request("knowledge", request)

    def list_kg_cores(self, user: str = "trustgraph") -> list[str]:
        """The ids of a user's cores."""
        return self.request({"operation": "list-kg-cores", "user": user}).get("ids") or []

    def delete_kg_core(self, id: str, user: str = "trustgraph") -> None:  # noqa: A002
        """Delete one core."""
        self.request({"operation": "delete-kg-core", "user": user, "id": id})

    def load_kg_core(self, id: str, user: str = "trustgraph", flow: str = "default",  # noqa: A002
                     collection: str = "default") -> None:
        """Load a core into a flow's stores, into ``collection``."""
        self.request({"operation": "load-kg-core", "user": user, "id": id, "flow": flow,
                      "collection": collection})

    def unload_kg_core(self, id: str, user: str = "trustgraph", flow: str = "default") -> None:  # noqa: A002
        """Unload a core from a flow."""
        self.request({"operation": "unload-kg-core", "user": user, "id": id, "flow": flow})
