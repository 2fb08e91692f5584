"""The bootstrap config (config-examples/bootstrap.json) as upstream's commands read it."""

from __future__ import annotations

import json

from support import REPO

EXAMPLES = REPO / "config-examples"


def test_every_interface_of_the_flow_is_described_for_upstreams_show_flows():
    # Upstream's tg-show-flows prints a flow's queues only for interfaces that config type
    # interface-description marks visible; without them its queue row was empty.
    boot = json.loads((EXAMPLES / "bootstrap.json").read_text())
    described = boot["config"]["interface-description"]
    blueprint = json.loads((EXAMPLES / boot["files"]["flow-blueprint/agent"]).read_text())
    assert set(described) == set(blueprint["interfaces"])
    assert all(d["kind"] == "request-response" and isinstance(d["visible"], bool) and d["description"]
               for d in described.values())
    # Visible: what tg-launch's stack serves.
    assert {k for k, d in described.items() if d["visible"]} == {"agent", "prompt", "text-completion", "mcp-tool"}
