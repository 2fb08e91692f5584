"""A processor stand-in for tg-launch's supervision tests.

tg-launch runs it as a component (``tg-launch --extra-components``).  Each
start appends its pid to the ``--runs`` file, so a test can count starts and
kill a given one.  It becomes ready by writing ``$TG_READY_FILE``, as a real
processor does, and then runs until killed.  Starts after the first
``--up-runs`` fail on purpose (``--fail before-ready``: exit 3 at once;
``after-ready``: exit 3 just after reporting ready); with ``--hold FILE``,
restarts report ready only once FILE exists, so a test controls when a
restarted child is back; with ``--hold-start FILE``, its first start too (a
component that takes its time to come up); with ``--never-ready`` it never is
(a start-up that a test interrupts).  Flags it does not know (``--pulsar-host``...) are
ignored.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", required=True)
    p.add_argument("--up-runs", type=int, default=None)
    p.add_argument("--fail", choices=["before-ready", "after-ready"], default="before-ready")
    p.add_argument("--hold", default=None)
    p.add_argument("--hold-start", default=None)
    p.add_argument("--never-ready", action="store_true")
    args, _ = p.parse_known_args()

    runs = Path(args.runs)
    with open(runs, "a") as f:
        f.write(f"{os.getpid()}\n")
    run = len(runs.read_text().split())
    failing = args.up_runs is not None and run > args.up_runs
    if failing and args.fail == "before-ready":
        sys.exit(3)
    if args.never_ready:
        while True:
            signal.pause()
    if args.hold and run > 1:
        while not Path(args.hold).exists():
            time.sleep(0.02)
    if args.hold_start and run == 1:
        while not Path(args.hold_start).exists():
            time.sleep(0.02)
    ready = Path(os.environ["TG_READY_FILE"])
    tmp = ready.with_suffix(".tmp")
    tmp.write_text(str(os.getpid()))
    tmp.rename(ready)
    if failing:
        sys.exit(3)
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
