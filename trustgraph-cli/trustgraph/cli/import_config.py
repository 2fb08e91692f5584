"""Imports a whole configuration, e.g. one dumped from another deployment.

Moving a deployment to this config service (which keeps its config in SQLite)
from upstream's (Cassandra): dump the old one, then import the dump here:

    tg-show-config -u http://old-gateway:8088/ > config.txt     # upstream's or ours
    tg-import-config config.txt --dry-run                       # what would change
    tg-import-config config.txt

FILE is what ``tg-show-config`` prints (a ``Version: N`` line, then the
config as JSON), the gateway's ``config`` reply (``{"version", "config"}``),
or the bare ``{type: {key: value}}`` object; ``-`` reads standard input.
Values may be strings, as the store keeps them, or JSON (written encoded).

Items whose value the store already has are left alone and items the store
has but the file does not are kept, so importing the same file twice changes
nothing the second time.  Everything is checked before anything is written:
a value of a JSON-typed item (tool, prompt, flow-blueprint, ...) that is not
JSON is named, and nothing is imported.  The new and changed items are
written in one ``put``, so the processors get one config version, unless they
would not fit in one broker message (:data:`MAX_MESSAGE_BYTES`): then in as
few puts as fit, each a version of its own, and the summary says how many (an
item too big for any message is named and nothing is imported).  What the
agent's catalog would say about the new and changed tool, tool-service and mcp
descriptors (a tool it would leave out, a key nothing reads) is a warning line
each: the import goes ahead, as a move between deployments must.

A dump is read as every JSON text from outside is (``limits.loads``): nested
deeper than any config is, it is refused in one line, and types and keys are
printed escaped (``logsafe.escape``), so a newline or a direction override in
a key cannot forge or reorder the lines that say what was imported.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from trustgraph.base.command_line import CliError, api_from_args, main_wrapper, make_parser
from trustgraph.base.safety import limits
from trustgraph.base.safety.limits import MAX_MESSAGE_BYTES
from trustgraph.base.safety.logsafe import escape
from trustgraph.cli.put_config_item import JSON_TYPES

PROG = "tg-import-config"

Items = dict[tuple[str, str], str]

#: Room in a put's message for what is not the values (the record's other fields, the envelope).
ENVELOPE = 64 * 1024


def _read(source: str) -> str:
    try:
        raw = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as e:
        raise CliError(f"cannot read {source}: {e.strerror or e}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CliError(f"{source} is not UTF-8 text") from None


def shown(ctype: str, key: str) -> str:
    """An item's ``type/key`` as a line of output names it: escaped, one line in the order written."""
    return f"{escape(ctype)}/{escape(key)}"


def parse_dump(text: str, source: str = "the file") -> Items:
    """``{(type, key): value}`` from a config dump in any of the shapes the module names."""
    body = text.lstrip()
    if body.startswith("Version:"):   # tg-show-config's first line
        body = body.split("\n", 1)[1] if "\n" in body else ""
    try:
        data = limits.loads(body)
    except limits.JsonLimitError as e:
        raise CliError(f"{source} cannot be a config dump: {e} (a config is a few levels deep); "
                       "nothing imported") from None
    except ValueError as e:
        raise CliError(f"{source} is not a config dump (JSON after an optional 'Version: N' line): {e}") from None
    if isinstance(data, dict) and isinstance(data.get("config"), dict) and set(data) <= {"version", "config"}:
        data = data["config"]
    if not isinstance(data, dict):
        raise CliError(f"{source} holds {type(data).__name__}, not a config object ({{type: {{key: value}}}})")
    items: Items = {}
    for ctype, entries in data.items():
        if not isinstance(entries, dict):
            raise CliError(f"{source}: config type {ctype!r} holds {type(entries).__name__}, not {{key: value}}")
        for key, value in entries.items():
            items[(str(ctype), str(key))] = value if isinstance(value, str) else json.dumps(value)
    return items


def problems(items: Items) -> list[str]:
    """The items no service could read: a JSON-typed value that is not JSON."""
    out = []
    for (ctype, key), value in sorted(items.items()):
        if ctype in JSON_TYPES:
            try:
                limits.loads(value)
            except ValueError as e:
                out.append(f"{shown(ctype, key)}: not JSON ({e})")
    return out


