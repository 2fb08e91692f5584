"""A full disk under the logs: lines are lost, never the stack (issue 35).

The launched stack's logs directory is a small tmpfs of its own, filled to
the last byte while the stack runs; then config-svc is made to log thousands
of lines (malformed requests, one WARNING each), far more than its pipe to
tg-launch holds.  Before the fix, tg-launch's copier of config-svc's output
died at the first failed write of its log; about 200 KB later config-svc
blocked in a write for good and stopped answering, long after the disk was
freed, and tg-launch ignored SIGTERM, its shutdown waiting on that pipe, and
kept the broker running.

Mounting a tmpfs needs root (or CAP_SYS_ADMIN): elsewhere the scenario is
skipped; the copier's own tests (tests/unit/test_launch_output.py) use
``/dev/full`` and need nothing.
"""

from __future__ import annotations

import errno
import re
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from hostile_kit import RawBus
from support import LIGHT, NO_TOOL_SERVICES, Stack, alive, descendants, wait_for
from trustgraph.topics import CONFIG_REQUEST

LOGS_SIZE = "1M"     # room for the logs of a start-up, then filled
FLOOD = 5_000        # malformed requests: a WARNING line of config-svc each, about 1 MB in all
STOP_BOUND = 60.0    # a hang bound for tg-launch's stop; a stop takes seconds


def _mount(where: Path) -> None:
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={LOGS_SIZE}", "tmpfs", str(where)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({r.stderr.strip() or r.returncode}): needs root")


def _fill(where: Path) -> Path:
    """Fill the filesystem at ``where`` to the last byte; returns the filler."""
    filler = where / "filler"
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as e:
            assert e.errno == errno.ENOSPC, e
    return filler


def _config_round_trip(stack: Stack, value: str) -> bool:
    """A put and a get of one config item through the gateway, each within 30 s."""
    try:
        put = stack.cli("tg-put-config-item", "disk-test/marker", "--value", value, timeout=30)
        got = stack.cli("tg-get-config-item", "disk-test/marker", timeout=30)
    except subprocess.TimeoutExpired:
        return False
    return put.returncode == 0 and got.returncode == 0 and got.stdout.strip() == value


def _said_lost(stack: Stack) -> int | None:
    """How many lines of config-svc's output tg-launch said were lost, once it said so."""
    found = re.search(r"config-svc's log \S+ is written again; (\d+) lines? of its output were lost", stack.output())
    return int(found.group(1)) if found else None


def _flood(bus: RawBus, count: int) -> None:
    for i in range(count):
        bus.send(CONFIG_REQUEST, b"not a config request", {"id": f"disk-{i}"})


@pytest.mark.long
@pytest.mark.timeout(600)
def test_a_full_disk_under_the_logs_loses_lines_not_the_stack(tmp_path, scenario):
    data = tmp_path / "data"
    logs = data / "logs"
    logs.mkdir(parents=True)
    _mount(logs)
    stack = Stack(data, [*LIGHT, *NO_TOOL_SERVICES])
    bus: RawBus | None = None
    try:
        stack.start()
        kids = descendants(stack.proc.pid)
        filler = _fill(logs)
        bus = RawBus(stack.broker_url())
        _flood(bus, FLOOD)
        # Sent after the flood on the same topic: answered only once config-svc has read it all.
        began = time.monotonic()
        served = _config_round_trip(stack, uuid.uuid4().hex)
        answered_in = time.monotonic() - began

        filler.unlink()
        _flood(bus, 20)   # lines to write once there is room
        try:
            lost = wait_for("tg-launch saying config-svc's log is written again", lambda: _said_lost(stack), 60)
        except pytest.fail.Exception:
            lost = 0
        gap = "tg-launch: " in (logs / "config-svc.log").read_text(errors="replace")
        served_after = _config_round_trip(stack, uuid.uuid4().hex)

        exits = len(re.findall(r"^tg-launch: \S+ .*; restart \d+/", stack.output(), re.MULTILINE))
        began = time.monotonic()
        stack.proc.send_signal(signal.SIGTERM)
        try:
            code = stack.proc.wait(STOP_BOUND)
        except subprocess.TimeoutExpired:
            code = None
        stopped_in = time.monotonic() - began
        left = [p for p in kids if alive(p)]
    finally:
        if bus is not None:
            bus.close()
        stack.stop()
        subprocess.run(["umount", "-l", str(logs)], check=False)
    ok = served and served_after and lost > 0 and gap and code == 0 and not left and not exits
    answer = f"answered in {answered_in:.1f} s" if served else "not answered"
    stop = f"stopped in {stopped_in:.1f} s (exit {code})" if code is not None else "did not stop"
    scenario(scenario="full disk under the logs", load=f"{FLOOD:,} malformed config requests (a log line each)",
             fault=f"the logs' filesystem ({LOGS_SIZE}iB tmpfs) full while config-svc logs them, then freed",
             expected="config-svc answers throughout; lost lines counted and said; SIGTERM stops everything",
             observed=f"config put+get {answer} while "
                      f"full, {'and' if served_after else 'not'} after; {lost:,} lines lost"
                      f"{', said on stderr and marked in the log' if lost and gap else ', never said'}; "
                      f"on SIGTERM tg-launch {stop}, "
                      f"{len(left)} processes left", recovery_s=answered_in if served else None, exits=exits, ok=ok)
    assert served and served_after, stack.output()
    assert lost > 0 and gap
    assert code == 0, f"tg-launch did not stop on SIGTERM within {STOP_BOUND:.0f}s:\n{stack.output()}"
    assert not left and not exits, (left, stack.output())
