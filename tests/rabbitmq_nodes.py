"""RabbitMQ nodes for the tests: one node, or a cluster, as child processes of the test session.

The tests do not use a system RabbitMQ service (``make install`` leaves none running): they need
nodes they can start on free ports, kill -9 and restart, with their data under the test's tmp
dir, that never meet a user's own RabbitMQ or another test session's. A :class:`RabbitSite` is
one such private world: its own ``epmd`` (the Erlang port mapper, through which nodes and
``rabbitmqctl`` find each other) on a free port, one Erlang cookie (``$HOME/.erlang.cookie`` in a
home of its own), and one user with a random password; the nodes it makes listen on 127.0.0.1
only, each on free AMQP and distribution ports, and read none of /etc/rabbitmq.

No node outlives the session that started it, however that session ends. A node is the Erlang
VM itself, a direct child: ``RABBITMQ_ALLOW_INPUT`` makes the start script exec the VM instead
of running it in the background under a shell, which also makes "kill -9 the node" one pid. The
VM's input is then a pipe from this process, and the VM halts when its input ends, so even a
SIGKILLed pytest leaves no node behind; the site's epmd is ended by ``PR_SET_PDEATHSIG``.

``RABBITMQ_BIN`` (a directory holding ``rabbitmq-server`` and ``rabbitmqctl``) names the
installation to use; else Debian's (/usr/lib/rabbitmq/bin: its /usr/sbin commands are wrappers
that switch to the ``rabbitmq`` user), else the commands on PATH.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import psutil
from support import alive, wait_for
from trustgraph.base.launching.broker import free_port
from trustgraph.base.safety.secrets import child_environment
from trustgraph.launch.processes import die_with_parent

#: What the fixtures say when there is no RabbitMQ to run.
MISSING = ("RabbitMQ is not installed (rabbitmq-server and rabbitmqctl, 3.10 or newer): make install "
           "installs Debian's rabbitmq-server (as root); elsewhere install it with the system's "
           "package manager, or set RABBITMQ_BIN to the directory holding those commands")
#: Bounds on hangs, not performance figures: a node starts in about 4 s on a quiet 2-core
#: machine, three at once take several times that on a loaded one.
START_TIMEOUT = 180.0
CTL_TIMEOUT = 120.0
#: The AMQP 0-9-1 protocol header a client opens with, and what a ready node answers it with:
#: a method frame (type 1) on channel 0 holding Connection.Start (class 10, method 10).
AMQP_HEADER = b"AMQP\x00\x00\x09\x01"
DEBIAN_PROGRAMS = Path("/usr/lib/rabbitmq/bin")
#: A node's ports are picked free (``free_port``) well before its VM binds them, from the kernel's
#: ephemeral range, which any process's outgoing connection may take meanwhile: under load a
#: cluster's node once exited with ``dist_port_already_used``.  A first start that loses a port
#: so is made again on new ones, at most this many starts in all (a restart keeps its ports).
PORT_TRIES = 3
#: What a node's console says when a port it was given is taken.
PORT_TAKEN = ("dist_port_already_used", "eaddrinuse")


class RabbitUnavailable(RuntimeError):
    """No RabbitMQ installation to run nodes from (:data:`MISSING` says what to do)."""


def programs() -> Path:
    """The directory of ``rabbitmq-server`` and ``rabbitmqctl``, or :class:`RabbitUnavailable`."""
    named = os.environ.get("RABBITMQ_BIN")
    candidates = [Path(named)] if named else [DEBIAN_PROGRAMS]
    if not named and (on_path := shutil.which("rabbitmq-server")):
        candidates.append(Path(on_path).parent)
    for directory in candidates:
        if all(os.access(directory / p, os.X_OK) for p in ("rabbitmq-server", "rabbitmqctl")):
            return directory
    raise RabbitUnavailable(MISSING)


def amqp_ready(host: str, port: int) -> bool:
    """Whether ``host:port`` answers an AMQP client's first bytes as a running node does.

    RabbitMQ opens its AMQP listener last, after its boot steps (and, in a cluster, after the
    node has rejoined the others), so this is the event "the node serves clients".
    """
    try:
        with socket.create_connection((host, port), timeout=2.0) as s:
            s.sendall(AMQP_HEADER)
            reply = b""
            while len(reply) < 11:
                chunk = s.recv(11 - len(reply))
                if not chunk:
                    return False
                reply += chunk
    except OSError:
        return False
    return reply[0] == 1 and reply[1:3] == b"\x00\x00" and reply[7:11] == b"\x00\x0a\x00\x0a"


def _tail(path: Path, size: int = 4000) -> str:
    try:
        return f"--- {path}\n{path.read_text(errors='replace')[-size:]}"
    except OSError:
        return f"--- {path}: none"


class RabbitSite:
    """One private world of RabbitMQ nodes: an epmd, a cookie, a user; the nodes it makes.

    Make it in the main thread: the epmd it starts dies with the thread that started it.
    """

    def __init__(self, root: Path, username: str = "trustgraph") -> None:
        self.bin = programs()
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self.username = username
        self.password = secrets.token_urlsafe(16)
        self.prefix = f"tg{os.getpid()}"
        self.home = root / "home"
        self.epmd_port = free_port()
        self.nodes: list[RabbitNode] = []
        self.epmd: subprocess.Popen | None = None

    def start(self) -> RabbitSite:
        """Write the shared cookie and start the site's epmd; returns ``self``."""
        self.home.mkdir(exist_ok=True)
        cookie = self.home / ".erlang.cookie"
        cookie.write_text(secrets.token_hex(20))
        cookie.chmod(0o400)   # Erlang refuses a cookie others can read
        (self.root / "rabbitmq-env.conf").write_text("# none: the environment says it all\n")
        epmd = shutil.which("epmd") or str(Path(shutil.which("erl") or "/usr/bin/erl").parent / "epmd")
        log = self.root / "epmd.log"
        with open(log, "ab") as out:
            self.epmd = subprocess.Popen(
                [epmd, "-port", str(self.epmd_port), "-address", "127.0.0.1"],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True, preexec_fn=die_with_parent())
        wait_for(f"epmd on port {self.epmd_port}", lambda: _listens(self.epmd_port), 30,
                 detail=lambda: _tail(log), gone=lambda: _exited(self.epmd, "epmd"))
        return self

    def environment(self) -> dict[str, str]:
        """What every node and ``rabbitmqctl`` of this site run with: the site's home, epmd and
        env file, and nothing of the user's RabbitMQ or Erlang settings (nor our secrets)."""
        env = {k: v for k, v in child_environment(os.environ).items()
               if not k.startswith(("RABBITMQ_", "ERL_"))}
        env.update({
            "HOME": str(self.home),
            "ERL_EPMD_PORT": str(self.epmd_port),
            "ERL_EPMD_ADDRESS": "127.0.0.1",
            "RABBITMQ_CONF_ENV_FILE": str(self.root / "rabbitmq-env.conf"),
            # rabbitmqctl is an Erlang node too: a port of the kernel's choosing (the default is
            # one of 35672-35682, shared by every rabbitmqctl on the machine), never an epmd of
            # its own, and schedulers that sleep when idle (as the server's do) instead of
            # spinning: beside two busy processes on 2 cores, spinning made each call take
            # 5-9 s instead of about 1.
            "RABBITMQ_CTL_DIST_PORT_MIN": "0",
            "RABBITMQ_CTL_DIST_PORT_MAX": "0",
            "RABBITMQ_CTL_ERL_ARGS": "-start_epmd false +sbwt none +sbwtdcpu none +sbwtdio none",
        })
        return env

    def node(self) -> RabbitNode:
        """A new node of this site (not started: :meth:`RabbitNode.start`)."""
        node = RabbitNode(self, len(self.nodes) + 1)
        self.nodes.append(node)
        return node

    def cluster(self, size: int = 3) -> RabbitCluster:
        """``size`` new nodes of this site, to be one cluster (:meth:`RabbitCluster.start`)."""
        return RabbitCluster([self.node() for _ in range(size)])

    def close(self) -> None:
        """Kill every node of the site and its epmd."""
        for node in self.nodes:
            node.kill()
        epmd, self.epmd = self.epmd, None
        if epmd is not None and epmd.poll() is None:
            epmd.kill()
            epmd.wait()


