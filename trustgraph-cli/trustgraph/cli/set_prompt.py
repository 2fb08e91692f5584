"""Sets a prompt template, or the system prompt.

    tg-set-prompt --system "You are a helpful assistant."
    tg-set-prompt --id question --prompt "{{question}}"
    tg-set-prompt --id extract --prompt-file extract.txt --response json --schema "$(cat schema.json)"
    tg-set-prompt --id agent-react --prompt-file agent.txt --stop $'\\nObservation' --prefix Thought:

Writes config type ``prompt`` as prompt-template (ours and upstream 2.1.4's) reads it:
``template.<id>`` and the id added to ``template-index``, or ``system``; the
service reloads on its own.  ``--stop`` and ``--prefix`` are this fork's
extensions: stop strings for the LLM, and text that starts the LLM's answer.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from trustgraph.base.command_line import CliError, GatewayClient, api_from_args, main_wrapper, make_parser

PROG = "tg-set-prompt"
CONFIG_TYPE = "prompt"
RESPONSE_TYPES = ("text", "json", "jsonl")


def build_parser() -> argparse.ArgumentParser:
    parser = make_parser(PROG, None)
    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--system", help="set the system prompt (alone, without the other options)")
    parser.add_argument("--id", help="template id")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--prompt", help="the template text (Jinja2: {{variable}}, {%% for %%}...)")
    source.add_argument("--prompt-file", metavar="PATH", help="read the template text from a file")
    parser.add_argument("--response", choices=RESPONSE_TYPES, default="text",
                        help="what the LLM answers: text, json or jsonl (default: text)")
    parser.add_argument("--schema", help="JSON Schema the json/jsonl answer must match")
    parser.add_argument("--stop", action="append", default=[], metavar="TEXT",
                        help="stop generating at TEXT (repeatable)")
    parser.add_argument("--prefix", help="text that starts the LLM's answer, e.g. Thought:")
    return parser


def template_from_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, Any]:
    """The ``template.<id>`` object, after checking the options fit together."""
    if not args.id:
        parser.error("--id is required (or --system to set the system prompt)")
    if args.prompt_file is not None:
        try:
            with open(args.prompt_file, encoding="utf-8") as f:
                prompt = f.read()
        except OSError as e:
            raise CliError(f"cannot read {args.prompt_file}: {e.strerror or e}") from None
    elif args.prompt is not None:
        prompt = args.prompt
    else:
        parser.error("--prompt or --prompt-file is required")
    template: dict[str, Any] = {"id": args.id, "prompt": prompt, "response-type": args.response}
    if args.schema is not None:
        if args.response == "text":
            parser.error("--schema applies to --response json or jsonl")
        try:
            template["schema"] = json.loads(args.schema)
        except ValueError as e:
            raise CliError(f"--schema is not valid JSON: {e}") from None
    if args.stop:
        template["stop"] = args.stop
    if args.prefix:
        template["prefix"] = args.prefix
    return template


def read_index(api: GatewayClient) -> list[str]:
    reply = api.config({"operation": "get", "keys": [{"type": CONFIG_TYPE, "key": "template-index"}]})
    values = reply.get("values") or []
    raw = values[0].get("value") if values else None
    if raw is None:
        return []
    try:
        index = json.loads(raw)
    except ValueError:
        index = None
    if not isinstance(index, list):
        raise CliError("config prompt/template-index is not a JSON list; fix it with tg-put-config-item")
    return index


def run(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    api = api_from_args(args)
    if args.system is not None:
        if args.id or args.prompt is not None or args.prompt_file or args.schema or args.stop or args.prefix:
            parser.error("--system cannot be combined with the template options")
        api.config({"operation": "put", "values": [
            {"type": CONFIG_TYPE, "key": "system", "value": json.dumps(args.system)}]})
        print("System prompt set.")
        return
    template = template_from_args(parser, args)
    index = read_index(api)
    values = [{"type": CONFIG_TYPE, "key": f"template.{args.id}", "value": json.dumps(template)}]
    if args.id not in index:
        values.append({"type": CONFIG_TYPE, "key": "template-index", "value": json.dumps([*index, args.id])})
    api.config({"operation": "put", "values": values})
    print("Prompt set.")


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
