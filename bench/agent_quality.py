"""Agent-quality table: how well the agent uses its tools, and how honestly its dialogs end.

What it runs is the stack a user runs (``bench/quality_stack.py``): the real
``tg-launch`` with the repo's bootstrap (its ``joke-service``: ``tell-joke``
and ``tell-dad-joke``), the tool services of ``bench/agent/quality_services.py``
started beside it as a user starts the weather example of docs/tool-services.md, and the
questions asked through the gateway's websocket as ``tg-invoke-agent`` asks.

Three question sets (``bench/quality_sets.py``), one stack each LLM:

1. the embedded model (or, with ``model=PATH``, a user's own GGUF, passed as
   ``tg-launch --model PATH``): set 1 (30 questions, five tools: the
   services of ``weather``, ``count-words`` and ``convert-currency`` are
   started, nothing else) in structured mode (the bootstrap ``agent-react``
   template: decisions constrained by the tools' schemas) and then text mode
   (``config-examples/prompt-agent-react-text.json`` put as ``agent-react``:
   ReAct text); then the services of ``define-word``, ``local-time`` and
   ``convert-units`` start, and set 2 (paraphrased questions over the eight
   tools, some fitting no tool) is asked the same way (the bootstrap template
   put back first); then the five services of set 3 start (sixteen tools of
   twelve services, many easy to confuse) and set 3 (paraphrased, some
   fitting no tool) is asked in structured mode only.  Each mode starts with
   an unrecorded warm-up dialog that also proves the mode is in effect;
2. the scripted stand-in (``tg-launch --llm scripted --llm-script FILE``) with
   a script that gives every question its right decision: every set in
   structured mode, the same way.  Those rows show what the framework loses
   when the model is never wrong.

``only_sets=("set 3",)`` (``--set 3``) asks only some of the sets; a set's
services are started with the earlier sets' (its tools are theirs and its own).

Each dialog is scored (``bench/quality_scoring.py``) and the rows summed; the
table, the targets under it and every dialog (with its raw responses, so a
run can be scored again: :func:`rescore`) are written out.  Runner hook:
``run_quality_table(workdir)``; standalone: ``.venv/bin/python
bench/agent_quality.py`` prints the table, ``--rescore DIR`` prints it again
from a run's ``dialogs.json``, ``--model PATH`` uses that model, ``--set N``
(repeatable) asks only those sets, ``--scripted-only`` only the scripted rows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from quality_scoring import Dialog, Score, score, summarise  # noqa: E402
from quality_sets import (  # noqa: E402
    SETS,
    QuestionSet,
    check_paraphrased,
    load_set,
    scripted_llm,
    services_for,
    tool_descriptors,
)
from quality_stack import (  # noqa: E402
    DIALOG_TIMEOUT,
    EMBEDDED,
    SCRIPTED,
    STRUCTURED_TEMPLATE,
    TEXT_TEMPLATE,
    QualityBenchError,
    Stack,
    ask,
    put_template,
    wait_tools,
    warm_up,
)
from quality_table import markdown  # noqa: E402

WORK = BENCH / ".work" / "quality"   # the run's data dirs, logs and dialogs.json; fresh each run
WARMUP = {"question": "Tell me a joke about warming up", "tool": "tell-joke", "topic": "warming"}
#: What the scripted stack needs at the end of the budget: start (no model to load), its services and
#: 110 quick dialogs.
SCRIPTED_RESERVE = 240.0

__all__ = ["QualityBenchError", "rescore", "run_quality_table"]


@dataclass
class Row:
    """One row of the table: a question set asked of one LLM in one mode."""

    set: str
    llm: str
    mode: str
    scores: list[Score] = field(default_factory=list)
    asked_of: int = 0          # questions in the set (fewer scored: the time budget ran out)
    warmups: int = 0

    @property
    def complete(self) -> bool:
        return len(self.scores) == self.asked_of

    @property
    def summary(self) -> dict[str, Any]:
        qset = next(s for s in SETS if s.label == self.set)
        return summarise(self.scores, qset.tools)


async def _ask_set(session: aiohttp.ClientSession, stack: Stack, qset: QuestionSet,
                   questions: list[dict[str, Any]], schemas: dict[str, Any], llm: str, mode: str,
                   deadline: float, rec: Recorder) -> None:
    """Ask one row's questions (or take the row from the run being resumed) and record it."""
    done = rec.done.get((qset.label, llm, mode))
    if done is not None:
        print(f"  {llm}, {qset.label}, {mode}: {len(done.scores)} dialogs kept from the run resumed", flush=True)
        rec.add(done)
        return
    row = Row(qset.label, llm, mode, asked_of=len(questions))
    try:
        await _ask_row(session, stack, questions, schemas, row, deadline)
    finally:
        rec.add(row)   # also a row cut short: what it asked is kept, and a resumed run asks it again


