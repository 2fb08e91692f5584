"""What calling a tool gave the agent: the observation the model reads, and what went wrong.

The call itself is the catalog's (``trustgraph.catalog.calling``), shared with the gateway and
the MCP server; here its outcome becomes the model's terms (its answer, or an ``Error:`` that
says what to do next) and the failure kind by which the loop decides that a dialog cannot go on
(the same failing call twice).
"""

from __future__ import annotations

from dataclasses import dataclass

from trustgraph.catalog.calling import CallResult, Outcome
from trustgraph.schema import AgentStep

from .registry import Tool


@dataclass(frozen=True)
class ToolCall:
    """What calling a tool gave: the observation, the tool when it succeeded, and otherwise what
    went wrong (``failure``: one of the ``FAILURE_*`` kinds)."""

    observation: str
    tool: Tool | None = None
    failure: str | None = None


FAILURE_UNAVAILABLE = "unavailable"   # nothing would answer: its service is not running
FAILURE_LOST = "lost"                 # its service's replica or the broker connection went mid-call
FAILURE_MISTAKE = "mistake"           # the model's: no such tool, arguments the tool refuses
FAILURE_TIMEOUT = "timeout"
FAILURE_FAILED = "failed"             # the tool answered with an error

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


def observation(name: str, result: CallResult) -> str:
    """The call's outcome in the model's terms: its answer, or an ``Error:`` saying what to do next."""
    match result.outcome:
        case Outcome.ANSWERED:
            return result.message.strip()
        case Outcome.REFUSED:
            return f"Error: {result.message}"
        case Outcome.UNAVAILABLE:
            return f"Error: tool '{name}' cannot be used now: {result.message}. {_WHAT_NEXT}"
        case Outcome.LOST:
            return f"Error: {result.message}. {_TRY_AGAIN}"
        case Outcome.TIMED_OUT:
            return f"Error: {result.message}; it may be busy or not running. {_TRY_AGAIN}"
        case _:
            return (f"Error: tool '{name}' failed: {result.text}. Check the arguments and try again, "
                    "use another tool, or give a Final Answer.")


def same_call(step: AgentStep, name: str, arguments: dict[str, str]) -> bool:
    return step.action == name and dict(step.arguments or {}) == arguments \
        and (step.observation or "").startswith("Error:")


def said(question: str, history: list[AgentStep]) -> list[str]:
    """What the dialog has said so far that a call's arguments may come from: the question and
    the tools' results (not their errors, which echo the model's own values back)."""
    return [question, *(h.observation for h in history
                        if h.observation and not h.observation.startswith("Error:"))]


def last_error(history: list[AgentStep]) -> str:
    for step in reversed(history):
        if (step.observation or "").startswith("Error:"):
            return step.observation[len("Error:"):].strip()
    return ""
