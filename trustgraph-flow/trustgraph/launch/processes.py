"""The processes tg-launch runs: processor children and the embedded broker; and make, which runs it.

Both offer what the supervisor needs and nothing more: ``come_up()`` (start
and wait until it serves), ``wait_exit()``, ``stop()``, and the ``name``,
``where`` (its status line), ``log_path`` and ``essential`` it reports with.

``make run`` starts tg-launch as a child of GNU make, which passes SIGTERM on
to its recipe but keeps SIGINT and SIGHUP to itself: it relies on a terminal
sending those to the whole process group.  A script's ``kill -INT <make's
pid>`` therefore reached nothing, and make waited for tg-launch for ever.
:func:`watch_make` notices make's interruption instead (see there).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from trustgraph.base.launching.broker import EmbeddedBroker, PortTaken
from trustgraph.base.messaging.lost_calls import RESTARTED_ENV

from .components import Component
from .output import Log, LogFile, OutputCopier, OutputPipe, open_output

logger = logging.getLogger("tg-launch")

READY_TIMEOUT = 90.0
#: After SIGKILL, how long a stop waits for the exit (a process in uninterruptible sleep is left).
KILL_WAIT = 5.0
#: After the exit, how long a stop waits for the rest of the child's output.
OUTPUT_WAIT = 2.0


class NotReady(RuntimeError):
    """A child exited or hung before it wrote its readiness file."""

    def __init__(self, name: str, reason: str, log_path: Path) -> None:
        super().__init__(f"{name} {reason}; see {log_path}")
        self.reason = reason


def describe_exit(rc: int) -> str:
    """``exited with code 3`` or ``was killed by SIGKILL``: what a user can act on."""
    if rc < 0:
        try:
            return f"was killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"was killed by signal {-rc}"
    return f"exited with code {rc}"


_PR_SET_PDEATHSIG = 1


def die_with_parent() -> Callable[[], None]:
    """A ``preexec_fn`` that has Linux SIGTERM the child when tg-launch dies, however it dies.

    SIGKILL of tg-launch, or a closed terminal, would otherwise orphan the
    child: an orphaned broker kept the port and the store's lock, and the next
    start failed.  The signal is tied to the thread that forks, so the child
    must be started from the event loop's thread (it lives as long as the
    process), never from a worker thread.  A parent that died between the fork
    and the ``prctl`` is caught by comparing the parent pid afterwards.
    """
    parent = os.getpid()

    def preexec() -> None:
        try:
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        except OSError:
            return
        if os.getppid() != parent:   # the parent is already gone: nobody would send the signal
            os.kill(os.getpid(), signal.SIGTERM)

    return preexec


class Child:
    """One processor child: started with ``$TG_READY_FILE``, output copied to its log."""

    def __init__(self, comp: Component, argv: list[str], env: dict[str, str],
                 log_path: Path, ready_path: Path, verbose: bool, where: str,
                 open_log: Callable[[Path], Log] = LogFile) -> None:
        self.comp = comp
        self.name = comp.name
        self.essential = comp.essential
        self.where = where
        self.argv = argv
        self.env = env
        self.log_path = log_path
        self.ready_path = ready_path
        self.verbose = verbose
        self.open_log = open_log
        self.proc: asyncio.subprocess.Process | None = None
        self._output: OutputPipe | None = None
        self.starts = 0

    async def start(self) -> None:
        self.ready_path.unlink(missing_ok=True)
        # Started again in place of a child that died: it tells the callers still waiting on
        # what it serves that those requests are lost (trustgraph.base.messaging.lost_calls).
        env = {k: v for k, v in self.env.items() if k != RESTARTED_ENV}
        if self.starts:
            env[RESTARTED_ENV] = "1"
        self.starts += 1
        # The output goes through a pipe of our own rather than the subprocess's: its copier is
        # never awaited, so it cannot stop reading (output.py), and the child's exit is not tied
        # to the pipe's end, so no wait for an exit waits on the output.
        write_fd, self._output = await open_output(
            OutputCopier(self.name, self.open_log(self.log_path), self.verbose))
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.DEVNULL, stdout=write_fd,
                stderr=asyncio.subprocess.STDOUT,
                # Ready means serving: processors that follow config report ready
                # only once the first config (and so their flows) is in place.
                env={**env, "TG_READY_FILE": str(self.ready_path), "TG_READY_AFTER_CONFIG": "1"},
                preexec_fn=die_with_parent(),
            )
        except BaseException:
            self._output.close()
            raise
        finally:
            os.close(write_fd)

    async def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not self.ready_path.exists():
            if self.proc.returncode is not None:
                raise NotReady(self.name, f"{describe_exit(self.proc.returncode)} before it was ready",
                               self.log_path)
            if time.monotonic() > deadline:
                raise NotReady(self.name, f"was not ready after {timeout:.0f}s", self.log_path)
            await asyncio.sleep(0.05)

    async def come_up(self) -> None:
        """Start the child and wait until it is ready; a child killed by a signal before that (a
        native crash while it starts: a CI run saw mcp-tool's SIGSEGV as its broker client
        started) is started once more, saying so; one that exits with a code (a bad flag, a bad
        config) is not: that is for its user to fix."""
        for attempt in (1, 2):
            await self.start()
            try:
                await self.wait_ready()
                return
            except NotReady as e:
                crashed = self.proc is not None and self.proc.returncode is not None and self.proc.returncode < 0 \
                    and self.proc.returncode != -signal.SIGTERM
                await self.stop()  # a hung child must not linger beside its replacement
                if attempt == 2 or not crashed:
                    raise
                logger.warning("%s %s; starting it once more", self.name, e.reason)

    async def wait_exit(self) -> int:
        return await self.proc.wait()

    async def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, SIGKILL after ``timeout``; every wait is bounded, so a shutdown always ends.

        Then its output is copied to the end, for at most ``OUTPUT_WAIT`` seconds: a process
        the child started may hold the pipe open, and is left to ``die_with_parent``.
        """
        proc = self.proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            if not await _exited(proc, timeout):
                logger.warning("%s did not stop in %.0fs; killing it", self.name, timeout)
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                if not await _exited(proc, KILL_WAIT):
                    logger.warning("%s (pid %d) did not end after SIGKILL; leaving it", self.name, proc.pid)
        output = self._output
        if output is not None and not output.closed.done():
            await asyncio.wait([output.closed], timeout=OUTPUT_WAIT)
            if not output.closed.done():
                logger.warning("%s's output is still held open by a process it started; no longer copied",
                               self.name)
                output.close()


