"""The agent-quality questions again, with many tools configured: 10, 100 and 1,000.

A catalog of thousands of tools must not fail a dialog: each step shows the
model the tools most relevant to the question that fit its budget
(``trustgraph.catalog.relevance.for_prompt``).  This table shows what that
costs and what it keeps: the embedded model, the bootstrap (structured)
template, set 1's five tools plus generated tools of other domains (each with a
description of about 1,200 characters, all calling the joke service), and a
sample of set 1's questions asked at each catalog size.  Runner hook:
``run_many_tools_table(workdir)``; standalone: ``.venv/bin/python
bench/many_tools.py``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from quality_scoring import score, summarise  # noqa: E402
from quality_sets import SET1, load_set, tool_descriptors  # noqa: E402
from quality_stack import QualityBenchError, Stack, ask, wait_tools, warm_up  # noqa: E402

SIZES = (10, 100, 1000)
#: Set 1's questions asked at each size: every fifth (six questions, each of its five tools asked).
SAMPLE_STEP = 5
WARMUP = "What is the weather in Rome?"
WORK = BENCH / ".work" / "many-tools"

_VERBS = ("find", "list", "check", "book", "cancel", "track", "estimate", "summarise", "renew", "schedule")
_THINGS = ("flight", "invoice", "parcel", "meeting-room", "recipe", "train-ticket", "hotel-room", "library-book",
           "car-rental", "gym-class", "prescription", "tax-return", "insurance-claim", "support-ticket",
           "playlist", "podcast", "stock-quote", "bus-route", "parking-space", "restaurant-table")
_DETAIL = ("It reads the records of the {where} system and answers with what it finds, newest first. "
           "Give it the reference, the name or the date the user mentions; it does not guess missing "
           "details and says so when a record is not there. Results are limited to the user's own "
           "records and to the last twelve months. ")
_WHERE = ("north-region", "south-region", "head-office", "partner", "archive", "mobile", "legacy", "regional")


def filler_tools(count: int) -> dict[str, dict[str, Any]]:
    """``count`` generated tool descriptors of other domains (names and descriptions distinct)."""
    out: dict[str, dict[str, Any]] = {}
    for i in range(count):
        verb, thing = _VERBS[i % len(_VERBS)], _THINGS[(i // len(_VERBS)) % len(_THINGS)]
        where = _WHERE[(i // (len(_VERBS) * len(_THINGS))) % len(_WHERE)]
        name = f"{verb}-{thing}-{i}"
        first = f"{verb.capitalize()} a {thing.replace('-', ' ')} in the {where} system (desk {i})."
        out[name] = {"type": "tool-service", "name": name, "service": "joke-service",
                     "description": first + " " + (_DETAIL.format(where=where) * 4).strip(),
                     "arguments": [{"name": "reference", "type": "string",
                                    "description": f"The {thing.replace('-', ' ')}'s reference or name"}]}
    return out


async def put_tools(session: aiohttp.ClientSession, gateway: str, tools: dict[str, dict[str, Any]],
                    remove: list[str]) -> None:
    """``tools`` put and ``remove`` deleted through the gateway's config service, 100 a request."""
    for i in range(0, len(remove), 100):
        body = {"operation": "delete", "keys": [{"type": "tool", "key": k} for k in remove[i:i + 100]]}
        await _config(session, gateway, body)
    items = list(tools.items())
    for i in range(0, len(items), 100):
        body = {"operation": "put", "values": [{"type": "tool", "key": k, "value": json.dumps(v)}
                                               for k, v in items[i:i + 100]]}
        await _config(session, gateway, body)


async def _config(session: aiohttp.ClientSession, gateway: str, body: dict[str, Any]) -> None:
    async with session.post(gateway + "api/v1/config", json=body,
                            timeout=aiohttp.ClientTimeout(total=60)) as r:
        reply = await r.json(content_type=None)
    if r.status != 200 or (isinstance(reply, dict) and reply.get("error")):
        raise QualityBenchError(f"config {body['operation']} failed ({r.status}): {str(reply)[:300]}")


