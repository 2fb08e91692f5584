"""The messaging core stands on its own: it imports nothing of launching, it is the only room
that talks to a broker's client library, and within it only the transports do (issue 37: one
seam, ``messaging/transport.py``, so a second transport has one place to go).  Read from the
source files, as test_compat_layout.py reads them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from support import REPO, SOURCE_ROOTS, imported, imports_of

BASE = REPO / "trustgraph-base" / "trustgraph"
MESSAGING = BASE / "base" / "messaging"
#: The client libraries of the brokers, ours or upstream's backends'.
BROKER_CLIENTS = {"pulsar", "_pulsar", "aio_pika", "pika", "aiormq", "aiokafka", "confluent_kafka", "kafka"}
#: The modules of messaging/ that import a broker client: the transports behind the seam, and the
#: sync Pulsar backend (upstream's ``get_pubsub``; ``trustgraph.clients`` and ``log_level`` reach
#: pulsar-client through it).  The core (PubSub, Producer, Consumer, the retries) sees only the seam.
TRANSPORTS = {
    "trustgraph-base/trustgraph/base/messaging/pulsar_transport.py",
    "trustgraph-base/trustgraph/base/messaging/pulsar_backend.py",
    "trustgraph-base/trustgraph/base/messaging/rabbitmq_transport.py",
}


def _under(name: str, module: str) -> bool:
    return name == module or name.startswith(module + ".")


def _launching(source: str) -> bool:
    return any(_under(name, "trustgraph.base.launching") for name in imported(source, "trustgraph.base.messaging"))


def test_the_reader_sees_launching_imported_in_every_spelling():
    for source in ("from ..launching.stack import data_dir", "from .. import launching",
                   "from ..launching import stack", "from ...base.launching.stack import x",
                   "from trustgraph.base.launching.stack import x", "import trustgraph.base.launching.stack",
                   "def lazy():\n    from ..launching.stack import running_stack\n"):
        assert _launching(source), source
    for source in ("from .broker_url import probe", "from ..safety import limits", "import launching",
                   "from . import launching_notes"):
        assert not _launching(source), source


def test_messaging_imports_nothing_of_launching():
    offenders = {str(path.relative_to(REPO)): name
                 for path in MESSAGING.rglob("*.py")
                 for name in imports_of(path) if _under(name, "trustgraph.base.launching")}
    assert offenders == {}


def _a_client(names: set[str] | Iterator[str]) -> bool:
    return any(name.split(".")[0] in BROKER_CLIENTS for name in names)


def _importing_a_client(paths: Iterator[Path]) -> set[str]:
    return {str(path.relative_to(REPO)) for path in paths if _a_client(imports_of(path))}


def test_the_reader_sees_a_broker_client_imported_in_every_spelling():
    for source in ("import pulsar", "import _pulsar", "from pulsar import Client", "import aio_pika.abc",
                   "def lazy():\n    from aio_pika import connect\n", "import aiormq, os"):
        assert _a_client(imported(source, "trustgraph.base.processors")), source
    for source in ("from .pulsar_transport import PulsarTransport", "import pulsarish",
                   "from ..messaging import pulsar_backend", "from trustgraph.base.messaging import pulsar_transport"):
        assert not _a_client(imported(source, "trustgraph.base.processors")), source


def test_only_messaging_imports_a_broker_client():
    outside = _importing_a_client(path for root in SOURCE_ROOTS for path in root.rglob("*.py")
                                  if not path.is_relative_to(MESSAGING))
    assert outside == set(), "a broker client imported outside base/messaging: put it behind the seam"


def test_within_messaging_only_the_transports_import_a_broker_client():
    assert _importing_a_client(MESSAGING.rglob("*.py")) == TRANSPORTS


def test_a_processor_that_reads_no_consumer_counts_does_not_import_aiohttp():
    # aiohttp is about 8 MB of every process's idle RSS (the footprint table): only a process that
    # reads the broker's consumer counts, or serves HTTP, should carry it.
    from support import modules_after_import
    loaded = modules_after_import("trustgraph.config.service.service", "trustgraph.tool_service.joke.service",
                                  "trustgraph.base.messaging.pulsar_transport")
    assert "aiohttp" not in loaded
