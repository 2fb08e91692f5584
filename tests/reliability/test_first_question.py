"""A question asked while the stack starts, as a script that polls health (a readiness probe) asks it.

Before the fix (main at d378ec6) ``GET /api/v1/health`` answered 200 ``"status": "ok"``
as soon as the gateway listened, about 6 s into ``tg-launch``, while prompt,
llm and agent were still starting.  The question asked then reached the
agent, whose request to the prompt service went to a topic nobody consumed
yet and was dropped: it waited 90 s and ended "The dialog ran out of time:
the model did not decide the next step".  Now health says ``starting`` (503)
until every component has come up, and a request sent before its service is
up is held until the service is there (``unserved.py``: no grace runs out
while the stack starts), so both questions below are answered.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from support import BIN, ONLY_JOKE_SERVICE, Stack, bounded_llm, wait_for

pytestmark = [pytest.mark.long, pytest.mark.timeout(900)]

QUESTION = "Tell me a dad joke about the weekend"


def health(stack: Stack) -> tuple[int, dict] | None:
    try:
        with urllib.request.urlopen(stack.url + "api/v1/health", timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def ask(stack: Stack) -> subprocess.Popen:
    return subprocess.Popen(
        [str(BIN / "tg-invoke-agent"), "-q", QUESTION],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TRUSTGRAPH_URL": stack.url},
    )


def test_a_question_asked_as_the_stack_starts_is_answered_once_it_can_be(tmp_path, scenario):
    s = Stack(tmp_path / "data", [*bounded_llm(tmp_path, 256), *ONLY_JOKE_SERVICE])
    questions: list[subprocess.Popen] = []
    with open(s.log, "wb") as out:
        s.proc = subprocess.Popen(s.args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    start = time.monotonic()
    try:
        first = wait_for(
            "the gateway answering health", lambda: health(s), 180, detail=s.output, gone=s.exited
        )
        gateway_s = time.monotonic() - start
        early = ask(s)  # while the stack is still starting
        early_at = time.monotonic()
        questions.append(early)
        ok = wait_for(
            "health ok",
            lambda: (h := health(s)) is not None and h[0] == 200 and h,
            300,
            detail=s.output,
            gone=s.exited,
        )
        ok_s = time.monotonic() - start
        ready_at_ok = all(c.get("state") == "up" for c in ok[1]["components"].values())
        at_ok = ask(s)
        at_ok_at = time.monotonic()
        questions.append(at_ok)
        at_ok_out, at_ok_err = at_ok.communicate(timeout=240)
        at_ok_took = time.monotonic() - at_ok_at
        early_out, early_err = early.communicate(timeout=240)
        early_took = time.monotonic() - early_at
    finally:
        for q in questions:
            if q.poll() is None:
                q.kill()
                q.wait()
        logs = s.child_logs()
        s.stop()
    starting = first[1].get("starting") if first[0] == 503 else None
    answered = early.returncode == 0 and at_ok.returncode == 0
    ok_row = (
        first[0] == 503
        and ok[1]["status"] == "ok"
        and ready_at_ok
        and answered
        and max(early_took, at_ok_took) < 120
    )
    scenario(
        scenario="first question at start-up",
        load="tg-launch with the embedded model; a script polls GET /api/v1/health and asks the agent "
        "once the gateway answers, and again once health says ok",
        fault="questions asked while prompt, llm and agent are starting (before: health said ok at "
        "about 6 s; the question waited 90 s and ended 'the dialog ran out of time')",
        expected="health 503 'starting' until every component is up; both questions answered, the early "
        "one held until its services are up",
        observed=f"the gateway answered at {gateway_s:.1f} s with {first[0]} "
        f"{first[1].get('status')!r} (starting: {', '.join(starting or []) or '-'}); health ok "
        f"at {ok_s:.1f} s, with every component up: {ready_at_ok}; the question asked at "
        f"{gateway_s:.1f} s answered in {early_took:.1f} s (exit {early.returncode}), the one "
        f"asked at health ok in {at_ok_took:.1f} s (exit {at_ok.returncode})",
        ok=ok_row,
    )
    assert first[0] == 503 and first[1]["status"] == "starting", first
    assert ready_at_ok, ok
    assert early.returncode == 0, early_err + early_out + logs
    assert at_ok.returncode == 0, at_ok_err + at_ok_out + logs
    assert max(early_took, at_ok_took) < 120
