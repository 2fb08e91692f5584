"""MCP's tool annotations come in with the tools: a real MCP server (the SDK's, ``mcp_stand_in.py``)
gives hints, the real ``tg-import-mcp-tools`` writes them into config through a real gateway and
config-svc, and the real ``tg-show-tools`` shows them as the gateway's catalog reads them.
"""

from __future__ import annotations

import json
import subprocess

from support import BIN, wait_for


def cli(stack, command: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / command), *args, "-u", stack.url], capture_output=True, text=True, timeout=60)


def tables(out: str) -> dict[str, dict[str, str]]:
    """tg-show-tools' tables by tool id: ``{label: value}``, a value's continuation lines joined by newlines."""
    found: dict[str, dict[str, str]] = {}
    for block in out.split("\n\n"):
        rows: dict[str, str] = {}
        label = None
        for line in block.splitlines():
            if not line.startswith("| "):
                continue
            left, right = (c.strip() for c in line.strip("|").split("|", 1))
            if left:
                label, rows[left] = left, right
            elif label is not None:
                rows[label] += "\n" + right
        if "id" in rows:
            found[rows["id"]] = rows
    return found


def test_an_mcp_servers_hints_are_imported_and_shown(stack, mcp_stand_in):
    server = mcp_stand_in()
    done = cli(stack, "tg-import-mcp-tools", server.url, "--only", "lookup", "forget", "shout")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"Imported 3 tool(s) from {server.url}: forget, lookup, shout"

    def descriptor(key: str) -> dict:
        got = cli(stack, "tg-get-config-item", f"tool/{key}")
        assert got.returncode == 0, got.stderr
        return json.loads(got.stdout)

    said = ("read-only", "destructive", "idempotent", "open-world")
    # What the server gave, under our keys; what it did not give is not written (unknown, not false).
    assert {k: v for k, v in descriptor("lookup").items() if k in said} == {
        "read-only": True, "idempotent": True, "open-world": True}
    assert {k: v for k, v in descriptor("forget").items() if k in said} == {
        "destructive": True, "idempotent": False, "open-world": False}
    assert not set(descriptor("shout")) & set(said)

    # The gateway's catalog has them once the config push has reached it.
    def imported() -> dict | None:
        found = tables(cli(stack, "tg-show-tools").stdout)
        return found if {"lookup", "forget", "shout"} <= set(found) else None

    shown = wait_for("the imported tools in tg-show-tools", imported, 30)
    lookup, forget, shout = shown["lookup"], shown["forget"], shown["shout"]
    assert [lookup[k] for k in said] == ["yes", "not said (MCP reads it as no)", "yes", "yes"]   # read-only: not destructive
    assert [forget[k] for k in said] == ["not said (MCP reads it as no)", "yes", "no", "no"]
    assert shout["annotations"].startswith("none said: MCP reads them as its defaults")
    assert not set(shout) & set(said)
