"""What calling a tool gave the agent: the observation the model reads, and what went wrong.

The call itself is the catalog's (``trustgraph.catalog.calling``), shared with the gateway and
the MCP server; here its outcome becomes the model's terms (its answer, or an ``Error:`` that
says what to do next) and the failure kind by which the loop decides that a dialog cannot go on
(the same failing call twice).
"""

from __future__ import annotations

from dataclasses import dataclass

from trustgraph.catalog.calling import CallResult, Outcome

from .registry import Tool


@dataclass(frozen=True)
class ToolCall:
    """What calling a tool gave: the observation, the tool when it succeeded, and otherwise what
    went wrong (``failure``: one of the ``FAILURE_*`` kinds; ``reason``: why, in a user's terms,
    without the advice the observation gives the model)."""

    observation: str
    tool: Tool | None = None
    failure: str | None = None
    reason: str = ""


FAILURE_UNAVAILABLE = "unavailable"   # nothing would answer: its service is not running
FAILURE_LOST = "lost"                 # its service's replica or the broker connection went mid-call
FAILURE_MISTAKE = "mistake"           # the model's: no such tool, arguments the tool refuses
FAILURE_TIMEOUT = "timeout"
FAILURE_FAILED = "failed"             # the tool answered with an error
FAILURE_REFUSED = "refused"           # not made: the user refused it when asked for approval

#: The failure kind of each outcome of a call (an answer is none).
FAILURES = {
    Outcome.REFUSED: FAILURE_MISTAKE,
    Outcome.FAILED: FAILURE_FAILED,
    Outcome.UNAVAILABLE: FAILURE_UNAVAILABLE,
    Outcome.TIMED_OUT: FAILURE_TIMEOUT,
    Outcome.LOST: FAILURE_LOST,
}

_WHAT_NEXT = "Use another tool, or give a Final Answer with what you know."
_TRY_AGAIN = "Try again, use another tool, or give a Final Answer with what you know."


def reason(name: str, result: CallResult) -> str:
    """Why a call did not answer, in a user's terms (empty for an answer)."""
    match result.outcome:
        case Outcome.ANSWERED:
            return ""
        case Outcome.REFUSED:
            return result.message
        case Outcome.UNAVAILABLE:
            return f"tool '{name}' cannot be used now: {result.message}"
        case Outcome.LOST | Outcome.TIMED_OUT:
            return result.message
        case _:
            return f"tool '{name}' failed: {result.text}"


def observation(name: str, result: CallResult) -> str:
    """The call's outcome in the model's terms: its answer, or an ``Error:`` saying what to do next."""
    why = reason(name, result)
    match result.outcome:
        case Outcome.ANSWERED:
            return result.message.strip()
        case Outcome.REFUSED:
            return f"Error: {why}"
        case Outcome.UNAVAILABLE:
            return f"Error: {why}. {_WHAT_NEXT}"
        case Outcome.LOST:
            return f"Error: {why}. {_TRY_AGAIN}"
        case Outcome.TIMED_OUT:
            return f"Error: {why}; it may be busy or not running. {_TRY_AGAIN}"
        case _:
            return f"Error: {why}. Check the arguments and try again, use another tool, or give a Final Answer."
