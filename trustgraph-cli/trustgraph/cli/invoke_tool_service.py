"""Calls a tool service through the API gateway and prints its answer.

By tool name (the agent's view: the tool's config values are applied):
    tg-invoke-tool-service -n tell-joke -a topic=cats
Or a service directly by its id, with config values of your own:
    tg-invoke-tool-service -s joke-service --config '{"style": "one-liner"}' -a topic=dogs

Chunks are printed as they arrive; --no-streaming waits for the whole answer.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from trustgraph.base.command_line import CliError, api_from_args, main_wrapper, make_parser

PROG = "tg-invoke-tool-service"


def parse_arguments(pairs: list[str], as_json: str | None) -> dict[str, Any]:
    """``-a k=v`` pairs (values parsed as JSON when they are JSON, else strings) over ``--arguments``."""
    args: dict[str, Any] = {}
    if as_json:
        try:
            args = json.loads(as_json)
        except ValueError as e:
            raise CliError(f"--arguments is not valid JSON: {e}") from None
        if not isinstance(args, dict):
            raise CliError("--arguments must be a JSON object, e.g. '{\"topic\": \"cats\"}'")
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"-a expects NAME=VALUE, got {pair!r}")
        try:
            args[key] = json.loads(value)
        except ValueError:
            args[key] = value
    return args


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, __doc__)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("-n", "--name", help="tool name (a `tool` config entry of type tool-service)")
    target.add_argument("-s", "--service", help="tool-service id (a `tool-service` config entry)")
    parser.add_argument("-a", "--argument", action="append", default=[], metavar="NAME=VALUE",
                        help="an argument for the tool (repeatable)")
    parser.add_argument("--arguments", help="all arguments as a JSON object")
    parser.add_argument("--config", help="config values as a JSON object (with -s only)")
    parser.add_argument("-U", "--user", default="trustgraph", help="user the call is made for")
    parser.add_argument("--no-streaming", action="store_true", help="print the answer when complete")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait (default 120)")
    args = parser.parse_args(argv)
    if args.config and not args.service:
        parser.error("--config goes with -s/--service (a tool's config comes from its descriptor)")

    body: dict[str, Any] = {"user": args.user, "arguments": parse_arguments(args.argument, args.arguments)}
    if args.name:
        body["tool"] = args.name
    else:
        body["service"] = args.service
        try:
            body["config"] = json.loads(args.config) if args.config else {}
        except ValueError as e:
            raise CliError(f"--config is not valid JSON: {e}") from None

    api = api_from_args(args)
    if args.no_streaming:
        reply = api.post("api/v1/tool-service", body, timeout=args.timeout)
        print(reply.get("response", ""))
        return

    from trustgraph.cli.socket import stream

    def show(response: dict[str, Any]) -> None:
        chunk = response.get("response")
        if chunk:
            sys.stdout.write(chunk)
            sys.stdout.flush()

    stream(api.url, api.token, "tool-service", body, on_response=show, timeout=args.timeout)
    print()


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
