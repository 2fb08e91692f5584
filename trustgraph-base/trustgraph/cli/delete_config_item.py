"""Deletes a configuration item (deleting an absent item is not an error,
matching config-svc)."""

from __future__ import annotations

from trustgraph.cli.api import (
    add_item_args,
    api_from_args,
    main_wrapper,
    make_parser,
    resolve_item,
)

PROG = "tg-delete-config-item"


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, "Deletes a configuration item.")
    add_item_args(parser)
    args = parser.parse_args(argv)
    ctype, key = resolve_item(parser, args)

    api_from_args(args).config({"operation": "delete", "keys": [{"type": ctype, "key": key}]})
    print(f"Configuration item deleted: {ctype}/{key}")


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
