"""Replay the agent's first decisions of a recorded run under other judge settings, with no model.

The agent logs each decision at DEBUG (``Decision {...}``: the question, the model's choice and
choice scores, the ranker's similarities).  A run of the agent-quality table with the agent at
DEBUG (``TRUSTGRAPH_LOG_LEVEL=DEBUG .venv/bin/python bench/agent_quality.py --structured-only``)
leaves them in ``bench/.work/quality/model/data/logs/agent.log``; this script judges each first
decision again (``decisions.judge``, argument check aside) under each setting given and counts
the calls that would be right, the calls that would be wrong, and the dialogs that would ask
back or say no tool fits, per question set::

    .venv/bin/python bench/replay_decisions.py LOG --set lead=0.05 --set lead=0.1,sure=0.9

The logged similarities are read on the scale of the model ``TRUSTGRAPH_TOOL_RANKER`` loads (the
run's, when it is the same); ``--rerank MODEL`` computes each decision's similarities again with
``minilm`` or ``wordllama`` and judges on that model's scale: how the judge would do on another
ranker, no model run again.

How the defaults of ``Confidence`` were chosen (bench/notes.md); a setting names ``Confidence``'s
fields.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import quality_sets  # noqa: E402
from trustgraph.agent.react.decisions import Confidence, Switch, judge  # noqa: E402

_DECISION = re.compile(r"Decision (\{.*\})$")


def first_decisions(log: Path) -> list[dict[str, Any]]:
    """Each question's first decision in ``log`` (the last one logged for it: warm-ups aside)."""
    seen: dict[str, dict[str, Any]] = {}
    for line in log.read_text(errors="replace").splitlines():
        m = _DECISION.search(line)
        if m:
            record = json.loads(m.group(1))
            if record.get("step") == 1:
                seen[record["question"]] = record
    return list(seen.values())


def reranked(records: list[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    """``records`` with each decision's similarities computed again by ``model`` (its offered tools,
    as the services declare them), the process's ranker set to it."""
    import os

    from trustgraph.catalog import embedding, ranking

    os.environ[embedding.RANKER_ENV] = model
    embedding.reset()
    descriptors = quality_sets.tool_descriptors()
    out = []
    for record in records:
        tools = [descriptors[name] for name in record["meaning"]]
        meaning = {r.tool["name"]: r.meaning for r in ranking.rank(record["question"], tools)}
        out.append({**record, "meaning": meaning})
    return out


def replay(records: list[dict[str, Any]], policy: Confidence) -> dict[str, dict[str, int]]:
    """Per set: right and wrong calls, and dialogs asked back or ended no-tool."""
    descriptors = quality_sets.tool_descriptors()
    expected = {q["question"][:200]: (qset.label, q.get("tool"))
                for qset in quality_sets.SETS for q in quality_sets.load_set(qset, descriptors)}
    out: dict[str, dict[str, int]] = {}
    for record in records:
        if record["question"] not in expected:
            continue
        label, right = expected[record["question"]]
        verdict = judge(record["tool"], record["scores"], list(record["meaning"]), policy, [], record["meaning"])
        called = record["tool"] if verdict is None else verdict.tool if isinstance(verdict, Switch) else None
        kind = "abstained" if called is None else "right" if called == right else "wrong"
        counts = out.setdefault(label, {"right": 0, "wrong": 0, "abstained": 0})
        counts[kind] += 1
    return out


def _policy(text: str) -> Confidence:
    known = {f.name: f.type for f in fields(Confidence)}
    values: dict[str, Any] = {}
    for part in filter(None, text.split(",")):
        name, _, value = part.partition("=")
        if name not in known:
            raise SystemExit(f"replay_decisions: no Confidence field {name!r} (fields: {', '.join(known)})")
        values[name] = value.lower() in ("1", "true", "yes") if known[name] in (bool, "bool") else float(value)
    return Confidence(**values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="an agent log written at DEBUG")
    parser.add_argument("--set", dest="settings", action="append", default=[],
                        help="Confidence fields, e.g. lead=0.1,sure=0.9 (repeatable; the defaults always)")
    parser.add_argument("--rerank", choices=("minilm", "wordllama"),
                        help="compute the similarities again with this model and judge on its scale")
    args = parser.parse_args()
    records = first_decisions(args.log)
    if args.rerank:
        records = reranked(records, args.rerank)
    print(f"{len(records)} first decisions")
    for text in ["", *args.settings]:
        counts = replay(records, _policy(text))
        total = {k: sum(c[k] for c in counts.values()) for k in ("right", "wrong", "abstained")}
        print(f"{text or 'defaults'}: {json.dumps(counts, sort_keys=True)} total {total}")


if __name__ == "__main__":
    main()
