"""The tool ranker alone (``trustgraph.catalog.ranking``): how often it puts the right tool first,
what one ranking costs at 10, 100 and 1,000 tools, and the memory its model adds to a process.

No stack and no LLM: the question sets of the agent-quality table (``quality_sets.py``), and the
ranker's development set (``agent/ranker_dev_questions.json``: set 3's tools, questions written
to choose between models), are ranked against their tools' descriptors as the services declare
them, once per way of ranking (shared words; each embedding model, the sentence encoder and the
static model, plus shared words at several weights).  Cost and memory are measured for each
model.  ``make bench`` writes the table (``bench/run.py --only ranker`` prints it alone)::

    .venv/bin/python bench/ranker_bench.py [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import quality_sets  # noqa: E402
from trustgraph.catalog import embedding, ranking  # noqa: E402

WEIGHTS = (0.0, 0.15, 0.5)
MODELS = (embedding.MINILM, embedding.WORDLLAMA)
DEV_SET = BENCH / "agent" / "ranker_dev_questions.json"


def _use(model: str | None) -> None:
    """Rank with ``model`` (``embedding.MINILM`` or ``WORDLLAMA``), or shared words alone (None)."""
    os.environ[embedding.RANKER_ENV] = model or embedding.WORDS
    embedding.reset()
    ranking._vectors = ranking._Vectors()
    ranking._indexes.clear()


def _rank_with(question: str, tools: list[dict[str, Any]], weight: float) -> list[ranking.Ranked]:
    saved = ranking.WORDS_WEIGHT
    try:
        ranking.WORDS_WEIGHT = weight
        return ranking.rank(question, tools)
    finally:
        ranking.WORDS_WEIGHT = saved


def _question_sets() -> list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]]:
    descriptors = quality_sets.tool_descriptors()
    sets = [(qset.label, quality_sets.load_set(qset, descriptors), [descriptors[name] for name in qset.tools])
            for qset in quality_sets.SETS]
    dev = json.loads(DEV_SET.read_text())["questions"]
    sets.append(("dev", dev, [descriptors[name] for name in quality_sets.SETS[-1].tools]))
    return sets


def right_first() -> list[dict[str, Any]]:
    """Per set and way of ranking: right tool first, and the best similarity of the questions a
    tool fits (median) and of those no tool fits (max)."""
    ways = [("shared words", None, 0.0)] + [(f"{model} + {w:g} x words", model, w)
                                           for model in MODELS for w in WEIGHTS]
    rows = []
    sets = _question_sets()
    for label, model, weight in ways:
        _use(model)
        for set_label, questions, tools in sets:
            right = fits = 0
            fitting_best, none_best = [], []
            for q in questions:
                ranked = _rank_with(q["question"], tools, weight)
                best = ranked[0]
                if q.get("tool") is None:
                    if best.meaning is not None:
                        none_best.append(best.meaning)
                    continue
                fits += 1
                right += best.tool["name"] == q["tool"]
                if best.meaning is not None:
                    fitting_best.append(best.meaning)
            rows.append({"set": set_label, "ranking": label, "right first": right, "questions": fits,
                         "best meaning, tool fits (median)": _median(fitting_best),
                         "best meaning, no tool fits (max)": max(none_best) if none_best else None})
    _use(None)
    os.environ.pop(embedding.RANKER_ENV, None)
    rows.sort(key=lambda row: row["set"] == "dev")   # stable: the sets in order, the dev set last
    return rows


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _generated(n: int) -> list[dict[str, Any]]:
    base = list(quality_sets.tool_descriptors().values())
    out = list(base)
    for i in range(n - len(base)):
        out.append({"name": f"tool-{i}", "description": f"Look up record {i} of the inventory of shop {i % 97}: "
                    "its stock, price, supplier and the date it was last counted",
                    "arguments": [{"name": "record", "type": "string", "description": f"The id of record {i}"}]})
    return out[:n]


def cost() -> list[dict[str, Any]]:
    """Per model, milliseconds per ranking of one question (tool vectors already computed, as at
    every step after a catalog's first), and the first ranking after a new catalog (what it reads
    of the tools embedded: all of them, or the sentence encoder's shortlist of 48)."""
    rows = []
    for model in MODELS:
        for n in (10, 100, 1000):
            tools = _generated(n)
            _use(model)
            t0 = time.perf_counter()
            ranking.rank("How much is 50 dollars in yen?", tools)
            first = (time.perf_counter() - t0) * 1000
            times, new = [], []
            for i in range(30):
                t0 = time.perf_counter()
                ranking.rank("How much is 50 dollars in yen?", tools)
                times.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                ranking.rank(f"What is the weather like in city number {i}?", tools)
                new.append((time.perf_counter() - t0) * 1000)
            rows.append({"model": model, "tools": n, "ms per ranking (median)": statistics.median(times),
                         "ms per ranking (max)": max(times), "ms for a new question (median)": statistics.median(new),
                         "first ranking of a new catalog ms": first})
    os.environ.pop(embedding.RANKER_ENV, None)
    return rows


_RSS = """
import os, sys
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024
from trustgraph.catalog import ranking, embedding
before = rss()
assert embedding.embedder() is not None, 'the model did not load'
ranking.rank('warm up', [{'name': 'a', 'description': 'b'}])
print(rss() - before)
"""


def memory() -> dict[str, float]:
    """Per model, MiB of RSS that loading it and ranking once add to a process (numpy included)."""
    out = {}
    for model in MODELS:
        done = subprocess.run([sys.executable, "-c", _RSS], capture_output=True, text=True, check=True,
                              env={**os.environ, embedding.RANKER_ENV: model})
        out[model] = float(done.stdout.strip())
    return out


def ranker_table() -> dict[str, Any]:
    """The three figures as ``make bench``'s tables (markdown), and the figures themselves."""
    figures = {"right first": right_first(), "cost": cost(), "rss MiB": memory()}
    lines = ["| set | ranking | right tool first | nearest tool's similarity, questions a tool fits (median) "
             "| nearest tool's similarity, questions no tool fits (max) |", "|---|---|---|---|---|"]
    for row in figures["right first"]:
        fits, none = row["best meaning, tool fits (median)"], row["best meaning, no tool fits (max)"]
        lines.append(f"| {row['set']} | {row['ranking']} | {row['right first']}/{row['questions']} "
                     f"({row['right first'] / row['questions']:.0%}) | {'-' if fits is None else f'{fits:.2f}'} "
                     f"| {'-' if none is None else f'{none:.2f}'} |")
    cost_lines = ["| model | tools | ms per step (the dialog's question; median of 30) | ms per step (max) "
                  "| ms for a new question (median of 30) | first ranking of a new catalog, ms |",
                  "|---|---|---|---|---|---|"]
    for row in figures["cost"]:
        cost_lines.append(f"| {row['model']} | {row['tools']:,} | {row['ms per ranking (median)']:.2f} | "
                          f"{row['ms per ranking (max)']:.2f} | {row['ms for a new question (median)']:.1f} | "
                          f"{row['first ranking of a new catalog ms']:.0f} |")
    rss = "; ".join(f"{model} {mib:.1f} MiB" for model, mib in figures["rss MiB"].items())
    figures["markdown"] = "\n".join(lines) + "\n\n" + "\n".join(cost_lines) + (
        f"\n\nRSS the embedding model adds to a process that ranks (numpy, tokenizer and weights): {rss}.")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = ranker_table()
    if args.json:
        print(json.dumps({k: v for k, v in figures.items() if k != "markdown"}, indent=1))
        return
    print(figures["markdown"])


if __name__ == "__main__":
    main()
