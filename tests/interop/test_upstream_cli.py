"""Upstream's trustgraph-cli 2.1.4: on our trustgraph-base (--help of every command), and against our gateway."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest
from gateway_stack import stack  # noqa: F401 - our config-svc and api-gateway

from interop.venvs import upstream_commands

pytestmark = [pytest.mark.interop, pytest.mark.timeout(900)]

# Commands known not to start on our trustgraph-base, with the reason (none now: tg-dump-queues
# starts since base.pubsub re-exports get_pubsub).
KNOWN_BROKEN: dict[str, str] = {}


def test_every_upstream_command_starts_on_our_base(mixed_venv, row) -> None:
    failed = {}
    for name in upstream_commands():
        r = subprocess.run([str(mixed_venv.bin(name)), "--help"], capture_output=True, text=True, timeout=120)
        ok = r.returncode == 0 and "usage" in r.stdout
        tail = (r.stderr.strip().splitlines() or [""])[-1][:160]
        row(f"upstream {name} --help", "upstream trustgraph-cli on our trustgraph-base", ok,
            "" if ok else KNOWN_BROKEN.get(name, tail))
        if not ok:
            failed[name] = tail
    assert set(failed) <= set(KNOWN_BROKEN), failed


def run(venv, url: str, *args: str, stdin: str | None = None) -> str:
    r = subprocess.run([str(venv.bin(args[0])), "-u", url, *args[1:]], capture_output=True, text=True,
                       timeout=120, input=stdin)
    assert r.returncode == 0, r.stderr
    assert "Exception" not in r.stdout + r.stderr, r.stdout + r.stderr
    return r.stdout


def test_upstream_cli_against_our_gateway(upstream_venv, stack, row, tmp_path: Path) -> None:  # noqa: F811
    url = stack.url + "/"
    kind = f"t{uuid.uuid4().hex[:6]}"
    direction = "upstream CLI -> our api-gateway + config-svc"
    checks = []

    out = run(upstream_venv, url, "tg-put-config-item", "--type", kind, "--key", "k", "--value", '"v"')
    checks.append(("tg-put-config-item", f"Configuration item set: {kind}/k" in out))
    out = run(upstream_venv, url, "tg-get-config-item", "--type", kind, "--key", "k")
    checks.append(("tg-get-config-item", out.strip() == '"v"'))
    out = run(upstream_venv, url, "tg-list-config-items", "--type", kind)
    checks.append(("tg-list-config-items", out.split() == ["k"]))
    out = run(upstream_venv, url, "tg-show-config")
    checks.append(("tg-show-config", out.startswith("Version: ") and kind in out))
    out = run(upstream_venv, url, "tg-delete-config-item", "--type", kind, "--key", "k")
    checks.append(("tg-delete-config-item", f"Configuration item deleted: {kind}/k" in out))

    out = run(upstream_venv, url, "tg-set-tool", "--id", f"tool-{kind}", "--name", f"n-{kind}", "--type",
              "text-completion", "--description", "asks the LLM")
    checks.append(("tg-set-tool", "Tool set." in out))
    out = run(upstream_venv, url, "tg-show-tools")
    checks.append(("tg-show-tools", f"n-{kind}" in out))
    # Upstream's tg-set-prompt reads the template index first (every deployment has one).
    run(upstream_venv, url, "tg-put-config-item", "--type", "prompt", "--key", "template-index", "--value",
        '[]')
    run(upstream_venv, url, "tg-put-config-item", "--type", "prompt", "--key", "system", "--value", '"Be helpful."')
    out = run(upstream_venv, url, "tg-set-prompt", "--id", f"p-{kind}", "--prompt", "Hi {{name}}")
    out = run(upstream_venv, url, "tg-show-prompts")
    checks.append(("tg-set-prompt, tg-show-prompts", f"p-{kind}" in out))

    blueprint = {"description": "interop", "interfaces": {}, "blueprint": {}, "flow": {}}
    (tmp_path / "bp.json").write_text(json.dumps(blueprint))
    out = run(upstream_venv, url, "tg-put-flow-blueprint", "-n", f"bp-{kind}", "-c", json.dumps(blueprint))
    out = run(upstream_venv, url, "tg-show-flow-blueprints")
    checks.append(("tg-put-flow-blueprint, tg-show-flow-blueprints", f"bp-{kind}" in out))
    run(upstream_venv, url, "tg-start-flow", "-n", f"bp-{kind}", "-i", f"f-{kind}", "-d", "interop flow",
        "--param", "x=1")
    out = run(upstream_venv, url, "tg-show-flows")
    checks.append(("tg-start-flow, tg-show-flows", f"f-{kind}" in out))
    run(upstream_venv, url, "tg-stop-flow", "-i", f"f-{kind}")
    out = run(upstream_venv, url, "tg-show-flows")
    checks.append(("tg-stop-flow", f"f-{kind}" not in out))

    for name, ok in checks:
        row(f"upstream {name}", direction, ok)
    assert all(ok for _, ok in checks), [n for n, ok in checks if not ok]