def plan(items: Items, stored: dict[str, Any]) -> tuple[list[tuple[str, str]], list[tuple[str, str]], int]:
    """The new items, the changed ones, and how many the store has already."""
    new, changed, same = [], [], 0
    for ctype, key in sorted(items):
        have = (stored.get(ctype) or {}).get(key)
        if have is None:
            new.append((ctype, key))
        elif have != items[(ctype, key)]:
            changed.append((ctype, key))
        else:
            same += 1
    return new, changed, same


def batches(values: list[dict[str, str]], limit: int = MAX_MESSAGE_BYTES - ENVELOPE) -> list[list[dict[str, str]]]:
    """``values`` in order, cut into puts whose JSON fits in ``limit`` bytes each.

    A request travels as one broker message, which cannot exceed about 5 MiB on the request
    topic; a bigger put would be refused (by our producer) or dropped (by upstream's).
    """
    out: list[list[dict[str, str]]] = []
    size = limit
    for value in values:
        cost = len(json.dumps(value).encode()) + 2   # the separator and some slack
        if cost > limit:
            raise CliError(f"{shown(value['type'], value['key'])} is {cost:,} bytes as JSON, more than one "
                           f"config request can carry ({limit:,}): nothing imported; shrink that item")
        if size + cost > limit:
            out.append([])
            size = 0
        out[-1].append(value)
        size += cost
    return out


def descriptor_problems(items: Items, stored: dict[str, Any], written: list[tuple[str, str]]) -> list[str]:
    """What the catalog of the config after the import says about the ``written`` descriptors."""
    # Imported here: pydantic is slow to import, and a dump without descriptors needs none of it.
    from trustgraph.catalog import CATALOG_TYPES, DESCRIPTOR_TYPES, build_catalog

    mine = {(t, k) for t, k in written if t in DESCRIPTOR_TYPES}
    if not mine:
        return []
    after = {t: {**(stored.get(t) or {}), **{k: v for (it, k), v in items.items() if it == t}}
             for t in CATALOG_TYPES}
    catalog = build_catalog(after)
    return [str(e) for e in (*catalog.errors, *catalog.warnings) if (e.kind, e.key) in mine]


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, __doc__)
    parser.add_argument("file", metavar="FILE", help="the config dump ('-': standard input)")
    parser.add_argument("--dry-run", action="store_true", help="say what would be written, write nothing")
    args = parser.parse_args(argv)

    source = "standard input" if args.file == "-" else args.file
    items = parse_dump(_read(args.file), source)
    bad = problems(items)
    if bad:
        raise CliError(f"{len(bad)} item(s) of {source} no service could read, nothing imported: " + "; ".join(bad))
    api = api_from_args(args)
    reply = api.config({"operation": "config"})
    stored = reply.get("config") or {}
    new, changed, same = plan(items, stored)
    puts = batches([{"type": ctype, "key": key, "value": items[(ctype, key)]} for ctype, key in new + changed])
    kept = sum(len(v) for v in stored.values() if isinstance(v, dict)) - same - len(changed)
    for problem in descriptor_problems(items, stored, new + changed):
        print(f"{PROG}: warning: {escape(problem)}", file=sys.stderr, flush=True)
    for what, names in (("new", new), ("changed", changed)):
        for ctype, key in names:
            print(f"{'would set' if args.dry_run else 'set'} {shown(ctype, key)} ({what})")
    summary = (f"{len(new)} new, {len(changed)} changed, {same} unchanged"
               + (f"; {kept} item(s) of the store not in {source} kept" if kept > 0 else "")
               + (f"; in {len(puts)} puts, each a config version, as one would not fit in a broker "
                  "message" if len(puts) > 1 else ""))
    if args.dry_run:
        print(f"Dry run: {summary}; nothing written")
        return
    for values in puts:
        api.config({"operation": "put", "values": values})
    version = written_version(api, new + changed) if puts else reply.get("version", 0)
    print(f"Imported {len(new) + len(changed)} item(s) ({summary}); config version {version}")


def written_version(api: Any, written: list[tuple[str, str]]) -> Any:
    """The store's version after the puts: from a ``list`` of one written type (its keys only),
    not a second read of the whole config; a service whose list reply has no version gets that."""
    version = api.config({"operation": "list", "type": written[0][0]}).get("version")
    return version if version is not None else api.config({"operation": "config"}).get("version", "?")


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
