"""tg-init-trustgraph and tg-verify-system-status against a stack started by tg-launch, as an
operator runs them: without flags, in the stack's data directory (they find its embedded broker).
"""

from __future__ import annotations

import json
import time

import pytest
from support import LIGHT
from trustgraph.base.launching.broker import free_port


@pytest.fixture(scope="module")
def stack(stack_factory):
    return stack_factory(*LIGHT)


def cli(stack, command, *args, **kw):
    """The command run where the stack's data directory is the default one."""
    env = {"TRUSTGRAPH_DATA": str(stack.data_dir), "PULSAR_ADMIN_URL": "", "PULSAR_HOST": ""}
    return stack.cli(command, *args, env=env, **kw)


def admin_url(stack) -> str:
    return json.loads((stack.data_dir / "tg-launch.lock").read_text())["pulsar-admin"]


def test_init_finds_the_embedded_broker_creates_nothing_and_keeps_the_stacks_config(stack, tmp_path):
    initial = tmp_path / "initial.json"
    initial.write_text(json.dumps({"greeting": {"hello": "Hello"}}))
    r = cli(stack, "tg-init-trustgraph", "-C", str(initial))
    assert (r.returncode, r.stderr) == (0, "")
    lines = r.stdout.splitlines()
    assert lines[0] == f"Initialising with the broker at {admin_url(stack)} (the running stack's, from {stack.data_dir})"
    assert lines[1].startswith("pulsar-lite ") and lines[1].endswith(
        "tg-launch's embedded broker: nothing to create there (it has no tenants or namespaces, and creates "
        "topics on first use)")
    assert lines[2].startswith("Config: config-svc already holds config version ")   # tg-launch's bootstrap
    assert lines[3] == "Initialisation complete."
    assert cli(stack, "tg-get-config-item", "greeting/hello").returncode != 0   # nothing was loaded


def test_verify_passes_on_the_stack_and_skips_what_tg_launch_does_not_run(stack):
    r = cli(stack, "tg-verify-system-status", "--global-timeout", "60")
    assert (r.returncode, r.stderr) == (0, ""), r.stdout
    lines = r.stdout.splitlines()
    assert [x.split(":")[0] for x in lines[:-1]] == [
        "OK    Pulsar", "OK    API Gateway", "OK    Config Service", "OK    Processors", "OK    Flow Blueprints",
        "OK    Flows", "OK    Prompts", "SKIP  Library", "SKIP  Workbench UI"], r.stdout
    assert "tg-launch's embedded broker" in lines[0]
    assert lines[3].startswith("OK    Processors: all ") and "components of the tg-launch stack up" in lines[3]
    assert lines[-1].startswith("All 7 checks passed (2 skipped) in ")


def test_verify_fails_in_bounded_time_naming_what_to_do(stack):
    nothing = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    r = cli(stack, "tg-verify-system-status", "--pulsar-url", nothing, "--global-timeout", "3",
            "--retry-delay", "0.5", "--min-processors", "50")
    took = time.monotonic() - started
    assert r.returncode == 1 and took < 3 + 10, (took, r.stdout)
    lines = r.stdout.splitlines()
    pulsar = [x for x in lines if x.startswith("FAIL  Pulsar: ")]
    assert pulsar and f"cannot reach {nothing}/admin/v2/clusters" in pulsar[0] and "--pulsar-url" in pulsar[0]
    processors = [x for x in lines if x.startswith("FAIL  Processors: ")]
    assert processors and "fewer than 50 (--min-processors)" in processors[0], r.stdout
    assert any(x.startswith("OK    Prompts: ") for x in lines), r.stdout
    assert r.stderr.startswith("tg-verify-system-status: error: 2 of 9 checks failed (Pulsar, Processors)")
