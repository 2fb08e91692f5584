"""The messaging core stands on its own: it imports nothing of launching, and it is the only room
that talks to a broker's client library (issue 37: one seam, so a second transport has one place
to go).  Read from the source files, as test_compat_layout.py reads them."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROOTS = [REPO / "trustgraph-base" / "trustgraph", REPO / "trustgraph-flow" / "trustgraph",
         REPO / "trustgraph-cli" / "trustgraph"]
BASE = REPO / "trustgraph-base" / "trustgraph"
MESSAGING = BASE / "base" / "messaging"
#: The client libraries of the brokers, ours or upstream's backends'.
BROKER_CLIENTS = {"pulsar", "_pulsar", "aio_pika", "pika", "aiormq", "aiokafka", "confluent_kafka", "kafka"}
#: Modules outside messaging/ that still import a broker client: the seam's steps move each behind
#: it, and remove it here; the list only shrinks (a new one fails, and so does a stale entry).
STILL_IMPORTING = {
    "trustgraph-base/trustgraph/base/testing/memory.py",   # the in-memory broker, pulsar.Client's lookalike
    "trustgraph-base/trustgraph/clients/base.py",          # upstream's sync clients: LoggerLevel, Timeout
    "trustgraph-base/trustgraph/log_level.py",             # LogLevel.to_pulsar
}


def imported(source: str, package: str) -> Iterator[str]:
    """The absolute name of every module ``source`` imports, anywhere in it (a function's too), with
    relative imports resolved against ``package`` (``from .. import x`` names ``parent.x``)."""
    parts = package.split(".")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = parts[:len(parts) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            yield module
            yield from (f"{module}.{alias.name}" for alias in node.names)


def imports_of(path: Path) -> set[str]:
    root = next(r for r in ROOTS if path.is_relative_to(r))
    return set(imported(path.read_text(), ".".join(["trustgraph", *path.relative_to(root).parent.parts])))


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


def test_only_messaging_imports_a_broker_client_and_the_list_of_others_only_shrinks():
    importing = set()
    for root in ROOTS:
        for path in root.rglob("*.py"):
            if path.is_relative_to(MESSAGING):
                continue
            if any(name.split(".")[0] in BROKER_CLIENTS for name in imports_of(path)):
                importing.add(str(path.relative_to(REPO)))
    assert importing - STILL_IMPORTING == set(), "a broker client imported outside base/messaging"
    assert STILL_IMPORTING - importing == set(), "no longer imports one: remove it from STILL_IMPORTING"
