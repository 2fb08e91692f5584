"""tg-new-tool-service, run as a user runs it, on a copy of the part of the checkout it touches.

The copy holds what the command reads and writes (both packages' pyproject.toml, the
repository's one with pytest's settings, the tool services, the bootstrap config, an empty
tests/unit), so the checkout itself is never written to.  Once a service is made in a real
checkout and installed, tests/unit/test_registered_tool_services.py checks it as every
registered service.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from support import BIN, REPO

SERVICES = Path("trustgraph-flow/trustgraph/tool_service")
PYPROJECT = Path("trustgraph-flow/pyproject.toml")
# Quotes and a backslash: it becomes a Python literal in the made service.py.
DESCRIBED = "Convert an amount between units of length, e.g. \"3 miles\" to km \\ m"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    for rel in ("pyproject.toml", PYPROJECT, "trustgraph-base/pyproject.toml", "trustgraph-cli/pyproject.toml"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, root / rel)
    shutil.copytree(REPO / SERVICES, root / SERVICES, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "config-examples", root / "config-examples")
    (root / "tests" / "unit").mkdir(parents=True)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def new_service(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "tg-new-tool-service"), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


def test_it_makes_a_registered_service_whose_test_passes(checkout: Path) -> None:
    before = snapshot(checkout)
    r = new_service("unit-converter", "--description", DESCRIBED,
                    cwd=checkout / "tests")   # found from below the checkout's root
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert r.stdout.startswith(f"tg-new-tool-service: made unit-converter-service (tool 'unit-converter', "
                               f"topic unit-converter) in {checkout}:\n")
    after = snapshot(checkout)
    package = SERVICES / "unit_converter"
    assert set(after) - set(before) == {str(package / "__init__.py"), str(package / "service.py"),
                                        "tests/unit/test_unit_converter_service.py"}
    assert {k for k in before if before[k] != after[k]} == {str(PYPROJECT)}
    # The registration is two added lines; every other line of pyproject.toml stays as it was.
    diff = [line for line in difflib.ndiff(before[str(PYPROJECT)].decode().splitlines(),
                                           after[str(PYPROJECT)].decode().splitlines()) if line[:1] in "+-"]
    assert diff == ['+ unit-converter-service = "trustgraph.tool_service.unit_converter:run"',
                    '+ unit-converter-service = "trustgraph.tool_service.unit_converter:Processor"']
    project = tomllib.loads(after[str(PYPROJECT)].decode())["project"]
    assert project["entry-points"]["trustgraph.tool_services"]["unit-converter-service"].endswith(":Processor")

    # The service's declarations pass the catalog, and its own test passes, as written.
    check = textwrap.dedent(f"""
        import sys, pytest, trustgraph.tool_service as services
        services.__path__.append({str(checkout / SERVICES)!r})
        from trustgraph.tool_service.unit_converter import Processor
        processor = Processor(id="unit-converter-service", metrics=False)
        assert processor.declared_problems() == []
        # It describes itself as it was asked to, not with its placeholder's words.
        assert [t.description for t in processor.declared_tools()] == [{DESCRIBED!r}]
        sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "tests/unit/test_unit_converter_service.py"]))
    """)
    r = subprocess.run([sys.executable, "-c", check], cwd=checkout, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed" in r.stdout


@pytest.mark.parametrize(("args", "says"), [
    (["Weather!"], "'Weather!' is not a service name: use lower-case letters, digits and single '-'"),
    (["class"], "'class' is not a service name: 'class' is a Python keyword"),
    (["joke"], "'joke' is taken: trustgraph-flow/trustgraph/tool_service/joke already exists"),
    (["config"], "'config' is taken: its topic non-persistent://tg/request/config is the framework's own"),
    (["tg-invoke-tool"], "'tg-invoke-tool' is taken: the command tg-invoke-tool-service already exists"),
    (["tell-joke"], "'tell-joke' is taken: a tool named 'tell-joke' already exists"),
    (["weather"], "'weather' is taken: tests/unit/test_weather_service.py already exists (nothing is ever "
                  "overwritten)"),
    (["weather", "--root", "trustgraph-flow"], "trustgraph-flow is not a TrustGraph checkout"),
    (["forecast", "--description", " "], "' ' is not a tool description: give one line of at most 300"),
    (["forecast", "--description", "Two\nlines"], "'Two\\nlines' is not a tool description"),
    (["forecast", "--description", "x" * 301], f"'{'x' * 301}' is not a tool description"),
], ids=["bad", "keyword", "package", "framework-topic", "command", "tool", "existing-file", "not-a-checkout",
        "blank-description", "two-line-description", "long-description"])
def test_a_bad_or_taken_name_is_refused_in_one_line_and_nothing_is_written(checkout: Path, args: list[str],
                                                                           says: str) -> None:
    (checkout / "tests" / "unit" / "test_weather_service.py").write_text("# someone's own test\n")
    before = snapshot(checkout)
    where = [] if "--root" in args else ["--root", str(checkout)]
    described = [] if "--description" in args else ["--description", "Forecast the weather"]
    r = new_service(*args, *where, *described, cwd=checkout)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.startswith(f"tg-new-tool-service: error: {says}") and r.stderr.count("\n") == 1, r.stderr
    assert snapshot(checkout) == before


def test_without_a_description_nothing_is_made(checkout: Path) -> None:
    before = snapshot(checkout)
    r = new_service("forecast", "--root", str(checkout), cwd=checkout)
    assert r.returncode == 2 and "the following arguments are required: --description" in r.stderr
    assert snapshot(checkout) == before


def test_a_service_with_a_long_name_needs_no_launcher_test_edited(tmp_path: Path) -> None:
    """The launcher's tests read the registry, so they must hold whatever a made service is named
    (one of 16 characters or more made a status-line test fail: issue 35).  What ``make install``
    does for a made service, its entry point and its console script, is done here for one named
    with 28 characters (its class the joke service's), and those tests run as they are."""
    name = "unit-converter-extra-service"
    site = tmp_path / "site"
    info = site / "long_named_service-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: long-named-service\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[trustgraph.tool_services]\n{name} = trustgraph.tool_service.joke:Processor\n")
    scripts = tmp_path / "bin"
    scripts.mkdir()
    (scripts / name).write_text("#!/bin/sh\nexit 0\n")
    (scripts / name).chmod(0o755)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
           "PATH": f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}"}
    probe = subprocess.run([sys.executable, "-c", "from trustgraph.launch.tool_services import registered; "
                            "print(' '.join(s.name for s in registered()))"],
                           env=env, capture_output=True, text=True, timeout=60)
    assert name in probe.stdout.split(), probe.stdout + probe.stderr
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/unit/test_launch_runtime.py",
                        "tests/unit/test_launch_table.py"], cwd=REPO, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
