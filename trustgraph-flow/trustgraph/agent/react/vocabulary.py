"""The agent's vocabulary: what the model decided, and what one iteration emits.

The loop (``agent_manager.react``) is an async generator of the events below,
so streaming and non-streaming requests share one code path; only the
service turns events into wire messages, and only it knows upstream 2.1.4's
two shapes (streaming and non-streaming).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trustgraph.schema import AgentRequest
from trustgraph.schema.services.agent import AgentApproval

# -- what the model said -------------------------------------------------------


@dataclass(frozen=True)
class Action:
    """The model asks for a tool: ``Action: <name>`` and ``Args: {...}``."""

    thought: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Final:
    """The model is done: ``Final Answer: <answer>``."""

    thought: str
    answer: str


class ReactParseError(ValueError):
    """The model's reply is not in the ReAct format.

    ``thought`` keeps whatever thought could be read, so the history shows the
    model what it said before it went wrong.
    """

    def __init__(self, reason: str, thought: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.thought = thought


class RunawayAnswer(ReactParseError):
    """The model's final answer ran on, repeating itself, until the token limit cut the reply
    (``prompting.parse_reply``): told so, a greedy model repeats itself again, so the dialog
    ends as one the model has no answer of its own for (``agent_manager``)."""


# -- what one iteration emits --------------------------------------------------


@dataclass(frozen=True)
class Thought:
    """Thought text.  Streaming: one chunk, ``end`` on the last one.  Otherwise the whole thought."""

    content: str
    end: bool = True


@dataclass(frozen=True)
class Act:
    """The tool call the model decided on (shown to the caller as it is made)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Observation:
    """A tool's result, or an ``Error: ...`` the model should act on.

    Streaming: a tool's output as it arrives (``end`` False), then one with
    ``end`` True holding what was not streamed.  Otherwise the whole
    observation, ``end`` True.
    """

    content: str
    end: bool = True


@dataclass(frozen=True)
class Answer:
    """Answer text.  Streaming: chunks with ``end`` False, then ``Answer("", end=True)``.

    Otherwise one event with the whole answer and ``end`` True.  The closing
    event says how the dialog ended (``outcome``, one of the schema's
    ``OUTCOME_*``) and the tools behind that ending (``candidates``); a
    dialog paused for approval carries the call and its token (``approval``).
    """

    content: str
    end: bool = True
    outcome: str = ""
    candidates: tuple[str, ...] = ()
    approval: AgentApproval | None = None


@dataclass(frozen=True)
class Continue:
    """Publish ``request`` on ``next``: the dialog goes on in a new message; ``failures``: the
    failure kind of each failed step of its history (``steps.FAILURES_PROPERTY``)."""

    request: AgentRequest
    failures: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Failed:
    """The dialog ends with an error: ours (max iterations, prompt service down, no time left),
    or a tool it needs failing the same way twice (``outcome``: the schema's ``OUTCOME_*``)."""

    message: str
    outcome: str = "error"


Event = Thought | Act | Observation | Answer | Continue | Failed
