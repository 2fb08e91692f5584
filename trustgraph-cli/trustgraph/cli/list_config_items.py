"""Lists the keys of a configuration type."""

from __future__ import annotations

import json

from trustgraph.base.command_line import (
    add_item_args,
    api_from_args,
    main_wrapper,
    make_parser,
    resolve_item,
)

PROG = "tg-list-config-items"


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, __doc__)
    add_item_args(parser, with_key=False)
    parser.add_argument(
        "--format",
        choices=["text", "json"],
        default="text",
        help="one key per line, or a JSON array (default: text)",
    )
    args = parser.parse_args(argv)
    ctype, _ = resolve_item(parser, args, with_key=False)

    reply = api_from_args(args).config({"operation": "list", "type": ctype})
    keys = reply.get("directory") or []

    if args.format == "json":
        print(json.dumps(keys))
    else:
        for key in keys:
            print(key)


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
