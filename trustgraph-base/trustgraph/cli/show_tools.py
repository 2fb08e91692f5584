"""Shows the agent's tools: one table per ``tool`` config item, then the descriptor errors.

As upstream, plus, for tools of type ``tool-service``, the service they call,
its queues, the tool's config values and its arguments.  The descriptor
errors come from the gateway (``GET {url}api/v1/tool-service/errors``, the
list the agent and gateway compute from config); when the gateway does not
serve that route they are computed here, from the same config, with the same
resolver (``trustgraph.base.tool_descriptors``), which checks tool-service
descriptors only.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from trustgraph.cli.api import Api, api_from_args, main_wrapper, make_parser
from trustgraph.cli.show_flows import render_table

PROG = "tg-show-tools"
ERRORS_PATH = "api/v1/tool-service/errors"
TOOL_SERVICE_TYPE = "tool-service"


def config_values(api: Api, ctype: str) -> dict[str, str]:
    """``getvalues`` of one config type as ``{key: raw value}``."""
    reply = api.config({"operation": "getvalues", "type": ctype})
    return {v["key"]: v["value"] for v in reply.get("values") or [] if isinstance(v, dict) and "key" in v}


def fetch_errors(api: Api) -> list[str] | None:
    """The gateway's descriptor errors, or None when it cannot give them (an older gateway)."""
    headers = {"Accept": "application/json", "User-Agent": "trustgraph-cli"}
    if api.token:
        headers["Authorization"] = f"Bearer {api.token}"
    try:
        req = urllib.request.Request(api.url + ERRORS_PATH, headers=headers, method="GET")
        with urllib.request.urlopen(req, timeout=api.timeout) as resp:
            value = json.loads(resp.read().decode("utf-8"))
    except (OSError, ValueError, urllib.error.URLError):
        return None
    if isinstance(value, list) and all(isinstance(e, str) for e in value):
        return value
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _list(value: Any) -> str:
    return ", ".join(_text(v) for v in value) if isinstance(value, list) else _text(value)


def tool_rows(key: str, raw: str, service: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The (label, value) rows of one tool's table; ``service`` is its tool-service descriptor."""
    try:
        data = json.loads(raw)
    except (TypeError, ValueError):
        data = None
    if not isinstance(data, dict):
        return [("id", key), ("error", "the value is not a JSON object")]
    kind = data.get("type", "")
    rows = [("id", key), ("name", _text(data.get("name", ""))),
            ("description", _text(data.get("description", ""))), ("type", _text(kind))]
    for field in ("mcp-tool", "collection", "schema-name", "index-name", "limit", "template"):
        if data.get(field) is not None:
            rows.append((field, _text(data[field])))
    if kind == TOOL_SERVICE_TYPE:
        rows.append(("service", _text(data.get("service", ""))))
        if service is not None:
            rows.append(("request queue", _text(service.get("request-queue", ""))))
            rows.append(("response queue", _text(service.get("response-queue", ""))))
            params = [p.get("name") if isinstance(p, dict) else p for p in service.get("config-params") or []]
            config = [f"{p}={_text(data[p])}" for p in params if isinstance(p, str) and p in data]
            rows.append(("config", "\n".join(config) or "(none)"))
    arguments = data.get("arguments") or []
    for n, arg in enumerate(arguments if isinstance(arguments, list) else []):
        if isinstance(arg, dict):
            rows.append((f"arg {n}", f"{arg.get('name', '')}: {arg.get('type', 'string')}\n"
                                     f"{arg.get('description', '')}".rstrip()))
    if data.get("group") is not None:
        rows.append(("groups", _list(data["group"])))
    if data.get("state") is not None:
        rows.append(("next state", _text(data["state"])))
    if data.get("applicable-states") is not None:
        rows.append(("available in", _list(data["applicable-states"])))
    return rows


def _service(services: dict[str, str], key: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(services[key]) if isinstance(key, str) and key in services else None
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def show_tools(api: Api) -> None:
    tools = config_values(api, "tool")
    services = config_values(api, "tool-service")
    if not tools:
        print("No tools.")
    for key in sorted(tools):
        try:
            ref = json.loads(tools[key]).get("service")
        except (TypeError, ValueError, AttributeError):
            ref = None
        print(render_table(tool_rows(key, tools[key], _service(services, ref))))
        print()
    errors = fetch_errors(api)
    if errors is None:
        # Imported here: pydantic is slow to import and only this fallback needs it.
        from trustgraph.base.tool_descriptors import resolve_tool_services

        errors = [str(e) for e in resolve_tool_services(services, tools)[1]]
    if errors:
        print("Descriptor errors:")
        for e in errors:
            print(f"  {e}")


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, "Shows the agent's tools and any descriptor errors.")
    args = parser.parse_args(argv)
    show_tools(api_from_args(args))


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
