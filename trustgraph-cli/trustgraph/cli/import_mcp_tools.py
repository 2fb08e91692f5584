"""Imports the tools of an MCP server: an ``mcp`` entry and an agent ``tool`` for each.

    tg-import-mcp-tools http://127.0.0.1:3000/mcp
    tg-import-mcp-tools http://127.0.0.1:3000/mcp --only lookup shout --dry-run
    tg-import-mcp-tools https://mcp.example.com/mcp --auth-token "$TOKEN" --watch

Lists the server's tools (``tools/list``, with the official MCP SDK) and
writes, for every tool (or those named by ``--only``), in one config change:

* ``mcp/<prefix><name>``: ``{"url", "remote-name": <name>, "imported-from": <url>}``
  (plus ``auth-token`` and ``transport`` when given);
* ``tool/<prefix><name>``: a ``mcp-tool`` descriptor named ``<prefix><name>``
  with the tool's description and typed ``arguments`` from its input schema,
  so the agent checks the model's arguments before it calls (a schema we
  cannot express is passed through unchecked: ``"validate-arguments": false``),
  the tool's example questions when the server lists them in the tool's
  ``_meta`` as our mcp-server does (``trustgraph.mcp_client.examples``; MCP
  itself has no field for them), and the hints of its ``annotations`` it
  gives (``readOnlyHint`` ... as ``read-only``, ``destructive``,
  ``idempotent``, ``open-world``; a hint it does not give stays unknown, read
  as MCP reads it: ``trustgraph.base.descriptors.annotations``).

The agent can use them as soon as the command returns.  ``--dry-run`` prints
what would be written and writes nothing.

``--watch`` stays connected to the server after the import and follows its
tool-list changes (``notifications/tools/list_changed`` on a session-era
server's session, a ``subscriptions/listen`` stream on an MCP 2026-07-28
one): each change is imported again, new
tools are added, changed ones rewritten, and tools this command imported from
that URL which the server no longer lists are deleted, so the server's tools
stay as current as a self-announcing tool service's.  If the server goes
away, ``--watch`` reconnects (with a back-off) and imports again once it is
back.  Run it beside the stack (Ctrl-C stops it; nothing is deleted then).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

from trustgraph.base.command_line import (
    CliError,
    GatewayClient,
    api_from_args,
    config_values,
    main_wrapper,
    make_parser,
)
from trustgraph.base.descriptors.annotations import Annotations
from trustgraph.cli.set_mcp_tool import mcp_entry

if TYPE_CHECKING:
    from tenacity import RetryCallState

PROG = "tg-import-mcp-tools"
IMPORTED_FROM = "imported-from"


def _sdk() -> Any:
    try:
        from trustgraph.mcp_client import connection, schemas
    except ImportError as e:
        raise CliError(f"the MCP SDK is not installed ({e}); pip install 'trustgraph-base[mcp]'") from None
    return connection, schemas


def _examples(t: Any, key: str) -> tuple[str | None, list[str]]:
    """The tool's description and example questions; a line on stderr for examples left out."""
    from trustgraph.base.descriptors.models import MAX_EXAMPLE_CHARS, MAX_EXAMPLES
    from trustgraph.mcp_client.examples import read_examples

    description, examples, left_out = read_examples(t.description, t.meta)
    if left_out:
        print(f"{PROG}: warning: tool/{key}: {left_out} of the server's examples left out (a tool takes "
              f"at most {MAX_EXAMPLES}, each a non-empty string of at most {MAX_EXAMPLE_CHARS} characters)",
              file=sys.stderr, flush=True)
    return description, examples


def descriptors(tools: list[Any], args: argparse.Namespace) -> dict[tuple[str, str], dict[str, Any]]:
    """``{(type, key): value}`` to write for the listed tools (``--only`` applied)."""
    _, schemas = _sdk()
    wanted = set(args.only or [])
    names = [t.name for t in tools]
    missing = sorted(wanted - set(names))
    if missing:
        raise CliError(f"the server at {args.url} has no tool {', '.join(missing)} "
                       f"(it lists: {', '.join(names) or 'none'})")
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for t in tools:
        if wanted and t.name not in wanted:
            continue
        key = f"{args.prefix}{t.name}"
        entry = mcp_entry(args.url, t.name, args.auth_token, args.transport)
        entry[IMPORTED_FROM] = args.url
        arguments, checkable = schemas.schema_arguments(t.input_schema)
        description, examples = _examples(t, key)
        tool: dict[str, Any] = {"type": "mcp-tool", "name": key,
                                "description": description or t.title or f"The {t.name} tool of {args.url}",
                                "mcp-tool": key, "arguments": arguments}
        if examples:
            tool["examples"] = examples
        tool.update(Annotations.from_mcp(t.annotations).said())
        if not checkable:
            tool["validate-arguments"] = False
        if args.group:
            tool["group"] = list(args.group)
        out[("mcp", key)] = entry
        out[("tool", key)] = tool
    return out


def imported_keys(api: GatewayClient, url: str) -> set[str]:
    """Keys of the ``mcp`` entries an earlier import from ``url`` wrote."""
    keys = set()
    for key, raw in config_values(api, "mcp").items():
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get(IMPORTED_FROM) == url:
            keys.add(key)
    return keys


