"""Gets the value of one configuration item."""

from __future__ import annotations

import json

from trustgraph.base.command_line import (
    CliError,
    add_item_args,
    api_from_args,
    main_wrapper,
    make_parser,
    resolve_item,
)

PROG = "tg-get-config-item"


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, __doc__)
    add_item_args(parser)
    parser.add_argument(
        "--format",
        choices=["text", "json"],
        default="text",
        help="text prints the raw value, json its JSON encoding (default: text)",
    )
    args = parser.parse_args(argv)
    ctype, key = resolve_item(parser, args)

    reply = api_from_args(args).config({"operation": "get", "keys": [{"type": ctype, "key": key}]})

    # config-svc answers a missing key with value null rather than an error;
    # for a command-line user that is a failure worth a nonzero exit.
    values = reply.get("values") or []
    value = values[0].get("value") if values else None
    if value is None:
        raise CliError(f"config item {ctype}/{key} does not exist (see tg-list-config-items --type {ctype})")

    print(json.dumps(value) if args.format == "json" else value)


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
