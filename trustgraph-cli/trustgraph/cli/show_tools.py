"""Shows the agent's tools: one table per ``tool`` config item, then every descriptor problem.

As upstream, plus the argument types, the tool's example questions and calls,
what the tool says of its effects (``read-only``, ``destructive``,
``idempotent``, ``open-world``: its own, else its service's; one nobody gave
is shown as not said, with how it is read), and for tools of type
``tool-service`` the service they call, whether it is running, its queues,
the tool's config values and whether a call is retried; whether the agent
asks a person before calling it, and why (config ``tool-policy/approval``);
a tool a running service announced says so (``source``).  A tool the agent leaves out says why in its
own table (``error`` rows), and the list of every problem (services and MCP
servers included) follows the tables.

What is shown is the tool catalog (:mod:`trustgraph.catalog`): the gateway's
(``GET {url}api/v1/tool-catalog``), so it is what the agent and gateway use;
when the gateway does not serve that route (an upstream one), the same
catalog is built here from the same config.

Every value is shown escaped (``logsafe.escape``): a description is written
by whoever runs a service, and raw it could move the cursor, clear the
screen or draw rows of its own (a newline is shown as ``\n``, an escape
sequence as ``\x1b[...``).
"""

from __future__ import annotations

import json
from typing import Any

from trustgraph.base.command_line import (
    GatewayClient,
    api_from_args,
    config_values,
    main_wrapper,
    make_parser,
)
from trustgraph.base.descriptors.annotations import KEYS, Annotations
from trustgraph.base.safety.logsafe import escape
from trustgraph.cli.table import render_table

PROG = "tg-show-tools"
CATALOG_PATH = "api/v1/tool-catalog"

_LIVE = {True: "yes", False: "NO: no replica is running; calls fail at once",
         None: "not known (the service does not announce itself)"}

# Type-specific descriptor fields shown when a tool has them (upstream's columns).
_FIELDS = ("mcp-tool", "collection", "schema-name", "index-name", "limit", "template")

#: What an annotation nobody gave is taken as (MCP's default, the worst case), in words.
_UNSAID = {True: "not said (MCP reads it as yes)", False: "not said (MCP reads it as no)"}


def fetch_catalog(api: GatewayClient) -> dict[str, Any]:
    """The gateway's catalog, else one built here from the config."""
    catalog = api.get(CATALOG_PATH)
    if isinstance(catalog, dict) and isinstance(catalog.get("tools"), list):
        return catalog
    # Imported here: pydantic is slow to import and only this fallback needs it.
    from trustgraph.catalog import CATALOG_TYPES, build_catalog

    return build_catalog({t: config_values(api, t) for t in CATALOG_TYPES}).to_json()


def cell(value: Any) -> str:
    """One cell's text, on one line: what services announce may hold control characters."""
    return escape(value if isinstance(value, str) else json.dumps(value))


def _list(value: Any) -> str:
    return ", ".join(cell(v) for v in value) if isinstance(value, list) else cell(value)


def _example(example: Any) -> str:
    """A question as it is; an example call as its arguments, after its question if it has one."""
    if not isinstance(example, dict) or not isinstance(example.get("arguments"), dict):
        return cell(example)
    arguments = cell(example["arguments"])
    question = example.get("question")
    return f"{cell(question)} -> {arguments}" if question else arguments


def _argument(arg: dict[str, Any]) -> str:
    head = f"{cell(arg.get('name', ''))}: {cell(arg.get('type') or 'string')}"
    notes = [] if arg.get("required", True) else ["optional"]
    if arg.get("enum"):
        notes.append("one of " + ", ".join(cell(v) for v in arg["enum"]))
    if notes:
        head += f" ({'; '.join(notes)})"
    return f"{head}\n{cell(arg.get('description') or '')}".rstrip()


def annotation_rows(said: Any) -> list[tuple[str, str]]:
    """A row per annotation (``said``: the given ones, by descriptor key), or one row when none is given."""
    if not isinstance(said, dict):
        return []
    if not said:
        return [("annotations", "none said: MCP reads them as its defaults (not read-only, destructive, "
                                "not idempotent, open-world)")]
    known = Annotations.from_said(said)
    return [(key, {True: "yes", False: "no"}.get(said[key], cell(said[key])) if key in said
             else _UNSAID[known.assumed(key)]) for key in KEYS]


