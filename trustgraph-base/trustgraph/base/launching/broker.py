"""The embedded Pulsar-protocol broker (``pulsar-lite`` from PyPI).

``tg-launch`` and the test fixtures run the broker binary that the
``pulsar-lite`` wheel ships, on 127.0.0.1 and a free port, with its data in a
directory of ours.  We start the binary ourselves rather than through the
package's process manager because that one logs to a fixed file in /tmp and
picks ports from a fixed range, which collides when two test runs overlap.

pulsar-lite also serves Prometheus metrics, on 0.0.0.0:8080 unless its config
file says otherwise (``[metrics] addr``, read from ``--config``; its
``--help`` shows only the flag, the key is in its docs).  We write that file
so the metrics listen where the broker does, on a free port of their own:
two brokers never clash, and nothing is exposed that was not asked for.
The gateway reads them to tell which request queues have a consumer.

A broker left running by an earlier launch that could not stop it (one
killed with SIGKILL, before tg-launch tied its children's lives to its own)
keeps the store locked (``broker.rocksdb/LOCK``), and a new broker on the
same data fails with that cause only in its log.  :meth:`EmbeddedBroker.start`
looks first and names the process that holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import logging
import os
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from ..safety.secrets import child_environment
from .listening import local_address

logger = logging.getLogger(__name__)


class BrokerError(RuntimeError):
    """The embedded broker could not be found or did not start."""


class PortTaken(BrokerError):
    """The broker could not listen: another process took its port (or its metrics port) first.

    A port :func:`free_port` chose is free only when it is chosen: any process's next outgoing
    connection may be given it before the broker binds it (CI saw it, with a suite's hundreds
    of connections).  A broker whose ports were chosen for it tries others
    (:meth:`EmbeddedBroker.choose_ports_again`); one given its port says so."""


#: How many starts a broker whose ports were chosen for it makes when they are taken first.
PORT_ATTEMPTS = 5
_IN_USE = (b"AddrInUse", b"Address already in use")


def find_broker_binary() -> str:
    """Path of the ``pulsar-lite`` binary inside the installed wheel."""
    override = os.environ.get("PULSAR_LITE_BINARY")
    if override:
        return override
    spec = importlib.util.find_spec("pulsar_lite")
    if spec is None or not spec.submodule_search_locations:
        raise BrokerError(
            "the embedded broker is not installed: pip install pulsar-lite "
            "(or give --pulsar-host to use an existing Pulsar)"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / "bin" / "pulsar-lite"
    if not path.is_file():
        raise BrokerError(f"pulsar-lite binary missing at {path}")
    return str(path)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_for_port(host: str, port: int, timeout: float, proc: subprocess.Popen | None = None,
                  gave_up: Callable[[], bool] | None = None) -> None:
    """Block until ``host:port`` accepts TCP connections, or raise BrokerError: when ``proc``
    exits, when ``gave_up()`` says the process will not listen there, or after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        if proc is not None and proc.poll() is not None:
            raise BrokerError(f"process exited with code {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection((host, port), timeout=0.25):
                return
        except OSError:
            if gave_up is not None and gave_up():
                raise BrokerError(f"it could not listen on port {port}") from None
            if time.monotonic() > deadline:
                raise BrokerError(f"nothing listening on {host}:{port} after {timeout:.0f}s") from None
            time.sleep(0.05)


class EmbeddedBroker:
    """One ``pulsar-lite`` process: start, stop, restart on the same port and data."""

    def __init__(self, data_dir: str | os.PathLike, port: int | None = None,
                 host: str = "127.0.0.1", log_path: str | os.PathLike | None = None,
                 metrics_port: int | None = None) -> None:
        """``host``: the address to listen on (``0.0.0.0``: every interface; clients of
        this machine still connect through 127.0.0.1)."""
        self.data_dir = Path(data_dir)
        self.host = host
        self.connect_host = local_address(host)
        self.port = port or free_port(self.connect_host)
        self.metrics_port = metrics_port or free_port(self.connect_host)
        # Which ports this object chose (and may choose again until the broker first listens).
        self._chosen = (not port, not metrics_port)
        self._listened = False
        self._chosen_again = 0
        self.log_path = Path(log_path) if log_path else self.data_dir / "broker.log"
        self.proc: subprocess.Popen | None = None
        self._log_start = 0

    @property
    def url(self) -> str:
        return f"pulsar://{self.connect_host}:{self.port}"

    @property
    def admin_url(self) -> str:
        """Where the broker's Prometheus metrics are (``/metrics``), as a Pulsar admin URL."""
        return f"http://{self.connect_host}:{self.metrics_port}"

    def _write_config(self) -> Path:
        path = self.data_dir / "pulsar-lite.toml"
        path.write_text("# Written by trustgraph.base.launching.broker at each start.\n"
                        "[metrics]\nenabled = true\n"
                        f'addr = "{self.host}:{self.metrics_port}"\n')
        return path

    def start(self, timeout: float = 20.0) -> None:
        """Start it and wait until it listens (:meth:`spawn`, then :meth:`wait_started`), on
        other ports when the ones chosen for it were taken first (:class:`PortTaken`)."""
        while True:
            self.spawn()
            try:
                self.wait_started(timeout)
                return
            except PortTaken:
                if not self.choose_ports_again():
                    raise

    def choose_ports_again(self) -> bool:
        """Choose new ports for those this object chose, after :class:`PortTaken`; False (and
        nothing changed) when it chose none, when it has chosen again :data:`PORT_ATTEMPTS` - 1
        times, or once the broker has listened: its clients know its URL from then on, so a
        restart keeps it.  The one policy of :meth:`start` and of tg-launch's own start."""
        if self._listened or not any(self._chosen) or self._chosen_again >= PORT_ATTEMPTS - 1:
            return False
        self._chosen_again += 1
        old = (self.port, self.metrics_port)
        if self._chosen[0]:
            self.port = free_port(self.connect_host)
        if self._chosen[1]:
            self.metrics_port = free_port(self.connect_host)
        logger.info("Embedded broker's port %s or metrics port %s was taken before it bound them: "
                    "trying %s and %s", *old, self.port, self.metrics_port)
        return True

    def spawn(self, preexec_fn: Callable[[], None] | None = None, held_for: float = 3.0) -> None:
        """Start the process, without waiting for it to listen.

        ``preexec_fn`` runs in the child before the binary (tg-launch ties the
        broker's life to its own there; a ``PR_SET_PDEATHSIG`` belongs to the
        thread that forks, so call this from one that lives as long as the
        parent).  A store held by another process (:meth:`holder`) is a
        :class:`BrokerError` naming it, after ``held_for`` seconds for one that
        is just exiting to let go.
        """
        self.data_dir.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + held_for
        while (held := self.holder()) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        if held is not None:
            pid, command = held
            if pid > 0:
                who, stop = f"process {pid} ({command})", f"stop it (kill {pid})"
            else:
                who, stop = "another process", "stop it"
            raise BrokerError(
                f"the embedded broker's store in {self.data_dir} is held by {who}: a broker left running "
                f"by an earlier start; {stop} and start again")
        binary = find_broker_binary()
        config = self._write_config()
        self._log_start = self.log_path.stat().st_size if self.log_path.exists() else 0
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                [binary, "--config", str(config), "--addr", f"{self.host}:{self.port}",
                 "--db-path", str(self.data_dir / "broker.db"), "--log-level", "warn"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=str(self.data_dir),
                env=child_environment(os.environ),  # the broker needs none of our secrets
                preexec_fn=preexec_fn,
            )
        finally:
            log.close()

    def wait_started(self, timeout: float = 20.0) -> None:
        """Block until the spawned broker listens, or stop it and raise :class:`BrokerError`."""
        deadline = time.monotonic() + timeout
        try:
            wait_for_port(self.connect_host, self.port, timeout, self.proc)
            # Its metrics server listens too: pulsar-lite goes on without it when its port is
            # taken, and callers fail fast on a request nobody consumes only by the consumer
            # counts it serves.
            wait_for_port(self.connect_host, self.metrics_port, max(0.0, deadline - time.monotonic()),
                          self.proc, self._said_in_use)
        except BrokerError as e:
            self.stop()
            kind = PortTaken if self._said_in_use() else BrokerError
            raise kind(f"embedded broker failed to start ({e}); see {self.log_path}") from e
        self._listened = True
        logger.info("Embedded broker listening on %s (data %s)", self.url, self.data_dir)

    def _said_in_use(self) -> bool:
        """Whether the broker's log since its last spawn says an address it binds is in use."""
        try:
            with open(self.log_path, "rb") as log:
                log.seek(self._log_start)
                said = log.read(64 * 1024)
        except OSError:
            return False
        return any(words in said for words in _IN_USE)

    def holder(self) -> tuple[int, str] | None:
        """The process (pid, command) that holds this data directory's store locked, or None."""
        for lock in self.data_dir.glob("*.rocksdb/LOCK"):
            pid = _lock_holder(lock)
            if pid is not None:
                return pid, _command(pid)
        return None

    def stop(self, timeout: float = 10.0) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def kill(self) -> None:
        """Stop abruptly, as a crash would."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> "EmbeddedBroker":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _lock_holder(path: Path) -> int | None:
    """The pid holding a POSIX write lock on ``path`` (RocksDB's LOCK), or None when it is free.

    Testing it takes no lock of ours that could outlive the test: the lock is
    taken and dropped on a descriptor of our own, and a process holds no POSIX
    lock it did not take.
    """
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return None
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        pass
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
    inode = os.stat(path).st_ino
    with contextlib.suppress(OSError):
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            # "1: POSIX  ADVISORY  WRITE 2620 fe:00:2148088 0 EOF"
            if len(fields) >= 6 and fields[1] == "POSIX" and fields[5].rsplit(":", 1)[-1] == str(inode):
                return int(fields[4])
    return -1   # held, by whom /proc does not say


def _command(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return "unknown command"
    return os.path.basename(argv[0].decode(errors="replace")) or "unknown command"
