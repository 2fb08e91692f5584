"""Do upstream trustgraph-flow 2.1.4's processors start on a given trustgraph-base? (issue 36)

Run: ``.venv/bin/python interop/upstream_processors.py [--venv flow-on-ours|upstream-flow|upstream]
[--json] [--needs]``.

For every console script of upstream's trustgraph-flow (its ``entry_points.txt`` in the chosen
venv of :mod:`interop.venvs`) it imports the script's module, then runs ``<script> --help``, each in
a process of that venv, and reports ``ok`` or the first error with its root cause: the missing
module or name (``ImportError: cannot import name 'LlmService' from 'trustgraph.base'``), without
the paths, so that the failures group by cause.  ``flow-on-ours`` is our trustgraph-base under
upstream's flow and all its third-party requirements; ``upstream-flow`` the same on upstream's own
base, the baseline; ``upstream`` the interop suite's venv, which lacks most drivers.

A first error hides the next one, so ``--needs`` also reads the sources: every ``trustgraph.*``
import outside trustgraph-flow that each script's modules make (the script's package and every
flow module it imports, transitively), checked in the venv.  A script starts only once all of its
needs are met, which orders the work of issue 36 by what it unblocks.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from interop.venvs import UPSTREAM, UPSTREAM_FLOW, Venv, ensure_flow_on_ours  # noqa: E402

#: The venvs this measures, by the name ``--venv`` takes, and how each is made ready.
VENVS: dict[str, Callable[[], Venv]] = {
    "flow-on-ours": ensure_flow_on_ours,
    "upstream-flow": UPSTREAM_FLOW.ensure,
    "upstream": UPSTREAM.ensure,
}

#: A hang bound for one import or one ``--help`` (some drivers load models or C libraries at import).
TIMEOUT = 180.0

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)')
_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)): ?(?P<message>.*)$")
_CANNOT_IMPORT = re.compile(r"cannot import name '(?P<name>[^']+)' from '(?P<module>[^']+)'")
_NO_MODULE = re.compile(r"No module named '(?P<module>[^']+)'")
_PATHS = re.compile(r"\s*\((?:/|[A-Za-z]:\\)[^)]*\)|(?:/[\w.+-]+)+/")
_ADDRESSES = re.compile(r" at 0x[0-9a-f]+")


@dataclass(frozen=True)
class Cause:
    """A failure's root cause: the exception line without paths, and where the chain started."""

    cause: str
    where: str | None = None


def root_cause(stderr: str) -> Cause:
    """The root cause in a traceback (or any stderr): its last exception line, paths removed.

    Why the last line: with chained exceptions Python prints the original first and the one that
    escaped last, and the one that escaped is what stopped the script.  ``where`` is the innermost
    frame outside the standard library (site-packages path shortened to its module path), which
    for a failed ``from X import Y`` is the upstream line that asked for it.
    """
    lines = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    exception = None
    for line in reversed(lines):
        if not line.startswith(" ") and _EXCEPTION.match(line):
            exception = line
            break
    where = None
    for line in lines:
        frame = _FRAME.match(line)
        if frame and "/lib/python" in frame["path"] and "site-packages" not in frame["path"]:
            continue  # the standard library's importlib frames say nothing
        if frame:
            path = frame["path"]
            if "site-packages/" in path:
                path = path.split("site-packages/", 1)[1]
            where = f"{path}:{frame['line']}"
    if exception is None:
        last = lines[-1] if lines else "no output"
        return Cause(f"no exception: {_clean(last)[:200]}", where)
    return Cause(_clean(exception), where)


def _clean(text: str) -> str:
    """One exception line, comparable across venvs: no file paths, no object addresses."""
    match = _CANNOT_IMPORT.search(text)
    if match:
        return f"ImportError: cannot import name '{match['name']}' from '{match['module']}'"
    match = _NO_MODULE.search(text)
    if match and text.startswith(("ModuleNotFoundError", "ImportError")):
        return f"ModuleNotFoundError: No module named '{match['module']}'"
    return _ADDRESSES.sub("", _PATHS.sub(" ", text)).strip()


