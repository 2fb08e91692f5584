"""Our trustgraph-cli and upstream's 2.1.4 in one venv, in every install order, plain and editable.

Each test builds a fresh venv (from PyPI and the checkout) and installs in the
order its name says, as an operator upgrading a 2.1 deployment would, then
checks which distribution owns the commands, that every command still starts,
and that uninstalling one distribution leaves the others' commands.  They are
``long`` (about a minute each): ``make interop`` runs them, ``make test`` does
not (the unit tests check the packaging: tests/unit/test_cli_upstream_commands.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from gateway_stack import stack  # noqa: F401 - our config-svc and api-gateway
from trustgraph.cli.upstream import COMMANDS

from interop.venvs import REPO, UPSTREAM_VERSION, our_source

pytestmark = [pytest.mark.interop, pytest.mark.long, pytest.mark.timeout(900)]

OURS = "2.1.100"
#: Commands only this fork has, and one both have (ours must answer it once ours is installed).
OUR_OWN = ("tg-invoke-tool-service", "tg-show-tool-services", "tg-import-mcp-tools", "tg-import-config")
#: Where each direction's rows say they ran.
PLAIN, EDITABLE = "plain venv", "editable venv"


class Env:
    """A scratch venv and the pip and command calls a test makes in it."""

    def __init__(self, path: Path) -> None:
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=300)
        self.path = path

    def bin(self, name: str) -> Path:
        return self.path / "bin" / name

    def pip(self, *args: str) -> str:
        r = subprocess.run([str(self.bin("python")), "-m", "pip", "--disable-pip-version-check", *args],
                           capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, f"pip {' '.join(args)}:\n{(r.stdout + r.stderr)[-3000:]}"
        return r.stdout

    def ours(self, *packages: str, editable: bool = False, deps: bool = True) -> None:
        """Install our packages: editable from the checkout, else from clean copies (our_source)."""
        if editable:
            args = [a for p in packages for a in ("-e", str(REPO / p))]
        else:
            args = [str(our_source(p, self.path.parent / "src")) for p in packages]
        self.pip("install", "-q", *([] if deps else ["--no-deps"]), *args)

    def versions(self) -> dict[str, str]:
        out = self.pip("list", "--format", "json")
        return {d["name"]: d["version"] for d in json.loads(out) if d["name"].startswith("trustgraph")}

    def commands(self) -> set[str]:
        return {p.name for p in (self.path / "bin").glob("tg-*")}

    def starts(self, name: str) -> tuple[bool, str]:
        """Whether ``name --help`` prints its usage; the last stderr line when not."""
        if not self.bin(name).exists():
            return False, "no such command"
        r = subprocess.run([str(self.bin(name)), "--help"], capture_output=True, text=True, timeout=120)
        return r.returncode == 0 and "usage" in r.stdout, (r.stderr.strip().splitlines() or [""])[-1][:160]

    def module_of(self, name: str) -> str:
        """The file the command's console script imports, to tell ours from upstream's."""
        code = ("import importlib.metadata as m, importlib, sys\n"
                "e = next(e for e in m.entry_points(group='console_scripts') if e.name == sys.argv[1])\n"
                "print(e.value, importlib.import_module(e.module).__file__)")
        r = subprocess.run([str(self.bin("python")), "-c", code, name], capture_output=True, text=True, timeout=60)
        return r.stdout.strip() if r.returncode == 0 else f"error: {r.stderr.strip()[-200:]}"

    def broken(self) -> str:
        r = subprocess.run([str(self.bin("python")), "-m", "pip", "check"], capture_output=True, text=True,
                           timeout=120)
        return "" if r.returncode == 0 else r.stdout.strip()


def upstream_names(env: Env) -> set[str]:
    """Upstream 2.1.4's command names, from its own metadata in a venv that has it."""
    code = ("import importlib.metadata as m\n"
            "print('\\n'.join(e.name for e in m.distribution('trustgraph-cli').entry_points "
            "if e.group == 'console_scripts'))")
    r = subprocess.run([str(env.bin("python")), "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return set(r.stdout.split())


def check_ours_in_place(env: Env, names: set[str], where: str, row) -> None:
    """Our CLI replaced upstream's: our version, every upstream name still there, ours answering."""
    have = env.versions()
    checks = [
        (f"our trustgraph-cli replaces upstream's ({where})", have.get("trustgraph-cli") == OURS
         and have.get("trustgraph-base") == OURS, json.dumps(have)),
        (f"every upstream 2.1.4 command name is installed ({where})", names <= env.commands(),
         ", ".join(sorted(names - env.commands()))),
        (f"no broken requirements after the upgrade ({where})", not env.broken(), env.broken()),
    ]
    for name in OUR_OWN + ("tg-show-flows", "tg-invoke-agent"):
        ok, detail = env.starts(name)
        module = env.module_of(name)
        checks.append((f"{name} runs ours ({where})", ok and "/trustgraph/cli/" in module
                       and "upstream-cli" not in module, detail if not ok else module))
    for peer, ok, detail in checks:
        row(peer, "upstream trustgraph-cli 2.1.4, then ours over it", ok, "" if ok else detail)
    assert all(ok for _, ok, _ in checks), [(p, d) for p, ok, d in checks if not ok]


def test_upstream_first_then_ours_plain(tmp_path: Path, row, stack) -> None:  # noqa: F811
    env = Env(tmp_path / "venv")
    env.pip("install", "-q", f"trustgraph-cli=={UPSTREAM_VERSION}")
    names = upstream_names(env)
    assert len(names) == 66, sorted(names)
    env.ours("trustgraph-base", "trustgraph-cli")
    check_ours_in_place(env, names, PLAIN, row)

    # Before the fetch, upstream's other commands say what to run; after it, every one starts.
    r = subprocess.run([str(env.bin("tg-invoke-graph-rag")), "--help"], capture_output=True, text=True,
                       timeout=60)
    hint = r.returncode == 1 and "tg-install-upstream-commands" in r.stderr
    row("an upstream-only command before tg-install-upstream-commands: one line saying what to run",
        "ours over upstream's, plain venv", hint, r.stderr.strip()[-160:])
    env.pip("uninstall", "-q", "-y", "rdflib", "tabulate")  # upstream's requirements: the fetch puts them back
    r = subprocess.run([str(env.bin("tg-install-upstream-commands"))], capture_output=True, text=True, timeout=900)
    fetched = r.returncode == 0 and "46 of its commands run from it" in r.stdout
    row("tg-install-upstream-commands fetches upstream 2.1.4's CLI from PyPI (and its requirements)",
        "ours over upstream's, plain venv", fetched, (r.stdout + r.stderr).strip()[-160:])
    failed = {}
    for name in sorted(COMMANDS):
        ok, detail = env.starts(name)
        row(f"upstream {name} --help, from the fetched copy", "our trustgraph-cli (plain venv)", ok,
            "" if ok else detail)
        if not ok:
            failed[name] = detail

    # Two of them at work, through our launcher, against our gateway and config-svc.
    url = stack.url + "/"
    kind = stack.tag
    done = subprocess.run([str(env.bin("tg-set-tool")), "-u", url, "--id", f"tool-{kind}", "--name", f"n-{kind}",
                           "--type", "text-completion", "--description", "asks the LLM"],
                          capture_output=True, text=True, timeout=120)
    shown = subprocess.run([str(env.bin("tg-show-tools")), "-u", url], capture_output=True, text=True, timeout=120)
    works = "Tool set." in done.stdout and f"n-{kind}" in shown.stdout
    row("upstream tg-set-tool (fetched copy, our launcher) writes a tool our tg-show-tools lists",
        "our trustgraph-cli -> our api-gateway + config-svc", works, (done.stdout + done.stderr)[-160:])
    listed = subprocess.run([str(env.bin("tg-show-flow-blueprints")), "-u", url], capture_output=True, text=True,
                            timeout=120)
    row("upstream tg-show-flow-blueprints (fetched copy, our launcher)",
        "our trustgraph-cli -> our api-gateway + config-svc", listed.returncode == 0 and "Exception" not in
        listed.stdout + listed.stderr, (listed.stdout + listed.stderr)[-160:])
    assert hint and fetched and not failed, (r.stdout + r.stderr, failed)
    assert works, (done.stdout + done.stderr, shown.stdout + shown.stderr)
    assert listed.returncode == 0 and "Exception" not in listed.stdout + listed.stderr, listed.stdout + listed.stderr


def test_ours_first_then_upstream_plain(tmp_path: Path, row) -> None:
    env = Env(tmp_path / "venv")
    env.ours("trustgraph-base", "trustgraph-cli")
    direction = "ours, then upstream's trustgraph-cli (plain venv)"
    env.pip("install", "-q", "trustgraph-cli")  # what a 2.1 requirement file says: ours satisfies it
    kept = env.versions().get("trustgraph-cli") == OURS
    row("pip install trustgraph-cli (unpinned) keeps ours", direction, kept, json.dumps(env.versions()))

    env.pip("install", "-q", f"trustgraph-cli=={UPSTREAM_VERSION}")  # the operator asks for upstream's
    have = env.versions()
    names = upstream_names(env)
    swapped = have.get("trustgraph-cli") == UPSTREAM_VERSION and have.get("trustgraph-base") == OURS
    leftovers = sorted(env.commands() - names)
    row("pip install trustgraph-cli==2.1.4 replaces ours whole (no command of ours left behind)", direction,
        swapped and not leftovers, json.dumps(have) + " " + ", ".join(leftovers))
    failed = {name: detail for name in sorted(names) for ok, detail in [env.starts(name)] if not ok}
    row("every upstream command starts after the swap (upstream's code on our trustgraph-base)", direction,
        not failed, json.dumps(failed)[:160])

    env.ours("trustgraph-cli")
    back = env.versions().get("trustgraph-cli") == OURS and names <= env.commands()
    ok, detail = env.starts("tg-invoke-tool-service")
    row("installing ours again replaces upstream's", direction, back and ok, detail)
    assert kept and swapped and not leftovers and not failed and back and ok


def test_editable_over_upstream_and_back(tmp_path: Path, row) -> None:
    env = Env(tmp_path / "venv")
    env.pip("install", "-q", f"trustgraph-cli=={UPSTREAM_VERSION}")
    names = upstream_names(env)
    env.ours("trustgraph-base", "trustgraph-cli", editable=True)
    check_ours_in_place(env, names, EDITABLE, row)

    env.pip("install", "-q", f"trustgraph-cli=={UPSTREAM_VERSION}")
    failed = {name: detail for name in sorted(names) for ok, detail in [env.starts(name)] if not ok}
    row("upstream's trustgraph-cli over our editable one: every command starts (nothing shadowed)",
        "ours (editable), then upstream's", not failed, json.dumps(failed)[:160])
    assert not failed


def test_uninstalling_one_distribution_keeps_the_others_commands(tmp_path: Path, row) -> None:
    env = Env(tmp_path / "venv")
    env.ours("trustgraph-base", "trustgraph-cli")
    env.ours("trustgraph-flow", deps=False)  # its scripts, not its model runtime
    cli, flow = {"tg-invoke-agent", "tg-show-flows", "tg-invoke-tool-service"}, {"tg-launch", "config-svc"}
    direction = "our trustgraph-base, trustgraph-cli and trustgraph-flow (plain venv)"

    env.pip("uninstall", "-q", "-y", "trustgraph-flow")
    after_flow = env.commands()
    row("uninstalling trustgraph-flow keeps the tg-* commands", direction, cli <= after_flow,
        ", ".join(sorted(cli - after_flow)))
    env.ours("trustgraph-flow", deps=False)
    env.pip("uninstall", "-q", "-y", "trustgraph-cli")
    left = {p.name for p in (env.path / "bin").iterdir()}
    row("uninstalling trustgraph-cli keeps trustgraph-flow's commands", direction,
        flow <= left and not cli & left, ", ".join(sorted((flow - left) | (cli & left))))
    assert cli <= after_flow and flow <= left and not cli & left
