"""The run files of a stack's data directory: which stack runs there, and its broker.

``tg-launch`` keeps its data (broker, config store, logs) in one directory,
``./.trustgraph`` or ``$TRUSTGRAPH_DATA``.  While it runs, that directory also
holds files that tell others about the running stack:

* ``tg-launch.lock``: locked (``flock``) for as long as the stack runs, so a
  second ``tg-launch`` on the same directory is refused before it touches
  anything; it holds ``{"pid", "gateway", "pulsar", "pulsar-admin"}`` as JSON,
  so the refusal can name the running stack (and ``tg-init-trustgraph`` and
  ``tg-verify-system-status`` find the embedded broker's HTTP address, which
  is on a free port: ``pulsar-admin``, empty for an external broker); on a
  RabbitMQ the user runs, ``"backend": "rabbitmq"`` and ``"rabbitmq"``: its
  host, port, user, virtual host and password file (the password itself is
  never written: a process joining the stack takes it from that file or from
  its own ``$RABBITMQ_PASSWORD``);
* ``pulsar-url``: the broker URL, for a processor started by hand (and for
  scripts); absent on RabbitMQ;
* ``run/<component>.ready``: the children's readiness files;
* ``run/components.json``: each component's state as tg-launch's supervisor
  sees it (``up``, ``starting``, ``restarting``, ``given-up``), read by the
  gateway's health endpoint, so a component tg-launch gave up on shows there
  and not only in tg-launch's terminal.

The stack removes them when it stops.  A stack killed with SIGKILL leaves
them behind, which is why a reader checks that the pid is still alive, and
why the lock is an ``flock``, which the kernel drops with the process.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

DATA_ENV = "TRUSTGRAPH_DATA"
DEFAULT_DATA_DIR = ".trustgraph"
LOCK_FILE = "tg-launch.lock"
PULSAR_URL_FILE = "pulsar-url"
READY_DIR = "run"
COMPONENTS_FILE = "components.json"


def data_dir(given: str | os.PathLike | None = None) -> Path:
    """The data directory: ``given``, else ``$TRUSTGRAPH_DATA``, else ``./.trustgraph``."""
    return Path(given or os.environ.get(DATA_ENV) or DEFAULT_DATA_DIR).resolve()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


@dataclass(frozen=True)
class RunningStack:
    """What a running tg-launch says about itself in its data directory."""

    data_dir: Path
    pid: int
    gateway: str
    pulsar: str
    #: The broker's HTTP address (pulsar-lite's metrics), as a Pulsar admin URL; "" when unknown.
    pulsar_admin: str = ""
    #: The broker's kind: ``pulsar`` or ``rabbitmq`` (a stack of an older tg-launch says none: pulsar).
    backend: str = "pulsar"
    #: On RabbitMQ, its settings as the ``--rabbitmq-*`` flags name them without the prefix (``host``,
    #: ``port``, ``username``, ``vhost``, ``password-file``); empty on Pulsar.
    rabbitmq: Mapping[str, str] = field(default_factory=dict)

    @property
    def pulsar_url_file(self) -> Path:
        return self.data_dir / PULSAR_URL_FILE


def running_stack(directory: str | os.PathLike | None = None) -> RunningStack | None:
    """The stack running on ``directory`` (default: :func:`data_dir`), or None.

    None too when the files are a dead stack's leftovers or unreadable: a
    caller uses this for a default or a hint, never for a decision that
    needs certainty.
    """
    where = data_dir(directory)
    try:
        info = json.loads((where / LOCK_FILE).read_text())
        pid = int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not _alive(pid):
        return None
    pulsar = str(info.get("pulsar") or "")
    if not pulsar:
        with contextlib.suppress(OSError):
            pulsar = (where / PULSAR_URL_FILE).read_text().strip()
    given = info.get("rabbitmq")
    rabbitmq = {str(k): str(v) for k, v in given.items() if v not in (None, "")} if isinstance(given, dict) else {}
    backend = "rabbitmq" if info.get("backend") == "rabbitmq" else "pulsar"
    return RunningStack(where, pid, str(info.get("gateway") or ""), pulsar,
                        str(info.get("pulsar-admin") or ""), backend, rabbitmq)


class AlreadyRunning(RuntimeError):
    """Another tg-launch holds the data directory."""

    def __init__(self, directory: Path, stack: RunningStack | None) -> None:
        if stack is not None:
            who = f"pid {stack.pid}" + (f", gateway {stack.gateway}" if stack.gateway else "")
            stop = f"stop it first (Ctrl-C in its terminal, or kill {stack.pid})"
        else:
            who, stop = "its pid unknown", "stop it first"
        super().__init__(f"a stack is already running on {directory} ({who}); {stop}, "
                         f"or give another --data-dir")
        self.stack = stack


#: The environment variable tg-launch gives each child: the file it writes the components' states
#: to (:func:`read_components`), so a process can tell whether the stack is still starting.
STACK_STATUS_ENV = "TG_STACK_STATUS"


def starting_components(path: str | os.PathLike | None) -> list[str]:
    """The components of the stack at ``path`` not up for the first time yet (none: no such file)."""
    components = read_components(path) if path else None
    return sorted(name for name, c in (components or {}).items() if c.get("state") == "starting")


def stack_starting(path: str | os.PathLike | None) -> Callable[[], bool] | None:
    """Whether the stack at ``path`` still has a component starting, as a check to ask again and again
    (``messaging.unserved.UnservedTopics(starting=...)``, which cannot read run files itself);
    None without a path: no stack, nothing ever starts."""
    if not path:
        return None
    return lambda: bool(starting_components(path))


def read_components(path: str | os.PathLike) -> dict[str, dict[str, object]] | None:
    """The component states tg-launch wrote to ``path``, or None when there are none to read."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    states = data.get("components") if isinstance(data, dict) else None
    return {str(k): v for k, v in states.items() if isinstance(v, dict)} if isinstance(states, dict) else None