async def _exited(proc: asyncio.subprocess.Process, timeout: float) -> bool:
    """Whether ``proc`` exited within ``timeout`` seconds."""
    try:
        await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        return False
    return True


class BrokerProcess:
    """The embedded broker as a supervised process: restarts keep its port and data
    directory, so the processors' clients reconnect to it by themselves."""

    name = "broker"
    essential = True

    def __init__(self, broker: EmbeddedBroker) -> None:
        self.broker = broker
        self.log_path = broker.log_path

    @property
    def where(self) -> str:
        return f"{self.broker.url} (pulsar-lite, data {self.broker.data_dir})"

    async def come_up(self) -> None:
        # Started from the loop's thread, so that it dies with tg-launch (die_with_parent);
        # the wait for its port blocks, so it runs in a thread, which a cancellation cannot
        # interrupt: if a shutdown cancels us meanwhile, let the wait finish and undo the
        # start, or the broker would outlive tg-launch.  Ports chosen for it and taken by
        # another process before it bound them are chosen again (EmbeddedBroker.start).
        while True:
            self.broker.spawn(preexec_fn=die_with_parent())
            start = asyncio.ensure_future(asyncio.to_thread(self.broker.wait_started))
            try:
                await asyncio.shield(start)
                return
            except PortTaken:
                if not self.broker.choose_ports_again():
                    raise
            except asyncio.CancelledError:
                with contextlib.suppress(Exception):
                    await start
                await asyncio.to_thread(self.broker.stop)
                raise

    async def wait_exit(self) -> int:
        # A Popen has no awaitable exit; a thread blocked in waitpid also reaps
        # the broker at once, so a killed broker never lingers as a zombie.
        return await asyncio.to_thread(self.broker.proc.wait)

    async def stop(self) -> None:
        await asyncio.to_thread(self.broker.stop)


#: Signals GNU make handles by waiting for its recipe, without passing them on (SIGTERM it passes
#: on; watched as well, which makes no difference).
_MAKE_STOPS = (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGTERM)
MAKE_POLL = 0.2


def make_parent() -> int | None:
    """GNU make's pid, when make started tg-launch (``make run``); else None."""
    parent = os.getppid()
    try:
        name = Path(f"/proc/{parent}/comm").read_text().strip()
    except OSError:
        return None
    return parent if name in ("make", "gmake") else None


def handling_stop(pid: int) -> str | None:
    """The stop signal ``pid`` is handling right now (its name), or None.

    While a handler runs, the kernel blocks its signal in the process's mask
    (``SigBlk`` in ``/proc/<pid>/status``); make's handler of a fatal signal
    runs for as long as make waits for its recipe.
    """
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    blocked = next((int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigBlk:")), 0)
    return next((s.name for s in _MAKE_STOPS if blocked & (1 << (s - 1))), None)


async def watch_make(pid: int, stop: Callable[[str], None], every: float = MAKE_POLL) -> None:
    """Call ``stop`` once make (``pid``, tg-launch's parent) is interrupted.

    Seen twice in a row, so that a moment's blocking elsewhere in make is not
    taken for it; a few reads of a small file a second cost nothing.
    """
    seen = 0
    while os.getppid() == pid:
        await asyncio.sleep(every)
        signal_name = handling_stop(pid)
        seen = seen + 1 if signal_name else 0
        if seen >= 2:
            stop(f"{signal_name} to make")
            return
