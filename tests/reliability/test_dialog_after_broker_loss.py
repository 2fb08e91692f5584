"""A dialog whose caller was told it failed does no more work in the agent.

When the broker goes, every caller of ours ends the calls it had in flight:
``tg-invoke-agent`` hears from the gateway that its call was lost.  The
agent, though, went on with the dialog once the broker was back: the tool
call cut off by the outage became an ``Error:`` observation, the model asked
for the same call again, and a non-idempotent tool ran twice or three times
for dialogs nobody waited for any more.

The scenario: a stack launched by the real ``tg-launch`` on a broker of the
test's own (scripted model), a counting tool service (every call it starts
is recorded), several dialogs from the real ``tg-invoke-agent``, each
calling the tool; while every call is running, the broker is killed
(SIGKILL) and started again.  Every caller must be told its call failed,
and every dialog must end in the agent without calling the tool again.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import uuid
from collections import Counter
from pathlib import Path

import pytest
from support import BIN, Proc, Stack, wait_for

SERVICE = Path(__file__).with_name("slow_tool_service.py")
DIALOGS = 6
CALL_SECONDS = 20       # each call runs this long: still running when the broker is killed
# The agent's error; it names the process whose loss it heard of last (itself, or one whose notice
# came: every caller of ours ends its calls on either).
STOPPED = re.compile(r"failed: The dialog stopped: \S+( \S+)? lost its broker connection during it")

pytestmark = [pytest.mark.long, pytest.mark.timeout(900)]


def question(n: int) -> str:
    # Every argument value the model gives is in the question (the agent asks back otherwise).
    return f"Count for dialog {n} please, taking {CALL_SECONDS} seconds"


async def test_no_tool_call_for_a_dialog_after_its_agent_lost_the_broker(own_broker, tmp_path, scenario):
    topic = f"count-{uuid.uuid4().hex[:6]}"
    record = tmp_path / "ran.txt"
    record.touch()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [
        {"match": f"Question: {question(n)}",
         "reply": json.dumps({"action": "count", "args": {"n": n, "seconds": CALL_SECONDS}})}
        for n in range(DIALOGS)], "default": "no rule matched"}))
    ready = tmp_path / "count.ready"
    counter = Proc([sys.executable, str(SERVICE), "-t", topic, "--record", str(record), "-c", "32",
                    "--no-metrics", "--pulsar-host", own_broker.url], tmp_path / "count.log",
                   env={"TG_READY_FILE": str(ready)}).start()
    stack = Stack(tmp_path / "data", ["-p", own_broker.url, "--llm", "scripted", "--llm-script", str(script),
                                      "--no-mcp-server", "--no-mcp-tool", "--no-metrics"])
    env = {**os.environ, "TRUSTGRAPH_URL": stack.url}

    def agent_log() -> str:
        path = stack.data_dir / "logs" / "agent.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def calls() -> Counter:
        return Counter(line for line in record.read_text().split() if line.strip())

    def put(item: str, value: dict) -> None:
        r = stack.cli("tg-put-config-item", item, "--force", input=json.dumps(value), timeout=120)
        assert r.returncode == 0, r.stderr

    askers: list[asyncio.subprocess.Process] = []
    try:
        counter.wait_ready(ready, 120)
        await asyncio.to_thread(stack.start, 300)
        put("tool-service/count-svc", {"id": "count-svc", "request-queue": f"non-persistent://tg/request/{topic}",
                                       "response-queue": f"non-persistent://tg/response/{topic}"})
        put("tool/count", {"type": "tool-service", "name": "count", "description": "Count one more (not idempotent)",
                           "service": "count-svc",
                           "arguments": [{"name": "n", "type": "number", "description": "which dialog"},
                                         {"name": "seconds", "type": "number", "description": "how long"}]})
        wait_for("the count tool in the agent", lambda: any(
            "Tools: " in line and "count" in line.split("Tools: ", 1)[1].split(" (")[0].split(", ")
            for line in agent_log().splitlines()), 120, agent_log)
        for n in range(DIALOGS):
            askers.append(await asyncio.create_subprocess_exec(
                str(BIN / "tg-invoke-agent"), "-q", question(n), stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=env))
        # Every dialog's call is running in the tool service: then the broker dies.
        await asyncio.to_thread(wait_for, "every dialog's tool call", lambda: len(calls()) == DIALOGS, 120,
                                lambda: agent_log()[-3000:])
        own_broker.kill()
        await asyncio.to_thread(own_broker.start)
        told = [await asyncio.wait_for(a.communicate(), 200) for a in askers]
        # Each dialog ends in the agent, or (as before the fix) calls the tool again.
        await asyncio.to_thread(wait_for, "every dialog ended in the agent", lambda: len(STOPPED.findall(agent_log()))
                                >= DIALOGS or max(calls().values()) > 1, 180, lambda: agent_log()[-3000:])
    finally:
        for a in askers:
            if a.returncode is None:
                a.kill()
        stack.stop()
        counter.stop()
    failed = [a.returncode != 0 and b"error" in err for a, (_out, err) in zip(askers, told, strict=True)]
    ran = calls()
    again = sorted(n for n, c in ran.items() if c > 1)
    ended = len(STOPPED.findall(agent_log()))
    ok = all(failed) and not again and len(ran) == DIALOGS and ended == DIALOGS
    scenario(scenario="no dialog work after its caller was told it failed",
             load=f"{DIALOGS} dialogs from tg-invoke-agent, each calling a counting (non-idempotent) tool that "
                  f"runs {CALL_SECONDS} s",
             fault="the broker killed (SIGKILL) and started again while every call runs",
             expected="every caller told its call failed; every dialog ends in the agent with an error saying why; "
                      "the tool is not called again for any dialog",
             observed=f"{sum(failed)} of {DIALOGS} callers told it failed; {ended} dialogs ended in the agent; "
                      f"tool called again for {len(again)} dialog(s) {again}; calls {dict(sorted(ran.items()))}",
             lost=len(again), ok=ok)
    assert ok, (told, dict(ran), agent_log()[-3000:])
