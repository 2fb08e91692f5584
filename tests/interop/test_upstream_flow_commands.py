"""Every processor command of upstream trustgraph-flow 2.1.4 that starts on upstream's own base starts
on ours (issue 36): imports and answers ``--help`` in ``.interop/flow-on-ours`` (our trustgraph-base,
upstream's trustgraph-flow ``--no-deps`` and its third-party requirements) as in
``.interop/upstream-flow`` (the same on upstream's base), measured by ``interop/upstream_processors.py``."""

from __future__ import annotations

import pytest

from interop import upstream_processors

pytestmark = [pytest.mark.interop, pytest.mark.long, pytest.mark.timeout(1800)]


def test_every_command_that_starts_on_upstreams_base_starts_on_ours(row):
    ours = upstream_processors.measure(upstream_processors.VENVS["flow-on-ours"]())
    theirs = upstream_processors.measure(upstream_processors.VENVS["upstream-flow"]())
    failing_ours = {r.script for r in ours if not r.ok}
    failing_theirs = {r.script for r in theirs if not r.ok}
    only_ours = sorted(failing_ours - failing_theirs)
    detail = (f"{len(ours) - len(failing_ours)} of {len(ours)} on ours, {len(theirs) - len(failing_theirs)} "
              f"of {len(theirs)} on upstream's base" + (f"; failing on ours only: {', '.join(only_ours)}"
                                                        if only_ours else "")
              + (f"; failing on both: {', '.join(sorted(failing_ours & failing_theirs))}"
                 if failing_ours & failing_theirs else ""))
    row("upstream trustgraph-flow 2.1.4 console scripts", "import and --help on our trustgraph-base",
        not only_ours, detail)
    assert not only_ours, detail
