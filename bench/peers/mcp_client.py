"""The MCP client worker: one ``ClientSession`` over Streamable HTTP.

One session carries every call, including the 32 in flight, as an agent
holding one MCP connection would.  Runs in the bench's own venv.

Usage: ``mcp_client.py URL``.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

import _driver
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

ARGS = {"text": "hello"}


async def main(url: str) -> None:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        end = asyncio.get_running_loop().time() + 60
        while True:  # the server may still be starting
            try:
                await asyncio.wait_for(session.initialize(), 2.0)
                break
            except Exception:
                if asyncio.get_running_loop().time() > end:
                    raise
                await asyncio.sleep(0.1)

        async def call(topic: str, timeout: float | None = None) -> Any:
            result = await session.call_tool("echo", ARGS, read_timeout_seconds=timeout or 30)
            if result.is_error:
                raise RuntimeError(f"tool error: {result}")
            return result

        await _driver.warm_up(call, "echo")
        await _driver.serve(call, "echo")


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(main(sys.argv[1]))
