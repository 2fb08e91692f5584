"""The interop suite's fixtures and its report (INTEROP.md).

Upstream TrustGraph 2.1.4 runs from venvs of its own (``interop/venvs.py``,
created once from PyPI under ``.interop/``, the suite's only use of the
network); our side runs from the project's venv.  Each test records rows
``(peer, direction, result)`` with :func:`row`; ``make interop`` sets
``INTEROP_REPORT`` and the session writes them to INTEROP.md.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "integration"))

from interop.venvs import UPSTREAM, Venv, ensure_mixed  # noqa: E402


def _root_conftest():
    """tests/conftest.py's helpers: test_gateway.py imports them as ``conftest``, which here is us."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_root_conftest", REPO / "tests" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BIN = _root_conftest().BIN
Proc = _root_conftest().Proc

_ROWS: list[tuple[str, str, str, str]] = []


@pytest.fixture(scope="session")
def upstream_venv() -> Venv:
    return UPSTREAM.ensure()


@pytest.fixture(scope="session")
def mixed_venv() -> Venv:
    return ensure_mixed()


@pytest.fixture
def row(record_property: Any):
    """``row(peer, direction, ok, detail="")``: one line of INTEROP.md."""
    def add(peer: str, direction: str, ok: bool, detail: str = "") -> None:
        record_property("interop-row", (peer, direction, "pass" if ok else "FAIL", detail))
    return add


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        for name, value in report.user_properties:
            if name == "interop-row":
                _ROWS.append(tuple(value))


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get("INTEROP_REPORT")
    if not target or not _ROWS or hasattr(session.config, "workerinput"):
        return
    lines = ["# Interop with upstream TrustGraph 2.1.4", "",
             "Written by `make interop` (tests/interop). Upstream runs from venvs made from PyPI",
             "(`interop/venvs.py`); ours from the checkout. One pulsar-lite broker.", "",
             "| peer | direction | result | detail |", "|---|---|---|---|"]
    for peer, direction, result, detail in sorted(set(_ROWS)):
        lines.append(f"| {peer} | {direction} | {result} | {detail} |")
    passed = sum(1 for r in _ROWS if r[2] == "pass")
    lines += ["", f"{passed} of {len(set(_ROWS))} rows pass.", ""]
    Path(target).write_text("\n".join(lines))
