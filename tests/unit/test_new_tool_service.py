"""tg-new-tool-service, run as a user runs it, on a copy of the part of the checkout it touches.

The copy holds what the command reads and writes (both packages' pyproject.toml, the
repository's one with pytest's settings, the tool services, the bootstrap config, an empty
tests/unit), so the checkout itself is never written to.  Once a service is made in a real
checkout and installed, tests/unit/test_registered_tool_services.py checks it as every
registered service.
"""

from __future__ import annotations

import difflib
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
    r = new_service("unit-converter", cwd=checkout / "tests")   # found from below the checkout's root
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
        assert Processor(id="unit-converter-service", metrics=False).declared_problems() == []
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
], ids=["bad", "keyword", "package", "framework-topic", "command", "tool", "existing-file", "not-a-checkout"])
def test_a_bad_or_taken_name_is_refused_in_one_line_and_nothing_is_written(checkout: Path, args: list[str],
                                                                           says: str) -> None:
    (checkout / "tests" / "unit" / "test_weather_service.py").write_text("# someone's own test\n")
    before = snapshot(checkout)
    where = [] if "--root" in args else ["--root", str(checkout)]
    r = new_service(*args, *where, cwd=checkout)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.startswith(f"tg-new-tool-service: error: {says}") and r.stderr.count("\n") == 1, r.stderr
    assert snapshot(checkout) == before
