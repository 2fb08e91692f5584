"""Fills a prompt template and asks the flow's LLM (the prompt service).

    tg-invoke-prompt question question="What is 2 + 2?"
    tg-invoke-prompt extract-definitions text=@chapter.txt
    tg-invoke-prompt agent-react question=Hi 'tools:=[]' history:=[]

``NAME=VALUE`` passes VALUE as text (``NAME=@FILE`` reads it from FILE);
``NAME:=JSON`` passes a JSON value (a list, an object, a number).  The answer
is printed as it is generated (WebSocket); ``--no-streaming`` waits for the
whole answer (REST), which is how to get the parsed object of a ``json`` or
``jsonl`` template: a stream carries the LLM's raw text.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from trustgraph.base.command_line import DEFAULT_TIMEOUT, CliError, add_api_args, api_from_args, main_wrapper
from trustgraph.cli.invoke_llm import add_flow_args, service_path
from trustgraph.cli.socket import stream

PROG = "tg-invoke-prompt"


def parse_variables(items: list[str]) -> dict[str, Any]:
    """``NAME=TEXT``, ``NAME=@FILE`` and ``NAME:=JSON`` into a variables map."""
    variables: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or name == ":":
            raise CliError(f"expected NAME=VALUE or NAME:=JSON, got {item!r}")
        if name.endswith(":"):
            name = name[:-1]
            try:
                variables[name] = json.loads(value)
            except ValueError as e:
                raise CliError(f"value of {name} is not valid JSON: {e}") from None
        elif value.startswith("@"):
            try:
                with open(value[1:], encoding="utf-8") as f:
                    variables[name] = f.read()
            except OSError as e:
                raise CliError(f"cannot read {value[1:]}: {e.strerror or e}") from None
        else:
            variables[name] = value
    return variables


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_api_args(parser)
    add_flow_args(parser)
    parser.add_argument("id", metavar="TEMPLATE-ID", help="prompt template id, e.g. question")
    parser.add_argument("variable", nargs="*", metavar="NAME=VALUE",
                        help="template variables: NAME=TEXT, NAME=@FILE or NAME:=JSON")
    return parser


def print_object(text: str) -> None:
    """A JSON answer, pretty-printed (the gateway sends it as JSON text)."""
    try:
        print(json.dumps(json.loads(text), indent=4))
    except ValueError:
        print(text)


def run(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    request = {"id": args.id, "variables": parse_variables(args.variable),
               "streaming": not args.no_streaming}
    if args.no_streaming:
        final = api_from_args(args).post(service_path(args.flow_id, "prompt"), request)
        if final.get("object") is not None:
            print_object(final["object"])
        else:
            print(final.get("text") or "")
        return

    printed = []

    def write(response: dict[str, Any]) -> None:
        text = response.get("text")
        if text:
            printed.append(text)
            sys.stdout.write(text)
            sys.stdout.flush()

    final = stream(args.api_url, args.token, "prompt", request, flow=args.flow_id,
                       on_response=write, timeout=DEFAULT_TIMEOUT)
    if printed:
        print()
    elif final.get("object") is not None:
        print_object(final["object"])


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
