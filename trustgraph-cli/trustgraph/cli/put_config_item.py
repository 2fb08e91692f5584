"""Sets a configuration item.

The value comes from --value, --stdin, --file PATH, or, with the TYPE/KEY
shorthand and no other source, from standard input:

    tg-put-config-item tool/tell-joke < tell-joke.json

Values of JSON-typed items (tool, prompt, flow-blueprint, ...) are checked
before anything is sent, because services decode them on every config push
and a broken value would only show up later, far from its cause.

Descriptors of the tool catalog (``tool``, ``tool-service``, ``mcp``) are
checked further, against the current config, with the catalog the agent
builds (:mod:`trustgraph.catalog`): one the agent would skip is refused with
the message the agent would log (nothing is written, exit 1), unless
``--force`` is given.  A tool whose service or MCP server is not configured
yet is written with a warning, so the two descriptors of a tool service can
be put in either order.  So is a descriptor with a key nothing reads (a
misspelled ``"argument"``: the tool would have no arguments): exit status 0,
as upstream's descriptors with keys of their own must still be written, unless
``--strict`` makes every warning refuse the item.
"""

from __future__ import annotations

import argparse
import json
import sys

from trustgraph.base.command_line import (
    CliError,
    GatewayClient,
    add_item_args,
    api_from_args,
    config_values,
    main_wrapper,
    make_parser,
    resolve_item,
)

PROG = "tg-put-config-item"

# Config types whose values the services parse as JSON.
JSON_TYPES = frozenset(
    {
        "tool",
        "tool-service",
        "flow-blueprint",
        "mcp",
        "prompt",
        "parameter-type",
        "flow",
        "interface-description",
        "active-flow",
        "token-cost",
        "tool-policy",
    }
)


def _decode(raw: bytes, source: str) -> str:
    """Decode UTF-8 (tolerating a BOM, which editors on some platforms add
    and which JSON parsers reject)."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise CliError(f"{source} is not valid UTF-8 text ({e.reason} at byte {e.start})") from None


def _strip_newline(text: str) -> str:
    """Drop one trailing newline: files and heredocs end with one, and it is
    never meant to be part of the value."""
    if text.endswith("\r\n"):
        return text[:-2]
    if text.endswith("\n"):
        return text[:-1]
    return text


def read_value(args: argparse.Namespace, positional: bool) -> str | None:
    """The value text from whichever source was chosen, or None if none was."""
    if args.value is not None:
        return _strip_newline(args.value)
    if args.file is not None:
        try:
            with open(args.file, "rb") as f:
                raw = f.read()
        except OSError as e:
            raise CliError(f"cannot read {args.file}: {e.strerror or e}") from None
        return _strip_newline(_decode(raw, args.file))
    if args.stdin or positional:
        if sys.stdin is None:
            raise CliError("no standard input to read the value from")
        if sys.stdin.isatty():
            print("reading the value from standard input (end with Ctrl-D)...", file=sys.stderr, flush=True)
        return _strip_newline(_decode(sys.stdin.buffer.read(), "standard input"))
    return None


def check_json(ctype: str, key: str, value: str) -> None:
    """Refuse a value that JSON-typed config cannot hold, naming the spot."""
    if ctype not in JSON_TYPES:
        return
    try:
        json.loads(value)
    except json.JSONDecodeError as e:
        raise CliError(
            f"value for {ctype}/{key} is not valid JSON: {e.msg} at line"
            f" {e.lineno} column {e.colno}; nothing was written"
        ) from None


def check_descriptor(api: GatewayClient, ctype: str, key: str, value: str, force: bool,
                     strict: bool = False) -> None:
    """Refuse (or, with ``force``, warn about) a catalog descriptor the agent could not use;
    with ``strict``, one it could use with a warning too."""
    # Imported here: pydantic is slow to import and only catalog types need it.
    from trustgraph.catalog import CATALOG_TYPES, DESCRIPTOR_TYPES, check_item

    if ctype not in DESCRIPTOR_TYPES:
        return
    current = {t: config_values(api, t) for t in CATALOG_TYPES}
    result = check_item(current, ctype, key, value)
    refused = (*result.errors, *result.warnings) if strict else result.errors
    if refused and not force:
        problems = "; ".join(str(e) for e in refused)
        raise CliError(f"{problems}; nothing was written (fix it, or give --force to write it anyway)")
    for problem in (*result.errors, *result.warnings):
        print(f"{PROG}: warning: {problem}", file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    parser = make_parser(PROG, "Sets a configuration item.")
    add_item_args(parser)
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--value", help="the value to store")
    source.add_argument("--stdin", action="store_true", help="read the value from standard input")
    source.add_argument("--file", metavar="PATH", help="read the value from a file")
    parser.add_argument("--force", action="store_true",
                        help="write a tool, tool-service or mcp descriptor even if the agent could not use it")
    parser.add_argument("--strict", action="store_true",
                        help="refuse a descriptor with warnings too (an unknown key, a service not configured "
                             "yet): nothing is written, exit 1")
    return parser


def run(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    ctype, key = resolve_item(parser, args)
    value = read_value(args, positional=args.item is not None)
    if value is None:
        parser.error("one of --value, --stdin or --file is required")

    check_json(ctype, key, value)
    api = api_from_args(args)
    check_descriptor(api, ctype, key, value, args.force, args.strict)

    api.config({"operation": "put", "values": [{"type": ctype, "key": key, "value": value}]})
    print(f"Configuration item set: {ctype}/{key}")


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
