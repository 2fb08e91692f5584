"""Stops a running flow."""

from __future__ import annotations

from trustgraph.base.command_line import api_from_args, main_wrapper, make_parser

PROG = "tg-stop-flow"


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, __doc__)
    parser.add_argument("-i", "--flow-id", required=True, help="flow to stop")
    args = parser.parse_args(argv)

    api_from_args(args).flow({"operation": "stop-flow", "flow-id": args.flow_id})


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
