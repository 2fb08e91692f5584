"""One descriptor model, below everything that reads it (issue 38).

A tool service checks its own declaration with the model the catalog reads
config and announcements with, so the model is ``trustgraph.base``'s
(``base/descriptors``) and the catalog stands on it: nothing in
``trustgraph.base`` imports the catalog, not even inside a function (the
lazy imports that hid a cycle are gone).  The model itself stands on the
safety room, the wire and the topic grammar only, and its annotations module
on the standard library only, so a command can read annotations without
pydantic.  Read from the source files, as test_messaging_layout.py reads them.
"""

from __future__ import annotations

import sys

from support import REPO, imported, imports_of

BASE = REPO / "trustgraph-base" / "trustgraph" / "base"
DESCRIPTORS = BASE / "descriptors"
#: What the descriptor model may import of ours.
BELOW_DESCRIPTORS = ("trustgraph.base.descriptors", "trustgraph.base.safety", "trustgraph.base.wire",
                     "trustgraph.topics")


def _under(name: str, *modules: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in modules)


def test_the_reader_sees_the_catalog_imported_in_every_spelling():
    for source in ("from trustgraph.catalog import build_catalog", "import trustgraph.catalog.wires",
                   "from ...catalog.wires import TOOLS", "from ... import catalog",
                   "def lazy():\n    from trustgraph.catalog import build_catalog\n",
                   "if TYPE_CHECKING:\n    from ...catalog.wires import ToolWire\n"):
        assert any(_under(n, "trustgraph.catalog") for n in imported(source, "trustgraph.base.tool_services")), source
    for source in ("from ..descriptors.models import queues_of", "from .catalog_feed import CatalogFeed"):
        assert not any(_under(n, "trustgraph.catalog") for n in imported(source, "trustgraph.base.tool_services"))


def test_nothing_in_trustgraph_base_imports_the_catalog():
    offenders = {str(path.relative_to(REPO)): sorted(n for n in imports_of(path) if _under(n, "trustgraph.catalog"))
                 for path in BASE.rglob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_descriptor_model_stands_on_safety_the_wire_and_topics_only():
    offenders = {}
    for path in DESCRIPTORS.rglob("*.py"):
        ours = {n for n in imports_of(path) if _under(n, "trustgraph")}
        wrong = sorted(n for n in ours if not _under(n, *BELOW_DESCRIPTORS))
        if wrong:
            offenders[str(path.relative_to(REPO))] = wrong
    assert offenders == {}


def test_annotations_are_readable_without_pydantic():
    names = imports_of(DESCRIPTORS / "annotations.py")
    assert {n.split(".")[0] for n in names} <= set(sys.stdlib_module_names) | {"__future__"}, names
