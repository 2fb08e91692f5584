"""The compatibility layer keeps to its quarantine (trustgraph.compat), and upstream 2.1.4's module
paths under trustgraph.base are its files, each importable at upstream's path."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import trustgraph.base as base
from trustgraph.compat import v214

REPO = Path(__file__).resolve().parents[2]
OURS = [REPO / "trustgraph-base" / "trustgraph", REPO / "trustgraph-flow" / "trustgraph",
        REPO / "trustgraph-cli" / "trustgraph"]
BASE_DIR = Path(base.__file__).parent


def overlay_modules() -> list[str]:
    return sorted(p.stem for p in v214.BASE_PATHS.glob("*.py"))


def test_upstreams_base_paths_come_after_ours_and_hide_none_of_ours():
    assert base.__path__[0] == str(BASE_DIR) and str(v214.BASE_PATHS) in base.__path__
    own = {p.stem for p in BASE_DIR.glob("*.py")} | {p.name for p in BASE_DIR.iterdir() if p.is_dir()}
    assert not set(overlay_modules()) & own
    assert not v214.BASE_PATHS.name.isidentifier()     # no second import path for its files


def test_every_upstream_module_path_imports_under_its_own_name():
    for name in overlay_modules():
        module = importlib.import_module(f"trustgraph.base.{name}")
        assert module.__name__ == f"trustgraph.base.{name}"
        assert Path(module.__file__).parent == v214.BASE_PATHS


def test_every_upstream_name_resolves_from_trustgraph_base_and_ours_win():
    for name, module in v214.EXPORTS.items():
        assert module.startswith("trustgraph.compat."), name
        assert getattr(base, name) is getattr(importlib.import_module(module), name)
    assert not set(v214.EXPORTS) & set(base._EXPORTS)


def test_nothing_of_ours_imports_the_compatibility_layer():
    """Only trustgraph.base's hooks and the layer itself (and upstream-path files) may."""
    pattern = re.compile(r"^\s*(from|import)\s+(trustgraph\.compat|\.+compat)\b", re.M)
    allowed = {BASE_DIR / "__init__.py"}
    offenders = []
    for root in OURS:
        for path in root.rglob("*.py"):
            if path.relative_to(root).parts[0] in ("compat", "flow_compat") or path in allowed:
                continue
            if pattern.search(path.read_text(errors="replace")):
                offenders.append(str(path.relative_to(REPO)))
    assert offenders == []


# -- the flow side: trustgraph.flow_compat (trustgraph.compat is base's and cannot be shared) ----------

FLOW_DIR = REPO / "trustgraph-flow" / "trustgraph"
#: Ours that may import trustgraph.flow_compat: the hooks serving upstream's paths, and upstream's own
#: package trustgraph.template (path files only).
FLOW_HOOKS = {FLOW_DIR / "agent" / "__init__.py", FLOW_DIR / "agent" / "react" / "__init__.py"}


def test_flow_overlays_come_after_ours_and_hide_none_of_ours():
    from trustgraph.flow_compat import v214 as flow
    assert flow.PATHS
    for package, directory in flow.PATHS.items():
        module = importlib.import_module(package)
        own = Path(module.__file__).parent
        assert module.__path__[0] == str(own) and str(directory) in module.__path__
        names = {p.stem for p in own.glob("*.py")} | {p.name for p in own.iterdir() if p.is_dir()}
        files = {p.stem for p in directory.glob("*.py")}
        assert files and not files & names, package
        assert not directory.name.isidentifier()
        for name in files:
            loaded = importlib.import_module(f"{package}.{name}")
            assert loaded.__name__ == f"{package}.{name}" and Path(loaded.__file__).parent == directory


def test_upstreams_template_package_holds_only_path_files():
    import trustgraph.template.prompt_manager as pm
    from trustgraph.flow_compat.v214 import prompt_manager
    assert pm.PromptManager is prompt_manager.PromptManager
    for path in (FLOW_DIR / "template").glob("*.py"):
        code = [line for line in path.read_text().splitlines() if line.startswith(("from ", "import "))]
        assert all("flow_compat" in line or line.startswith("from .") for line in code), path


def test_nothing_of_ours_imports_the_flow_compatibility_layer():
    pattern = re.compile(r"^\s*(from|import)\s+(trustgraph\.flow_compat|\.+flow_compat)\b", re.M)
    offenders = []
    for root in OURS:
        for path in root.rglob("*.py"):
            top = path.relative_to(root).parts[0]
            if top in ("flow_compat", "template") or path in FLOW_HOOKS:
                continue
            if pattern.search(path.read_text(errors="replace")):
                offenders.append(str(path.relative_to(REPO)))
    assert offenders == []
