"""tg-verify-system-status names its failed checks in the checks' order, not in the order they
settled in: which check runs out of time first is up to the machine's load, and a summary line
that changes with it is one a script cannot match (an e2e test saw it swap under load)."""

from __future__ import annotations

from types import SimpleNamespace

from trustgraph.cli import verify_system_status as vss


def test_results_come_back_in_the_checks_order_whatever_order_they_settled_in(capsys, monkeypatch):
    # verify's own clock, moved only by the checks and its sleeps: the settle order below is then
    # the same on any machine, however loaded.
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    monkeypatch.setattr(vss, "time", SimpleNamespace(monotonic=lambda: now[0], sleep=sleep))
    global_timeout = 10.0

    def fails_at_once(timeout: float) -> vss.Result:
        return vss.Result(vss.FAIL, "first: down")

    def fails_after_the_deadline(timeout: float) -> vss.Result:
        # Its attempt outlasts the run's time, so this check settles first (right after its
        # attempt) and the first check, tried before it, only on the next pass.
        now[0] += global_timeout + 1
        return vss.Result(vss.FAIL, "second: down")

    checks = [vss.Check("First", fails_at_once, gateway=""),
              vss.Check("Second", fails_after_the_deadline, gateway="")]
    results = vss.verify(None, checks, global_timeout, check_timeout=1.0, retry_delay=1.0, verbose=False)

    printed = [line.split(":")[0] for line in capsys.readouterr().out.splitlines() if line.startswith("FAIL")]
    assert printed == ["FAIL  Second", "FAIL  First"]   # settled (and reported) in this order
    assert list(results) == ["First", "Second"]
    assert [r.text for r in results.values()] == ["first: down", "second: down"]


def test_a_stack_still_starting_is_a_gateway_that_answers_and_processors_not_up_yet():
    """The gateway's health answers 503 ``starting`` until every component is up: the gateway
    check passes (it answers), and the processors check names the components still starting."""
    body = {"status": "starting", "components": {"api-gateway": {"state": "up"},
                                                 "llm": {"state": "starting", "log": "/d/logs/llm.log"}}}

    class Api:
        url = "http://localhost:8088/"

        def fetch(self, path: str, timeout: float) -> SimpleNamespace:
            import json
            return SimpleNamespace(status_code=503, content=json.dumps(body).encode())

    system = vss.System(args=SimpleNamespace(min_processors=None), api=Api(), admin_url="", admin_source="")
    assert system.gateway(5.0) == vss.Result(vss.OK, "http://localhost:8088/ answers, health starting")
    processors = system.processors(5.0)
    assert processors.status == vss.FAIL and "llm (starting, log /d/logs/llm.log)" in processors.text
