"""tg-new-tool-service NAME --description TEXT: a new tool service in this checkout, registered, with its test.

Writes, and never overwrites:

* ``trustgraph-flow/trustgraph/tool_service/<package>/`` (``__init__.py``,
  ``service.py``): a ``DynamicToolService`` declaring one tool, named NAME and
  described by TEXT, with typed arguments and example calls, and one config
  param (``templates.py``);
* ``tests/unit/test_<package>_service.py``: its test on the in-memory transport;
* two lines of ``trustgraph-flow/pyproject.toml``: the console script
  ``<NAME>-service`` and its entry point in ``trustgraph.tool_services``,
  which registers it (``trustgraph.launch.tool_services``).

Then ``make install`` installs and registers it, ``make run`` starts it, and
the agent can use its tool as soon as it runs (it announces itself).  The
launcher's tests and the test every registered service gets follow the
registry, so no other file needs an edit.

Everything is checked before anything is written: a name that is not one,
or is taken (a package, a command, a tool or a topic), or a description that
is blank or more than one line, is refused in one line, and the checkout is
left as it was.

Why the description is asked for: it is what the agent chooses a tool by,
and only its author knows it.  Made with its placeholder's words ("Greet a
person by name"), a tool named ``weather`` told the agent it greets people
until someone edited it (issue 35); the placeholder's example calls carry no
question for the same reason.
"""

from __future__ import annotations

import argparse
import copy
import json
import keyword
import os
import re
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from trustgraph.base.command_line import CliError, main_wrapper
from trustgraph.base.safety import limits
from trustgraph.launch.bootstrap import BootstrapError, read_bootstrap
from trustgraph.launch.tool_services import GROUP, registered
from trustgraph.topics import tool_service_topics

from . import templates

PROG = "tg-new-tool-service"

FLOW = Path("trustgraph-flow")
PYPROJECT = FLOW / "pyproject.toml"
SERVICES = FLOW / "trustgraph" / "tool_service"
TESTS = Path("tests") / "unit"
BOOTSTRAP = Path("config-examples") / "bootstrap.json"
#: The other packages' pyprojects, whose commands are taken names too.
OTHER_PYPROJECTS = (Path("trustgraph-cli") / "pyproject.toml", Path("trustgraph-base") / "pyproject.toml")

NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
MAX_NAME = 32
SUFFIX = "-service"
NAME_RULE = ("lower-case letters, digits and single '-' between them, starting with a letter, at most "
             f"{MAX_NAME} characters (e.g. weather or unit-converter)")
MAX_DESCRIPTION = 300
DESCRIPTION_RULE = (f"one line of at most {MAX_DESCRIPTION} characters saying what the tool does, as the agent "
                    "is shown it (e.g. --description \"Convert an amount between units of length\")")


@dataclass(frozen=True)
class Plan:
    """What one service is called, everywhere it is named."""

    name: str       # "unit-converter": the tool's name and the topic
    package: str    # "unit_converter"
    script: str     # "unit-converter-service": console script, component and service id
    description: str   # the tool's, as the agent is shown it

    @classmethod
    def of(cls, text: str, description: str) -> Plan:
        said = description.strip()
        if not said or len(said) > MAX_DESCRIPTION or not said.isprintable():
            raise CliError(f"{description!r} is not a tool description: give {DESCRIPTION_RULE}")
        name = text.strip()
        if name.endswith(SUFFIX) and len(name) > len(SUFFIX):
            name = name[:-len(SUFFIX)]   # "weather-service" means the service weather
        if len(name) > MAX_NAME or not NAME.fullmatch(name):
            raise CliError(f"{text!r} is not a service name: use {NAME_RULE}")
        package = name.replace("-", "_")
        if keyword.iskeyword(package):
            raise CliError(f"{text!r} is not a service name: {package!r} is a Python keyword, which cannot "
                           "name its package; choose another")
        return cls(name, package, name + SUFFIX, said)

    @property
    def topic(self) -> str:
        return self.name

    @property
    def tool(self) -> str:
        return self.name

    @property
    def files(self) -> dict[Path, str]:
        """Each new file (relative to the checkout) and its text."""
        fill = {"script": self.script, "package": self.package, "topic": self.topic, "tool": self.tool,
                # A double-quoted literal, as the template's others (JSON's escapes are Python's).
                "description": json.dumps(self.description, ensure_ascii=False)}
        where = SERVICES / self.package
        return {where / "__init__.py": templates.PACKAGE_INIT.substitute(fill),
                where / "service.py": templates.SERVICE.substitute(fill),
                TESTS / f"test_{self.package}_service.py": templates.TEST.substitute(fill)}

    @property
    def script_target(self) -> str:
        return f"trustgraph.tool_service.{self.package}:run"

    @property
    def class_target(self) -> str:
        return f"trustgraph.tool_service.{self.package}:Processor"


