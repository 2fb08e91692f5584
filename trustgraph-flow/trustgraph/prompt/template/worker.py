"""Rendering in worker processes: the kernel bounds what a template may cost, and the service never waits.

The render budget (``budget.py``) stops a template at its CPU time, its
output length and what its operations build, but only between the steps it
sees: one step in C (a conversion of a four-million-item list to text, an
operation it does not foresee) runs to its end, holding the GIL, and in the
service's own process that froze every other request (measured before the
operand bounds: ``{{ (10**4096)**4096 % 7 }}`` took 14 s, during which the
prompt service answered nothing).  So templates render in worker processes
(:data:`WORKERS` of them, each one render at a time), and:

* the service's event loop only waits on a pipe, so it keeps answering the
  other requests whatever a render does;
* a worker whose render uses :data:`CPU_GRACE` seconds of CPU beyond the
  budget is killed (its CPU time is read from ``/proc`` while the service
  waits): the render is over its budget, and a new worker takes its place;
* a worker's address space may grow by :data:`MEMORY_LIMIT` bytes at most
  (``RLIMIT_AS``): past it the render fails with ``MemoryError``, which is
  over its budget too, and the worker exits so that its memory goes back to
  the system (a Python process keeps what it once held).

Requests and replies are JSON frames (a 4-byte length, then the text) on
the worker's stdin and stdout.  The worker builds each config version's
:class:`~.templates.PromptSet` from the same config the service has, so a
reply names the template it used by id and the service hands back its own
:class:`~.templates.Rendered`.  When no worker can be started, rendering
falls back to a thread of the service's own (one WARNING line).

Templates are compiled here too, never in the service: Jinja evaluates a
template's constant parts while it compiles it (``{{ ([1]|slice(30000000))
|list|length }}`` froze the service's event loop for 14-25 s at 2 GB when it
loaded the config, and then every new worker was killed compiling the whole
config before its first render, so every prompt failed).  Before the first
render of a template, the service asks the worker to compile each part that
render needs (:meth:`~.templates.PromptSet.parts`), one at a time, each
under the same watch as a render: within a compile budget the size of a
render's, the worker's CPU time and its memory limit.  A part over it is
refused alone: the service records why (:meth:`~.templates.PromptSet.refuse`)
and answers every later request for it at once, so no other worker is spent
on it, and the other templates render as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import resource
import struct
import sys
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, BinaryIO

from . import budget
from .templates import PromptError, PromptSet, Rendered

logger = logging.getLogger(__name__)

#: Worker processes, each rendering one request at a time.
WORKERS = 2
#: Seconds of CPU a worker may spend on one render beyond the budget before it is killed.
CPU_GRACE = 0.5
#: Bytes a worker's address space may grow by while it renders.
MEMORY_LIMIT = 512 * 1024 * 1024
#: Seconds a render may take in all (a worker that neither answers nor works: stopped, swapped out).
WALL_LIMIT = 30.0
#: Seconds a new worker may take to start.
START_TIMEOUT = 60.0
#: How often the service looks at a rendering worker's CPU time.
WATCH_EVERY = 0.05
#: Config versions a worker keeps (a request in flight may still use the one before).
KEPT_VERSIONS = 2
_HEADER = struct.Struct(">I")
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_FIELDS = [f.name for f in dataclasses.fields(Rendered) if f.name != "template"]


# -- frames ------------------------------------------------------------------------------

def _frame(message: dict[str, Any]) -> bytes:
    data = json.dumps(message).encode()
    return _HEADER.pack(len(data)) + data


def _read_frame(stream: BinaryIO) -> dict[str, Any] | None:
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(head)
    return json.loads(stream.read(size))


# -- the worker process ------------------------------------------------------------------

def _limit_memory(grow_by: int) -> None:
    try:
        vm = next(int(line.split()[1]) * 1024 for line in Path("/proc/self/status").read_text().splitlines()
                  if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = vm + grow_by
    if hard == resource.RLIM_INFINITY or limit < hard:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _compile(sets: OrderedDict[int, PromptSet], message: dict[str, Any]) -> dict[str, Any]:
    prompts = sets.get(message["version"])
    if prompts is None:
        return {"error": "the render worker does not have this config version"}
    return {"problem": prompts.compile(message["part"])}


def _render(sets: OrderedDict[int, PromptSet], message: dict[str, Any]) -> dict[str, Any]:
    prompts = sets.get(message["version"])
    if prompts is None:
        return {"error": "the render worker does not have this config version"}
    try:
        rendered = prompts.render(message["tid"], message.get("terms") or {}, message.get("schema"))
    except PromptError as e:
        if isinstance(e.__context__, MemoryError):   # reworded by the template's own error handling
            raise MemoryError from None
        return {"error": str(e)}
    return {"template": rendered.template.id, **{f: getattr(rendered, f) for f in _FIELDS}}


def main(argv: list[str] | None = None) -> None:
    """The worker: frames in on stdin, frames out on stdout, until stdin closes.

    ``argv``: the bytes its address space may grow by (default :data:`MEMORY_LIMIT`).
    """
    args = sys.argv[1:] if argv is None else argv
    memory = int(args[0]) if args else MEMORY_LIMIT
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)   # nothing printed by a library may corrupt the frames
    _limit_memory(memory)
    source = sys.stdin.buffer
    sets: OrderedDict[int, PromptSet] = OrderedDict()
    out.write(_frame({"ready": os.getpid()}))
    out.flush()
    while (message := _read_frame(source)) is not None:
        if message.get("op") == "config":
            sets[message["version"]] = PromptSet.from_config(message.get("values") or {})
            while len(sets) > KEPT_VERSIONS:
                sets.popitem(last=False)
            continue
        needed = f"it needed more than {memory // (1024 * 1024)} MiB of memory"
        try:
            reply = _compile(sets, message) if message.get("op") == "compile" else _render(sets, message)
        except MemoryError:
            if message.get("op") == "compile":
                reply = {"problem": f"{PromptSet.describe(message['part'])} is over its compile budget: {needed}"}
            else:
                reply = {"error": f"template {message.get('tid')!r} is over its render budget: {needed}"}
            reply["exit"] = True
        out.write(_frame({"id": message.get("id"), **reply}))
        out.flush()
        if reply.get("exit"):
            os._exit(3)   # what it held goes back to the system; the service starts another


# -- the service's side ------------------------------------------------------------------

def _cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS   # utime + stime


class _Worker:
    """One worker process and its pipe; one render at a time."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.versions: set[int] = set()
        #: The parts it has compiled, by config version (``PromptSet.parts``).
        self.compiled: set[tuple[int, str]] = set()

    @classmethod
    async def start(cls, memory: int = MEMORY_LIMIT) -> _Worker:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "trustgraph.prompt.template.worker", str(memory),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        worker = cls(proc)
        try:
            hello = await asyncio.wait_for(worker._receive(), START_TIMEOUT)
        except BaseException:
            await worker.kill()
            raise
        if "ready" not in hello:
            await worker.kill()
            raise RuntimeError(f"the render worker said {hello!r} instead of ready")
        return worker

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    async def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(_frame(message))
        await self.proc.stdin.drain()

    async def _receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        try:
            (size,) = _HEADER.unpack(await self.proc.stdout.readexactly(_HEADER.size))
            return json.loads(await self.proc.stdout.readexactly(size))
        except asyncio.IncompleteReadError:
            await self.proc.wait()
            raise EOFError(f"the render worker exited (code {self.proc.returncode})") from None

    async def ask(self, version: int, values: dict[str, str], request: dict[str, Any],
                  cpu_seconds: float, grace: float, doing: str = "rendering") -> dict[str, Any]:
        """Send ``request`` (a render, or ``op: compile``) and wait for its reply, watching the
        worker: killed past ``cpu_seconds + grace`` of CPU time, or :data:`WALL_LIMIT`, which
        raises :class:`~.budget.BudgetExceeded` saying what it was ``doing``."""
        if version not in self.versions:
            await self._send({"op": "config", "version": version, "values": values})
            self.versions.add(version)
        await self._send({"op": "render", "version": version, **request})
        started_cpu = _cpu_seconds(self.proc.pid)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WALL_LIMIT
        reply = asyncio.ensure_future(self._receive())
        try:
            while True:
                done, _ = await asyncio.wait({reply}, timeout=WATCH_EVERY)
                if done:
                    return reply.result()
                used = _cpu_seconds(self.proc.pid)
                if started_cpu is not None and used is not None and used - started_cpu > cpu_seconds + grace:
                    await self.kill()
                    raise budget.BudgetExceeded(f"{doing} took more than {cpu_seconds:g}s of CPU time")
                if loop.time() > deadline:
                    await self.kill()
                    raise budget.BudgetExceeded(f"{doing} did not end within {WALL_LIMIT:g}s")
        finally:
            if not reply.done():
                reply.cancel()
                with contextlib.suppress(asyncio.CancelledError, EOFError):
                    await reply

    async def kill(self) -> None:
        if self.alive:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
        with contextlib.suppress(Exception):
            await self.proc.wait()

    async def close(self) -> None:
        """Let it end by itself (its stdin closes), or kill it after a moment."""
        if self.alive and self.proc.stdin is not None:
            self.proc.stdin.close()
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(self.proc.wait(), 2)
        await self.kill()


