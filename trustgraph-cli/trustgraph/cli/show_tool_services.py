"""Shows every tool service the gateway knows: from config, or announced by a running service.

For each: where it comes from (``configured``, ``announced`` or both), whether
a replica is live, the replicas and when the last heartbeat came, its queues,
whether callers may retry it (``idempotent``), and what else it says of its
tools' effects (``read-only``, ``destructive``, ``open-world``), where it says.
A configured service that never announces itself (an upstream 2.1.4 one)
shows ``live: not known``.
Replicas that announce the same id with another descriptor are listed under
``conflicts``, with why they are not used.
What a service announced is shown escaped, on one line per value (see
``tg-show-tools``).
"""

from __future__ import annotations

from typing import Any

from trustgraph.base.command_line import CliError, GatewayClient, api_from_args, main_wrapper, make_parser
from trustgraph.base.descriptors.annotations import DESTRUCTIVE, OPEN_WORLD, READ_ONLY
from trustgraph.cli.show_tools import cell
from trustgraph.cli.table import render_table

PROG = "tg-show-tool-services"
PATH = "api/v1/tool-services"

_LIVE = {True: "yes", False: "NO (it stopped, or missed its lease)", None: "not known (it does not announce)"}


def _seconds(value: Any) -> str:
    return f"{value:g} s" if isinstance(value, int | float) and not isinstance(value, bool) else cell(value)


def service_rows(svc: dict[str, Any]) -> list[tuple[str, str]]:
    rows = [("id", cell(svc.get("id", ""))), ("source", cell(svc.get("source", ""))),
            ("live", _LIVE.get(svc.get("live"), cell(svc.get("live"))))]
    replicas = svc.get("replicas") or []
    rows.append(("replicas", "\n".join(cell(r) for r in replicas) if replicas else "(none)"))
    ago = svc.get("last-heartbeat-seconds-ago")
    if ago is not None:
        rows.append(("last heartbeat", f"{_seconds(ago)} ago"))
    for label, key in (("request queue", "request-queue"), ("response queue", "response-queue")):
        if svc.get(key) is not None:
            rows.append((label, cell(svc[key])))
    if svc.get("idempotent") is not None:
        rows.append(("idempotent", "yes (callers retry it)" if svc["idempotent"] else "no"))
    rows += [(key, "yes" if svc[key] else "no") for key in (READ_ONLY, DESTRUCTIVE, OPEN_WORLD)
             if isinstance(svc.get(key), bool)]
    if svc.get("timeout") is not None:
        rows.append(("timeout", _seconds(svc["timeout"])))
    for conflict in svc.get("conflicts") or []:
        if isinstance(conflict, dict):
            who = ", ".join(cell(r) for r in conflict.get("replicas") or [])
            rows.append(("conflict", f"{who} ({cell(conflict.get('request-queue'))}): NOT USED: "
                                     f"{cell(conflict.get('reason', ''))}"))
    return rows


def show_tool_services(api: GatewayClient) -> None:
    services = api.get(PATH)
    if not isinstance(services, list):
        raise CliError(f"the gateway at {api.url} does not list tool services ({PATH}); "
                       "is it this project's api-gateway?")
    if not services:
        print("No tool services.")
    for svc in services:
        if isinstance(svc, dict):
            print(render_table(service_rows(svc)))
            print()


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, __doc__)
    args = parser.parse_args(argv)
    show_tool_services(api_from_args(args))


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