@dataclass
class Result:
    """One console script: its entry point, ``ok``, or the step that failed and why."""

    script: str
    target: str
    ok: bool
    step: str | None = None  # "import" or "help"
    cause: str | None = None
    where: str | None = None
    needs: list[str] = field(default_factory=list)  # with --needs: what it imports that is missing


def group(results: Iterable[Result]) -> list[tuple[str, list[str]]]:
    """Failures by root cause, the cause failing most scripts first (then by name, for a stable report)."""
    groups: dict[str, list[str]] = {}
    for result in results:
        if not result.ok:
            groups.setdefault(result.cause or "unknown", []).append(result.script)
    return sorted(((cause, sorted(scripts)) for cause, scripts in groups.items()),
                  key=lambda item: (-len(item[1]), item[0]))


def _run(venv: Venv, code: str, *args: str, timeout: float = 60) -> str:
    r = subprocess.run([str(venv.python), "-c", code, *args], capture_output=True, text=True,
                       timeout=timeout, check=True)
    return r.stdout


def console_scripts(venv: Venv) -> dict[str, str]:
    """trustgraph-flow's console scripts in ``venv``: name -> ``module:attribute``."""
    code = ("import importlib.metadata as m, json\nd = m.distribution('trustgraph-flow')\n"
            "print(json.dumps({e.name: e.value for e in d.entry_points if e.group == 'console_scripts'}))")
    return dict(sorted(json.loads(_run(venv, code)).items()))


def _environment() -> dict[str, str]:
    """The probes' environment: ours minus what would point them at a broker or a stack."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULSAR_", "TG_", "TRUSTGRAPH_"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def probe(venv: Venv, script: str, target: str, timeout: float = TIMEOUT) -> Result:
    """Import the script's module, then run ``<script> --help``; the first failure is the result."""
    module = target.split(":", 1)[0]
    steps = (("import", [str(venv.python), "-c", "import importlib, sys; importlib.import_module(sys.argv[1])",
                         module]),
             ("help", [str(venv.bin(script)), "--help"]))
    for step, command in steps:
        try:
            r = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=_environment(),
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return Result(script, target, False, step, f"timeout: no answer in {timeout:.0f} s")
        if r.returncode != 0:
            cause = root_cause(r.stderr or r.stdout)
            return Result(script, target, False, step, cause.cause, cause.where)
        if step == "help" and "usage" not in r.stdout.lower():
            return Result(script, target, False, step, "no usage text on --help")
    return Result(script, target, True)


# ---- --needs: what each script's modules import from trustgraph outside trustgraph-flow ----


def imports_of(source: str, module: str, is_package: bool) -> list[tuple[str, str | None]]:
    """Every import in one module's source as ``(absolute module, name or None)``.

    Relative imports are resolved against ``module``; ``import a.b`` gives ``("a.b", None)`` and
    ``from a import b, c`` gives ``("a", "b")`` and ``("a", "c")``.  Imports inside functions count:
    they run when the processor does.
    """
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - (node.level - 1)])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            found += [(target, alias.name) for alias in node.names]
    return found


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def needs_of(modules: dict[str, tuple[str, bool]], start: str) -> set[tuple[str, str | None]]:
    """The ``trustgraph.*`` imports outside ``modules`` (flow's: name -> (source, is_package)) that
    ``start`` needs, following flow's own modules (and their packages) transitively."""
    needs: set[tuple[str, str | None]] = set()
    seen: set[str] = set()
    todo = [m for m in _parents(start) if m in modules]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        source, is_package = modules[current]
        for target, name in imports_of(source, current, is_package):
            submodule = f"{target}.{name}" if name and name != "*" else None
            internal = [m for m in _parents(target) if m in modules]
            if submodule in modules:
                internal.append(submodule)
            if target in modules:
                todo += internal
            elif target.startswith("trustgraph.") or target == "trustgraph":
                todo += internal
                needs.add((target, None if name == "*" else name))
    return needs


_CHECK = """
import importlib, json, sys
out = {}
for module, name in json.loads(sys.stdin.read()):
    key = f"{module}:{name or ''}"
    try:
        m = importlib.import_module(module)
    except Exception as e:
        out[key] = f"module {module}: {type(e).__name__}: {e}"
        continue
    if name and not hasattr(m, name):
        try:
            importlib.import_module(f"{module}.{name}")
        except Exception:
            out[key] = f"name {name} not in {module}"
print(json.dumps(out))
"""