def write(api: GatewayClient, items: dict[tuple[str, str], dict[str, Any]], remove: set[str]) -> None:
    """One ``put`` of every item (one config change), then one ``delete`` of what left the server."""
    if items:
        api.config({"operation": "put", "values": [
            {"type": t, "key": k, "value": json.dumps(v)} for (t, k), v in sorted(items.items())]})
    if remove:
        api.config({"operation": "delete", "keys": [
            {"type": t, "key": k} for k in sorted(remove) for t in ("tool", "mcp")]})


def check(items: dict[tuple[str, str], dict[str, Any]]) -> None:
    """Refuse to write descriptors the agent could not use (the catalog's own check)."""
    from trustgraph.catalog import build_catalog
    config: dict[str, dict[str, str]] = {"mcp": {}, "tool": {}}
    for (t, k), v in items.items():
        config[t][k] = json.dumps(v)
    catalog = build_catalog(config)
    if catalog.errors:
        raise CliError(f"{catalog.errors[0]}; nothing was written")


async def list_tools(conn: Any, timeout: float) -> list[Any]:
    connection, _ = _sdk()
    try:
        return await conn.list_tools(timeout)
    except (connection.McpUnavailable, connection.McpCallFailed) as e:
        raise CliError(f"cannot list the tools of {conn.url}: {e}") from None
    except TimeoutError:
        raise CliError(f"the MCP server at {conn.url} did not list its tools within {timeout:g}s") from None


def sync(api: GatewayClient, tools: list[Any], args: argparse.Namespace, prune: bool) -> str:
    """Write the import; returns the one line that says what was done."""
    items = descriptors(tools, args)
    check(items)
    keys = sorted(k for t, k in items if t == "tool")
    remove = (imported_keys(api, args.url) - set(keys)) if prune else set()
    if args.only:
        remove &= {f"{args.prefix}{n}" for n in args.only}
    write(api, items, remove)
    line = f"Imported {len(keys)} tool(s) from {args.url}: {', '.join(keys) or 'none'}"
    return line + (f"; removed {', '.join(sorted(remove))}" if remove else "")


def dry_run(items: dict[tuple[str, str], dict[str, Any]]) -> None:
    for (t, k), v in sorted(items.items(), key=lambda i: (i[0][1], i[0][0])):
        shown = {**v, "auth-token": "(set)"} if "auth-token" in v else v
        print(f"{t}/{k}: {json.dumps(shown, indent=2)}")
    print(f"(dry run: {len(items) // 2} tool(s); nothing was written)")


async def main_async(args: argparse.Namespace) -> None:
    connection, _ = _sdk()
    changed = asyncio.Event()

    async def on_change() -> None:
        changed.set()

    address = connection.ServerAddress(args.url, args.transport or "streamable-http", args.auth_token)
    conn = connection.McpConnection(address, on_tools_changed=on_change)
    try:
        tools = await list_tools(conn, args.timeout)
        if args.dry_run:
            dry_run(descriptors(tools, args))
            return
        api = api_from_args(args)
        print(sync(api, tools, args, prune=args.watch), flush=True)
        if args.watch:
            await watch(api, conn, changed, args)
    finally:
        await conn.close()


async def watch(api: GatewayClient, conn: Any, changed: asyncio.Event, args: argparse.Namespace) -> None:
    """Import again on every tool-list change; reconnect and import again when the server comes back."""
    print(f"Watching {args.url} for tool changes (Ctrl-C stops)", flush=True)
    # Only --watch retries: tenacity is imported here, not with the command.
    from tenacity import AsyncRetrying, retry_if_exception_type, wait_exponential

    def failed(state: RetryCallState) -> None:
        print(f"{PROG}: {state.outcome.exception()}; retrying in {state.upcoming_sleep:g}s",
              file=sys.stderr, flush=True)

    while True:
        gone = asyncio.ensure_future(conn.closed())
        waiting = asyncio.ensure_future(changed.wait())
        try:
            await asyncio.wait({gone, waiting}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            waiting.cancel()
        if changed.is_set():
            changed.clear()
        else:
            print(f"Lost the connection to {args.url}; reconnecting", file=sys.stderr, flush=True)
        tools = await AsyncRetrying(wait=wait_exponential(multiplier=1.0, exp_base=2, max=30.0),
                                    retry=retry_if_exception_type(CliError), before_sleep=failed,
                                    reraise=True)(list_tools, conn, args.timeout)
        try:
            print(sync(api, tools, args, prune=True), flush=True)
        except CliError as e:   # one bad listing must not end the watch
            print(f"{PROG}: {e}", file=sys.stderr, flush=True)


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, __doc__)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("url", help="the MCP server's endpoint, e.g. http://127.0.0.1:3000/mcp")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="import only these tools")
    parser.add_argument("--prefix", default="", help="put this before every key and tool name")
    parser.add_argument("--auth-token", help="bearer token the server requires (stored in the mcp entries)")
    parser.add_argument("--transport", choices=["streamable-http", "sse"], default=None,
                        help="MCP transport (default streamable-http)")
    parser.add_argument("--group", nargs="+", help="agent tool groups for the imported tools")
    parser.add_argument("--dry-run", action="store_true", help="print what would be written; write nothing")
    parser.add_argument("--watch", action="store_true",
                        help="stay connected and import again whenever the server's tool list changes")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to list the tools (default 30)")
    args = parser.parse_args(argv)
    if args.dry_run and args.watch:
        parser.error("--dry-run and --watch do not go together")
    asyncio.run(main_async(args))


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
