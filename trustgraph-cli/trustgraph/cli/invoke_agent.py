"""Asks the agent a question and prints its answer.

Talks to the API gateway's websocket (``GET {url}api/v1/socket``) with one
frame ``{id, service: "agent", flow, request}`` and reads ``{id, response,
complete}`` frames until the dialog is complete, as upstream's command does.
Streaming is on unless ``--no-streaming``; ``-v`` also shows the agent's
thoughts (🤔), each tool call with its arguments (🛠️) and the tools'
observations (💡) as they arrive.

The answer goes to standard output.  An agent error is one line on standard
error and a nonzero exit status (upstream prints it and exits 0).  The exit
status says how the dialog ended (our agent's ``outcome``; an upstream
agent's answers all count as 0):

* 0: answered (from a tool's result, or by a model allowed to answer itself);
* 3: no tool fits the question; the answer printed is the model's own;
* 4: the agent asked back which tool was meant (the answer names them);
* 5: a tool the question needs cannot be used now (error line on stderr);
* 6: the agent needs approval to call a tool and nobody gave it: no terminal
  to ask on, and neither ``--approve`` nor ``--refuse`` (the approval message
  is printed, and one line on stderr says what to do);
* 1: any other failure;
* 2: a usage error (argparse's): a question that is empty or only
  whitespace (``-q ""``) is refused in one line before anything is sent.

When the agent stops before a tool call that needs approval (our agent's
``outcome`` ``approval-required``, config ``tool-policy/approval``), the
command asks on the terminal, showing the tool and its arguments (``Run it?
[y/N]``; anything but y or yes refuses), or takes ``--approve``/``--refuse``,
which decide every approval of the dialog; then it resumes the dialog with the
decision (the same question, the agent's token and the decision as the
request's ``approval``), as often as the dialog asks.

When the answer is a tool's output (our agent's ``outcome`` ``tool-result``,
``candidates`` naming the tool), one line on standard error says which
tool's: its text is its provider's, not the agent's.  Standard output stays
the answer alone, so a script that reads it is unaffected.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from trustgraph.base.command_line import (
    DEFAULT_URL,
    CliError,
    default_token,
    default_url,
    describe_error,
    main_wrapper,
)
from trustgraph.base.safety.logsafe import escape

PROG = "tg-invoke-agent"
# A whole dialog: up to --max-iterations model calls, each possibly slow on a CPU model.
AGENT_TIMEOUT = 600.0
# "action" (the tool and its arguments, before the call) is ours; upstream's agent sends none.
PREFIX = {"thought": "🤔 ", "action": "🛠️ ", "observation": "💡 ", "answer": ""}
#: Exit status by the dialog's ``outcome`` (see the module docstring).
EXIT_NO_TOOL = 3
EXIT_ASKED_BACK = 4
EXIT_UNAVAILABLE = 5
EXIT_APPROVAL = 6
#: argparse's exit status for a usage error, which an empty question is.
EXIT_USAGE = 2
EMPTY_QUESTION = 'the question is empty: ask a question, e.g. -q "What is the weather in Paris?"'
_EXIT = {"no-tool": EXIT_NO_TOOL, "asked-back": EXIT_ASKED_BACK}
#: An answer that is a tool's output (``schema.services.agent.OUTCOME_TOOL``; the schema package is
#: not imported here: a tenth of a second at every start of the command).
OUTCOME_TOOL = "tool-result"
#: A dialog paused before a call that needs approval (``schema.services.agent.OUTCOME_APPROVAL``).
OUTCOME_APPROVAL = "approval-required"
#: The decisions an approval takes back (``schema.services.agent.APPROVE`` and ``REFUSE``).
APPROVE = "approve"
REFUSE = "refuse"
#: What ends a dialog whose approval the gateway did not pass on (an upstream gateway drops
#: ``approval``, so the agent starts the dialog again and asks again).
NOT_PASSED_ON = ("the agent asked for approval again without making or refusing the call: the gateway did not "
                 "pass the approval on (an upstream gateway does not); use a gateway of this fork")


class Printer:
    """Writes chunks as they come: a prefix when a message starts, a newline when it ends."""

    def __init__(self, verbose: bool, out: TextIO = sys.stdout) -> None:
        self.verbose = verbose
        self.out = out
        self.open: str | None = None
        self.outcome: str | None = None   # how the dialog ended, from its last message
        self.candidates: list[str] = []   # the tools behind that ending
        self.approval: dict[str, Any] | None = None   # the paused call, when it ended for approval
        self.paused_text = ""             # the agent's words for that pause, shown only if nobody decides
        self.observed = False             # an observation came (a call made or refused)

    def next_dialog(self) -> None:
        """Forget how the last request ended: a resumed dialog is read afresh."""
        self.outcome, self.candidates, self.approval, self.paused_text, self.observed = None, [], None, "", False

    def chunk(self, kind: str, text: str, end: bool) -> None:
        if kind not in PREFIX or (kind != "answer" and not self.verbose):
            return
        if kind != self.open:
            self.close()
            self.out.write(PREFIX[kind])
            self.open = kind
        self.out.write(text)
        if end:
            self.close()
        self.out.flush()

    def close(self) -> None:
        if self.open is not None:
            self.out.write("\n")
            self.out.flush()
            self.open = None


def handle(response: dict[str, Any], printer: Printer) -> None:
    """Show one agent response; raises CliError on an agent error.

    The end of the dialog is the gateway's ``complete`` flag (it applies the
    upstream 2.1.4's rule: ``end_of_dialog``, or a legacy ``answer`` that is not null).
    """
    outcome = response.get("outcome")
    if isinstance(outcome, str) and outcome:
        printer.outcome = outcome
        candidates = response.get("candidates")
        printer.candidates = [str(c) for c in candidates] if isinstance(candidates, list) else []
        approval = response.get("approval")
        if outcome == OUTCOME_APPROVAL and isinstance(approval, dict) and isinstance(approval.get("token"), str):
            printer.approval = approval
    status = EXIT_UNAVAILABLE if printer.outcome == "tool-unavailable" else 1
    if response.get("error"):
        raise CliError(describe_error(response["error"]), status)
    kind = response.get("chunk_type")
    if kind == "observation" or response.get("observation"):
        printer.observed = True
    if printer.approval is not None:
        # The pause: its words are shown only if nobody decides (run()).
        printer.paused_text += response.get("content") or response.get("answer") or ""
        return
    end = bool(response.get("end_of_message"))
    if kind:
        if kind == "error":
            raise CliError(response.get("content") or "the agent failed", status)
        printer.chunk(kind, response.get("content") or "", end)
        return
    # Legacy (non-streaming) messages: one field per message.
    for name in ("thought", "observation", "answer"):
        if response.get(name):
            printer.chunk(name, response[name], True)


def ask(args: argparse.Namespace, printer: Printer, approval: dict[str, str] | None = None) -> None:
    """One question over the gateway's websocket; chunks are printed as they arrive.  ``approval``:
    the decision on a call the dialog paused before, which resumes it."""
    from trustgraph.cli.socket import stream  # imports aiohttp: only the streaming commands need it

    request: dict[str, Any] = {"question": args.question, "user": args.user,
                               "streaming": not args.no_streaming}
    if args.state:
        request["state"] = args.state
    if args.group is not None:
        request["group"] = args.group
    if args.verbose:
        request["show_actions"] = True   # ours; an upstream gateway and agent ignore it
    if approval is not None:
        request["approval"] = approval   # ours: the gateway passes it to the agent
    stream(args.url, args.token, "agent", request, flow=args.flow_id,
           on_response=lambda response: handle(response, printer), timeout=AGENT_TIMEOUT,
           on_error=lambda response: handle(response, printer))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Asks the agent a question.")
    # Upstream spells it --url here and --api-url everywhere else: both work.
    parser.add_argument("-u", "--api-url", "--url", dest="url", default=default_url(),
                        help=f"API URL (default: $TRUSTGRAPH_URL or {DEFAULT_URL})")
    parser.add_argument("-t", "--token", default=default_token(),
                        help="API bearer token (default: $TRUSTGRAPH_TOKEN)")
    parser.add_argument("-f", "--flow-id", default="default", help="flow id (default: %(default)s)")
    parser.add_argument("-q", "--question", required=True,
                        help="the question (an empty one is refused, exit status 2)")
    parser.add_argument("-U", "--user", default="trustgraph", help="user (default: %(default)s)")
    parser.add_argument("-C", "--collection", default="default",
                        help="accepted for compatibility; not sent (as upstream)")
    parser.add_argument("-l", "--plan", help="accepted for compatibility; not sent (as upstream)")
    parser.add_argument("-s", "--state", help="the agent's starting state")
    parser.add_argument("-g", "--group", nargs="+", help="tool groups the agent may use")
    parser.add_argument("-v", "--verbose", action="store_true", help="show thoughts and observations")
    parser.add_argument("--no-streaming", action="store_true", help="ask for whole messages")
    decide = parser.add_mutually_exclusive_group()
    decide.add_argument("--approve", action="store_true",
                        help="approve every tool call the agent asks approval for in this dialog (for scripts; "
                             "on a terminal the command asks)")
    decide.add_argument("--refuse", action="store_true",
                        help="refuse every tool call the agent asks approval for in this dialog")
    return parser


def _call_text(approval: dict[str, Any]) -> str:
    """The paused call, escaped for a terminal: ``tool 'x' with {...}``."""
    arguments = approval.get("arguments")
    return f"tool '{escape(str(approval.get('tool', '')))}' with {escape(json.dumps(arguments, default=str))}"


def decision(args: argparse.Namespace, approval: dict[str, Any]) -> str | None:
    """The decision on a paused call: the flag's, else the user's on a terminal; None when no one
    can decide (no terminal, no flag)."""
    if args.approve or args.refuse:
        chosen = APPROVE if args.approve else REFUSE
        print(f"{PROG}: {chosen}d by --{chosen}: {_call_text(approval)}", file=sys.stderr, flush=True)
        return chosen
    if sys.stdin is None or not sys.stdin.isatty():
        return None
    sys.stdout.flush()
    print(f"{PROG}: the agent needs your approval to run {_call_text(approval)}", file=sys.stderr)
    print("Run it? [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    return APPROVE if answer.strip().lower() in ("y", "yes") else REFUSE


def source_line(printer: Printer) -> str | None:
    """The stderr line saying which tool's output the answer is, or None when it is not one."""
    if printer.outcome != OUTCOME_TOOL:
        return None
    names = [f"'{escape(name)}'" for name in printer.candidates]
    if len(names) > 1:   # a question of several requests: each tool's output, in turn
        return (f"{PROG}: the answer is the output of tools {', '.join(names[:-1])} and {names[-1]}, in turn, "
                "as their providers wrote it (not the agent's own words)")
    tool = f"tool {names[0]}" if names else "a tool"
    return f"{PROG}: the answer is the output of {tool}, as its provider wrote it (not the agent's own words)"


def run(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if not args.question.strip():
        # Refused here, in one line, before any connection: the model would answer nothing with a guess.
        raise CliError(EMPTY_QUESTION, EXIT_USAGE)
    printer = Printer(args.verbose)
    approval: dict[str, str] | None = None
    try:
        while True:
            printer.next_dialog()
            ask(args, printer, approval)
            paused = printer.approval
            if paused is None:
                break
            if approval is not None and not printer.observed:
                raise CliError(NOT_PASSED_ON)
            chosen = decision(args, paused)
            if chosen is None:
                break
            approval = {"token": paused["token"], "decision": chosen}
    finally:
        printer.close()
    if printer.approval is not None:   # nobody to decide: the agent's words, and what to do
        print(printer.paused_text, flush=True)
        print(f"{PROG}: {_call_text(printer.approval)} needs approval, and there is no terminal to ask on: run "
              "again with --approve or --refuse", file=sys.stderr, flush=True)
        sys.exit(EXIT_APPROVAL)
    if (line := source_line(printer)) is not None:
        sys.stdout.flush()
        print(line, file=sys.stderr, flush=True)
    if printer.outcome in _EXIT:
        sys.stdout.flush()
        sys.exit(_EXIT[printer.outcome])


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