def find_checkout(start: Path) -> Path | None:
    """The checkout ``start`` is in: the nearest directory holding trustgraph-flow's pyproject
    and tool services."""
    for base in (start, *start.parents):
        if (base / PYPROJECT).is_file() and (base / SERVICES).is_dir():
            return base
    return None


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise CliError(f"cannot read {path}: {e}") from None


def _commands(root: Path) -> set[str]:
    """Every command name taken: both packages' console scripts, the registered services, and
    whatever this venv has installed."""
    taken = {ep.name for ep in entry_points(group="console_scripts")}
    for path in (root / PYPROJECT, *(root / other for other in OTHER_PYPROJECTS)):
        if path.is_file():
            project = _toml(path).get("project", {})
            taken |= set(project.get("scripts", {}))
            taken |= set(project.get("entry-points", {}).get(GROUP, {}))
    return taken


def _installed_services() -> list[Any]:
    """The registered service classes that load (one that does not has nothing to compare)."""
    out = []
    for service in registered():
        try:
            out.append(service.load())
        except Exception:   # its own launch says what is wrong with it
            continue
    return out


def _tool_names(root: Path, services: list[Any]) -> set[str]:
    """The tools the checkout's bootstrap config and the registered services declare."""
    names = {str(t.get("name")) for cls in services for t in getattr(cls, "tools", ()) if isinstance(t, dict)}
    if (root / BOOTSTRAP).is_file():
        try:
            values, _ = read_bootstrap(root / BOOTSTRAP)
        except BootstrapError:
            values = []   # the launcher reports an unreadable bootstrap; here it names no tool
        for v in values:
            if v.type == "tool":
                names.add(v.key)
                name = (limits.object_or_none(v.value) or {}).get("name")
                if isinstance(name, str):
                    names.add(name.strip())
    return names


def taken(plan: Plan, root: Path) -> str | None:
    """Why ``plan``'s names cannot be used in the checkout at ``root``, or None."""
    package = SERVICES / plan.package
    for path in (package, package.with_suffix(".py"), *plan.files):
        if (root / path).exists():
            return f"{path} already exists (nothing is ever overwritten)"
    if plan.script in _commands(root):
        return f"the command {plan.script} already exists"
    from trustgraph.base.descriptors.reserved_topics import framework_topics  # pydantic: only now
    request = tool_service_topics(plan.topic)[0]
    if (what := framework_topics({}).get(request)) is not None:
        return f"its topic {request} is the framework's own ({what})"
    services = _installed_services()
    for cls in services:
        if getattr(cls, "default_topic", None) == plan.topic:
            return f"{cls.__module__}.{cls.__name__} already serves the topic {request}"
    if plan.tool in _tool_names(root, services):
        return f"a tool named {plan.tool!r} already exists"
    return None


_HEADER = re.compile(r"^\s*\[")
_KEY = re.compile(r"^\s*[A-Za-z0-9_\"'.-]+\s*=")


def _add_to_section(lines: list[str], header: str, line: str) -> bool:
    """Put ``line`` after the last key of section ``header``; False when there is no such section."""
    try:
        start = next(i for i, text in enumerate(lines) if text.strip() == header)
    except StopIteration:
        return False
    at = start + 1
    for i in range(start + 1, len(lines)):
        if _HEADER.match(lines[i]):
            break
        if _KEY.match(lines[i]):
            at = i + 1
    lines.insert(at, line)
    return True