def script_needs(venv: Venv, scripts: dict[str, str]) -> dict[str, list[str]]:
    """For each script: ``from X import Y`` (or ``import X``) lines it needs that fail in ``venv``."""
    code = ("import importlib.metadata as m, json\nd = m.distribution('trustgraph-flow')\n"
            "print(json.dumps([str(d.locate_file(f)) for f in d.files if str(f).endswith('.py')]))")
    modules: dict[str, tuple[str, bool]] = {}
    for path in json.loads(_run(venv, code)):
        relative = path.split("site-packages/", 1)[1][: -len(".py")].split("/")
        is_package = relative[-1] == "__init__"
        name = ".".join(relative[:-1] if is_package else relative)
        modules[name] = (Path(path).read_text(), is_package)
    per_script = {script: needs_of(modules, target.split(":", 1)[0]) for script, target in scripts.items()}
    wanted = sorted({need for needs in per_script.values() for need in needs}, key=lambda n: (n[0], n[1] or ""))
    r = subprocess.run([str(venv.python), "-c", _CHECK], input=json.dumps(wanted), capture_output=True,
                       text=True, timeout=TIMEOUT, env=_environment(), check=True)
    missing = json.loads(r.stdout)
    out = {}
    for script, needs in per_script.items():
        lines = [f"from {m} import {n}" if n else f"import {m}" for m, n in needs if f"{m}:{n or ''}" in missing]
        out[script] = sorted(lines)
    return out


def measure(venv: Venv, workers: int = 2, with_needs: bool = False) -> list[Result]:
    """Probe every console script of trustgraph-flow in ``venv``, ``workers`` at a time."""
    scripts = console_scripts(venv)
    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda item: probe(venv, *item), scripts.items()))
    if with_needs:
        needs = script_needs(venv, scripts)
        for result in results:
            result.needs = needs[result.script]
    return results


def report(name: str, results: list[Result]) -> str:
    """The text report: the count, each failing script, then the failures grouped by cause."""
    ok = sum(r.ok for r in results)
    lines = [f"{name}: {ok} of {len(results)} console scripts of trustgraph-flow import and answer --help", ""]
    for r in results:
        status = "ok" if r.ok else f"FAIL ({r.step}) {r.cause}" + (f"  [{r.where}]" if r.where else "")
        lines.append(f"  {r.script}: {status}")
        lines += [f"      needs: {need}" for need in r.needs]
    groups = group(results)
    if groups:
        lines += ["", "Failures by root cause:"]
        for cause, scripts in groups:
            lines.append(f"  {len(scripts):3d}  {cause}: {', '.join(scripts)}")
    if any(r.needs for r in results):
        counts: dict[str, list[str]] = {}
        for r in results:
            for need in r.needs:
                counts.setdefault(need, []).append(r.script)
        lines += ["", "Missing imports by scripts needing them:"]
        for need, scripts in sorted(counts.items(), key=lambda item: (-len(item[1]), item[0])):
            lines.append(f"  {len(scripts):3d}  {need}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", choices=sorted(VENVS), default="flow-on-ours",
                        help="which venv of interop/venvs.py (made from PyPI if missing)")
    parser.add_argument("--json", action="store_true", help="one JSON document instead of the text report")
    parser.add_argument("--needs", action="store_true",
                        help="also list each script's missing trustgraph imports, read from its sources")
    parser.add_argument("--workers", type=int, default=2, help="probes at a time (default 2)")
    args = parser.parse_args(argv)
    venv = VENVS[args.venv]()
    results = measure(venv, args.workers, args.needs)
    if args.json:
        print(json.dumps({"venv": args.venv, "ok": sum(r.ok for r in results), "scripts": len(results),
                          "results": [asdict(r) for r in results],
                          "causes": [{"cause": c, "count": len(s), "scripts": s} for c, s in group(results)]},
                         indent=1))
    else:
        print(report(args.venv, results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
