"""tg-verify-system-status names its failed checks in the checks' order, not in the order they
settled in: which check runs out of time first is up to the machine's load, and a summary line
that changes with it is one a script cannot match (an e2e test saw it swap under load)."""

from __future__ import annotations

import time

from trustgraph.cli import verify_system_status as vss


def test_results_come_back_in_the_checks_order_whatever_order_they_settled_in(capsys):
    global_timeout = 0.2
    started = time.monotonic()

    def fails_at_once(timeout: float) -> vss.Result:
        return vss.Result(vss.FAIL, "first: down")

    def fails_after_the_deadline(timeout: float) -> vss.Result:
        # Returns only once the run's time is up, so this check settles first (right after its
        # attempt) and the first check only on the next pass.
        while time.monotonic() < started + global_timeout:
            time.sleep(0.01)
        return vss.Result(vss.FAIL, "second: down")

    checks = [vss.Check("First", fails_at_once, gateway=""),
              vss.Check("Second", fails_after_the_deadline, gateway="")]
    results = vss.verify(None, checks, global_timeout, check_timeout=1.0, retry_delay=0.05, verbose=False)

    printed = [line.split(":")[0] for line in capsys.readouterr().out.splitlines() if line.startswith("FAIL")]
    assert printed == ["FAIL  Second", "FAIL  First"]   # settled (and reported) in this order
    assert list(results) == ["First", "Second"]
    assert [r.text for r in results.values()] == ["first: down", "second: down"]
