"""Clients that hold the gateway's connections without using them: idle sockets, trickled headers and bodies.

Before the fix (main at d378ec6) the gateway had no idle, header or body
timeouts and no cap on connections: about 20,000 idle TCP connections, no
token needed, reached its 20,000-file limit; from then on every request
failed, and asyncio logged a traceback for each failed accept (145 MB in two
minutes, enough to fill a disk).  A client sending its headers or its body a
byte at a time was held for as long as it liked.  Here the gateway's file
limit is lowered (``prlimit``) so that thousands of sockets reach it.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from pathlib import Path

import aiohttp
import psutil
import pytest
from support import BIN, Proc, wait_for_async
from trustgraph.base.launching.broker import free_port
from trustgraph.base.safety.connections import BODY_GRACE, HEADER_TIMEOUT

pytestmark = pytest.mark.slow

FILE_LIMIT = 2048
IDLE_SOCKETS = 5000
SLOW_CLIENTS = 100


@pytest.fixture
def gateway(own_broker, tmp_path: Path):
    """Start an api-gateway on ``own_broker`` (its command after ``prefix``, e.g. prlimit's); each
    is stopped when the test ends, whatever happened (one left running outlives the suite)."""
    procs: list[Proc] = []

    def start(*prefix: str) -> tuple[Proc, str, Path]:
        port = free_port()
        ready, log = tmp_path / f"gateway-{port}.ready", tmp_path / f"gateway-{port}.log"
        proc = Proc(
            [
                *prefix,
                str(BIN / "api-gateway"),
                "--port",
                str(port),
                "--host",
                "127.0.0.1",
                "--no-metrics",
                "--pulsar-host",
                own_broker.url,
            ],
            log,
            env={"TG_READY_FILE": str(ready)},
        ).start()
        procs.append(proc)
        proc.wait_ready(ready, 60)
        return proc, f"http://127.0.0.1:{port}", log

    yield start
    for proc in procs:
        proc.stop()


async def timed_get(http: aiohttp.ClientSession, url: str) -> tuple[int, float]:
    start = time.monotonic()
    try:
        async with http.get(url) as r:
            await r.read()
            return r.status, time.monotonic() - start
    except (aiohttp.ClientError, TimeoutError):
        return 0, time.monotonic() - start


async def timed_config_call(http: aiohttp.ClientSession, url: str) -> tuple[bool, float]:
    start = time.monotonic()
    try:
        async with http.post(
            f"{url}/api/v1/config", data=json.dumps({"operation": "list", "type": "x"})
        ) as r:
            return "directory" in await r.json(), time.monotonic() - start
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return False, time.monotonic() - start


async def test_thousands_of_idle_sockets_past_the_file_limit_leave_real_requests_answered(
    own_broker, spawn, tmp_path, scenario, gateway
):
    spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
    proc, url, log = gateway("prlimit", f"--nofile={FILE_LIMIT}:{FILE_LIMIT}")
    port = int(url.rsplit(":", 1)[1])
    gw = psutil.Process(proc.p.pid)
    rss_before, log_before = gw.memory_info().rss, log.stat().st_size
    opened: list[asyncio.StreamWriter] = []
    failed = peak_fds = 0

    async def one() -> None:
        nonlocal failed
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 30)
            opened.append(writer)
        except (OSError, TimeoutError):
            failed += 1

    start = time.monotonic()
    for batch in range(0, IDLE_SOCKETS, 250):
        await asyncio.gather(*(one() for _ in range(min(250, IDLE_SOCKETS - batch))))
        peak_fds = max(peak_fds, gw.num_fds())
    flood_s = time.monotonic() - start
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        health, health_s = await timed_get(http, f"{url}/api/v1/health")
        answered, call_s = await timed_config_call(http, url)
    peak_fds = max(peak_fds, gw.num_fds())
    for writer in opened:
        writer.close()
    text = log.read_text(errors="replace")
    grew = log.stat().st_size - log_before
    tracebacks, warnings = text.count("Traceback"), text.count(" WARNING ")
    rss_mb = (gw.memory_info().rss - rss_before) / 2**20
    alive = proc.p.poll() is None
    ok = health == 200 and answered and grew < 64 * 1024 and tracebacks == 0 and alive
    scenario(
        scenario="idle connections",
        load=f"{IDLE_SOCKETS:,} idle TCP connections, no token, in {flood_s:.1f} s, to a gateway whose "
        f"open-file limit is {FILE_LIMIT:,}",
        fault="idle sockets past the gateway's file limit (before: about 20,000 at its 20,000-file limit "
        "failed every request, and a traceback per failed accept logged 145 MB in two minutes)",
        expected="the idle connections longest idle make room (cap below the file limit); a real request "
        "is answered; failed accepts are one log line a minute",
        observed=f"{len(opened):,} connected, {failed} refused by the kernel; health {health} in "
        f"{health_s:.2f} s, a config call answered={answered} in {call_s:.2f} s; the log grew "
        f"{grew:,} bytes ({warnings} WARNING lines, {tracebacks} tracebacks); at most "
        f"{peak_fds:,} descriptors open of {FILE_LIMIT:,}; RSS {rss_mb:+.0f} MB",
        exits=0 if alive else 1,
        ok=ok,
    )
    assert alive, proc.output()
    assert health == 200 and answered, (health, answered, proc.output())
    assert tracebacks == 0 and grew < 64 * 1024, text[-3000:]


async def test_clients_that_trickle_headers_or_bodies_are_cut_and_others_answered(
    own_broker, spawn, tmp_path, scenario, gateway
):
    spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
    proc, url, _log = gateway()
    port = int(url.rsplit(":", 1)[1])
    header_closed: list[float] = []
    body_closed: list[float] = []
    connected = 0

    async def trickle(opening: bytes, closed: list[float]) -> bytes:
        """Send ``opening``, then a byte a second until the gateway closes; what it answered."""
        nonlocal connected
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        connected += 1
        start = time.monotonic()
        writer.write(opening)
        answer = b""
        try:
            while True:
                try:
                    got = await asyncio.wait_for(reader.read(4096), 1.0)
                except TimeoutError:
                    writer.write(b"x")
                    await writer.drain()
                    continue
                answer += got
                if not got:
                    break
        except (ConnectionError, OSError):
            pass
        closed.append(time.monotonic() - start)
        writer.close()
        return answer

    headers = [
        trickle(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: ", header_closed)
        for _ in range(SLOW_CLIENTS)
    ]
    bodies = [
        trickle(
            b"POST /api/v1/config HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000000\r\n\r\n{",
            body_closed,
        )
        for _ in range(SLOW_CLIENTS)
    ]
    slow = asyncio.gather(*headers, *bodies)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        await wait_for_async("the slow clients connected", lambda: connected == 2 * SLOW_CLIENTS, 30)
        answered, call_s = await timed_config_call(http, url)
        answers = await asyncio.wait_for(slow, 120)
    answered_408 = sum(1 for a in answers[SLOW_CLIENTS:] if a.startswith(b"HTTP/1.1 408"))
    alive = proc.p.poll() is None
    header_s = (statistics.median(header_closed), max(header_closed))
    body_s = (statistics.median(body_closed), max(body_closed))
    ok = (
        answered
        and alive
        and header_s[1] < HEADER_TIMEOUT + 15
        and body_s[1] < BODY_GRACE + 30
        and answered_408 == SLOW_CLIENTS
    )
    scenario(
        scenario="slow header/body client",
        load=f"{SLOW_CLIENTS} clients sending their headers a byte a second and {SLOW_CLIENTS} sending "
        "a 1 MB body a byte a second, beside a real request",
        fault="clients that never finish a request (before: held for as long as they liked)",
        expected=f"headers cut at their {HEADER_TIMEOUT:g} s deadline; bodies answered 408 once under "
        f"the pace ({BODY_GRACE:g} s, then 32 KiB/s); the real request answered",
        observed=f"headers closed after {header_s[0]:.1f} s (median), {header_s[1]:.1f} s at most; bodies "
        f"after {body_s[0]:.1f} s, {body_s[1]:.1f} s at most, {answered_408} answered 408; the "
        f"real request answered={answered} in {call_s:.2f} s",
        exits=0 if alive else 1,
        ok=ok,
    )
    assert alive and answered, proc.output()
    assert header_s[1] < HEADER_TIMEOUT + 15, header_closed
    assert body_s[1] < BODY_GRACE + 30 and answered_408 == SLOW_CLIENTS, (body_closed, answers[-1])