async def _ask_row(session: aiohttp.ClientSession, stack: Stack, questions: list[dict[str, Any]],
                   schemas: dict[str, Any], row: Row, deadline: float) -> None:
    llm, mode, label = row.llm, row.mode, row.set
    if deadline - time.monotonic() < 30.0:
        return   # no time left for a warm-up and a question: the row says none was asked
    row.warmups = await warm_up(session, stack.gateway, mode, WARMUP["question"],
                                timeout=min(120.0, deadline - time.monotonic()))
    for n, q in enumerate(questions, 1):
        left = deadline - time.monotonic()
        if left < 10.0:
            break
        stack.check_alive()
        d = await ask(session, stack.gateway, q["question"], timeout=min(DIALOG_TIMEOUT, left))
        stack.check_alive()   # a dialog cut short by the stack's end is not the agent's doing: not kept
        s = score(q, d, schemas)
        row.scores.append(s)
        first = d.calls[0].raw if d.calls else "no tool call"
        verdict = "ok" if not s.failed else ("ERROR " + (d.error or "") if s.error else "FAIL")
        print(f"  {llm}, {label}, {mode} {n}/{len(questions)} {d.secs:5.1f} s  {q['question']!r} -> "
              f"{first}{' [' + d.outcome + ']' if d.outcome else ''}  [{verdict}]", flush=True)


async def _tools_for(session: aiohttp.ClientSession, stack: Stack, qset: QuestionSet,
                     questions: list[dict[str, Any]], seen: dict[str, Any]) -> dict[str, Any]:
    """Wait for the set's tools (and only them); the paraphrase rule is checked again against what
    the catalog shows the model. Returns each tool's input schema (also kept in ``seen``)."""
    others = {t for s in SETS for t in s.tools} - set(qset.tools)
    entries = await wait_tools(session, stack, qset.tools, unwanted=others)
    if qset.paraphrased:
        try:
            check_paraphrased(questions, entries, f"{qset.path} (against the running catalog)")
        except ValueError as e:
            raise QualityBenchError(str(e)) from None
    schemas = {name: entry["input-schema"] for name, entry in entries.items()}
    seen.update(schemas)
    return schemas


async def _rows(stack: Stack, sets: dict[str, list[dict[str, Any]]], llm: str, deadline: float,
                rec: Recorder, structured_only: bool = False) -> None:
    """The rows of one LLM: each set of ``sets`` in order, its services started first (with the
    earlier sets', which stay up), then its modes (the scripted stand-in: structured only).
    Structured (the default) before text in each set, so a run short of time loses text rows first."""
    seen = rec.result["schemas"]
    started: set[str] = set()
    text_on = False
    async with aiohttp.ClientSession() as session:
        for qset in (s for s in SETS if s.label in sets):
            if text_on:
                await put_template(stack, STRUCTURED_TEMPLATE)
                text_on = False
            new = [name for name in services_for(qset) if name not in started]
            await asyncio.to_thread(stack.start_services, new)
            started.update(new)
            questions = sets[qset.label]
            schemas = await _tools_for(session, stack, qset, questions, seen)
            for mode in (("structured",) if llm == SCRIPTED or structured_only else qset.modes):
                if mode == "text" and not text_on:
                    await put_template(stack, TEXT_TEMPLATE)
                    text_on = True
                await _ask_set(session, stack, qset, questions, schemas, llm, mode, deadline, rec)


