"""The reliability suite's fixtures and its report (RELIABILITY.md).

Each scenario runs real processes on a pulsar-lite broker on 127.0.0.1
(the RabbitMQ cluster scenario: on 3 RabbitMQ nodes of its own), bounded in
time and load, and records what it observed with
:func:`scenario`; ``make reliability`` runs the whole suite with
``RELIABILITY_REPORT`` set and the session writes the rows to
RELIABILITY.md, so the figures there are the suite's, never typed by hand.

Scenarios marked ``long`` run only in ``make reliability``; the rest also
run in ``make test`` (CI's 15-minute budget).
"""

from __future__ import annotations

import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "integration"))

COMMAND = "make reliability"
#: What the scenarios do not cover, and why: appended to RELIABILITY.md.
REMAINS = Path(__file__).with_name("remains.md")


@dataclass(frozen=True)
class Row:
    """One line of RELIABILITY.md: what was done to the stack and what it did."""

    scenario: str
    load: str
    fault: str
    expected: str
    observed: str
    recovery_s: float | None = None   # time to the first fresh success after the fault
    lost: int = 0                     # requests that got neither a reply nor an error within their bound
    hung: int = 0                     # calls still waiting after their own deadline
    exits: int = 0                    # processes that exited without being told to
    ok: bool = True


_ROWS: list[Row] = []


@pytest.fixture
def scenario(record_property: Any):
    """``scenario(Row(...))`` or ``scenario(**fields)``: record one row.

    The keyword form lets a test module record rows without importing Row:
    ``from conftest import`` finds whichever conftest.py pytest loaded last.
    """
    def add(row: Row | None = None, **fields: Any) -> Row:
        row = row if row is not None else Row(**fields)
        record_property("reliability-row", asdict(row))
        return row
    return add


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        for name, value in report.user_properties:
            if name == "reliability-row":
                _ROWS.append(Row(**value) if isinstance(value, dict) else value)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get("RELIABILITY_REPORT")
    if not target or not _ROWS or hasattr(session.config, "workerinput"):
        return
    rows = sorted(set(_ROWS), key=lambda r: r.scenario)
    lines = ["# Reliability", "",
             f"Written by `{COMMAND}` (tests/reliability): every row is a scenario run against real",
             "processes on a pulsar-lite broker on 127.0.0.1 (or, where the row says RabbitMQ, on a",
             "3-node RabbitMQ cluster of the test's own); the figures are the suite's own.", "",
             "| scenario | load | fault | expected | observed | recovery s | lost | hung | exits | result |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| " + " | ".join(_cell(v) for v in (
            r.scenario, r.load, r.fault, r.expected, r.observed, r.recovery_s, r.lost, r.hung, r.exits,
            "pass" if r.ok else "FAIL")) + " |")
    passed = sum(1 for r in rows if r.ok)
    lines += ["", f"{passed} of {len(rows)} scenarios pass.", ""]
    if REMAINS.exists():
        lines += [REMAINS.read_text().rstrip(), ""]
    Path(target).write_text("\n".join(lines))
