"""A child's output, copied to its log for as long as the child writes, whatever the log does.

Why it never stops reading: a child writes its output into a pipe of 64 KiB.
When nothing reads it, the child blocks in its next write, for good, however
healthy it is otherwise.  A copier that ended at the first failed write of the
log ("No space left on device") did just that: about 200 KB of logging later
config-svc hung in a write and stopped answering, long after the disk was
freed, while the health endpoint still said ``ok`` (issue 35).  So a line the
log cannot take is counted and dropped, and the copier goes on reading; it
tries the log again with each new line.  tg-launch says once on stderr that it
drops a child's output and once, when the log takes lines again, how many were
lost; the log itself gets a line where the gap is.

The copier is fed by the event loop (:class:`OutputPipe`, a protocol on the
read end of the child's pipe) rather than awaited in a task of its own: a
failure in it cannot stop the reading, and the pipe is not tied to the
child's exit, so waiting for a child to exit never waits on its output (a
process it started may hold the pipe open long after it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

logger = logging.getLogger("tg-launch")

#: A line longer than this is copied in pieces of this size (each counted as a line).
MAX_LINE = 64 * 1024


class Log(Protocol):
    """Where a child's output goes: ``write`` takes all of ``data`` or raises ``OSError``."""

    path: Path

    def write(self, data: bytes) -> None: ...
    def close(self) -> None: ...


class LogFile:
    """A child's log file, appended to; opened at the first write, and again after a failed open.

    ``cut`` says that the last failed write left part of its data in the file, so
    the next line written there starts on a line of its own.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cut = False
        self._fd: int | None = None

    def write(self, data: bytes) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        if self.cut:
            data = b"\n" + data
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._fd, view)
            except OSError:
                self.cut = self.cut or len(view) < len(data)
                raise
            view = view[written:]
        self.cut = False

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def tell(text: str) -> None:
    """One line on tg-launch's stderr; a stderr that cannot take it (the same full disk) is let be."""
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr, flush=True)


def _lines(count: int) -> str:
    return f"{count} line{'' if count == 1 else 's'}"


class OutputCopier:
    """Splits a child's output into lines and appends them to its log (and, verbose, to stdout)."""

    def __init__(self, name: str, log: Log, echo: bool = False, say: Callable[[str], None] = tell) -> None:
        self.name = name
        self.log = log
        self.echo = echo
        self.say = say
        self.lost = 0          # lines dropped since the log last took one
        self.why = ""          # why the log did not take them
        self._partial = bytearray()

    def feed(self, data: bytes) -> None:
        """Copy what the child wrote: every whole line in it, and the start of the next kept for later."""
        buffer = self._partial
        buffer += data
        lines = []
        start = 0
        while (end := buffer.find(b"\n", start)) != -1:
            lines.append(bytes(buffer[start:end + 1]))
            start = end + 1
        while len(buffer) - start >= MAX_LINE:
            lines.append(bytes(buffer[start:start + MAX_LINE]))
            start += MAX_LINE
        del buffer[:start]
        if lines:
            self._put(lines)

    def end(self) -> None:
        """The child's output ended: copy a last unfinished line, say what was lost, close the log."""
        if self._partial:
            self._put([bytes(self._partial)])
            self._partial.clear()
        if self.lost:
            with contextlib.suppress(OSError):
                self.log.write(self._gap())
            self.say(f"tg-launch: {self.name}'s output ended with {_lines(self.lost)} that could not be "
                     f"written to {self.log.path} ({self.why}) lost")
            self.lost = 0
        self.log.close()

    def _gap(self) -> bytes:
        return (f"tg-launch: {_lines(self.lost)} of {self.name}'s output lost here: its log could not be "
                f"written ({self.why})\n").encode()

    def _put(self, lines: list[bytes]) -> None:
        data = b"".join(lines)
        try:
            self.log.write(self._gap() + data if self.lost else data)
        except OSError as e:
            if not self.lost:
                self.why = e.strerror or str(e)
                self.say(f"tg-launch: warning: cannot write {self.name}'s log {self.log.path} ({self.why}); "
                         f"its output is dropped until the log can be written again")
            self.lost += len(lines)
        else:
            if self.lost:
                self.say(f"tg-launch: {self.name}'s log {self.log.path} is written again; "
                         f"{_lines(self.lost)} of its output were lost ({self.why})")
                self.lost = 0
        if self.echo:
            with contextlib.suppress(OSError, ValueError):   # a closed terminal stops only the echo
                for line in lines:
                    sys.stdout.write(f"[{self.name}] {line.decode(errors='replace')}")
                sys.stdout.flush()


class OutputPipe(asyncio.Protocol):
    """The read end of a child's output pipe, handing everything read to an :class:`OutputCopier`.

    Nothing here ever pauses reading.  ``closed`` is done once the pipe's last
    writer closed it (the child and whatever it started) or :meth:`close` gave up on it.
    """

    def __init__(self, copier: OutputCopier) -> None:
        self.copier = copier
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        try:
            self.copier.feed(data)
        except Exception:   # noqa: BLE001 - a bug in the copier must not stop the reading
            logger.exception("copying %s's output failed", self.copier.name)

    def eof_received(self) -> None:
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.closed.done():
            return
        try:
            self.copier.end()
        finally:
            self.closed.set_result(None)

    def close(self) -> None:
        """Stop reading (a process the child started still holds the pipe): what it writes is not copied."""
        if self._transport is not None:
            self._transport.close()


async def open_output(copier: OutputCopier) -> tuple[int, OutputPipe]:
    """A pipe for a child's output: the write end to give the child (the caller closes it once
    the child has it), and the protocol reading the other end into ``copier``."""
    read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
    try:
        reader = os.fdopen(read_fd, "rb", buffering=0)
    except BaseException:
        os.close(read_fd)
        os.close(write_fd)
        raise
    try:
        _, pipe = await asyncio.get_running_loop().connect_read_pipe(lambda: OutputPipe(copier), reader)
    except BaseException:
        reader.close()
        os.close(write_fd)
        raise
    return write_fd, pipe
