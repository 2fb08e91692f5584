"""Fetches upstream's trustgraph-cli once, so the upstream commands this fork does not reimplement run.

Why a separate step: this distribution replaces upstream's ``trustgraph-cli``
(same name, higher version) and installs all of upstream's command names, but
ships none of upstream's code; the 46 commands for services this fork does not
run execute upstream's own modules (:mod:`trustgraph.cli.upstream`).  This
command puts them in place, idempotently:

1. ``pip install --no-deps --target`` upstream's ``trustgraph-cli`` (PyPI, or
   ``--from`` a file or directory for a machine without the index) into a
   staging directory beside :func:`~trustgraph.cli.upstream.home`;
2. checks that it holds the commands of :data:`~trustgraph.cli.upstream.COMMANDS`:
   one holding none of them (not trustgraph-cli, or not its code) is refused,
   and so is one lacking a command the working copy runs (it would take that
   command away) unless ``--force``;
3. installs into this environment what upstream's CLI requires, except its
   ``trustgraph-*`` distributions (this fork's stand in for them);
4. swaps it in whole, in one rename (``renameat2(RENAME_EXCHANGE)``): the
   commands see the old copy or the new one, never neither, and any failure
   before this step leaves the working copy as it was.

The directory is replaced whole, so only a directory this command made is
replaced unasked: one that holds anything else (``--dir ~/work`` by mistake)
is refused, naming what it holds, unless ``--force``.  What this command
makes carries the file :data:`MARKER`; a copy installed before there was a
marker is known by its layout (pip's ``trustgraph``, ``bin`` and
``trustgraph_cli-*.dist-info`` and nothing else).
"""

from __future__ import annotations

import argparse
import ctypes
import email.parser
import errno
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from trustgraph.base.command_line import CliError, main_wrapper, make_parser
from trustgraph.cli.upstream import COMMANDS, HOME_VARIABLE, UPSTREAM_VERSION, home, module_file

PROG = "tg-install-upstream-commands"

#: The file that marks a directory as one this command made, and may replace.
MARKER = ".tg-upstream-commands"
#: What ``pip install --target`` makes of trustgraph-cli: a directory holding only these was ours.
_PIP_LAYOUT = re.compile(r"trustgraph|bin|trustgraph_cli-[^/]+\.dist-info")


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


def not_ours(where: Path) -> list[str]:
    """What ``where`` holds that this command did not put there (names; [] when it may be replaced)."""
    if not where.exists() and not where.is_symlink():
        return []
    if not where.is_dir():
        return [where.name]
    if (where / MARKER).is_file():
        return []
    names = sorted(p.name for p in where.iterdir())
    if any(n.startswith("trustgraph_cli-") for n in names) and all(_PIP_LAYOUT.fullmatch(n) for n in names):
        return []   # installed before the marker
    return names


def missing_commands(where: Path) -> list[str]:
    """The commands of :data:`COMMANDS` whose module ``where`` lacks."""
    return [name for name, module in COMMANDS.items() if not module_file(module, where).is_file()]


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> None:
    """Swap two directories in one step (Linux ``renameat2``); ``OSError`` where it cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except AttributeError:
        raise OSError(errno.ENOSYS, "renameat2 is not available") from None
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def swap_in(new: Path, where: Path) -> None:
    """Put directory ``new`` at ``where``; the copy it replaces ends up at ``new`` (for the caller to
    remove).  One rename where the system can exchange two directories, so a command run
    meanwhile finds the old copy or the new one; elsewhere two renames, undone if the second fails."""
    if not where.exists() and not where.is_symlink():
        new.rename(where)
        return
    try:
        _exchange(new, where)
        return
    except OSError as e:
        if e.errno not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise
    old = new.with_name(new.name + "-old")
    where.rename(old)
    try:
        new.rename(where)
    except OSError:
        old.rename(where)
        raise
    old.rename(new)


def install(version: str, source: str | None, where: Path, with_dependencies: bool = True,
            force: bool = False) -> list[str]:
    """Fetch upstream's CLI into ``where`` (replacing what is there); returns the commands it lacks.

    Everything that can fail is done and checked before the working copy is touched; without
    ``force`` a directory holding what is not ours, and a package lacking commands the working
    copy runs, are refused (:class:`CliError`) with ``where`` left as it was.
    """
    if not force and (theirs := not_ours(where)):
        shown = ", ".join(theirs[:3]) + (f" and {len(theirs) - 3} more" if len(theirs) > 3 else "")
        raise CliError(f"{where} holds what this command did not put there ({shown}), and the install replaces "
                       "the whole directory: give a new or empty one with --dir, or --force to replace it")
    what = source or f"trustgraph-cli {version}"
    where.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{where.name}-", dir=where.parent))
    try:
        pip("install", "--quiet", "--no-deps", "--no-compile", "--target", str(staging),
            source or f"trustgraph-cli=={version}")
        missing = missing_commands(staging)
        if len(missing) == len(COMMANDS):
            raise CliError(f"{what} holds none of upstream's commands (no trustgraph/cli/<command>.py): is it "
                           f"upstream's trustgraph-cli? {where} is left as it was")
        taken = [name for name in missing if module_file(COMMANDS[name], where).is_file()]
        if taken and not force:
            raise CliError(f"{what} lacks {len(taken)} command(s) the copy in {where} runs ({', '.join(taken)}): "
                           f"that copy is left as it was; give --force to replace it anyway")
        if with_dependencies and (wanted := requirements(staging)):
            pip("install", "--quiet", *wanted)
        (staging / MARKER).write_text(f"Upstream's trustgraph-cli ({what}), installed by {PROG}, which replaces "
                                      "this directory whole at its next run.\n")
        swap_in(staging, where)
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
    parser.add_argument("--force", action="store_true",
                        help="replace the directory even when it holds files this command did not put there, "
                             "or when the new package lacks commands the installed copy runs")
    args: argparse.Namespace = parser.parse_args()

    def body() -> None:
        where = args.dir or home()
        if args.dir is not None and args.dir != home():
            print(f"note: the commands look in {home()}; set {HOME_VARIABLE}={where} for them to use this one")
        missing = install(args.version, args.source, where, not args.no_dependencies, args.force)
        print(f"upstream trustgraph-cli {installed_version(where)} installed in {where}: "
              f"{len(COMMANDS) - len(missing)} of its commands run from it")
        if missing:
            raise CliError(f"it lacks {', '.join(missing)}: those stay unavailable "
                           f"(this fork carries {UPSTREAM_VERSION}'s commands)")

    main_wrapper(PROG, body)


if __name__ == "__main__":
    main()
