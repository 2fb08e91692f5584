"""One INTEROP.md row as a block of checks, shared by the deployment modules.

A row is recorded whatever happens inside it (pass, a failed check, an exception), so the
report never looks better than the run; a row a module lists as known broken (with the reason,
e.g. an upstream bug) is recorded FAIL with that reason and its test is an expected failure,
so the report says what does not work instead of CI going red for what we cannot fix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

import pytest


class Row:
    """The checks of one INTEROP.md row; the first failed one is its detail."""

    def __init__(self) -> None:
        self.ok = True
        self.detail = ""
        self.seen = ""

    def check(self, ok: bool, detail: Callable[[], str]) -> None:
        if not ok and self.ok:
            self.ok, self.detail = False, detail()[:300]

    def saw(self, text: str) -> None:
        """What a passing row observed, for its detail (a failing one shows what failed)."""
        self.seen = text


@contextmanager
def interop_row(row, peer: str, direction: str,
                known_broken: Mapping[tuple[str, str], str] | None = None) -> Iterator[Row]:
    """Record the row as pass or FAIL, with the reason, whatever happens inside; fail the test on
    FAIL, unless ``known_broken`` names the row (by ``(peer, direction)``, with the reason): then
    the test is xfailed.  A listed row that passes is recorded pass."""
    r = Row()
    known = (known_broken or {}).get((peer, direction))
    try:
        yield r
    except Exception as e:
        first = (str(e).strip().splitlines() or [""])[0]
        detail = f"{type(e).__name__}: {first}"[:300]
        row(peer, direction, False, f"{known} (seen: {detail[:200]})" if known else detail)
        if known:
            pytest.xfail(f"{known}: {detail}")
        raise
    detail = r.detail if not r.ok else r.seen[:300]
    row(peer, direction, r.ok, f"{known} (seen: {r.detail[:200]})" if known and not r.ok else detail)
    if not r.ok and known:
        pytest.xfail(f"{known}: {r.detail}")
    assert r.ok, r.detail
