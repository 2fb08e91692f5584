"""Approval of a destructive tool call on a launched stack: the real tg-invoke-agent, REST, and a
tool service that records every call it gets (docs/governing-tools.md).

The stack runs the scripted model: asked the question, it calls ``delete-note``; told the user
refused, it answers in its own words.  ``delete-note`` is declared destructive by its service, so
the default policy (no ``tool-policy/approval`` item) asks first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from support import BIN, ONLY_JOKE_SERVICE, Proc, wait_for

SERVICE = Path(__file__).resolve().parent / "notes_service.py"
QUESTION = "Delete the note called groceries"
PAUSE_TEXT = 'Approval needed to run delete-note with {"title": "groceries"}: approve or refuse it to go on.'
DELETED = "Deleted the note groceries."
KEPT = "I left the note alone."


@pytest.fixture(scope="module")
def stack(stack_factory, tmp_path_factory):
    script = tmp_path_factory.mktemp("script") / "script.json"
    script.write_text(json.dumps({"rules": [
        # After a refusal (its observation is in the prompt's history) the model answers itself.
        {"match": "the user refused this call", "reply": json.dumps({"action": "final-answer", "answer": KEPT})},
        {"match": f"Question: {QUESTION}", "reply": json.dumps({"action": "delete-note",
                                                                 "args": {"title": "groceries"}})},
    ], "default": "no rule matched"}))
    return stack_factory("--llm", "scripted", "--llm-script", str(script), *ONLY_JOKE_SERVICE)


@pytest.fixture(scope="module")
def calls(stack, tmp_path_factory):
    """The notes service running beside the stack; yields its record of calls (a file)."""
    where = tmp_path_factory.mktemp("notes")
    record, ready = where / "calls.jsonl", where / "ready"
    record.touch()
    proc = Proc([sys.executable, str(SERVICE), "--id", "notes", "-t", "notes-e2e", "-p", stack.broker_url(),
                 "--calls", str(record), "--no-metrics"], where / "notes.log",
                env={"TG_READY_FILE": str(ready)}).start()
    proc.wait_ready(ready)
    wait_for("delete-note in tg-show-tools", lambda: "delete-note" in stack.cli("tg-show-tools").stdout, 60,
             detail=stack.child_logs)
    yield record
    proc.stop()


def made(record: Path) -> list[dict]:
    return [json.loads(line) for line in record.read_text().splitlines()]


def invoke(stack, *args: str) -> subprocess.CompletedProcess:
    # input="": standard input is not a terminal, whatever runs the tests.
    return stack.cli("tg-invoke-agent", "-q", QUESTION, *args, input="", timeout=120)


def post(stack, body: dict) -> dict:
    req = urllib.request.Request(stack.url + "api/v1/flow/default/service/agent", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(req, timeout=120).read())


def test_tg_show_tools_says_the_destructive_tool_is_asked_about_first(stack, calls):
    out = stack.cli("tg-show-tools").stdout
    (table,) = [t for t in out.split("\n\n") if "delete-note" in t]
    assert ("| approval       | asked first: it says it is destructive, and tool-policy/approval asks first for "
            "every destructive tool |") in table, table
    (joke,) = [t for t in out.split("\n\n") if "| tell-joke" in t]
    assert "not asked: the agent calls it when the model decides to" in joke
    assert ("Approval (tool-policy/approval): the agent asks before calling every tool that says it is destructive; "
            "an approval waits 600 s") in out


def test_with_no_terminal_and_no_flag_it_prints_the_approval_and_exits_6(stack, calls):
    before = len(made(calls))
    r = invoke(stack)
    assert (r.returncode, r.stdout) == (6, PAUSE_TEXT + "\n"), r.stderr
    assert r.stderr == ("tg-invoke-agent: tool 'delete-note' with {\"title\": \"groceries\"} needs approval, and "
                        "there is no terminal to ask on: run again with --approve or --refuse\n")
    r = invoke(stack, "--no-streaming")
    assert (r.returncode, r.stdout) == (6, PAUSE_TEXT + "\n"), r.stderr
    # Nothing ran (bounded by a later event: an approved call, the one call recorded after these).
    assert invoke(stack, "--approve").returncode == 0
    assert len(made(calls)) == before + 1


def test_refuse_does_not_call_the_tool_and_approve_does(stack, calls):
    before = len(made(calls))
    r = invoke(stack, "--refuse", "--no-streaming")
    assert r.returncode == 3, r.stdout + r.stderr   # the model's own answer, marked (docs/agent.md)
    assert r.stdout == f"No tool answered this question, so this answer is the model's own, not checked by any tool: " \
                       f"{KEPT}\n"
    assert r.stderr.splitlines()[0] == ("tg-invoke-agent: refused by --refuse: tool 'delete-note' with "
                                        '{"title": "groceries"}')
    # The later event: an approved dialog's call. Once it has reached the service, the refused one
    # has not (one call recorded, the approved one).
    r = invoke(stack, "--approve")
    assert (r.returncode, r.stdout) == (0, DELETED + "\n"), r.stderr
    assert made(calls)[before:] == [{"user": "trustgraph", "arguments": {"title": "groceries"}}]
    r = invoke(stack, "--approve", "--no-streaming", "-U", "alice")
    assert (r.returncode, r.stdout) == (0, DELETED + "\n"), r.stderr
    assert made(calls)[before + 1:] == [{"user": "alice", "arguments": {"title": "groceries"}}]


def test_on_a_terminal_it_asks(stack, calls, tmp_path):
    import pty

    before = len(made(calls))
    master, terminal = pty.openpty()
    err = tmp_path / "stderr"
    with open(err, "wb") as stderr:
        proc = subprocess.Popen([str(BIN / "tg-invoke-agent"), "-q", QUESTION], stdin=terminal,
                                stdout=subprocess.PIPE, stderr=stderr,
                                env={**os.environ, "TRUSTGRAPH_URL": stack.url})
    os.close(terminal)
    try:
        wait_for("Run it? on the terminal", lambda: err.read_text().endswith("Run it? [y/N] "), 120,
                 gone=lambda: None if proc.poll() is None else f"exited {proc.returncode}: {err.read_text()}")
        assert len(made(calls)) == before    # nothing runs while it asks
        os.write(master, b"y\n")
        out, _ = proc.communicate(timeout=120)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, out.decode()) == (0, DELETED + "\n"), err.read_text()
    assert err.read_text().startswith("tg-invoke-agent: the agent needs your approval to run tool 'delete-note' with "
                                      '{"title": "groceries"}\nRun it? [y/N] ')
    assert len(made(calls)) == before + 1


def test_rest_carries_the_approval_both_ways_and_a_replayed_token_is_refused(stack, calls):
    before = len(made(calls))
    paused = post(stack, {"question": QUESTION, "user": "bob"})
    assert (paused["answer"], paused["outcome"], paused["candidates"]) == (PAUSE_TEXT, "approval-required",
                                                                           ["delete-note"])
    approval = paused["approval"]
    assert (approval["tool"], approval["arguments"]) == ("delete-note", {"title": "groceries"})
    assert approval["token"].startswith("a1.") and approval["expires"] > 0
    answer = {"token": approval["token"], "decision": "approve"}
    done = post(stack, {"question": QUESTION, "user": "bob", "approval": answer})
    assert (done["answer"], done["outcome"], done.get("approval")) == (DELETED, "tool-result", None)
    assert made(calls)[before:] == [{"user": "bob", "arguments": {"title": "groceries"}}]
    # The same token again: refused in one line, and nothing runs (bounded by the next approved call).
    try:
        again = post(stack, {"question": QUESTION, "user": "bob", "approval": answer})
    except urllib.error.HTTPError as e:
        again = json.loads(e.read())
    assert again["error"] == {"type": "agent-error", "message": "the approval was already used: ask again"}
    # An approval for another question is refused too.
    other = post(stack, {"question": "Delete the note called bread", "user": "bob", "approval": answer})
    assert other["error"]["message"].startswith("the approval is for another question")
    token = post(stack, {"question": QUESTION, "user": "bob"})["approval"]["token"]
    post(stack, {"question": QUESTION, "user": "bob", "approval": {"token": token, "decision": "approve"}})
    assert len(made(calls)) == before + 2
