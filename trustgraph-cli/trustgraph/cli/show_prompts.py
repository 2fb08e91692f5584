"""Shows the system prompt and every prompt template (config type ``prompt``)."""

from __future__ import annotations

import json
import textwrap
from typing import Any

from trustgraph.base.command_line import GatewayClient, api_from_args, main_wrapper, make_parser
from trustgraph.cli.set_prompt import CONFIG_TYPE, read_index

PROG = "tg-show-prompts"


def load(api: GatewayClient) -> tuple[str | None, list[tuple[str, Any]]]:
    """The system prompt and ``(id, template)`` pairs in index order.

    A template that is missing or not JSON is shown as its raw value, so the
    command still helps when the config is broken (that is when it is needed).
    """
    index = read_index(api)
    keys = [{"type": CONFIG_TYPE, "key": "system"}] + [
        {"type": CONFIG_TYPE, "key": f"template.{tid}"} for tid in index]
    values = api.config({"operation": "get", "keys": keys}).get("values") or []
    raw = [v.get("value") for v in values] + [None] * (len(keys) - len(values))
    system = None
    if raw[0] is not None:
        try:
            system = json.loads(raw[0])
        except ValueError:
            system = raw[0]
    templates: list[tuple[str, Any]] = []
    for tid, value in zip(index, raw[1:], strict=True):
        if value is None:
            templates.append((tid, None))
            continue
        try:
            templates.append((tid, json.loads(value)))
        except ValueError:
            templates.append((tid, value))
    return system, templates


def _block(text: str, indent: str = "    ") -> str:
    return textwrap.indent(text, indent, lambda _line: True)


def show_text(system: Any, templates: list[tuple[str, Any]]) -> None:
    print("System prompt:")
    print(_block(str(system)) if system is not None else "    (not set; prompt-template uses \"Be helpful.\")")
    if not templates:
        print("\nNo prompt templates.")
    for tid, t in templates:
        print(f"\n{tid}:")
        if not isinstance(t, dict):
            print("    (missing)" if t is None else "    (not JSON) " + str(t))
            continue
        print(f"    response-type: {t.get('response-type', 'text')}")
        for field in ("schema", "stop"):
            if field in t:
                print(f"    {field}: {json.dumps(t[field])}")
        if t.get("prefix"):
            print(f"    prefix: {json.dumps(t['prefix'])}")
        print("    prompt:")
        print(_block(str(t.get("prompt", "")), "        "))


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, __doc__)
    parser.add_argument("--format", choices=["text", "json"], default="text",
                        help="text for reading, json for scripts (default: text)")
    args = parser.parse_args(argv)
    system, templates = load(api_from_args(args))
    if args.format == "json":
        print(json.dumps({"system": system, "templates": dict(templates)}, indent=4))
    else:
        show_text(system, templates)


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
