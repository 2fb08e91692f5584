"""After a broker restart, what a service says about itself ends no call it is serving.

A process back from a broker outage tells the others which of its request
topics it serves again, and since when, so that calls sent while its
subscription was gone (dropped by the broker) end at once instead of at
their deadlines.  Before the fix that time was when the *last* part of the
process had reconnected (polled every 0.25 s), while its request consumer is
often back first: the calls that reached the consumer in between were being
served when the notice ended them, and their callers were told they failed
(a non-idempotent tool then runs again when the caller retries).  And a
call sent while the caller's own producer was reconnecting was dated when
it was handed to pulsar-client, not when it went out, so notices about the
outage ended it too.

The scenario: a tool service recording every call it runs, a caller sending
a call every 50 ms, the broker killed (SIGKILL) and started again three
times.  Of the calls sent after the broker was back, none the service ran
may be ended as lost.
"""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from pathlib import Path

import pytest
from support import Proc, wait_for
from trustgraph.base import PubSub, ToolServiceClient
from trustgraph.base.messaging.request_response import CallLost, RequestTimeout

SERVICE = Path(__file__).with_name("slow_tool_service.py")
RESTARTS = 3
EVERY = 0.05          # a call every 50 ms (load, not synchronisation)
CALL_SECONDS = 1.0    # each call takes a second in the service
DEADLINE = 20.0       # a call that nothing ends waits this long
AFTER = 3.0           # calls go on this long after the service says it is back


@pytest.mark.long
async def test_notices_after_a_broker_restart_end_no_call_the_service_runs(own_broker, tmp_path, scenario):
    topic = f"reconnect-{uuid.uuid4().hex[:8]}"
    record = tmp_path / "ran.txt"
    record.touch()
    ready = tmp_path / "slow.ready"
    service = Proc([sys.executable, str(SERVICE), "-t", topic, "--record", str(record), "-c", "256",
                    "--no-metrics", "--pulsar-host", own_broker.url], tmp_path / "slow.log",
                   env={"TG_READY_FILE": str(ready)}).start()
    ps = PubSub(own_broker.url, processor="reconnect-caller", connect_timeout=None)
    client = ToolServiceClient(ps, request_topic=f"non-persistent://tg/request/{topic}",
                               response_topic=f"non-persistent://tg/response/{topic}", timeout=DEADLINE)
    outcomes: dict[int, tuple[float, str]] = {}   # n -> (sent, outcome)
    tasks: list[asyncio.Task] = []
    counter = iter(range(1_000_000))
    backs: list[float] = []
    kills: list[float] = []
    reasons: list[str] = []   # why each call was ended as lost

    async def call(n: int) -> None:
        sent = time.time()
        try:
            await client.call("t", {}, {"n": n, "seconds": CALL_SECONDS}, timeout=DEADLINE)
            outcome = "ok"
        except CallLost as e:
            outcome = "lost"
            reasons.append(str(e))
        except RequestTimeout:
            outcome = "deadline"
        except Exception as e:  # noqa: BLE001 - every other outcome is counted as an error
            outcome = f"error: {e}"
        outcomes[n] = (sent, outcome)

    async def send_for(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            tasks.append(asyncio.ensure_future(call(next(counter))))
            await asyncio.sleep(EVERY)

    def log_count(text: str) -> int:
        return service.output().count(text) if service.log.exists() else 0

    try:
        await asyncio.to_thread(service.wait_ready, ready, 60)
        await client.start()
        assert await client.call("t", {}, {"seconds": 0}, timeout=30) == "done"
        for _ in range(RESTARTS):
            lost_before, back_before = log_count("Lost the connection"), log_count("Reconnected")
            await send_for(1.0)
            kills.append(time.time())
            own_broker.kill()
            sending = asyncio.ensure_future(send_for(60.0))
            await asyncio.to_thread(wait_for, "the service seeing the broker go",
                                    lambda n=lost_before: log_count("Lost the connection") > n, 30, service.output)
            await asyncio.to_thread(own_broker.start)
            backs.append(time.time())
            await asyncio.to_thread(wait_for, "the service back on the broker",
                                    lambda n=back_before: log_count("Reconnected") > n, 60, service.output)
            sending.cancel()
            await send_for(AFTER)
        await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
        await client.stop()
        await ps.close()
        service.stop()
    ran = {int(line) for line in record.read_text().split() if line.strip().isdigit()}
    # Sent after a restart and done before the next kill: calls in flight at a kill are another matter.
    windows = [(back, kill - CALL_SECONDS - 0.5) for back, kill in zip(backs, [*kills[1:], float("inf")], strict=True)]
    after = {n: o for n, o in outcomes.items() if any(back <= o[0] < kill for back, kill in windows)}
    wrongly_ended = sorted(n for n, (_sent, outcome) in after.items() if n in ran and outcome == "lost")
    ended = sum(1 for n, (_s, o) in after.items() if n not in ran and o == "lost")
    waited = sum(1 for _s, o in after.values() if o == "deadline")
    errors = [o for _s, o in after.values() if o.startswith("error")]
    # Nothing restarted: a call ended as lost must not blame a restart of the service.
    blamed = [r for r in reasons if "started again" in r]
    ok = not wrongly_ended and not errors and not blamed
    scenario(scenario="notices after a broker restart", load=f"a call every {EVERY * 1000:.0f} ms to a "
             f"{CALL_SECONDS:g} s tool service, {len(outcomes)} calls",
             fault=f"the broker killed (SIGKILL) and started again {RESTARTS} times",
             expected="no call sent after the broker was back, and run by the service, is ended as lost",
             observed=f"{len(after)} calls sent after a restart: {len(wrongly_ended)} run and ended as lost, "
                      f"{ended} never run and ended at once, {waited} waited out their {DEADLINE:g} s deadline, "
                      f"{len(errors)} other errors; {len(blamed)} of {len(reasons)} lost calls said the service "
                      "had started again",
             lost=len(wrongly_ended), ok=ok)
    assert not wrongly_ended, f"{len(wrongly_ended)} calls ran in the service and were ended as lost"
    assert not errors, errors[:3]
    assert not blamed, f"{len(blamed)} lost calls blamed a restart that never happened: {blamed[:3]}"
