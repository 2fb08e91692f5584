"""Deletes a configuration item; an item that is not there is an error.

config-svc's ``delete`` succeeds for an absent key (upstream 2.1.4's too), so
upstream's command printed "deleted" for a typo.  We ask the gateway for the
item first (``GET /api/v1/config/{type}/{key}``); a gateway without that
endpoint (upstream's) cannot tell, and the delete goes ahead as upstream's.
"""

from __future__ import annotations

import urllib.parse

from trustgraph.base.command_line import (
    CliError,
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

    api = api_from_args(args)
    quote = urllib.parse.quote
    found = api.get(f"api/v1/config/{quote(ctype, safe='')}/{quote(key, safe='')}")
    if isinstance(found, dict) and "value" in found and found["value"] is None:
        raise CliError(f"no config item {ctype}/{key}; nothing was deleted "
                       f"(tg-list-config-items --type {ctype} lists its keys)")
    api.config({"operation": "delete", "keys": [{"type": ctype, "key": key}]})
    print(f"Configuration item deleted: {ctype}/{key}")


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
