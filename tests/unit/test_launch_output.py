"""tg-launch reads a child's output for as long as the child writes, whatever its log does (issue 35).

A copier that ended at the first failed write of the log left the child to
fill its pipe and block in a write for good; its stop then waited on that
pipe for ever.  Real children here, writing more than a pipe and a reader's
buffer hold (about 200 KB), against a log that cannot be written: ``/dev/full``
(every write fails with ENOSPC) or a log that fails for a while.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import sys
import time
from pathlib import Path

from support import wait_for_async
from trustgraph.launch.components import Component
from trustgraph.launch.output import MAX_LINE, LogFile, OutputCopier
from trustgraph.launch.processes import Child

LINES = 20_000   # of 50 bytes: 1 MB, five times what the pipe and the old reader's buffer held
WRITER = f"import sys\nfor i in range({LINES}):\n    sys.stdout.write(f'{{i:08d}} ' + 'x' * 40 + '\\n')\n"


def child(tmp_path: Path, script: str, log: Path, **kw) -> Child:
    return Child(Component(name="chatty", command="python"), [sys.executable, "-c", script], {}, log,
                 tmp_path / "chatty.ready", verbose=False, where="", **kw)


async def test_a_child_whose_log_cannot_be_written_is_still_read_and_runs_to_its_end(tmp_path, capsys):
    c = child(tmp_path, WRITER, Path("/dev/full"))
    await c.start()
    async with asyncio.timeout(60):   # a hang bound: unread, the child blocked after ~200 KB for good
        assert await c.wait_exit() == 0
        await c.stop()
    said = capsys.readouterr().err.splitlines()
    assert said == [
        "tg-launch: warning: cannot write chatty's log /dev/full (No space left on device); its output is "
        "dropped until the log can be written again",
        f"tg-launch: chatty's output ended with {LINES} lines that could not be written to /dev/full "
        "(No space left on device) lost"]


class FullForAWhile(LogFile):
    """A log file whose writes fail with ENOSPC while the bytes offered to it before are between
    ``fail_from`` and ``fail_to`` (by bytes, not by writes: how many lines one write carries
    depends on how far the reader lags the child, which a loaded machine changes)."""

    def __init__(self, path: Path, fail_from: int, fail_to: int) -> None:
        super().__init__(path)
        self.offered = 0
        self.failed = 0
        self.fail = range(fail_from, fail_to)

    def write(self, data: bytes) -> None:
        before, self.offered = self.offered, self.offered + len(data)
        if before in self.fail:
            self.failed += 1
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        super().write(data)


async def test_a_log_that_fails_for_a_while_loses_only_those_lines_and_says_how_many(tmp_path, capsys):
    log = tmp_path / "chatty.log"
    made: list[FullForAWhile] = []

    def open_log(path: Path) -> FullForAWhile:
        made.append(FullForAWhile(path, 100_000, 300_000))   # of the child's 1 MB
        return made[-1]

    c = child(tmp_path, WRITER, log, open_log=open_log)
    await c.start()
    async with asyncio.timeout(60):
        assert await c.wait_exit() == 0
        await c.stop()
    text = log.read_text().splitlines()
    gap = [i for i, line in enumerate(text) if line.startswith("tg-launch: ")]
    assert len(gap) == 1
    lost = int(text[gap[0]].split()[1])
    assert text[gap[0]] == (f"tg-launch: {lost} lines of chatty's output lost here: its log could not be "
                            "written (No space left on device)")
    # Every line is there but the ones lost, in order, and the gap is where they were.
    numbers = [int(line.split()[0]) for i, line in enumerate(text) if i != gap[0]]
    assert numbers == [*range(0, gap[0]), *range(gap[0] + lost, LINES)]
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 2 and said[0].startswith("tg-launch: warning: cannot write chatty's log ")
    assert said[1] == (f"tg-launch: chatty's log {log} is written again; {lost} lines of its output were lost "
                       "(No space left on device)")
    assert made[0].failed >= 1 and made[0].offered >= LINES * 50


def test_the_copier_keeps_a_line_over_several_writes_and_cuts_one_too_long():
    written: list[bytes] = []

    class Memory:
        path = Path("memory")

        def write(self, data: bytes) -> None:
            written.append(data)

        def close(self) -> None:
            written.append(b"<closed>")

    copier = OutputCopier("x", Memory())
    copier.feed(b"one\ntw")
    copier.feed(b"o\n" + b"z" * (MAX_LINE + 5))
    copier.end()
    assert written == [b"one\n", b"two\n" + b"z" * MAX_LINE, b"z" * 5, b"<closed>"]


async def test_a_line_longer_than_any_buffer_does_not_stop_the_copy(tmp_path):
    log = tmp_path / "chatty.log"
    size = 1_000_000
    c = child(tmp_path, f"import sys; sys.stdout.write('y' * {size}); sys.stdout.flush()", log)
    await c.start()
    async with asyncio.timeout(60):
        assert await c.wait_exit() == 0
        await c.stop()
    assert log.read_bytes() == b"y" * size


async def test_a_stop_ends_when_a_process_the_child_started_holds_its_output_open(tmp_path):
    """The grandchild keeps the pipe's write end: the child's exit is noticed, and a stop is bounded."""
    held = tmp_path / "grandchildren"
    script = ("import signal, subprocess\n"
              "p = subprocess.Popen(['sleep', '300'])\n"
              f"open({str(held)!r}, 'a').write(f'{{p.pid}}\\n')\n"
              "print('started', flush=True)\n"
              "signal.pause()\n")
    log = tmp_path / "chatty.log"
    c = child(tmp_path, script, log)

    def started(n: int) -> bool:
        return log.exists() and log.read_text().count("started") == n

    try:
        await c.start()
        await wait_for_async("the first start", lambda: started(1))
        began = time.monotonic()
        async with asyncio.timeout(60):   # the old stop waited on the pipe for ever once it killed the child
            await c.stop()
        assert time.monotonic() - began < 15
        assert c.proc.returncode == -signal.SIGTERM
        # Started again and killed: the supervisor's wait sees the exit, not the pipe's end.
        await c.start()
        await wait_for_async("the second start", lambda: started(2))
        c.proc.kill()
        async with asyncio.timeout(30):
            assert await c.wait_exit() == -signal.SIGKILL
        await c.stop()
    finally:
        for pid in held.read_text().split() if held.exists() else []:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
