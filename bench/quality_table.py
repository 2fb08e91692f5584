"""The agent-quality table as markdown: the rows, the targets under them, where the model goes wrong,
and how it was measured.

The targets of a model's structured rows (the default mode) are issue 34's: successful and
right for at least 90% of set 1's questions a tool fits and 75% of sets 2 and 3's; at most 5%
of dialogs wrongly successful (an answer a caller takes for a tool's answer that is not one);
at least 3 of 4 questions no tool fits ending no-tool or asked back; at most 15% of set 1's
dialogs asked back; p90 at most 5 s; no dialog ended by a transport timeout (the caller always
hears the agent).  Text mode keeps the earlier ones: at most 10% wrongly successful, the right
tool first no less often than before (:data:`BASELINES`), p90 at most 10 s.  The scripted rows'
target is every dialog ending right: the framework must lose nothing when the model is right.
"""

from __future__ import annotations

from typing import Any

from quality_scoring import Score
from quality_sets import REPO, SETS
from quality_stack import DIALOG_TIMEOUT, MAX_ITERATIONS, SCRIPTED, TEXT_TEMPLATE

#: Right tool first, called first, before dialogs could ask back: (set, mode) -> (k, n), the embedded
#: SmolLM2-135M on main at ebaee72 (set 1: the table in BENCHMARKS.md, also bench/notes.md).
BASELINES: dict[tuple[str, str], tuple[int, int]] = {
    ("set 1", "structured"): (15, 30),
    ("set 1", "text"): (17, 30),
}
WRONGLY_MAX = 0.10
P90_MAX = 10.0
#: Structured mode (issue 34): successful and right per set, wrongly successful, no-tool questions
#: ending honestly, asked back on set 1, p90.
SUCCESS_MIN = {"set 1": 0.90, "set 2": 0.75, "set 3": 0.75}
STRUCTURED_WRONGLY_MAX = 0.05
NO_TOOL_HONEST_MIN = 0.75
ASKED_MAX_SET1 = 0.15
STRUCTURED_P90_MAX = 5.0


def _short(text: str, limit: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _md_table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return "\n".join([line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|",
                      *(line(r) for r in rows)])


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100.0 * k / n:.0f}%)" if n else "-"


def _secs(x: float) -> str:
    return f"{x:.1f}" if x >= 1.0 else f"{x:.2f}"