def with_registration(text: str, plan: Plan) -> str:
    """``pyproject.toml``'s text with the service's console script and entry point added.

    Edited as text, so its comments and layout stay; then read back, and refused unless it
    holds exactly what it held plus the two entries.
    """
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    script = f'{plan.script} = "{plan.script_target}"\n'
    entry = f'{plan.script} = "{plan.class_target}"\n'
    if not _add_to_section(lines, "[project.scripts]", script):
        raise CliError(f"{PYPROJECT} has no [project.scripts] section to add the command {plan.script} to")
    group = f'[project.entry-points."{GROUP}"]'
    if not _add_to_section(lines, group, entry):
        lines += ["\n", f"{group}\n", entry]
    result = "".join(lines)
    expected = copy.deepcopy(tomllib.loads(text))
    project = expected.setdefault("project", {})
    project.setdefault("scripts", {})[plan.script] = plan.script_target
    project.setdefault("entry-points", {}).setdefault(GROUP, {})[plan.script] = plan.class_target
    try:
        ok = tomllib.loads(result) == expected
    except tomllib.TOMLDecodeError:
        ok = False
    if not ok:
        raise CliError(f"could not add the registration to {PYPROJECT} (its layout is unusual); nothing was "
                       f"written: add {script.strip()!r} under [project.scripts] and {entry.strip()!r} under "
                       f"{group} by hand")
    return result


def _replace(path: Path, text: str) -> None:
    """Write ``text`` over ``path`` at once (a temporary file renamed), keeping its mode."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def create(plan: Plan, root: Path) -> list[Path]:
    """Write the service's files and its registration; returns what was written (relative).

    Nothing is written unless all of it can be checked first; a file that cannot be written
    takes the ones written before it away again.
    """
    if (why := taken(plan, root)) is not None:
        raise CliError(f"{plan.name!r} is taken: {why}; choose another name")
    registration = with_registration((root / PYPROJECT).read_text(), plan)
    made: list[Path] = []
    made_dirs: list[Path] = []
    try:
        for rel, text in plan.files.items():
            directory = (root / rel).parent
            if not directory.exists():
                directory.mkdir(parents=True)
                made_dirs.append(directory)
            with open(root / rel, "x") as f:   # "x": never over a file that appeared since the check
                f.write(text)
            made.append(rel)
        _replace(root / PYPROJECT, registration)
    except OSError as e:
        for rel in made:
            (root / rel).unlink(missing_ok=True)
        for directory in reversed(made_dirs):
            directory.rmdir()
        raise CliError(f"cannot write the service ({e}); nothing was kept") from None
    return [*made, PYPROJECT]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", metavar="NAME", help=f"the service's name: {NAME_RULE}; the command is NAME-service")
    p.add_argument("--description", required=True, metavar="TEXT", help=f"its tool's description: {DESCRIPTION_RULE}")
    p.add_argument("--root", default=None, metavar="DIR",
                   help="the checkout to add it to (default: the one the current directory is in, else the "
                        "one this command is installed from)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None, say: Callable[[str], None] = print) -> None:
    args = parse_args(argv)
    plan = Plan.of(args.name, args.description)
    if args.root is not None:
        root = find_checkout(Path(args.root).resolve())
        if root is None or root != Path(args.root).resolve():
            raise CliError(f"{args.root} is not a TrustGraph checkout (it has no {PYPROJECT} and {SERVICES})")
    else:
        root = find_checkout(Path.cwd()) or find_checkout(Path(__file__).resolve().parent)
        if root is None:
            raise CliError(f"no TrustGraph checkout here or above (none has {PYPROJECT}); run it in your "
                           "checkout, or give --root")
    written = create(plan, root)
    say(f"{PROG}: made {plan.script} (tool '{plan.tool}', topic {plan.topic}) in {root}:")
    for rel in written:
        say(f"  {rel}" + (" (its command and its entry point in trustgraph.tool_services)" if rel == PYPROJECT
                          else ""))
    say(f"Next: `make install` registers it, then `make run` starts it and the agent can use '{plan.tool}'. "
        f"Test it: .venv/bin/python -m pytest {TESTS / f'test_{plan.package}_service.py'} "
        f"tests/unit/test_registered_tool_services.py -q")


def run() -> None:
    main_wrapper(PROG, main)