async def _rows(stack: Stack, questions: list[dict[str, Any]], deadline: float) -> list[dict[str, Any]]:
    rows = []
    async with aiohttp.ClientSession() as session:
        entries = await wait_tools(session, stack, SET1.tools)
        schemas = {n: e["input-schema"] for n, e in entries.items()}
        present: list[str] = []
        for size in sorted(SIZES, reverse=True):   # the largest first: it must not fail
            if deadline - time.monotonic() < 60:
                break
            fillers = filler_tools(max(0, size - len(SET1.tools)))
            await put_tools(session, stack.gateway, fillers, [k for k in present if k not in fillers])
            present = list(fillers)
            t0 = time.monotonic()
            while stack.agent_tool_count() != size:   # the agent has rebuilt its catalog
                if time.monotonic() - t0 > 120:
                    raise QualityBenchError(f"the agent did not have {size} tools within 120 s "
                                            f"(it has {stack.agent_tool_count()})")
                await asyncio.sleep(0.2)
            applied = time.monotonic() - t0
            await warm_up(session, stack.gateway, "structured", WARMUP)
            scores = []
            for q in questions:
                d = await ask(session, stack.gateway, q["question"])
                scores.append(score(q, d, schemas))
                print(f"  {size} tools: {d.secs:5.1f} s  {q['question']!r} -> "
                      f"{d.calls[0].raw if d.calls else 'no tool call'} [{d.outcome}]", flush=True)
            rows.append({"size": size, "applied": applied, "summary": summarise(scores, SET1.tools)})
    return rows


def _pct(n: int, of: int) -> str:
    return f"{n}/{of} ({100 * n / of:.0f}%)" if of else "0/0"


def markdown(rows: list[dict[str, Any]], command: str) -> str:
    lines = ["| tools configured | questions | right tool called first | right tool first (called or offered) | "
             "wrongly successful | asked back | error endings | transport timeouts | median s/dialog | "
             "p90 s/dialog | agent had them after |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: r["size"]):
        s = r["summary"]
        n, p50, p90 = s["questions"], s["median_s"], s["p90_s"]
        lines.append(f"| {r['size']:,} | {n} | {_pct(s['right_first'], n)} | {_pct(s['right_offered_first'], n)} | "
                     f"{_pct(s['wrongly'], n)} | {_pct(s['abstained'], n)} | {_pct(s['errors'], n)} | "
                     f"{s['timeouts']} | {p50:.1f} | {p90:.1f} | {r['applied']:.1f} s |")
    return "\n".join(lines) + f"\n\nCommand: `{command}`."


def run_many_tools_table(workdir: Path, budget: float = 900.0,
                         command: str = ".venv/bin/python bench/run.py --only many-tools") -> dict[str, Any]:
    """The table (markdown and rows); every process stopped at the end."""
    t0 = time.monotonic()
    workdir = Path(workdir)
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    questions = load_set(SET1, tool_descriptors())[::SAMPLE_STEP]
    stack = Stack(workdir / "model")
    try:
        stack.start()
        stack.start_services(SET1.services)
        rows = asyncio.run(_rows(stack, questions, t0 + budget))
    finally:
        stack.stop()
    return {"rows": rows, "markdown": markdown(rows, command), "secs": time.monotonic() - t0}


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main() -> int:
    # A SIGTERM runs the same finally blocks as Ctrl-C: every process stopped.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        result = run_many_tools_table(WORK, command=".venv/bin/python bench/many_tools.py")
    except QualityBenchError as e:
        print(f"many-tools bench failed: {e}", file=sys.stderr)
        return 1
    print(result["markdown"])
    print(f"\n(many-tools table took {result['secs']:.0f} s; logs in {WORK})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
