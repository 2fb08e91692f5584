"""Starts a flow from a flow blueprint.

Parameters may come from a JSON object (-p), a JSON file (--parameters-file)
and repeated --param NAME=VALUE; when several are given they are merged in
that order of increasing precedence: file, then -p, then --param.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from trustgraph.base.command_line import CliError, api_from_args, main_wrapper, make_parser

PROG = "tg-start-flow"


def _object(text: str, source: str) -> dict[str, Any]:
    """Parse ``text`` as a JSON object, with a message naming the source."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise CliError(f"{source} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    if not isinstance(value, dict):
        raise CliError(f"{source} must be a JSON object of name: value pairs")
    return value


def collect_parameters(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, Any]:
    """Merge the three parameter sources into one mapping."""
    params: dict[str, Any] = {}
    if args.parameters_file is not None:
        try:
            with open(args.parameters_file, encoding="utf-8-sig") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise CliError(f"cannot read {args.parameters_file}: {e}") from None
        params.update(_object(text, args.parameters_file))
    if args.parameters is not None:
        params.update(_object(args.parameters, "--parameters"))
    for item in args.param or []:
        name, sep, value = item.partition("=")
        if not sep or not name:
            parser.error(f"--param expects NAME=VALUE, got {item!r}")
        params[name] = value
    return params


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, __doc__)
    parser.add_argument("-n", "--blueprint-name", required=True, help="flow blueprint to start")
    parser.add_argument("-i", "--flow-id", required=True, help="id of the new flow")
    parser.add_argument("-d", "--description", required=True, help="description of the flow")
    parser.add_argument("-p", "--parameters", metavar="JSON", help="parameters as a JSON object")
    parser.add_argument("--parameters-file", metavar="PATH", help="file holding a JSON object")
    parser.add_argument(
        "--param",
        action="append",
        metavar="NAME=VALUE",
        help="one parameter (repeatable)",
    )
    args = parser.parse_args(argv)
    params = collect_parameters(parser, args)

    api_from_args(args).flow(
        {
            "operation": "start-flow",
            "blueprint-name": args.blueprint_name,
            "flow-id": args.flow_id,
            "description": args.description,
            "parameters": params,
        }
    )


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