def run_quality_table(workdir: Path, *, budget: float = 2400.0, model: str | None = None,
                      scripted_only: bool = False, resume: bool = False,
                      command: str = ".venv/bin/python bench/run.py --only quality",
                      only_sets: tuple[str, ...] | None = None, structured_only: bool = False,
                      extra_models: tuple[str, ...] = ()) -> dict[str, Any]:
    """The whole table: every set of the model, then every set of the scripted stand-in; every process
    stopped.

    ``budget`` bounds the whole run (seconds); if it runs out the questions not
    asked are left out and the table says so.  ``model``: a GGUF file for
    ``tg-launch --model`` instead of the embedded model; the rows carry its
    file name.  ``scripted_only``: only the scripted rows (a quick check of
    the framework, no model loaded).  ``resume``: keep the complete rows of
    the last run in ``workdir`` (same LLM, same question sets) and ask only the
    others, for a run that was cut off.  ``only_sets``: the labels of the sets to ask (``("set 3",)``),
    default all.  ``structured_only``: the model's rows in structured mode only (the default
    template; text mode is the slower half of a run).  ``extra_models``: more GGUF files, each asked
    every set after the model, in structured mode only (a bigger model beside the default, rows
    named by the file).  Returns ``{"markdown", "rows", "secs", ...}``; raises
    :class:`QualityBenchError` when the stack or a service does not come up
    (tg-launch refusing ``--model`` included) or a question set breaks its rules.
    """
    t0 = time.monotonic()
    workdir = Path(workdir)
    descriptors = tool_descriptors()
    chosen = [qset for qset in SETS if only_sets is None or qset.label in only_sets]
    unknown = set(only_sets or ()) - {qset.label for qset in SETS}
    if unknown or not chosen:
        raise QualityBenchError(f"no question set {sorted(unknown)}: the sets are "
                                f"{', '.join(qset.label for qset in SETS)}")
    try:
        sets = {qset.label: load_set(qset, descriptors) for qset in chosen}
    except ValueError as e:
        raise QualityBenchError(str(e)) from None
    kept: list[Row] = []
    previous = workdir / "dialogs.json"
    if resume and previous.exists():
        data = json.loads(previous.read_text())
        if data.get("sets") == sets:   # rows of other questions are not this run's
            kept = _rows_of(data)
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    script = workdir / "scripted-llm.json"
    script.write_text(json.dumps(scripted_llm(list(sets.values()), descriptors, extra=[WARMUP]), indent=1,
                                 ensure_ascii=False))
    llm = Path(model).name if model else EMBEDDED
    deadline = t0 + budget
    result = {"rows": [], "sets": sets, "commands": {}, "command": command, "llm": llm, "schemas": {},
              "started": t0, "kept": [f"{r.llm}, {r.set}, {r.mode}" for r in kept if r.complete]}
    rec = Recorder(workdir / "dialogs.json", result, kept)

    def rows_of(where: str, llm_args: list[str], name: str, until: float, structured: bool) -> None:
        """One LLM's rows: its stack started, every set asked, the stack stopped."""
        stack = Stack(workdir / where, llm_args)
        result["commands"][name] = stack.command
        try:
            stack.start()
            asyncio.run(_rows(stack, sets, name, until, rec, structured))
        finally:
            stack.stop()

    try:
        if not scripted_only:
            rows_of("model", ["--model", str(model)] if model else [], llm, deadline - SCRIPTED_RESERVE,
                    structured_only)
            for n, extra in enumerate(extra_models, 1):
                rows_of(f"model-{n}", ["--model", str(extra)], Path(extra).name, deadline - SCRIPTED_RESERVE, True)
        rows_of("scripted", ["--llm", "scripted", "--llm-script", str(script)], SCRIPTED, deadline, True)
    finally:
        rec.write()
    result["markdown"] = markdown(result)
    return result


class Recorder:
    """The run's rows as they are made; ``dialogs.json`` is written again after each, so a run that
    breaks off, or is killed, keeps what it asked."""

    def __init__(self, path: Path, result: dict[str, Any], done: list[Row] = ()) -> None:
        self.path = path
        self.result = result
        #: Complete rows of the run being resumed, by (set, LLM, mode): taken as they are.
        self.done = {(r.set, r.llm, r.mode): r for r in done if r.complete}

    def add(self, row: Row) -> None:
        self.result["rows"].append(row)
        self.write()

    def write(self) -> None:
        self.result["secs"] = time.monotonic() - self.result["started"]
        self.path.write_text(json.dumps(dialogs_json(self.result), indent=1, ensure_ascii=False))