class RabbitNode:
    """One RabbitMQ node of a :class:`RabbitSite`: start, stop, kill -9, restart on the same
    ports and data (a restarted cluster node rejoins its cluster)."""

    host = "127.0.0.1"
    vhost = "/"

    def __init__(self, site: RabbitSite, index: int) -> None:
        self.site = site
        self.name = f"{site.prefix}n{index}@localhost"
        self.dir = site.root / f"node{index}"
        self.port = free_port()
        self.dist_port = free_port()
        self.console = self.dir / "console.log"
        self.proc: subprocess.Popen | None = None
        #: Seconds the last start took, spawn to AMQP answered (for the notes and reports).
        self.started_in: float | None = None
        self._spawned_at = 0.0

    @property
    def username(self) -> str:
        return self.site.username

    @property
    def password(self) -> str:
        return self.site.password

    @property
    def url(self) -> str:
        """``amqp://user:password@127.0.0.1:port/``: what aio-pika connects to."""
        return f"amqp://{self.username}:{self.password}@{self.host}:{self.port}/"

    def _write_config(self) -> Path:
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "enabled_plugins").write_text("[].\n")
        config = self.dir / "rabbitmq.conf"
        config.write_text(
            "# Written by tests/rabbitmq_nodes.py at each start.\n"
            f"default_user = {self.username}\n"
            f"default_pass = {self.password}\n"
            "log.console = false\n"
            "log.file.level = info\n")
        return config

    def environment(self) -> dict[str, str]:
        return {
            **self.site.environment(),
            "RABBITMQ_NODENAME": self.name,
            "RABBITMQ_NODE_IP_ADDRESS": self.host,
            "RABBITMQ_NODE_PORT": str(self.port),
            "RABBITMQ_DIST_PORT": str(self.dist_port),
            "RABBITMQ_MNESIA_BASE": str(self.dir / "mnesia"),
            "RABBITMQ_LOG_BASE": str(self.dir / "log"),
            "RABBITMQ_CONFIG_FILE": str(self.dir / "rabbitmq.conf"),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(self.dir / "advanced.config"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.dir / "enabled_plugins"),
            "RABBITMQ_PID_FILE": str(self.dir / "rabbitmq.pid"),
            # The VM as this process's child, its input a pipe from here (the module says why).
            "RABBITMQ_ALLOW_INPUT": "true",
            # Clustering only on 127.0.0.1, and no epmd but the site's.
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "-start_epmd false -kernel inet_dist_use_interface {127,0,0,1}",
        }

    def spawn(self) -> None:
        """Start the node's VM without waiting for it (:meth:`wait_started`)."""
        if self.running():
            raise RuntimeError(f"RabbitMQ node {self.name} is already running")
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()   # the input of a VM that exited by itself
        self._write_config()
        self._spawned_at = time.monotonic()
        with open(self.console, "ab") as out:
            self.proc = subprocess.Popen(
                [str(self.site.bin / "rabbitmq-server")], stdin=subprocess.PIPE, stdout=out,
                stderr=subprocess.STDOUT, env=self.environment(), cwd=self.dir, start_new_session=True)

    def wait_started(self, timeout: float = START_TIMEOUT) -> None:
        """Wait until the node answers AMQP clients; fail the test, with its logs, if it exits
        (but for a first start that lost a port: :data:`PORT_TRIES`)."""
        if self.started_in is None:
            for _ in range(PORT_TRIES - 1):
                if not self._lost_a_port(timeout):
                    break
        wait_for(f"RabbitMQ node {self.name} serving AMQP on port {self.port}",
                 lambda: amqp_ready(self.host, self.port), timeout, detail=self.output,
                 gone=lambda: _exited(self.proc, f"RabbitMQ node {self.name}"), every=0.1)
        self.started_in = time.monotonic() - self._spawned_at

    def _lost_a_port(self, timeout: float) -> bool:
        """Wait until the node serves or exits; True, and the node spawned again on new ports,
        when it exited because a port it was given was taken."""
        wait_for(f"RabbitMQ node {self.name} serving AMQP on port {self.port}, or exiting",
                 lambda: not self.running() or amqp_ready(self.host, self.port), timeout, detail=self.output,
                 every=0.1)
        if self.running() or not any(said in _tail(self.console) for said in PORT_TAKEN):
            return False
        self.port, self.dist_port = free_port(), free_port()
        self.spawn()
        return True

    def start(self, timeout: float = START_TIMEOUT) -> RabbitNode:
        """:meth:`spawn`, then :meth:`wait_started`; returns ``self``."""
        self.spawn()
        self.wait_started(timeout)
        return self

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """kill -9 the node, as a crash would: its VM and the helpers the VM started."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        try:
            helpers = psutil.Process(proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            helpers = []
        for p in [proc, *helpers]:
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()
        wait_for(f"the helpers of RabbitMQ node {self.name} gone",
                 lambda: not any(alive(h.pid) for h in helpers), 30)
        if proc.stdin is not None:
            proc.stdin.close()

    def stop(self, timeout: float = 60.0) -> None:
        """Stop the node as an operator would (SIGTERM: RabbitMQ shuts down in order); a node
        that has not stopped within ``timeout`` is killed."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        if proc.stdin is not None:
            proc.stdin.close()

    def restart(self, timeout: float = START_TIMEOUT) -> RabbitNode:
        """Start again, on the same name, ports and data, whether it was stopped, killed or runs."""
        self.stop()
        return self.start(timeout)

    def rss(self) -> int:
        """The node's resident memory in bytes (its VM and helpers), 0 when it does not run."""
        if not self.running():
            return 0
        try:
            vm = psutil.Process(self.proc.pid)
            return sum(p.memory_info().rss for p in [vm, *vm.children(recursive=True)])
        except psutil.NoSuchProcess:
            return 0

    def ctl(self, *args: str, timeout: float = CTL_TIMEOUT) -> str:
        """``rabbitmqctl -n <node> args...``: its output; a failure raises with what it said."""
        command = [str(self.site.bin / "rabbitmqctl"), "-n", self.name, *args]
        try:
            done = subprocess.run(command, env=self.site.environment(), capture_output=True, text=True,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as e:
            raise RuntimeError(f"rabbitmqctl {' '.join(args)} on {self.name}: no answer within {timeout:g}s"
                               ) from e
        if done.returncode != 0:
            raise RuntimeError(f"rabbitmqctl {' '.join(args)} on {self.name} exited {done.returncode}: "
                               f"{(done.stdout + done.stderr).strip()[-2000:]}")
        return done.stdout

    def output(self) -> str:
        """The node's console and log tails, for a failure's message."""
        return "\n".join([_tail(self.console), _tail(self.dir / "log" / f"{self.name}.log")])


class RabbitCluster:
    """Nodes of one site joined into one cluster: the first is the seed, the others join it
    (``rabbitmqctl join_cluster``); quorum queues replicate over all of them."""

    def __init__(self, nodes: list[RabbitNode]) -> None:
        self.nodes = nodes
        #: Seconds from the first spawn to every node running in the cluster.
        self.formed_in: float | None = None

    @property
    def names(self) -> set[str]:
        return {n.name for n in self.nodes}

    @property
    def urls(self) -> list[str]:
        return [n.url for n in self.nodes]

    def start(self, timeout: float = START_TIMEOUT) -> RabbitCluster:
        """Start every node at once, join them and wait until each sees all running."""
        began = time.monotonic()
        for node in self.nodes:
            node.spawn()
        for node in self.nodes:
            node.wait_started(timeout)
        seed = self.nodes[0]
        # One joiner at a time, as the clustering guide does it: a join resets the joiner and
        # copies the seed's schema.
        for node in self.nodes[1:]:
            node.ctl("stop_app")
            node.ctl("join_cluster", seed.name)
            node.ctl("start_app")
        for node in self.nodes:
            self.wait_running(node, timeout)
        self.formed_in = time.monotonic() - began
        return self

    def running_nodes(self, asked: RabbitNode | None = None) -> set[str]:
        """The nodes ``asked`` (by default the first one that runs) sees running."""
        asked = asked or next((n for n in self.nodes if n.running()), None)
        if asked is None:
            return set()
        try:
            status = json.loads(asked.ctl("cluster_status", "--formatter", "json"))
        except (RuntimeError, ValueError):
            return set()
        return set(status.get("running_nodes", []))

    def wait_running(self, node: RabbitNode, timeout: float = START_TIMEOUT) -> None:
        """Wait until ``node`` sees every node that runs (itself included) running."""
        def complete() -> bool:
            return self.running_nodes(node) == {n.name for n in self.nodes if n.running()}
        wait_for(f"{node.name} seeing the cluster's running nodes", complete, timeout,
                 detail=node.output, gone=lambda: _exited(node.proc, f"RabbitMQ node {node.name}"),
                 every=1.0)   # each look is a rabbitmqctl: an Erlang VM started

    def kill(self, index: int) -> RabbitNode:
        """kill -9 node ``index``; returns it."""
        node = self.nodes[index]
        node.kill()
        return node

    def restart(self, index: int, timeout: float = START_TIMEOUT) -> RabbitNode:
        """(Re)start node ``index`` and wait until it is back in the cluster; returns it."""
        node = self.nodes[index].restart(timeout)
        self.wait_running(node, timeout)
        return node

    def close(self) -> None:
        """Kill every node: nothing is kept (the data goes with the test's tmp dir), and a
        kill takes no time where an orderly stop takes seconds a node."""
        for node in self.nodes:
            node.kill()


def _listens(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
        return True
    except OSError:
        return False


def _exited(proc: subprocess.Popen | None, what: str) -> str | None:
    if proc is not None and proc.poll() is not None:
        return f"{what} exited {proc.returncode}"
    return None
