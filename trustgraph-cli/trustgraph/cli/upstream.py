"""Upstream's commands this fork does not reimplement, run from upstream's own code.

Why: this distribution is named ``trustgraph-cli``, as upstream's is, with a
higher version (2.1.100), so installing it over upstream's replaces that one
cleanly instead of two distributions owning the same files (see
docs/compatibility.md).  Replacing must not take commands away from an
operator, so it installs every command name upstream 2.1.4's CLI has.  The 20
names both have run ours; the 46 below (knowledge cores, the library, graph
and document RAG, loaders...) address services this fork does not ship, and
run upstream's implementation: ``tg-install-upstream-commands`` fetches
upstream's ``trustgraph-cli`` from PyPI once into :func:`home` (upstream's
code is never copied into this package), and each such command loads
upstream's module from there under a private name, so it cannot shadow
``trustgraph.cli``, and runs its ``main()`` on this fork's ``trustgraph.api``
(the API upstream's commands are written against; ``make interop`` starts
every one of them on it).  Before that fetch, such a command says in one line
what to run.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from trustgraph.base.command_line import CliError, main_wrapper

#: The upstream release whose commands these are (and which the installer fetches by default).
UPSTREAM_VERSION = "2.1.4"

#: Where the installer puts upstream's CLI unless this names another directory.
HOME_VARIABLE = "TRUSTGRAPH_UPSTREAM_COMMANDS"

#: Upstream 2.1.4's commands that are not ours: command name -> module in upstream's trustgraph.cli.
#: The pyproject's console scripts name each as ``trustgraph.cli.upstream:<module>``.
COMMANDS: dict[str, str] = {
    name: name.removeprefix("tg-").replace("-", "_")
    for name in (
        "tg-add-library-document", "tg-delete-collection", "tg-delete-flow-blueprint", "tg-delete-kg-core",
        "tg-delete-tool", "tg-dump-msgpack", "tg-dump-queues", "tg-get-flow-blueprint", "tg-get-kg-core",
        "tg-graph-to-turtle", "tg-invoke-document-embeddings", "tg-invoke-document-rag", "tg-invoke-embeddings",
        "tg-invoke-graph-embeddings", "tg-invoke-graph-rag", "tg-invoke-nlp-query", "tg-invoke-row-embeddings",
        "tg-invoke-rows-query", "tg-invoke-structured-query", "tg-list-collections", "tg-load-doc-embeds",
        "tg-load-kg-core", "tg-load-knowledge", "tg-load-sample-documents", "tg-load-structured-data",
        "tg-load-turtle", "tg-put-flow-blueprint", "tg-put-kg-core", "tg-remove-library-document",
        "tg-save-doc-embeds", "tg-set-collection", "tg-set-token-costs", "tg-set-tool",
        "tg-show-flow-blueprints", "tg-show-flow-state", "tg-show-graph", "tg-show-kg-cores",
        "tg-show-library-documents", "tg-show-library-processing", "tg-show-parameter-types",
        "tg-show-processor-state", "tg-show-token-costs", "tg-show-token-rate", "tg-start-library-processing",
        "tg-stop-library-processing", "tg-unload-kg-core",
    )
}
_BY_MODULE = {module: name for name, module in COMMANDS.items()}

#: The private package name upstream's modules are loaded under.
_PRIVATE = "trustgraph_upstream_cli"


def home() -> Path:
    """The directory holding upstream's CLI: ``$TRUSTGRAPH_UPSTREAM_COMMANDS``, else under this
    environment's prefix (each venv its own, since the installer adds upstream's dependencies to it)."""
    chosen = os.environ.get(HOME_VARIABLE)
    return Path(chosen) if chosen else Path(sys.prefix) / "share" / "trustgraph" / "upstream-cli"


def module_file(module: str, where: Path | None = None) -> Path:
    """Where upstream's module for a command is, once installed."""
    return (where or home()) / "trustgraph" / "cli" / f"{module}.py"


def load(module: str, where: Path | None = None) -> ModuleType:
    """Upstream's command module, loaded from :func:`home` under a private name; a
    :class:`CliError` saying what to run when it is not there."""
    path = module_file(module, where)
    name = _BY_MODULE.get(module, module)
    if not path.is_file():
        raise CliError(f"{name} is upstream TrustGraph's command, which this fork runs from upstream's own "
                       f"trustgraph-cli: fetch it once with `tg-install-upstream-commands` "
                       f"(it was looked for in {path.parent})")
    spec = importlib.util.spec_from_file_location(f"{_PRIVATE}.{module}", path)
    if spec is None or spec.loader is None:
        raise CliError(f"{path} cannot be loaded as a Python module: run `tg-install-upstream-commands` again")
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded
    try:
        spec.loader.exec_module(loaded)
    except ImportError as e:
        raise CliError(f"{name}: upstream's module needs {e.name or e}, which is not installed: run "
                       "`tg-install-upstream-commands` (it installs upstream's dependencies too)") from e
    return loaded


def command(module: str) -> Callable[[], None]:
    """The console-script function of one upstream command."""
    name = _BY_MODULE[module]

    def run() -> None:
        loaded: list[ModuleType] = []
        main_wrapper(name, lambda: loaded.append(load(module)))
        # Upstream's main() runs as upstream wrote it: its own messages, its own exit status.
        loaded[0].main()

    run.__name__ = module
    run.__doc__ = f"Run upstream's {name} (see trustgraph.cli.upstream)."
    return run


def __getattr__(attribute: str) -> Callable[[], None]:
    # The console scripts import ``trustgraph.cli.upstream:<module>``: one function per command,
    # made on first use rather than 46 written out.
    if attribute in _BY_MODULE:
        return command(attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
