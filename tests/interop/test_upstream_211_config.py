"""Upstream TrustGraph 2.11.1's config client and processor base against our config-svc --wire 2.11.

Upstream's own config-svc keeps its config in Cassandra, which this machine does not run, so a
mixed 2.11 deployment uses ours: this is the row that says 2.11.1's side of the protocol (its
``AsyncConfigClient``, its ``AsyncProcessor`` start-up fetch and notify-then-fetch) works against it.
The 2.11.1 code runs from ``.interop/upstream-2.11`` (PyPI), driven by ``config_client_211.py``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from interop.venvs import UPSTREAM_211, Venv

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600)]

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def venv_211() -> Venv:
    return UPSTREAM_211.ensure()


def test_2_11s_config_client_and_processor_follow_our_config_svc(venv_211, own_broker, spawn, row, tmp_path):
    svc = spawn("config-svc", "--store", str(tmp_path / "c.db"), "--wire", "2.11", broker=own_broker)
    r = subprocess.run([str(venv_211.python), str(HERE / "config_client_211.py"), own_broker.url],
                       capture_output=True, text=True, timeout=300)
    got = json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else None
    # Each workspace's handler call holds that workspace's config; which version it carries depends
    # on when the fetch after a notice ran (after the second put, the default one carries 2 too).
    contents = {"default": {"a": '{"name": "a"}'}, "other": {"b": '{"name": "b"}'}}

    def followed(calls: list[dict]) -> bool:
        versions = [c["version"] for c in calls]
        return (versions == sorted(versions)
                and all(c["tool"] == contents.get(c["workspace"]) for c in calls)
                and any(c["workspace"] == "default" and c["version"] >= 1 for c in calls)
                and any(c["workspace"] == "other" and c["version"] >= 2 for c in calls))

    ok = got is not None and (
        got["startup_version"] == 0                    # registering the default workspace is no version
        and got["get"] == '{"name": "a"}' and got["keys_other"] == ["b"]
        and got["config_default"]["tool"] == {"a": '{"name": "a"}'}
        and got["workspaces"] == ["default", "other"]
        and got["no_workspace"] == "bad-request: Workspace is required"
        and followed(got["calls"]))
    row("upstream 2.11.1 AsyncConfigClient and AsyncProcessor (notify-then-fetch)",
        "2.11.1 config client/processor -> our config-svc --wire 2.11", ok,
        "" if ok else f"got {got!r}" if got else (r.stderr.strip().splitlines() or [r.stdout])[-1][:200])
    # A message string, not a tuple: pytest prints it whole (a tuple's repr is cut short).
    assert ok, f"exit status {r.returncode}, saw: {r.stdout}\n2.11.1 stderr: {r.stderr[-3000:]}\nconfig-svc: {svc.output()[-3000:]}"
