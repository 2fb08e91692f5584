"""Shows the running flows: one small table per flow with its blueprint,
description, parameters and the queues behind each interface.

An interface that no running processor serves (nothing consumes its request
queue, or its queue for a send-only one) is marked so: a blueprint may name
services this stack does not run, and a request sent there is dropped.  The
counts come from the broker, through the gateway's
``GET /api/v1/broker/consumers``; without it (an upstream gateway, or one not
told where the broker's metrics are) nothing is marked.
"""

from __future__ import annotations

import json
from typing import Any

from trustgraph.base.command_line import GatewayClient, api_from_args, main_wrapper, make_parser
from trustgraph.cli.table import render_table  # also imported from here by upstream-style code
from trustgraph.topics import TopicError, to_pulsar

PROG = "tg-show-flows"


def _text(value: Any) -> str:
    """Strings as-is, anything else as compact JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def describe_interface(value: Any) -> str:
    """``"topic"`` for send-only interfaces; one ``role: topic`` line per
    queue for request/response pairs (or any other mapping)."""
    if isinstance(value, dict):
        return "\n".join(f"{role}: {_text(q)}" for role, q in value.items())
    return _text(value)


NOT_SERVED = "(not served: no running processor consumes this)"


def _topic_key(topic: str) -> str:
    """A queue as the broker counts it: ``tenant/namespace/name``, whatever its form."""
    try:
        topic = to_pulsar(topic)
    except TopicError:
        pass
    return topic.split("://", 1)[-1]


def served(value: Any, consumers: dict[str, int]) -> bool:
    """Whether the interface's request queue (or its only queue) has a consumer."""
    queue = value.get("request") if isinstance(value, dict) else value
    if not isinstance(queue, str):
        return True  # nothing we can check: no mark rather than a wrong one
    return consumers.get(_topic_key(queue), 0) > 0


def flow_rows(flow_id: str, reply: dict[str, Any],
              consumers: dict[str, int] | None = None) -> list[tuple[str, str]]:
    """The (label, value) rows of one flow's table.

    With ``consumers`` (the broker's count per queue), interfaces nobody
    serves get a last line saying so.

    ``get-flow`` returns the stored ``flow/<id>`` config value as a JSON
    string; ``description`` and ``parameters`` are also sent alongside it and
    serve as a fallback if that string is missing or unreadable.
    """
    try:
        flow = json.loads(reply.get("flow") or "{}")
    except (TypeError, json.JSONDecodeError):
        flow = {}
    if not isinstance(flow, dict):
        flow = {}

    params = flow.get("parameters") or reply.get("parameters") or {}
    rows = [
        ("id", flow_id),
        ("blueprint", _text(flow.get("blueprint-name", ""))),
        ("description", _text(flow.get("description", reply.get("description", "")))),
        (
            "parameters",
            "\n".join(f"{k}={_text(v)}" for k, v in sorted(params.items()))
            if isinstance(params, dict) and params
            else "(none)",
        ),
    ]
    interfaces = flow.get("interfaces") or {}
    if isinstance(interfaces, dict):
        for name in sorted(interfaces):
            text = describe_interface(interfaces[name])
            if consumers is not None and not served(interfaces[name], consumers):
                text += "\n" + NOT_SERVED
            rows.append((name, text))
    return rows


def broker_consumers(api: GatewayClient) -> dict[str, int] | None:
    """The broker's consumer count per queue, or None when the gateway cannot tell."""
    reply = api.get("api/v1/broker/consumers")
    counts = reply.get("consumers") if isinstance(reply, dict) else None
    return counts if isinstance(counts, dict) else None


def show_flows(api: GatewayClient) -> None:
    ids = api.flow({"operation": "list-flows"}).get("flow-ids") or []
    if not ids:
        print("No flows.")
        return
    consumers = broker_consumers(api)
    for flow_id in ids:
        reply = api.flow({"operation": "get-flow", "flow-id": flow_id})
        print(render_table(flow_rows(flow_id, reply, consumers)))
        print()


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, "Shows the running flows.")
    args = parser.parse_args(argv)
    show_flows(api_from_args(args))


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
