"""tg-launch tells a child it starts again in place of one that died (lost_calls needs it)."""

from __future__ import annotations

import sys

from trustgraph.base.messaging.lost_calls import RESTARTED_ENV
from trustgraph.launch.components import Component
from trustgraph.launch.processes import Child


async def test_a_child_started_again_has_the_restarted_variable_and_a_first_start_not(tmp_path):
    seen = tmp_path / "seen"
    script = f"import os; open({str(seen)!r}, 'a').write(os.environ.get({RESTARTED_ENV!r}, '-') + '\\n')"
    child = Child(Component(name="probe", command="python"), [sys.executable, "-c", script],
                  {RESTARTED_ENV: "1"}, tmp_path / "probe.log", tmp_path / "probe.ready",
                  verbose=False, where="")
    # The launcher's own environment may carry it (tg-launch itself restarted): a first start is not.
    for _ in range(2):
        await child.start()
        assert await child.wait_exit() == 0
    assert seen.read_text().split() == ["-", "1"]


async def test_a_child_killed_by_a_signal_before_it_is_ready_is_started_again_once(tmp_path):
    # A CI run saw mcp-tool killed by SIGSEGV while its broker client started: one native crash
    # had stopped the whole stack.  An exit code (a bad flag) is the user's to fix: no second start.
    import pytest
    from trustgraph.launch.processes import NotReady
    crashed = tmp_path / "crashed"
    script = ("import os, signal, time, pathlib\n"
              f"marker = pathlib.Path({str(crashed)!r})\n"
              "if not marker.exists() or os.environ.get('ALWAYS'):\n"
              "    marker.touch(); os.kill(os.getpid(), signal.SIGSEGV)\n"
              "pathlib.Path(os.environ['TG_READY_FILE']).touch()\n"
              "time.sleep(60)\n")

    def child(name: str, argv: list[str], env: dict[str, str] | None = None) -> Child:
        return Child(Component(name=name, command="python"), argv, env or {}, tmp_path / f"{name}.log",
                     tmp_path / f"{name}.ready", verbose=False, where="")

    once = child("once", [sys.executable, "-c", script])
    await once.come_up()
    assert once.starts == 2
    await once.stop()
    always = child("always", [sys.executable, "-c", script], {"ALWAYS": "1"})
    with pytest.raises(NotReady, match="SIGSEGV"):
        await always.come_up()
    assert always.starts == 2
    flag = child("flag", [sys.executable, "-c", "raise SystemExit(2)"])
    with pytest.raises(NotReady, match="exited with code 2"):
        await flag.come_up()
    assert flag.starts == 1