def _ok(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _why(s: Score) -> str:
    d = s.dialog
    why = []
    if s.tool is None:
        if d.calls:
            why.append(f"no tool fits, yet it called `{d.calls[0].tool}` first")
        elif not s.abstained and not s.error:
            why.append("no tool fits, and it answered without saying so")
    elif s.abstained:
        why.append(f"{d.outcome}, candidates {d.candidates or 'none'}")
    elif not s.right_first:
        why.append("wrong tool first" if d.calls else "no tool call")
    elif not s.right_args:
        why.append("wrong arguments")
    if s.calls > s.valid_calls:
        why.append(f"{s.calls - s.valid_calls} invalid call(s)")
    if s.error:
        why.append(f"error: {d.error}" + (f" (outcome {d.outcome})" if d.outcome else ""))
    elif not s.abstained and not s.answered_from_result:
        why.append(f"answered, not from the right tool's result: \"{_short(d.answer or '', 70)}\""
                   + (f" (outcome {d.outcome})" if d.outcome else ""))
    return "; ".join(why)


def _main_table(rows: list[Any]) -> str:
    cells = []
    for row in rows:
        m = row.summary
        n, nt = m["questions"], m["tool_questions"]
        asked = f"{n}" + (f" ({m['no_tool_questions']} no tool)" if m["no_tool_questions"] else "") \
            + ("" if row.complete else f" of {row.asked_of}")
        abstained = _pct(m["abstained"], n) + (f"; {m['abstained_no_tool']}/{m['no_tool_questions']} no tool"
                                               if m["no_tool_questions"] else "")
        cells.append([row.set, row.llm, row.mode, asked, _pct(m["right_first"], nt),
                      _pct(m["right_offered_first"], nt), _pct(m["valid_calls"], m["calls"]),
                      _pct(m["right_args"], nt), _pct(m["answered"], nt), _pct(m["successful_right"], nt),
                      abstained, _pct(m["wrongly"], n), _pct(m["errors"], n), str(m["timeouts"]),
                      _secs(m["median_s"]), _secs(m["p90_s"])])
    return _md_table(["set", "LLM", "mode", "questions", "right tool called first",
                      "right tool first (called or offered)", "schema-valid calls (valid/all)",
                      "right arguments", "answered from the result", "successful and right",
                      "abstained / asked back", "wrongly successful", "error endings",
                      "transport timeouts", "median s/dialog", "p90 s/dialog"], cells)


def _targets(rows: list[Any], scripted: str) -> str:
    lines = []
    for row in rows:
        m = row.summary
        n = m["questions"]
        if row.llm == scripted:
            checks = [(f"right endings {m['right_endings']}/{n} (all)", m["right_endings"] == n),
                      (f"wrongly successful {m['wrongly']}", m["wrongly"] == 0),
                      (f"error endings {m['errors']}", m["errors"] == 0),
                      (f"transport timeouts {m['timeouts']}", m["timeouts"] == 0)]
        elif row.mode == "structured":
            nt, nn = m["tool_questions"], m["no_tool_questions"]
            success = m["successful_right"] / nt if nt else 0.0
            wrongly = m["wrongly"] / n if n else 0.0
            want = SUCCESS_MIN.get(row.set, 0.75)
            checks = [(f"successful and right >= {want:.0%}: {m['successful_right']}/{nt} = {success:.0%}",
                       nt > 0 and success >= want),
                      (f"wrongly successful <= {STRUCTURED_WRONGLY_MAX:.0%}: {m['wrongly']}/{n} = {wrongly:.0%}",
                       n > 0 and wrongly <= STRUCTURED_WRONGLY_MAX)]
            if nn:
                checks.append((f"no-tool questions ended no-tool or asked back >= {NO_TOOL_HONEST_MIN:.0%}: "
                               f"{m['abstained_no_tool']}/{nn}", m["abstained_no_tool"] / nn >= NO_TOOL_HONEST_MIN))
            if row.set == "set 1":
                asked = m["abstained"] / n if n else 0.0
                checks.append((f"asked back or no tool <= {ASKED_MAX_SET1:.0%}: {m['abstained']}/{n} = {asked:.0%}",
                               n > 0 and asked <= ASKED_MAX_SET1))
            checks += [(f"p90 <= {STRUCTURED_P90_MAX:g} s: {m['p90_s']:.1f} s",
                        n > 0 and m["p90_s"] <= STRUCTURED_P90_MAX),
                       (f"transport timeouts 0: {m['timeouts']}", m["timeouts"] == 0)]
        else:
            wrongly = m["wrongly"] / n if n else 0.0
            checks = [(f"wrongly successful <= {WRONGLY_MAX:.0%}: {m['wrongly']}/{n} = {wrongly:.0%}",
                       n > 0 and wrongly <= WRONGLY_MAX)]
            base = BASELINES.get((row.set, row.mode))
            nt = m["tool_questions"]
            if base is None:
                checks.append((f"right tool first (called or offered): {m['right_offered_first']}/{nt}; "
                               "no baseline recorded for this set and mode", True))
            else:
                k, bn = base
                now = m["right_offered_first"] / nt if nt else 0.0
                checks.append((f"right tool first (called or offered) >= before ({k}/{bn}): "
                               f"{m['right_offered_first']}/{nt} (called first {m['right_first']}/{nt})",
                               nt > 0 and now >= k / bn))
            checks += [(f"p90 <= {P90_MAX:g} s: {m['p90_s']:.1f} s", n > 0 and m["p90_s"] <= P90_MAX),
                       (f"transport timeouts 0: {m['timeouts']}", m["timeouts"] == 0)]
        incomplete = "" if row.complete else f" (only {len(row.scores)} of {row.asked_of} asked)"
        lines.append(f"- {row.llm}, {row.set}, {row.mode}{incomplete}: "
                     + "; ".join(f"{what} ({_ok(ok)})" for what, ok in checks))
    return "\n".join(lines)


def _per_tool(rows: list[Any], label: str, tools: tuple[str, ...], has_no_tool: bool) -> str:
    mine = [r for r in rows if r.set == label]
    out = []
    for tool in (*tools, *((None,) if has_no_tool else ())):
        cells = [f"`{tool}`" if tool else "(no tool fits: abstained)"]
        for row in mine:
            k, n = row.summary["per_tool"].get(tool, [0, 0])
            chosen: dict[str, int] = {}
            for s in row.scores:
                if s.tool == tool and not (s.abstained if tool is None else s.right_offered_first):
                    name = s.dialog.calls[0].tool if s.dialog.calls else (s.dialog.outcome or "(none)")
                    chosen[name] = chosen.get(name, 0) + 1
            other = ", ".join(f"{c} x{v}" for c, v in sorted(chosen.items()))
            cells.append(f"{k}/{n}" + (f" (else: {other})" if other else ""))
        out.append(cells)
    return _md_table(["right tool", *(f"{r.llm}, {r.mode}" for r in mine)], out)


def markdown(result: dict[str, Any]) -> str:
    """The table and everything under it, from ``run_quality_table``'s (or ``rescore``'s) result."""
    rows = sorted(result["rows"], key=lambda r: (r.set, r.llm == SCRIPTED, r.mode != "structured"))
    sets = result["sets"]
    text = _main_table(rows)

    outcomes = []
    for row in rows:
        seen = row.summary["outcomes"]
        outcomes.append(f"{row.llm}, {row.set}, {row.mode}: "
                        + ", ".join(f"{k} {v}" for k, v in sorted(seen.items())))
    text += "\n\nOutcomes the agent gave (field `outcome` of the final message; `(none)`: it gave none):\n\n"
    text += "\n".join(f"- {line}" for line in outcomes)
    text += ("\n\nTargets. A model's structured rows (the default mode): successful and right >= "
             f"{SUCCESS_MIN['set 1']:.0%} of set 1's questions a tool fits and >= {SUCCESS_MIN['set 2']:.0%} of sets "
             f"2 and 3's; wrongly successful <= {STRUCTURED_WRONGLY_MAX:.0%} of dialogs; >= 3 of 4 questions no tool "
             f"fits ended no-tool or asked back; asked back <= {ASKED_MAX_SET1:.0%} on set 1; p90 <= "
             f"{STRUCTURED_P90_MAX:g} s; 0 transport timeouts. Text mode: wrongly successful <= {WRONGLY_MAX:.0%}, "
             f"right tool first no lower than before, p90 <= {P90_MAX:g} s, 0 transport timeouts. The scripted rows: "
             "every dialog ends right (the framework loses nothing when the model is right):\n\n"
             + _targets(rows, SCRIPTED))

    shortened = []
    for row in rows:
        if k := row.summary["key_only"]:
            example = next(s for s in row.scores if s.key_only)
            shortened.append(f"{row.llm}, {row.set}, {row.mode}: {k} (e.g. \"{_short(example.dialog.answer or '', 60)}\" "
                             f"for \"{_short(example.question, 60)}\")")
    if shortened:
        text += ("\n\nOf the wrongly successful answers, some shorten the expected tool's result rather than "
                 "ignore it: they carry its key value (the temperature and sky, the count, the converted "
                 "amount, the time, the meaning, a joke's first five words) but not the result or its last "
                 "line: " + "; ".join(shortened) + ". They stay counted as wrongly successful.")

    for qset in SETS:
        if not any(r.set == qset.label for r in rows):
            continue
        has_null = any(q["tool"] is None for q in sets[qset.label])
        text += (f"\n\n{qset.label.capitalize()}: right tool first (called or offered) per right tool, and "
                 "what came first instead:\n\n" + _per_tool(rows, qset.label, qset.tools, has_null))
        for row in rows:
            if row.set != qset.label or row.mode != "structured":
                continue
            failures = [s for s in row.scores if s.failed or s.calls > s.valid_calls]
            text += (f"\n\nWhere {row.llm} ({qset.label}, structured) did not end right (question -> first "
                     "tool call; why):\n\n")
            text += "\n".join(
                f"- \"{s.question}\" (expects {'`' + s.tool + '`' if s.tool else 'no tool'}) -> "
                f"`{_short(s.dialog.calls[0].raw) if s.dialog.calls else 'no tool call'}`; {_why(s)}"
                for s in failures) if failures else "- none"

    per_set = []
    for qset in (s for s in SETS if s.label in sets):
        qs = sets[qset.label]
        counts: dict[str, int] = {}
        for q in qs:
            counts[q["tool"] or "no tool"] = counts.get(q["tool"] or "no tool", 0) + 1
        per_set.append(f"{qset.label} (`{qset.path.relative_to(REPO)}`): {len(qs)} questions, "
                       + ", ".join(f"{t} {c}" for t, c in counts.items()))
    incomplete = [r for r in rows if not r.complete]
    budget = ("\n- **Time budget hit**: " + "; ".join(f"{r.llm}, {r.set}, {r.mode}: {len(r.scores)} of "
                                                      f"{r.asked_of} asked" for r in incomplete)
              + "; the rest were not asked.") if incomplete else ""
    if result.get("kept"):
        budget += ("\n- Rows kept from an earlier run that was cut off (`--resume`), asked as above: "
                   + "; ".join(result["kept"]) + "; the time above is this run's only.")
    launched = "; ".join(f"{llm}: `{cmd}`" for llm, cmd in result["commands"].items())
    text += f"""

How it was measured (`bench/agent_quality.py`; this table: `{result['command']}`):

- The stack a user runs, once per LLM: {launched}: the repo's bootstrap (its `joke-service` with
  `tell-joke` and `tell-dad-joke`), at most {MAX_ITERATIONS} steps per dialog; greedy decoding on the
  embedded model. Tool services of `bench/agent/quality_services.py` are started while it runs, as a user
  starts the weather example of docs/tool-services.md (`-p <the stack's broker> --no-metrics`), and announce themselves.
  Set 1 is asked with `weather`, `count-words` and `convert-currency` started (five tools); only then do
  `define-word`, `local-time` and `convert-units` start, for set 2 (eight tools of seven services); only
  then do the five services of `bench/agent/quality_services_set3.py` start (`forecast`, `sunrise-sunset`,
  `convert-temperature`, `spell-word`, `count-letters`, `translate-word`, `find-synonyms`,
  `time-difference`), for set 3 (sixteen tools of twelve services, many easy to confuse). A set asked
  without the sets before it (`--set N`) starts their services too. A set's questions start once
  `GET /api/v1/tool-catalog` lists its tools and no others of the table (and the agent's log says it has
  them).
- {'; '.join(per_set)}. Sets 2 and 3 were each written before any run, by hand; each of their questions
  shares no word or word stem with its right tool's name, description, argument names and argument
  descriptions (stop words aside), which the bench checks when it loads the set and again against the
  running catalog (`bench/quality_sets.py`); a `tool: null` question fits no tool.
- Each question asked once per row, one at a time, through the gateway's websocket with streaming (as
  `tg-invoke-agent -v`). The model: set 1 structured (the bootstrap `agent-react`), set 1 text
  (`tg-put-config-item prompt/template.agent-react` with `{TEXT_TEMPLATE.name}`), set 2 structured (the
  bootstrap template put back), set 2 text, set 3 structured (the bootstrap template put back; no text
  row); an unrecorded warm-up dialog per row proves the mode is in effect (structured: no thoughts; text:
  the first message is a thought). The scripted stand-in (`text-completion-scripted`, not a model): every
  set in structured mode, its script written from the sets (the right tool and arguments for each
  question, a final answer for a question no tool fits, and the tool's result as the answer should the
  agent ask again after it).
- **right tool called first**: the first `action` names the right tool; **right tool first (called or
  offered)**: that, or the dialog asked back (outcome `asked-back`) with the right tool first in its
  `candidates`; both over the questions a tool fits. **schema-valid calls**: every action's arguments
  validate (`jsonschema`) against that tool's `input-schema` in the catalog; a tool that does not exist is
  invalid. **right arguments**: the right tool's first call has the question's values (a joke's topic
  contains the topic word; the city, ", region" allowed, and a time difference's two cities in either
  order; the same words to count; the same amount and a currency the converter reads as the right one;
  the word, and for a translation a language the lexicon reads as the right one; the same value and units
  or temperature scales the converter reads as the right ones). **answered from the result**: the dialog ended with an answer containing an observation
  of the right tool (or its last line, a joke's joke), whitespace and case ignored. **successful and
  right**: that, from a call with the right arguments (as the column above reads them), with no error
  and an outcome `tool-result` or none. **abstained / asked back**: the dialog
  ended with outcome `asked-back` or `no-tool` and no error (and how many of the questions no tool fits
  did). **wrongly successful**: an answer, no error, not abstained, not from the right tool's result of
  the right arguments (Barcelona's weather for Buenos Aires is wrong) (for a
  question no tool fits: every answer that is not marked `no-tool` or `asked-back`). **error endings**: an
  agent error (outcome `tool-unavailable` or `error` included, or {MAX_ITERATIONS} steps without an answer)
  or no end. **transport timeouts**: ended by the gateway's `Timeout` or not ended within the client's
  {DIALOG_TIMEOUT:g} s (+5 s). Seconds: wall clock per dialog at the websocket client (nearest-rank p90);
  they depend on the machine's load, the other columns do not. The whole table took {result['secs']:.0f}
  s (stacks, services, warm-ups and {sum(len(r.scores) for r in rows)} dialogs). Every dialog, message by
  message and with its raw responses, is kept in `bench/.work/quality/dialogs.json`
  (`bench/agent_quality.py --rescore bench/.work/quality` scores it again).{budget}"""
    return text
