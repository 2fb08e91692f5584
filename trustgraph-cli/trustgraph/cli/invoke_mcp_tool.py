"""Calls an MCP tool through the gateway and the flow's mcp-tool service, and prints its result.

    tg-invoke-mcp-tool -n weather -P '{"city": "Oslo"}'

``-n`` is the id of an ``mcp`` config entry (tg-show-mcp-tools).  A text
result is printed as it is, a structured one as indented JSON.
"""

from __future__ import annotations

import argparse
import json
import urllib.parse

from trustgraph.base.command_line import (
    DEFAULT_URL,
    CliError,
    GatewayClient,
    default_token,
    default_url,
    main_wrapper,
)

PROG = "tg-invoke-mcp-tool"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    # Upstream spells it --url here and --api-url everywhere else: both work.
    parser.add_argument("-u", "--url", "--api-url", dest="url", default=default_url(),
                        help=f"API URL (default: $TRUSTGRAPH_URL or {DEFAULT_URL})")
    parser.add_argument("-t", "--token", default=default_token(), help="API bearer token (default: $TRUSTGRAPH_TOKEN)")
    parser.add_argument("-f", "--flow-id", default="default", help="flow id (default: %(default)s)")
    parser.add_argument("-n", "--name", metavar="tool-name", required=True, help="MCP tool id (config type mcp)")
    parser.add_argument("-P", "--parameters", help="tool parameters as a JSON object")
    return parser


def run(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        parameters = json.loads(args.parameters) if args.parameters else {}
    except ValueError as e:
        raise CliError(f"-P/--parameters is not valid JSON: {e}") from None
    if not isinstance(parameters, dict):
        raise CliError("-P/--parameters must be a JSON object, e.g. '{\"city\": \"Oslo\"}'")
    flow = urllib.parse.quote(args.flow_id, safe="")
    reply = GatewayClient(args.url, args.token).post(f"api/v1/flow/{flow}/service/mcp-tool",
                                           {"name": args.name, "parameters": parameters})
    if "object" in reply:
        print(json.dumps(reply["object"], indent=4))
    else:
        print(reply.get("text", ""))


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
