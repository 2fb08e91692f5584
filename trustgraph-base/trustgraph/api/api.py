"""``Api``: the entry point of the Python client for a TrustGraph API gateway.

REST calls (``POST {url}api/v1/...``) go through :meth:`Api.request`: a
status other than 200 or a body that is not JSON raises
:class:`ProtocolException`, a reply carrying ``error`` raises
:class:`ApplicationException` ``"type: message"``.  The websocket, bulk and
metrics clients are created on first use and shared; ``close()`` /
``aclose()`` (or ``with`` / ``async with``) release them.
"""

from __future__ import annotations

from typing import Any

import requests

from .collection import Collection
from .config import Config
from .exceptions import ProtocolException, check_error
from .flow import Flow
from .knowledge import Knowledge
from .library import Library

DEFAULT_URL = "http://localhost:8088/"


class Api:
    """A client for one gateway: ``Api(url, timeout=60, token=None)``."""

    def __init__(self, url: str = DEFAULT_URL, timeout: float = 60, token: str | None = None) -> None:
        self.url = url if url.endswith("/") else url + "/"
        self.url += "api/v1/"
        self.timeout = timeout
        self.token = token
        self._clients: dict[str, Any] = {}

    @property
    def base_url(self) -> str:
        """The gateway's URL without ``/api/v1/`` (what the websocket clients extend)."""
        return self.url.rsplit("api/v1/", 1)[0].rstrip("/")

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def request(self, path: str, request: dict[str, Any]) -> dict[str, Any]:
        """POST ``request`` to ``api/v1/{path}`` and return the JSON reply (errors raise)."""
        resp = requests.post(f"{self.url}{path}", json=request, timeout=self.timeout,
                             headers=self._headers())
        if resp.status_code != 200:
            raise ProtocolException(f"Status code {resp.status_code}")
        try:
            body = resp.json()
        except ValueError:
            raise ProtocolException("Expected JSON response") from None
        if not isinstance(body, dict):
            raise ProtocolException("Expected a JSON object")
        check_error(body)
        return body

    # -- the REST interfaces (cheap: made per call, as upstream) ---------------------
    def flow(self) -> Flow:
        """Flow blueprints and flows; ``flow().id(name)`` calls a flow's services."""
        return Flow(api=self)

    def config(self) -> Config:
        """The config service."""
        return Config(api=self)

    def knowledge(self) -> Knowledge:
        """Knowledge cores."""
        return Knowledge(api=self)

    def library(self) -> Library:
        """The document library (librarian)."""
        return Library(self)

    def collection(self) -> Collection:
        """Collection management."""
        return Collection(self)

    # -- the shared websocket, bulk and metrics clients --------------------------------
    def _shared(self, name: str, make: Any) -> Any:
        client = self._clients.get(name)
        if client is None:
            client = self._clients[name] = make()
        return client

    def socket(self) -> Any:
        """The synchronous websocket client (streaming agent, LLM, RAG, prompt)."""
        from .socket_client import SocketClient
        return self._shared("socket", lambda: SocketClient(self.base_url, self.timeout, self.token))

    def bulk(self) -> Any:
        """The synchronous bulk import/export client."""
        from .bulk_client import BulkClient
        return self._shared("bulk", lambda: BulkClient(self.base_url, self.timeout, self.token))

    def metrics(self) -> Any:
        """The Prometheus metrics client."""
        from .metrics import Metrics
        return self._shared("metrics", lambda: Metrics(self.base_url, self.timeout, self.token))

    def async_flow(self) -> Any:
        """The asyncio REST client of flows and their services."""
        from .async_flow import AsyncFlow
        return self._shared("async_flow", lambda: AsyncFlow(self.url, self.timeout, self.token))

    def async_socket(self) -> Any:
        """The asyncio websocket client."""
        from .async_socket_client import AsyncSocketClient
        return self._shared("async_socket", lambda: AsyncSocketClient(self.base_url, self.timeout, self.token))

    def async_bulk(self) -> Any:
        """The asyncio bulk import/export client."""
        from .async_bulk_client import AsyncBulkClient
        return self._shared("async_bulk", lambda: AsyncBulkClient(self.base_url, self.timeout, self.token))

    def async_metrics(self) -> Any:
        """The asyncio metrics client."""
        from .async_metrics import AsyncMetrics
        return self._shared("async_metrics", lambda: AsyncMetrics(self.base_url, self.timeout, self.token))

    # -- lifetime ---------------------------------------------------------------------
    def close(self) -> None:
        """Release the synchronous clients."""
        for name in ("socket", "bulk"):
            client = self._clients.pop(name, None)
            if client is not None:
                client.close()

    async def aclose(self) -> None:
        """Release the asyncio clients."""
        for name in ("async_socket", "async_bulk", "async_flow", "async_metrics"):
            client = self._clients.pop(name, None)
            if client is not None:
                await client.aclose()

    def __enter__(self) -> Api:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Api:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
