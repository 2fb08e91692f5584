"""Shared fixtures: a real pulsar-lite broker on 127.0.0.1, RabbitMQ nodes, and helpers to run processes.

Each test session (each xdist worker) starts its own broker on a free port with
its own data directory, so parallel runs never collide; the RabbitMQ nodes
(``rabbitmq``, ``rabbitmq_cluster``: ``rabbitmq_nodes.py``) are made the same way,
on first use.  ``mcp_stand_in`` is a real MCP server for one test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rabbitmq_nodes import RabbitCluster, RabbitNode, RabbitSite, RabbitUnavailable
from support import BIN, McpStandIn, Proc
from trustgraph.base.launching.broker import EmbeddedBroker


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedBroker:
    """One broker per test session; tests keep their topics apart by unique names."""
    b = EmbeddedBroker(tmp_path_factory.mktemp("broker"))
    b.start()
    yield b
    b.stop()


@pytest.fixture
def own_broker(tmp_path: Path) -> EmbeddedBroker:
    """A broker of this test alone, for tests that restart or kill it."""
    b = EmbeddedBroker(tmp_path / "broker")
    b.start()
    yield b
    b.stop()


@pytest.fixture
def spawn(tmp_path: Path):
    """Start a console script of ours as a child process and wait until it is ready.

    ``spawn("config-svc", "--store", path)`` passes ``--pulsar-host`` itself when
    given ``broker=``; every process is stopped when the test ends.
    """
    procs: list[Proc] = []
    counter = [0]

    def _spawn(command: str, *args: str, broker: EmbeddedBroker | None = None,
               wait: bool = True, timeout: float = 30.0, env: dict[str, str] | None = None) -> Proc:
        counter[0] += 1
        n = counter[0]
        ready = tmp_path / f"ready-{command}-{n}"
        full = [str(BIN / command), *args, "--no-metrics"]
        if broker is not None:
            full += ["--pulsar-host", broker.url]
        proc = Proc(full, tmp_path / f"{command}-{n}.log",
                    env={"TG_READY_FILE": str(ready), **(env or {})})
        proc.ready_file = ready
        proc.start()
        procs.append(proc)
        if wait:
            proc.wait_ready(ready, timeout)
        return proc

    yield _spawn
    for p in procs:
        p.stop()


@pytest.fixture
def mcp_stand_in(tmp_path: Path):
    """``mcp_stand_in(token=None, transport="streamable-http", revision="both")``: a started test MCP
    server (``revision``: the era of MCP it speaks, ``tests/integration/mcp_stand_in.py``)."""
    servers: list[McpStandIn] = []

    def make(token: str | None = None, transport: str = "streamable-http", revision: str = "both") -> McpStandIn:
        server = McpStandIn(tmp_path / f"mcp-{len(servers)}.log", token, transport, revision).start()
        servers.append(server)
        return server

    yield make
    for s in servers:
        s.stop()


# RabbitMQ (tests/rabbitmq_nodes.py): nodes of the test session's own, never a system service.

@pytest.fixture(scope="session")
def rabbitmq_site(tmp_path_factory: pytest.TempPathFactory):
    """The session's RabbitMQ world (its epmd, cookie and user), made on first use; its nodes
    are killed when the session ends. A test that stops or kills a node makes its own here
    (``rabbitmq_site.node().start()``) rather than touch ``rabbitmq``."""
    try:
        site = RabbitSite(tmp_path_factory.mktemp("rabbitmq")).start()
    except RabbitUnavailable as e:
        pytest.fail(str(e), pytrace=False)
    yield site
    site.close()


@pytest.fixture(scope="session")
def rabbitmq(rabbitmq_site: RabbitSite) -> RabbitNode:
    """One RabbitMQ node per test session, so one per xdist worker that asks for it; tests keep
    their exchanges and queues apart by unique names.

    Not one node shared by the workers: a node starts in about 4 s and holds 130-150 MB (this
    2-core machine, quiet or beside two busy processes), a small price against what sharing
    would need (a start by whichever worker comes first, a stop by the last to finish, across
    processes), and a worker's node never carries another's faults.
    """
    return rabbitmq_site.node().start()


@pytest.fixture
def rabbitmq_cluster(rabbitmq_site: RabbitSite) -> RabbitCluster:
    """Three RabbitMQ nodes joined into one cluster, for this test alone: a test that kills
    and restarts nodes (tests/reliability) leaves nothing for the next one to inherit."""
    cluster = rabbitmq_site.cluster(3).start()
    yield cluster
    cluster.close()