class RunFiles:
    """The run files of the stack this process runs; only its holder writes or removes them."""

    def __init__(self, directory: str | os.PathLike) -> None:
        self.dir = Path(directory)
        self.lock_path = self.dir / LOCK_FILE
        self.pulsar_url_path = self.dir / PULSAR_URL_FILE
        self.ready_dir = self.dir / READY_DIR
        self.components_path = self.ready_dir / COMPONENTS_FILE
        self._fd: int | None = None
        self._info: dict[str, object] = {}

    def acquire(self, gateway: str = "") -> None:
        """Take the data directory, or raise :class:`AlreadyRunning` having changed nothing."""
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise AlreadyRunning(self.dir, running_stack(self.dir)) from None
        self._fd = fd
        self._info = {"pid": os.getpid(), "gateway": gateway, "pulsar": ""}
        self._write_info()

    def set_pulsar_url(self, url: str, admin_url: str = "") -> None:
        """Record the broker's URL and, for the embedded one, its HTTP address (``admin_url``)."""
        self.pulsar_url_path.write_text(url + "\n")
        self._info["pulsar"] = url
        self._info["pulsar-admin"] = admin_url
        self._write_info()

    def set_rabbitmq(self, settings: Mapping[str, str]) -> None:
        """Record that the stack runs on a RabbitMQ the user runs, with its ``settings`` (see
        :attr:`RunningStack.rabbitmq`; never a password), so a process started by hand joins it."""
        self._info.update({"backend": "rabbitmq", "rabbitmq": dict(settings), "pulsar": "", "pulsar-admin": ""})
        self._write_info()

    def set_components(self, states: dict[str, dict[str, object]]) -> None:
        """Write the components' states (replaced at once: a reader never sees half a file)."""
        self.ready_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.components_path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"components": states}))
        tmp.replace(self.components_path)

    def _write_info(self) -> None:
        assert self._fd is not None
        data = json.dumps(self._info).encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)

    def release(self) -> None:
        """Remove the run files (ours: we hold the lock), then drop the lock."""
        if self._fd is None:
            return
        for path in (self.pulsar_url_path, *self.ready_dir.glob("*.ready"), self.components_path,
                     self.lock_path):
            with contextlib.suppress(OSError):
                path.unlink()
        with contextlib.suppress(OSError):
            self.ready_dir.rmdir()  # only when empty: a user's file there stays
        os.close(self._fd)
        self._fd = None
