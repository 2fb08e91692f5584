"""Upstream TrustGraph 2.11.1's config side against a config service: its AsyncConfigClient and an
AsyncProcessor of its own, following the config notify-then-fetch.

Runs with ``.interop/upstream-2.11/bin/python``, never with the project's interpreter.  Usage:
``config_client_211.py PULSAR_URL``.  The processor starts (2.11's start-up fetch), the client puts
``tool/a`` in workspace ``default`` and ``tool/b`` in ``other``, and the processor's handler must
be called with ``a`` after the notice; prints what each step saw as JSON.  Every wait is bounded
(a hang is a failure, not a sleep).
"""
import asyncio
import json
import os
import sys

from trustgraph.base.async_config_client import AsyncConfigClient
from trustgraph.base.async_processor import AsyncProcessor
from trustgraph.base.pubsub import get_async_pubsub
from trustgraph.schema import config_request_queue, config_response_queue


class Follower(AsyncProcessor):
    """2.11.1's own base class, following config type ``tool``."""

    def __init__(self, **params):
        super().__init__(**params)
        self.calls = []
        self.changed = asyncio.Event()
        self.register_config_handler(self.on_tool, types=["tool"])

    async def on_tool(self, workspace, config, version):
        self.calls.append({"workspace": workspace, "version": version, "tool": config.get("tool", {})})
        self.changed.set()


async def main(url: str) -> None:
    out = {}
    follower = Follower(id="interop-follower-211", pulsar_host=url, pubsub_backend="pulsar")
    await follower.start()
    out["startup_version"] = follower.config_version
    backend = get_async_pubsub(pulsar_host=url)
    client = await AsyncConfigClient.create(backend, config_request_queue, config_response_queue)
    try:
        await client.put("default", "tool", "a", '{"name": "a"}')
        await client.put("other", "tool", "b", '{"name": "b"}')
        out["get"] = await client.get("default", "tool", "a")
        out["keys_other"] = await client.keys("other", "tool")
        out["config_default"] = await client.get_all("default")
        out["workspaces"] = sorted(await client.workspaces_for_type("tool"))
        try:
            await client.get("", "tool", "a")
        except RuntimeError as e:
            out["no_workspace"] = str(e)
        # The handler is called for each workspace a notice names; wait until it saw both puts.
        while not any(c["workspace"] == "other" for c in follower.calls):
            follower.changed.clear()
            await asyncio.wait_for(follower.changed.wait(), 60)
        out["calls"] = follower.calls
    finally:
        await client.close()
        await follower.stop()
    print(json.dumps(out))


asyncio.run(main(sys.argv[1]))
# What was seen is out: leave without the interpreter's teardown, in which 2.11.1's pulsar client
# now and then aborts the process (as in caller_211.py): seen once, a row whose every check held
# failed on the exit status alone.
sys.stdout.flush()
os._exit(0)
