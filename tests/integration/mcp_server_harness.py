"""mcp-server in the test's own process on a real broker, and the tool services it offers.

Shared by the mcp-server tests: :class:`McpServer` runs the processor with
announcement topics of its own (so no other test's services appear) and
takes its config directly; the fixture :func:`mcp_server` starts them
(``await mcp_server(**params)``) and stops them at the end; :func:`announcing`
starts ``announcing_service.py`` as a real process announcing on those topics;
:func:`open_session` and :func:`session_headers` are a session-era client in
plain HTTP requests (unlike the SDK's client, it holds no stream open, so its
session is idle exactly when the test leaves it so).
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest
from agent_stand_ins import unique
from support import Proc
from trustgraph.mcp_server import Processor

SCRIPT = Path(__file__).with_name("announcing_service.py")
#: The session-era revision the raw-HTTP helpers speak.
VERSION = "2025-06-18"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "session-test", "version": "1"},
    },
}


class McpServer:
    """One mcp-server processor (``port=0``: a free port; ``proc.url`` says where)."""

    def __init__(self, broker: Any, **params: Any) -> None:
        own = unique("mcp-cfg")
        self.topics = {"announce_queue": f"non-persistent://tg/config/{own}-announce",
                       "announce_probe_queue": f"non-persistent://tg/config/{own}-probe"}
        self.proc = Processor(id=unique("mcp-server"), pulsar_host=broker.url, metrics=False,
                              follow_config=False, port=0, **self.topics, **params)
        self.version = 0

    @property
    def url(self) -> str:
        return self.proc.url

    async def configure(self, tools: dict, services: dict) -> None:
        self.version += 1
        await self.proc.apply_config({"tool": {k: json.dumps(v) for k, v in tools.items()},
                                      "tool-service": {k: json.dumps(v) for k, v in services.items()}},
                                     self.version)


@pytest.fixture
async def mcp_server(broker: Any) -> Any:
    """``await mcp_server(**params)``: a started :class:`McpServer` (stopped when the test ends)."""
    started: list[McpServer] = []

    async def make(**params: Any) -> McpServer:
        s = McpServer(broker, **params)
        await s.proc.start()
        started.append(s)
        return s

    yield make
    for s in started:
        await s.proc.stop()


def text(result: Any) -> str:
    """A tool result's text."""
    return "".join(c.text for c in result.content)


def announcing(broker: Any, tmp_path: Path, topics: dict[str, str], *args: str) -> Proc:
    """``announcing_service.py`` as a process announcing on ``topics`` (an McpServer's), ready."""
    ready = tmp_path / f"ready-{uuid.uuid4().hex[:6]}"
    argv = [sys.executable, str(SCRIPT), "--id", unique("weather-service"), "-t", unique("weather"),
            "-p", broker.url, "--no-metrics", "--announce-queue", topics["announce_queue"],
            "--announce-probe-queue", topics["announce_probe_queue"], *args]
    proc = Proc(argv, tmp_path / f"{ready.name}.log", env={"TG_READY_FILE": str(ready)}).start()
    proc.wait_ready(ready)
    return proc


async def open_session(http: httpx2.AsyncClient, url: str) -> str:
    """A new session, initialised, with nothing left in flight."""
    r = await http.post(url, json=INITIALIZE, headers=HEADERS)
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    done = await http.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session_headers(sid)
    )
    assert done.status_code == 202, done.text
    return sid


def session_headers(sid: str) -> dict[str, str]:
    return {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": VERSION}
