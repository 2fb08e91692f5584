"""``Metrics`` / ``AsyncMetrics``: the Prometheus metrics the gateway proxies (``GET api/metrics``)."""

from __future__ import annotations

import aiohttp
import requests


class Metrics:
    """The metrics text, synchronously."""

    def __init__(self, url: str, timeout: float, token: str | None) -> None:
        self.url = url
        self.timeout = timeout
        self.token = token

    def get(self) -> str:
        """The body of ``GET {url}/api/metrics``; a status other than 200 raises."""
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        resp = requests.get(f"{self.url}/api/metrics", timeout=self.timeout, headers=headers)
        if resp.status_code != 200:
            raise Exception(f"Status code {resp.status_code}")
        return resp.text


class AsyncMetrics(Metrics):
    """The metrics text, for asyncio code."""

    async def get(self) -> str:  # type: ignore[override]
        """The body of ``GET {url}/api/metrics``; a status other than 200 raises."""
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout)) as session:
            async with session.get(f"{self.url}/api/metrics", headers=headers) as resp:
                if resp.status != 200:
                    raise Exception(f"Status code {resp.status}")
                return await resp.text()

    async def aclose(self) -> None:
        """Nothing is held between calls."""
