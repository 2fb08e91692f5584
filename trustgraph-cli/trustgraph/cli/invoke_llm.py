"""Asks the flow's LLM directly (the text-completion service).

    tg-invoke-llm "What is the capital of France? Answer in one word."
    tg-invoke-llm "You are a poet." "Describe the sea in one sentence."

With one argument it is the prompt; with two, upstream's form, the system
prompt and then the prompt.  The answer is printed as it is generated
(WebSocket); ``--no-streaming`` waits for the whole answer (REST).
"""

from __future__ import annotations

import argparse
import sys
import urllib.parse
from typing import Any

from trustgraph.base.command_line import DEFAULT_TIMEOUT, add_api_args, api_from_args, main_wrapper
from trustgraph.cli.socket import stream

PROG = "tg-invoke-llm"


def add_flow_args(parser: argparse.ArgumentParser) -> None:
    """``-f/--flow-id``, ``--no-streaming`` and upstream's ``--url`` spelling of ``-u``."""
    parser.add_argument("--url", dest="api_url", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    parser.add_argument("-f", "--flow-id", default="default", help="flow to use (default: default)")
    parser.add_argument("--no-streaming", action="store_true",
                        help="wait for the whole answer instead of printing it as it comes")


def service_path(flow: str, service: str) -> str:
    """The REST path of a flow service, with the flow id safely quoted."""
    return f"api/v1/flow/{urllib.parse.quote(flow, safe='')}/service/{service}"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     usage="%(prog)s [options] [SYSTEM] PROMPT",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_api_args(parser)
    add_flow_args(parser)
    parser.add_argument("text", nargs="+", metavar="[SYSTEM] PROMPT",
                        help="the prompt, or the system prompt followed by the prompt")
    parser.add_argument("--show-usage", action="store_true",
                        help="print token counts and the model on stderr")
    return parser


def parse(argv: list[str] | None = None) -> tuple[argparse.Namespace, str, str]:
    """Parsed flags plus ``(system, prompt)``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if len(args.text) > 2:
        parser.error("give the prompt, or the system prompt and the prompt (quote each one)")
    system, prompt = (["", *args.text] if len(args.text) == 1 else args.text)
    if not prompt.strip():
        parser.error("the prompt is empty")
    return args, system, prompt


def show_usage(response: dict[str, Any]) -> None:
    print(f"Input tokens: {response.get('in_token', 0)}  Output tokens: {response.get('out_token', 0)}  "
          f"Model: {response.get('model', '')}", file=sys.stderr)


def run(argv: list[str] | None = None) -> None:
    args, system, prompt = parse(argv)
    request = {"system": system, "prompt": prompt, "streaming": not args.no_streaming}
    if args.no_streaming:
        final = api_from_args(args).post(service_path(args.flow_id, "text-completion"), request)
        print(final.get("response", ""))
    else:
        def write(response: dict[str, Any]) -> None:
            sys.stdout.write(response.get("response") or "")
            sys.stdout.flush()

        final = stream(args.api_url, args.token, "text-completion", request, flow=args.flow_id,
                       on_response=write, timeout=DEFAULT_TIMEOUT)
        print()
    if args.show_usage:
        show_usage(final)


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