def tool_rows(tool: dict[str, Any]) -> list[tuple[str, str]]:
    """The (label, value) rows of one catalog entry's table."""
    rows = [("id", cell(tool.get("key", "")))]
    if "name" in tool or "type" in tool:
        rows += [("name", cell(tool.get("name", ""))), ("description", cell(tool.get("description", ""))),
                 ("type", cell(tool.get("type", "")))]
    rows += [(f, cell(tool[f])) for f in _FIELDS if tool.get(f) is not None]
    if tool.get("source", "config") != "config":
        rows.append(("source", f"{cell(tool['source'])} (by the running service)"))
    if tool.get("type") == "tool-service" and tool.get("service") is not None:
        rows.append(("service", cell(tool["service"])))
        if "live" in tool:
            rows.append(("service live", _LIVE.get(tool["live"], cell(tool["live"]))))
        if "request-queue" in tool:
            rows.append(("request queue", cell(tool["request-queue"])))
            rows.append(("response queue", cell(tool.get("response-queue", ""))))
            config = [f"{cell(k)}={cell(v)}" for k, v in (tool.get("config") or {}).items()]
            rows.append(("config", "\n".join(config) or "(none)"))
    annotations = tool.get("annotations")
    rows += annotation_rows(annotations)
    if tool.get("type") == "tool-service" and isinstance(annotations, dict):
        retries = Annotations.from_said(annotations).retries
        rows.append(("retried", "yes: a call that may not have run is made again" if retries else
                     "no: each call is made once (not idempotent, or destructive)"))
    if "approval" in tool:   # a gateway that knows approvals (the key is absent from older ones)
        why = tool["approval"]
        rows.append(("approval", f"asked first: {cell(why)}" if why else
                     "not asked: the agent calls it when the model decides to"))
    arguments = tool.get("arguments") or []
    for n, arg in enumerate(arguments if isinstance(arguments, list) else []):
        if isinstance(arg, dict):
            rows.append((f"arg {n}", _argument(arg)))
    examples = tool.get("examples")
    if isinstance(examples, list) and examples:
        rows.append(("examples", "\n".join(_example(e) for e in examples)))
    if tool.get("group") is not None:
        rows.append(("groups", _list(tool["group"])))
    if tool.get("state") is not None:
        rows.append(("next state", cell(tool["state"])))
    if tool.get("applicable-states") is not None:
        rows.append(("available in", _list(tool["applicable-states"])))
    for error in tool.get("errors") or []:
        rows.append(("error", cell(error)))
    return rows


def approval_line(policy: Any) -> str | None:
    """The approval policy (``tool-policy/approval``) in one line, or None when the catalog has none."""
    if not isinstance(policy, dict):
        return None
    asks = []
    if policy.get("destructive") is True:
        asks.append("every tool that says it is destructive")
    named = policy.get("tools")
    if isinstance(named, list) and named:
        asks.append(("the tool " if len(named) == 1 else "the tools ") + ", ".join(cell(t) for t in named))
    expires = policy.get("expires")
    wait = f"; an approval waits {expires:g} s" if isinstance(expires, (int, float)) else ""
    return f"Approval (tool-policy/approval): the agent asks before calling {' and '.join(asks) or 'no tool'}{wait}"


def show_tools(api: GatewayClient) -> None:
    catalog = fetch_catalog(api)
    tools = catalog.get("tools") or []
    if not tools:
        print("No tools.")
    for tool in tools:
        print(render_table(tool_rows(tool)))
        print()
    if tools and (line := approval_line(catalog.get("approval-policy"))) is not None:
        print(line)
        print()
    errors = catalog.get("errors") or []
    if errors:
        print("Descriptor errors:")
        for e in errors:
            print(f"  {cell(e)}")
    warnings = catalog.get("warnings") or []
    if warnings:
        print("Warnings:")
        for w in warnings:
            print(f"  {cell(w)}")


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, "Shows the agent's tools and any descriptor errors.")
    args = parser.parse_args(argv)
    show_tools(api_from_args(args))


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