def dialogs_json(result: dict[str, Any]) -> dict[str, Any]:
    """Every dialog with its raw responses and scores, kept beside the logs (``dialogs.json``);
    :func:`rescore` reads it back."""
    rows = []
    for row in result["rows"]:
        dialogs = []
        for s in row.scores:
            d = s.dialog
            q = next(q for q in result["sets"][row.set] if q["question"] == s.question)
            dialogs.append({
                "q": q, **d.record(),
                "messages": [{"type": k, "text": t} for k, t in d.messages],
                "answer": d.answer, "error": d.error, "outcome": d.outcome, "candidates": d.candidates,
                "score": {k: getattr(s, k) for k in (
                    "right_first", "right_offered_first", "calls", "valid_calls", "right_args",
                    "answered_from_result", "successful_right", "abstained", "wrongly_successful",
                    "error", "timed_out", "key_only", "right_ending")},
            })
        rows.append({"set": row.set, "llm": row.llm, "mode": row.mode, "asked_of": row.asked_of,
                     "warmups": row.warmups, "dialogs": dialogs})
    return {"rows": rows, "sets": result["sets"], "commands": result["commands"], "command": result["command"],
            "llm": result["llm"], "secs": round(result["secs"], 1), "schemas": result["schemas"],
            "kept": result.get("kept", [])}


def _rows_of(data: dict[str, Any]) -> list[Row]:
    """The rows of a ``dialogs.json``, every dialog replayed and scored by today's rules."""
    rows = []
    for r in data["rows"]:
        row = Row(r["set"], r["llm"], r["mode"], asked_of=r["asked_of"], warmups=r["warmups"])
        for rec in r["dialogs"]:
            row.scores.append(score(rec["q"], Dialog.replay(rec), data.get("schemas") or {}))
        rows.append(row)
    return rows


def rescore(path: Path) -> dict[str, Any]:
    """The table again from a run's ``dialogs.json``: every dialog replayed from its recorded
    responses and scored by today's rules (``schemas``: the tools' input schemas of that run)."""
    data = json.loads(Path(path).read_text())
    result = {**data, "rows": _rows_of(data)}
    result["markdown"] = markdown(result)
    return result


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main() -> int:
    # A SIGTERM runs the same finally blocks as Ctrl-C: every process stopped, dialogs.json written.
    signal.signal(signal.SIGTERM, _interrupt)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", metavar="PATH", help="a GGUF model for tg-launch --model (default: the embedded one)")
    ap.add_argument("--rescore", metavar="DIR", help="score a recorded run again (its dialogs.json) and print it")
    ap.add_argument("--budget", type=float, default=2400.0, metavar="SECONDS",
                    help="bound on the whole run (default %(default)g s); questions not asked by then are "
                         "left out and the table says so")
    ap.add_argument("--resume", action="store_true",
                    help="keep the complete rows of the last run (bench/.work/quality) and ask only the others")
    ap.add_argument("--set", type=int, choices=range(1, len(SETS) + 1), action="append", metavar="N",
                    dest="sets", help="ask only question set N (repeatable; default: every set); a set's "
                                      "services start with the earlier sets' (its tools include theirs)")
    ap.add_argument("--scripted-only", action="store_true",
                    help="only the scripted stand-in's rows: what the framework does with a model that is "
                         "always right (a minute or two; no model loaded)")
    ap.add_argument("--also", metavar="PATH", action="append", default=[],
                    help="another GGUF model asked every set too, structured mode only (repeatable), e.g. the "
                         "file tg-fetch-model fetched")
    ap.add_argument("--structured-only", action="store_true",
                    help="the model's rows in structured mode only (the default template), no text-mode rows")
    args = ap.parse_args()
    if args.rescore:
        print(rescore(Path(args.rescore) / "dialogs.json")["markdown"])
        return 0
    try:
        command = " ".join([".venv/bin/python bench/agent_quality.py", *sys.argv[1:]])
        labels = tuple(f"set {n}" for n in args.sets) if args.sets else None
        result = run_quality_table(WORK, budget=args.budget, model=args.model, scripted_only=args.scripted_only,
                                   resume=args.resume, command=command, only_sets=labels,
                                   structured_only=args.structured_only, extra_models=tuple(args.also))
    except QualityBenchError as e:
        print(f"agent-quality bench failed: {e}", file=sys.stderr)
        print(f"logs kept in {WORK}", file=sys.stderr)
        return 1
    print(result["markdown"])
    print(f"\n(agent-quality table took {result['secs']:.0f} s; dialogs and logs in {WORK})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
