"""Keeping tg-launch's processes up.

One task per process awaits its exit, so a back-off delays only the process
that died: another one's restart and a shutdown go on meanwhile (a shutdown
cancels the tasks).  A restarted process counts as back only once it serves
again (its readiness file, as at start-up), and its status line is printed
again so the user sees it came back.  A process that keeps dying is given up
on loudly; when the stack cannot work without it, the whole stack stops.

Each process's state (``starting``, ``up``, ``restarting``, ``given-up``,
with its restart count and the reason of its last exit) goes to a reporter
on every change: tg-launch writes it to the run directory, where the
gateway's health endpoint reads it, so a component given up on is visible
to whatever watches the stack, not only in tg-launch's terminal.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from trustgraph.base.launching.broker import BrokerError

from .processes import NotReady, describe_exit

logger = logging.getLogger("tg-launch")


#: The status lines' name column: at least this wide, wider when a name shown is longer.
STATUS_WIDTH = 14


def say(name: str, where: str, width: int = STATUS_WIDTH) -> None:
    """A status line, as printed at start-up and again after a restart.

    ``width``: the name column's, the longest name shown (``Launcher.status_width``), so
    that a longer name than the built-in ones (``announced tools``, a service's own) keeps
    the column straight instead of running into its address.
    """
    print(f"  {name:<{width}} {where}", flush=True)


class Supervised(Protocol):
    name: str
    where: str
    log_path: Path
    essential: bool

    async def come_up(self) -> None: ...
    async def wait_exit(self) -> int: ...
    async def stop(self) -> None: ...


@dataclass(frozen=True)
class RestartPolicy:
    """When to restart a process that died, and when to stop trying.

    The budget is for a process that cannot run, not for one that ran: a death
    counts against it only while the process has not proved itself since its
    last start, that is when it died before it was ready (the failed start of a
    restart included) or within ``stable_after`` seconds of being ready.  A
    process that was ready and stayed up that long came back and served, so
    whatever ended it (an operator's kill, the OOM killer, a crash a day) starts
    its count again: two kills of a healthy broker within a minute once stood at
    4 of 5, one death from stopping the whole stack (issue 35), where a process
    that dies while it starts, or at once after, is still given up on after
    ``max_restarts`` restarts in a row.
    """

    max_restarts: int = 5
    backoff: float = 2.0           # before the first restart; doubles for each further one
    max_backoff: float = 30.0
    # Ready and up this long, a process has proved it runs and serves: a crash loop dies
    # sooner (before its ready file, or on the first request or config it handles).
    stable_after: float = 10.0

    def delay(self, restart: int) -> float:
        return min(self.backoff * 2 ** (restart - 1), self.max_backoff)

    def counted(self, restarts: int, up_for: float) -> int:
        """The deaths in a row that count, ``restarts`` before this one, for a process that
        was ready for ``up_for`` seconds before it died."""
        return 0 if up_for >= self.stable_after else restarts


#: What a reporter gets: each process's state, by name.
States = dict[str, dict[str, object]]


class Supervisor:
    """Restarts the processes it watches; ``failed`` names the essential ones it gave up on."""

    def __init__(self, policy: RestartPolicy, stopping: asyncio.Event,
                 report: Callable[[States], None] | None = None) -> None:
        self.policy = policy
        self.stopping = stopping
        self.failed: list[str] = []
        self.states: States = {}
        self._report = report
        self._tasks: set[asyncio.Task] = set()
        self.width = STATUS_WIDTH   # of the status lines' name column

    def note(self, proc: Supervised, state: str, restarts: int = 0, reason: str = "") -> None:
        """Record (and report) ``proc``'s state; ``starting`` for one not up yet."""
        entry: dict[str, object] = {"state": state, "restarts": restarts, "since": round(time.time(), 3),
                                    "log": str(proc.log_path)}
        if reason:
            entry["reason"] = reason
        self.states[proc.name] = entry
        if self._report is not None:
            try:
                self._report(dict(self.states))
            except OSError as e:  # a full disk must not stop the supervision itself
                logger.warning("Could not write the component states: %s", e)

    def watch(self, proc: Supervised) -> None:
        """Keep ``proc`` up from now on; it must be up (started and ready) already."""
        self.note(proc, "up")
        task = asyncio.create_task(self._keep_up(proc), name=f"supervise {proc.name}")
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # A bug here would leave a process unwatched without a word.
            logger.error("%s crashed", task.get_name(), exc_info=task.exception())

    async def close(self) -> None:
        """Stop watching (before the processes are stopped, so none is restarted)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _keep_up(self, proc: Supervised) -> None:
        policy = self.policy
        restarts = 0
        up_since = time.monotonic()
        while True:
            why = describe_exit(await proc.wait_exit())
            if self.stopping.is_set():
                return
            restarts = policy.counted(restarts, time.monotonic() - up_since)
            while True:
                if restarts >= policy.max_restarts:
                    self._give_up(proc, restarts, why)
                    return
                restarts += 1
                self.note(proc, "restarting", restarts, why)
                delay = policy.delay(restarts)
                print(f"tg-launch: {proc.name} {why}; restart {restarts}/{policy.max_restarts} "
                      f"in {delay:g}s (log {proc.log_path})", flush=True)
                await asyncio.sleep(delay)
                try:
                    await proc.come_up()
                except NotReady as e:
                    why = e.reason
                except (BrokerError, OSError) as e:
                    why = f"did not start ({e})"
                except Exception as e:  # noqa: BLE001 - a start that fails oddly is still a failed start
                    why = f"did not start ({type(e).__name__}: {e})"
                else:
                    break
            up_since = time.monotonic()
            self.note(proc, "up", restarts)
            say(proc.name, proc.where, self.width)

    def _give_up(self, proc: Supervised, restarts: int, why: str) -> None:
        self.note(proc, "given-up", restarts, why)
        if proc.essential:
            self.failed.append(proc.name)
            self.stopping.set()
            then = "stopping the stack, which cannot run without it"
        else:
            then = "the rest keeps running"
        times = f"{restarts} restart{'' if restarts == 1 else 's'}"
        print(f"tg-launch: error: giving up on {proc.name} after {times} (it {why}); "
              f"{then}; see {proc.log_path}, fix the cause and restart tg-launch",
              file=sys.stderr, flush=True)
