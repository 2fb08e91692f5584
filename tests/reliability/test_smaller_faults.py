"""The smaller faults of a red team's report, each on real processes.

Before the fixes: ``tg-show-tools`` and ``tg-show-tool-services`` printed what
services announce raw (escape sequences reached the terminal, a newline drew a
row of its own); credentials in ``OPENAI_BASE_URL`` replaced the API key (the
HTTP client sent ``Authorization: Basic ...`` and never the ``sk-`` token), and
a server echoing that header in its 401 put the password, base64, into
``tg-invoke-llm``'s error; and calls to the global services this stack does
not run (librarian, knowledge, collection-management) waited for the
gateway's 120 s deadline instead of being refused like an unserved flow
interface.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from support import BIN, Proc, wait_for, wait_for_async
from trustgraph.base.launching.broker import free_port
from trustgraph.base.messaging import deadlines

ANNOUNCER = Path(__file__).with_name("hostile_announcer.py")
CONTROL = "\x1b\x07\r\x9b"
KEY = "sk-doors-test-7f3a"
PASSWORD = "pa55-w0rd-doors"


def _stack(own_broker, spawn, tmp_path) -> str:
    spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
    port = free_port()
    spawn("api-gateway", "--port", str(port), "--host", "127.0.0.1", "--pulsar-admin-url", own_broker.admin_url,
          broker=own_broker)
    return f"http://127.0.0.1:{port}/"


async def test_announced_text_is_shown_escaped(own_broker, spawn, tmp_path, scenario):
    url = _stack(own_broker, spawn, tmp_path)
    ready = tmp_path / "hostile.ready"
    announcer = Proc([sys.executable, str(ANNOUNCER), "-t", f"hostile-{uuid.uuid4().hex[:6]}",
                      "--service-id", "svc\x1b]0;pwned\x07", "--no-metrics", "--pulsar-host", own_broker.url],
                     tmp_path / "hostile.log", env={"TG_READY_FILE": str(ready)}).start()
    try:
        announcer.wait_ready(ready, 60)

        def shown(command: str) -> subprocess.CompletedProcess:
            return subprocess.run([str(BIN / command), "-u", url], capture_output=True, text=True, timeout=60)

        tools = wait_for("the announced tool in tg-show-tools",
                         lambda: (r := shown("tg-show-tools")).returncode == 0 and "hostile-lookup" in r.stdout and r,
                         60)
        services = wait_for("the announced service in tg-show-tool-services",
                            lambda: (r := shown("tg-show-tool-services")).returncode == 0 and "pwned" in r.stdout
                            and r, 60)
    finally:
        announcer.stop()
    raw = [c for out in (tools.stdout, services.stdout) for c in CONTROL if c in out]
    description = [line for line in tools.stdout.splitlines() if line.startswith("| description")]
    one_row = len(description) == 1 and "| forged | row |" in description[0]
    # Outside the tables only tg-show-tools' own line about the approval policy, never a value's text.
    stray = [line for line in (tools.stdout + services.stdout).splitlines()
             if line and line[0] not in "+|" and not line.startswith("Approval (tool-policy/approval): ")]
    ok = not raw and one_row and not stray
    scenario(scenario="announced text in the tables", load="tg-show-tools and tg-show-tool-services on a stack",
             fault="a service announcing escape sequences, a bell and newlines in its description and id",
             expected="no control character reaches the terminal; a value stays on its own row",
             observed=f"{len(raw)} raw control characters; the description on {len(description)} line(s); "
                      f"{len(stray)} lines outside the tables", ok=ok)
    assert not raw, raw
    assert one_row, tools.stdout
    assert "\\x1b[2J\\x1b[31m\\n| forged | row |\\r\\x07" in description[0]
    assert "svc\\x1b]0;pwned\\x07" in services.stdout
    assert not stray, stray


class EchoingLlmServer:
    """An OpenAI-compatible server that refuses every call and quotes the Authorization header."""

    def __init__(self) -> None:
        self.seen: list[str | None] = []
        self.runner: web.AppRunner | None = None

    async def start(self) -> int:
        async def chat(request: web.Request) -> web.Response:
            header = request.headers.get("Authorization")
            self.seen.append(header)
            return web.json_response({"error": {"message": f"bad credentials: Authorization: {header}"}},
                                     status=401)

        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        return site._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()


async def test_url_credentials_never_replace_the_key_nor_reach_an_error(own_broker, spawn, tmp_path, scenario):
    server = EchoingLlmServer()
    port = await server.start()
    try:
        url = _stack(own_broker, spawn, tmp_path)
        flow = f"f{uuid.uuid4().hex[:6]}"
        req, resp = f"non-persistent://tg/request/tc-{flow}", f"non-persistent://tg/response/tc-{flow}"
        values = [{"type": "flow", "key": flow,
                   "value": json.dumps({"interfaces": {"text-completion": {"request": req, "response": resp}}})},
                  {"type": "active-flow", "key": "text-completion",
                   "value": json.dumps({flow: {"request": req, "response": resp}})}]
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{url}api/v1/config", json={"operation": "put", "values": values}) as r:
                assert "error" not in await r.json()
        llm = spawn("text-completion-openai", broker=own_broker, env={
            "OPENAI_BASE_URL": f"http://alice:{PASSWORD}@127.0.0.1:{port}/v1", "OPENAI_TOKEN": KEY,
            "TG_READY_AFTER_CONFIG": "1"}, timeout=60)

        def invoke() -> subprocess.CompletedProcess:
            return subprocess.run([str(BIN / "tg-invoke-llm"), "-u", url, "-f", flow, "hello"],
                                  capture_output=True, text=True, timeout=60)

        # In a thread: the echoing server answers on this test's event loop.
        result = await asyncio.to_thread(
            wait_for, "the LLM's refusal", lambda: (r := invoke()).returncode != 0 and "401" in r.stderr and r,
            60, lambda: llm.output())
    finally:
        await server.stop()
    basic = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    leaked = [s for s in (KEY, PASSWORD, basic) if s in result.stderr + result.stdout or s in llm.output()]
    sent = server.seen[-1]
    ok = sent == f"Bearer {KEY}" and not leaked
    scenario(scenario="LLM credentials in the URL", load="tg-invoke-llm through the gateway to "
             "text-completion-openai", fault="OPENAI_BASE_URL with user:password beside OPENAI_TOKEN; the server "
             "echoes the Authorization header in its 401",
             expected="the sk- key is the bearer token; no credential in the command's error or the logs",
             observed=f"the server got {'the key as bearer' if sent == f'Bearer {KEY}' else repr(sent)[:40]}; "
                      f"{len(leaked)} credential(s) shown; error: {result.stderr.strip()[:160]}", ok=ok)
    assert sent == f"Bearer {KEY}", sent
    assert not leaked, result.stderr
    assert "Authorization: Bearer ***" in result.stderr


async def test_a_global_service_nothing_serves_is_refused_at_once(own_broker, spawn, tmp_path, scenario):
    url = _stack(own_broker, spawn, tmp_path)
    short = 10.0   # a probe's deadline; a refusal comes in well under it, however loaded the machine
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as http:
        async def post(kind: str, deadline: float | None = None) -> tuple[dict, float]:
            headers = {deadlines.HEADER: deadlines.stamp(deadline)} if deadline else {}
            t0 = time.monotonic()
            try:
                async with http.post(f"{url}api/v1/{kind}", json={"operation": "list"}, headers=headers) as r:
                    return await r.json(), time.monotonic() - t0
            except TimeoutError:
                return {"error": "no answer within 60 s"}, time.monotonic() - t0

        async def refused() -> bool:   # each probe ends within its own deadline: no pause between
            return "Nothing serves" in str((await post("librarian", deadline=short))[0].get("error"))

        with contextlib.suppress(pytest.fail.Exception):   # the row below says what was seen
            await wait_for_async("the refusal of librarian", refused, 120, every=0)
        results = {kind: await post(kind) for kind in ("librarian", "knowledge", "collection-management")}
    slowest = max(took for _reply, took in results.values())
    refused = [k for k, (reply, took) in results.items() if str(reply.get("error", "")).startswith("Nothing serves")]
    ok = len(refused) == 3 and slowest < short
    scenario(scenario="unserved global routes", load="POST /api/v1/{librarian,knowledge,collection-management}",
             fault="no processor serves them (this stack does not run them)",
             expected="refused at once, as an unserved flow interface is",
             observed=f"{len(refused)} of 3 refused, the slowest after {slowest:.2f} s", ok=ok)
    assert len(refused) == 3, results
    assert slowest < short, results
