"""Upstream TrustGraph 2.1.4's flow-side modules for code written against them, on our agent.

:data:`PATHS` maps each package of ours that upstream has more modules in to
a directory of upstream's module files, appended to that package's
``__path__`` by its ``__init__`` (base's ``trustgraph.base`` does the same
with :data:`trustgraph.compat.v214.BASE_PATHS`).  A directory's name is no
identifier, so its files load only under upstream's path, after our own
modules (a test checks that none of them hides one of ours).  Each file only
imports its names from this package.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent

#: Our package -> the directory of upstream 2.1.4's module files under it (not packages).
PATHS: dict[str, Path] = {
    "trustgraph.agent": _HERE / "agent-paths",
    "trustgraph.agent.react": _HERE / "react-paths",
}


def extend(package: str, path: list[str]) -> None:
    """Append ``package``'s overlay directory to its ``__path__`` (``path``), once."""
    directory = str(PATHS[package])
    if directory not in path:
        path.append(directory)