class RenderPool:
    """Renders a :class:`PromptSet`'s templates in worker processes (see the module docstring).

    ``load(values)`` builds the service's PromptSet for a config version and
    remembers what the workers need to build the same; ``render(prompts,
    ...)`` renders with it in a worker and returns the service's
    :class:`Rendered`, or raises :class:`PromptError` as ``PromptSet.render``
    does.
    """

    def __init__(self, workers: int = WORKERS, cpu_seconds: float = budget.CPU_SECONDS,
                 grace: float = CPU_GRACE, memory: int = MEMORY_LIMIT) -> None:
        self.size = workers
        self.cpu_seconds = cpu_seconds
        self.grace = grace
        self.memory = memory
        self._idle: asyncio.Queue[_Worker | None] | None = None
        self._all: set[_Worker] = set()
        self._versions: OrderedDict[int, tuple[PromptSet, dict[str, str]]] = OrderedDict()
        self._next_version = 0
        self._ids = 0
        self.fallback = False

    def load(self, values: dict[str, str]) -> PromptSet:
        """The PromptSet of this config (kept, with the config, for the workers)."""
        prompts = PromptSet.from_config(values)
        self._next_version += 1
        self._versions[self._next_version] = (prompts, dict(values))
        while len(self._versions) > KEPT_VERSIONS + 1:
            self._versions.popitem(last=False)
        return prompts

    async def start(self) -> None:
        self._idle = asyncio.Queue()
        try:
            started = await asyncio.gather(*(_Worker.start(self.memory) for _ in range(self.size)))
        except Exception as e:  # rendering still works, in a thread: say what is missing
            logger.warning("Render workers could not start (%s): templates render in a thread of the "
                           "service, where a render at its budget holds up the others", e)
            self.fallback = True
            return
        for worker in started:
            self._all.add(worker)
            self._idle.put_nowait(worker)
        logger.info("%d render workers started (each render: %gs of CPU, %d MiB of memory)",
                    self.size, self.cpu_seconds, self.memory // (1024 * 1024))

    async def close(self) -> None:
        workers, self._all = list(self._all), set()
        await asyncio.gather(*(w.close() for w in workers), return_exceptions=True)

    def _version_of(self, prompts: PromptSet) -> int | None:
        for version, (known, _values) in reversed(self._versions.items()):
            if known is prompts:
                return version
        return None

    async def render(self, prompts: PromptSet, tid: str, terms: dict[str, str],
                     schema: dict[str, Any] | None = None) -> Rendered:
        version = self._version_of(prompts)
        if self.fallback or self._idle is None or version is None:
            return await asyncio.to_thread(prompts.render, tid, terms, schema)
        values = self._versions[version][1]
        parts = prompts.parts(tid, schema)
        for part in parts:   # known to be unusable: no worker spent on it
            if (problem := prompts.problem(part)) is not None:
                raise PromptError(problem)
        worker = await self._idle.get()
        if worker is None or not worker.alive:
            worker = await self._replace(worker)
        self._ids += 1
        request = {"id": self._ids, "tid": tid, "terms": terms, "schema": schema}
        try:
            await self._compile(worker, version, values, prompts, parts)
            reply = await worker.ask(version, values, request, self.cpu_seconds, self.grace)
        except budget.BudgetExceeded as e:
            raise PromptError(f"template {tid!r} is over its render budget: {e}") from None
        except EOFError as e:
            raise PromptError(f"template {tid!r} could not be rendered: {e}") from None
        finally:
            if worker.alive and not worker.proc.stdout.at_eof():
                self._idle.put_nowait(worker)
            else:   # killed, or gone: the next render starts another in its place
                self._all.discard(worker)
                self._idle.put_nowait(None)
        if "error" in reply:
            raise PromptError(reply["error"])
        template = prompts.templates.get(reply["template"])
        if template is None:   # cannot happen: the worker built the same set
            raise PromptError(f"template {reply['template']!r} is not defined")
        return Rendered(template=template, **{f: reply.get(f) for f in _FIELDS if f in reply})

    async def _compile(self, worker: _Worker, version: int, values: dict[str, str], prompts: PromptSet,
                       parts: list[str]) -> None:
        """Have ``worker`` compile the ``parts`` it has not compiled yet, one at a time, each
        watched as a render is; raise :class:`PromptError` for the first that cannot be used,
        and record why on ``prompts`` (once, with one ERROR line), so it is refused at once after."""
        for part in parts:
            if (version, part) in worker.compiled:
                continue
            self._ids += 1
            try:
                reply = await worker.ask(version, values, {"op": "compile", "id": self._ids, "part": part},
                                         self.cpu_seconds, self.grace, doing="compiling")
            except budget.BudgetExceeded as e:   # killed: a step the compile budget does not see
                reply = {"problem": f"{PromptSet.describe(part)} is over its compile budget: {e}"}
            if "error" in reply:
                raise PromptError(reply["error"])
            problem = reply.get("problem")
            if problem is None:
                worker.compiled.add((version, part))
                continue
            if prompts.problem(part) is None:
                logger.error("Prompt config: %s", problem)
                prompts.refuse(part, problem)
            raise PromptError(problem)

    async def _replace(self, worker: _Worker | None) -> _Worker:
        if worker is not None:
            self._all.discard(worker)
            await worker.kill()
        started = time.monotonic()
        try:
            fresh = await _Worker.start(self.memory)
        except Exception as e:
            assert self._idle is not None
            self._idle.put_nowait(None)   # keep the pool's size: the next render tries again
            raise PromptError(f"no render worker could be started: {e}") from None
        logger.info("Render worker replaced in %.1fs", time.monotonic() - started)
        self._all.add(fresh)
        return fresh


if __name__ == "__main__":
    main()
