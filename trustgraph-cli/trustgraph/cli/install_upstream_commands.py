"""Fetches upstream's trustgraph-cli once, so the upstream commands this fork does not reimplement run.

Why a separate step: this distribution replaces upstream's ``trustgraph-cli``
(same name, higher version) and installs all of upstream's command names, but
ships none of upstream's code; the 46 commands for services this fork does not
run execute upstream's own modules (:mod:`trustgraph.cli.upstream`).  This
command puts them in place, idempotently:

1. ``pip install --no-deps --target`` upstream's ``trustgraph-cli`` (PyPI, or
   ``--from`` a file or directory for a machine without the index) into a
   staging directory beside :func:`~trustgraph.cli.upstream.home`, then swaps
   it in whole, so a failed fetch leaves the previous one working;
2. installs into this environment what upstream's CLI requires, except its
   ``trustgraph-*`` distributions (this fork's stand in for them);
3. checks that every command of :data:`~trustgraph.cli.upstream.COMMANDS` has
   its module there.
"""

from __future__ import annotations

import argparse
import email.parser
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from trustgraph.base.command_line import CliError, main_wrapper, make_parser
from trustgraph.cli.upstream import COMMANDS, HOME_VARIABLE, UPSTREAM_VERSION, home, module_file

PROG = "tg-install-upstream-commands"


def pip(*args: str) -> None:
    """Run this environment's pip; its last lines of output become the error if it fails."""
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    r = subprocess.run(command, capture_output=True, text=True)
    if r.returncode != 0:
        tail = " | ".join((r.stdout + r.stderr).strip().splitlines()[-3:])
        raise CliError(f"pip {args[0]} failed ({tail}): check the network or give --from a downloaded "
                       "trustgraph-cli sdist or wheel")


def requirements(target: Path) -> list[str]:
    """What the fetched distribution requires, without its trustgraph-* ones or extras-only ones."""
    infos = sorted(target.glob("trustgraph_cli-*.dist-info/METADATA"))
    if not infos:
        raise CliError(f"no trustgraph_cli-*.dist-info in {target}: is that trustgraph-cli?")
    metadata = email.parser.Parser().parsestr(infos[-1].read_text())
    wanted = []
    for requirement in metadata.get_all("Requires-Dist") or []:
        name = re.match(r"[A-Za-z0-9._-]+", requirement)
        if "extra ==" in requirement or name is None or name.group(0).lower().startswith("trustgraph"):
            continue
        wanted.append(requirement.split(";")[0].strip())
    return wanted


def install(version: str, source: str | None, where: Path, with_dependencies: bool = True) -> list[str]:
    """Fetch upstream's CLI into ``where`` (replacing what is there); returns the commands it lacks."""
    where.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{where.name}-", dir=where.parent))
    try:
        pip("install", "--quiet", "--no-deps", "--no-compile", "--target", str(staging),
            source or f"trustgraph-cli=={version}")
        if with_dependencies and (wanted := requirements(staging)):
            pip("install", "--quiet", *wanted)
        missing = [name for name, module in COMMANDS.items() if not module_file(module, staging).is_file()]
        old = where.with_name(f".{where.name}-old")
        shutil.rmtree(old, ignore_errors=True)
        if where.exists():
            where.rename(old)
        staging.rename(where)
        shutil.rmtree(old, ignore_errors=True)
        return missing
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def installed_version(where: Path) -> str:
    infos = sorted(where.glob("trustgraph_cli-*.dist-info"))
    return infos[-1].name.removeprefix("trustgraph_cli-").removesuffix(".dist-info") if infos else "?"


def main() -> None:
    parser = make_parser(PROG, __doc__.split("\n")[0])
    parser.add_argument("--version", default=UPSTREAM_VERSION,
                        help=f"upstream trustgraph-cli release to fetch from PyPI (default {UPSTREAM_VERSION})")
    parser.add_argument("--from", dest="source", metavar="PATH",
                        help="install from this trustgraph-cli sdist, wheel or source directory instead of PyPI")
    parser.add_argument("--dir", type=Path, default=None,
                        help=f"where to put it (default ${HOME_VARIABLE}, else {home()})")
    parser.add_argument("--no-dependencies", action="store_true",
                        help="do not pip-install upstream's requirements into this environment")
    args: argparse.Namespace = parser.parse_args()

    def body() -> None:
        where = args.dir or home()
        if args.dir is not None and args.dir != home():
            print(f"note: the commands look in {home()}; set {HOME_VARIABLE}={where} for them to use this one")
        missing = install(args.version, args.source, where, not args.no_dependencies)
        print(f"upstream trustgraph-cli {installed_version(where)} installed in {where}: "
              f"{len(COMMANDS) - len(missing)} of its commands run from it")
        if missing:
            raise CliError(f"it lacks {', '.join(missing)}: those stay unavailable "
                           f"(this fork carries {UPSTREAM_VERSION}'s commands)")

    main_wrapper(PROG, body)


if __name__ == "__main__":
    main()
