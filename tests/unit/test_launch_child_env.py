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
