"""trustgraph-cli carries every upstream 2.1.4 command: ours, and upstream's own run from a fetched copy.

The real upstream trustgraph-cli is fetched and run in ``make interop``
(tests/interop/test_cli_distribution.py); here a hand-built wheel stands in
for it, so these tests need no network.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import tomllib
import zipfile
from importlib.metadata import distribution
from pathlib import Path

from support import BIN, REPO
from trustgraph.cli import install_upstream_commands, upstream
from trustgraph.cli.install_upstream_commands import requirements

PYPROJECT = REPO / "trustgraph-cli" / "pyproject.toml"


def scripts() -> dict[str, str]:
    return tomllib.loads(PYPROJECT.read_text())["project"]["scripts"]


def test_every_upstream_only_command_is_a_console_script_of_the_launcher() -> None:
    declared = scripts()
    for name, module in upstream.COMMANDS.items():
        assert declared.get(name) == f"trustgraph.cli.upstream:{module}", name
    ours = {n for n, target in declared.items() if not target.startswith("trustgraph.cli.upstream:")}
    assert not ours & set(upstream.COMMANDS)
    # Upstream 2.1.4 has 66 commands: 46 run from its code, 20 are ours by the same names.
    assert len(upstream.COMMANDS) == 46


def test_every_installed_console_script_loads() -> None:
    """What pip generated imports and finds its function (the launcher's through module __getattr__)."""
    points = [e for e in distribution("trustgraph-cli").entry_points if e.group == "console_scripts"]
    assert {e.name for e in points} == set(scripts())
    for point in points:
        assert callable(point.load()), point.name


def run(command: str, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, upstream.HOME_VARIABLE: str(home)}
    return subprocess.run([str(BIN / command), *args], capture_output=True, text=True, env=env, timeout=60)


def test_before_the_fetch_one_line_says_what_to_run(tmp_path: Path) -> None:
    r = run("tg-invoke-graph-rag", "--help", home=tmp_path / "absent")
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tg-invoke-graph-rag: error: ")
    assert "tg-install-upstream-commands" in lines[0] and str(tmp_path / "absent") in lines[0]


FAKE_SHOW_GRAPH = '''
import sys
import trustgraph.api
import trustgraph.cli.show_flows  # ours: the fetched copy must not shadow our package


def main():
    print("upstream show_graph", __name__, trustgraph.cli.show_flows.__name__, sys.argv[1:])
    sys.exit(3)
'''


def fake_wheel(directory: Path, modules: dict[str, str], requires: tuple[str, ...] = ()) -> Path:
    """A minimal trustgraph-cli wheel pip can install with no index (what PyPI's would hold)."""
    files = {f"trustgraph/cli/{m}.py": text for m, text in modules.items()}
    files["trustgraph/cli/__init__.py"] = ""
    info = "trustgraph_cli-2.1.4.dist-info"
    files[f"{info}/METADATA"] = ("Metadata-Version: 2.1\nName: trustgraph-cli\nVersion: 2.1.4\n"
                                 + "".join(f"Requires-Dist: {r}\n" for r in requires))
    files[f"{info}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = directory / "trustgraph_cli-2.1.4-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return wheel


def test_the_installer_puts_upstream_code_where_the_commands_run_it(tmp_path: Path) -> None:
    wheel = fake_wheel(tmp_path, {"show_graph": FAKE_SHOW_GRAPH, "load_turtle": "def main():\n    pass\n"},
                       requires=("trustgraph-base<2.2,>=2.1", "requests"))
    home = tmp_path / "home"
    r = run("tg-install-upstream-commands", "--from", str(wheel), home=home)
    # The fake carries 2 of the 46 modules: it is installed, and the exit status says some are missing.
    assert r.returncode == 1, r.stderr
    assert f"upstream trustgraph-cli 2.1.4 installed in {home}: 2 of its commands run from it" in r.stdout
    assert "tg-invoke-graph-rag" in r.stderr and "tg-show-graph" not in r.stderr

    r = run("tg-show-graph", "-x", "y", home=home)
    # Upstream's main() ran (its own exit status), loaded under a private name, beside our package.
    assert r.returncode == 3, r.stderr
    assert r.stdout.strip() == "upstream show_graph trustgraph_upstream_cli.show_graph trustgraph.cli.show_flows " \
                               "['-x', 'y']"

    # Fetching again replaces the copy whole (--force: the new one lacks show_graph, which this one runs).
    wheel.unlink()
    wheel = fake_wheel(tmp_path, {"load_turtle": "def main():\n    print('turtle')\n"})
    r = run("tg-install-upstream-commands", "--from", str(wheel), "--no-dependencies", "--force", home=home)
    assert "1 of its commands run from it" in r.stdout, r.stderr
    assert run("tg-load-turtle", home=home).stdout == "turtle\n"
    assert "tg-install-upstream-commands" in run("tg-show-graph", home=home).stderr


def test_a_failed_fetch_says_what_to_do_and_keeps_the_previous_copy(tmp_path: Path) -> None:
    home = tmp_path / "home"
    wheel = fake_wheel(tmp_path, {"load_turtle": "def main():\n    print('turtle')\n"})
    run("tg-install-upstream-commands", "--from", str(wheel), "--no-dependencies", home=home)
    r = run("tg-install-upstream-commands", "--from", str(tmp_path / "missing.whl"), home=home)
    assert r.returncode == 1
    assert r.stderr.startswith("tg-install-upstream-commands: error: pip install failed") and "--from" in r.stderr
    assert run("tg-load-turtle", home=home).stdout == "turtle\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".home")] == []


def leftovers(home: Path) -> list[str]:
    """What an install left beside ``home`` (its staging directories are hidden names)."""
    return [p.name for p in home.parent.iterdir() if p.name.startswith(f".{home.name}")]


def test_a_directory_holding_other_files_is_refused_and_kept_unless_forced(tmp_path: Path) -> None:
    home = tmp_path / "work"
    home.mkdir()
    (home / "notes.txt").write_text("mine")
    wheel = fake_wheel(tmp_path, {"load_turtle": "def main():\n    print('turtle')\n"})
    r = run("tg-install-upstream-commands", "--from", str(wheel), "--no-dependencies", "--dir", str(home),
            home=home)
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tg-install-upstream-commands: error: ")
    assert f"{home} holds what this command did not put there (notes.txt)" in lines[0] and "--force" in lines[0]
    assert (home / "notes.txt").read_text() == "mine" and leftovers(home) == []

    r = run("tg-install-upstream-commands", "--from", str(wheel), "--no-dependencies", "--dir", str(home),
            "--force", home=home)
    assert r.returncode == 1 and "1 of its commands run from it" in r.stdout, r.stderr
    assert not (home / "notes.txt").exists() and run("tg-load-turtle", home=home).stdout == "turtle\n"
    # Ours now (its marker): the next install replaces it unasked.
    wheel.unlink()
    wheel = fake_wheel(tmp_path, {"load_turtle": "def main():\n    print('turtle 2')\n"})
    run("tg-install-upstream-commands", "--from", str(wheel), "--no-dependencies", home=home)
    assert run("tg-load-turtle", home=home).stdout == "turtle 2\n" and leftovers(home) == []


def test_a_copy_installed_before_the_marker_is_still_replaced_unasked(tmp_path: Path) -> None:
    home = tmp_path / "home"
    wheel = fake_wheel(tmp_path, {"load_turtle": "def main():\n    print('turtle')\n"})
    run("tg-install-upstream-commands", "--from", str(wheel), "--no-dependencies", home=home)
    (home / install_upstream_commands.MARKER).unlink()
    assert sorted(p.name for p in home.iterdir()) == ["trustgraph", "trustgraph_cli-2.1.4.dist-info"]
    r = run("tg-install-upstream-commands", "--from", str(wheel), "--no-dependencies", home=home)
    assert "1 of its commands run from it" in r.stdout, r.stderr


def test_a_package_without_the_commands_is_refused_before_the_working_copy_is_touched(tmp_path: Path) -> None:
    home = tmp_path / "home"
    good = fake_wheel(tmp_path, {"load_turtle": "def main():\n    print('turtle')\n",
                                 "show_graph": "def main():\n    print('graph')\n"})
    run("tg-install-upstream-commands", "--from", str(good), "--no-dependencies", home=home)
    (tmp_path / "empty").mkdir()
    empty = fake_wheel(tmp_path / "empty", {})
    r = run("tg-install-upstream-commands", "--from", str(empty), home=home)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.strip() == (f"tg-install-upstream-commands: error: {empty} holds none of upstream's commands "
                                f"(no trustgraph/cli/<command>.py): is it upstream's trustgraph-cli? {home} is "
                                f"left as it was")
    # One lacking a command the working copy runs would take it away: refused too, unless --force.
    (tmp_path / "less").mkdir()
    less = fake_wheel(tmp_path / "less", {"load_turtle": "def main():\n    print('turtle 2')\n"})
    r = run("tg-install-upstream-commands", "--from", str(less), "--no-dependencies", home=home)
    assert r.returncode == 1 and r.stdout == ""
    assert "lacks 1 command(s) the copy in" in r.stderr and "(tg-show-graph)" in r.stderr and "--force" in r.stderr
    assert run("tg-load-turtle", home=home).stdout == "turtle\n"
    assert run("tg-show-graph", home=home).stdout == "graph\n"
    assert leftovers(home) == []


def test_the_new_copy_is_swapped_in_whole(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    for d, text in ((old, "old"), (new, "new")):
        d.mkdir()
        (d / "f").write_text(text)
    where = tmp_path / "home"
    old.rename(where)
    install_upstream_commands.swap_in(new, where)
    assert (where / "f").read_text() == "new" and (new / "f").read_text() == "old"
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    install_upstream_commands.swap_in(fresh, tmp_path / "absent")
    assert (tmp_path / "absent").is_dir() and not fresh.exists()


def test_requirements_leave_out_the_trustgraph_distributions_and_extras(tmp_path: Path) -> None:
    info = tmp_path / "trustgraph_cli-2.1.4.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: trustgraph-cli\nVersion: 2.1.4\n"
                                   "Requires-Dist: trustgraph-base<2.2,>=2.1\nRequires-Dist: rdflib\n"
                                   "Requires-Dist: websockets>=12; python_version >= '3.8'\n"
                                   "Requires-Dist: pytest; extra == 'test'\n")
    assert requirements(tmp_path) == ["rdflib", "websockets>=12"]
