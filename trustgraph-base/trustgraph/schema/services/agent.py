"""Agent (ReAct) request/response records.

An AgentRequest is also what the agent re-publishes on its ``next`` queue
for each further iteration, with the new step appended to ``history``.
"""

from dataclasses import dataclass, field
from typing import Any

from ..core.primitives import Error

#: Ours, a message property of an agent request: ``"true"`` when the caller
#: wants an ``action`` message (the tool and its arguments) before each tool
#: call.  A property, so the record stays upstream's; upstream's clients never
#: set it and get none (they would show one as a thought).
SHOW_ACTIONS = "show-actions"
#: Ours, a message property of an agent request on ``next``: when the dialog's first request
#: reached the agent (wall-clock seconds).  A broker connection lost after it means the
#: dialog's caller was told the call failed, so no further step is taken for it.  Upstream's
#: agents neither set nor read it.
DIALOG_STARTED = "dialog-started"
#: Ours, a message property of an agent request: the caller's decision on a call the agent paused
#: for approval (``OUTCOME_APPROVAL``), JSON text ``{"token": ..., "decision": "approve"|"refuse"}``
#: with the token of that ending's ``approval``.  A property, so the record stays upstream's; the
#: gateway sets it from a request body's ``approval`` field.
APPROVAL = "approval"
#: The two decisions an ``approval`` property may carry.
APPROVE = "approve"
REFUSE = "refuse"
#: Ours: why a question that is empty or only whitespace is refused, by the gateway (after
#: ``Bad request: ``, a ``gateway-error``) and by the agent (an ``agent-error``), instead of
#: being answered: there is nothing to answer.
EMPTY_QUESTION = "the agent request's question is empty: ask a question"

# Ours: how a dialog ended, on its last message (``AgentResponse.outcome``), so a caller can
# tell a tool's answer from the others.  Upstream's clients ignore the field and see a normal
# answer (or error); an upstream agent leaves it empty.
#: Answered from a tool's result (``candidates``: the tool).
OUTCOME_TOOL = "tool-result"
#: No tool fits the question, or none gave a result: the answer is the model's own, and its
#: text says so.
OUTCOME_NO_TOOL = "no-tool"
#: No tool is clearly meant: the agent asks which one (``candidates``: the likely tools, most
#: likely first).
OUTCOME_ASKED = "asked-back"
#: A tool the dialog needs cannot be used now (its service is not running); an error ending.
OUTCOME_UNAVAILABLE = "tool-unavailable"
#: Any other failure of the dialog; an error ending.
OUTCOME_ERROR = "error"
#: Answered in the model's own words after tools gave results (a template whose policy lets it
#: answer); the words are not one result's.
OUTCOME_ANSWER = "answer"
#: The agent stopped before calling a tool that needs a person's approval (config
#: ``tool-policy/approval``): ``candidates`` is that tool, ``approval`` what to answer with.  The
#: text is a normal answer saying so, for upstream's clients.
OUTCOME_APPROVAL = "approval-required"


@dataclass
class AgentApproval:
    """Ours: the call a dialog paused before (``OUTCOME_APPROVAL``) and how to resume it.

    ``token`` is the paused dialog itself, signed by the agent (nothing is kept on the server);
    the caller sends it back in the ``approval`` property with its decision.  ``expires`` is
    when the agent stops taking it (UNIX time, seconds).
    """

    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    token: str = ""
    expires: float = 0.0


@dataclass
class AgentStep:
    """One completed ReAct iteration: the thought, the tool call and its result."""

    thought: str = ""
    action: str = ""
    arguments: dict[str, str] = field(default_factory=dict)
    observation: str = ""
    user: str = ""


@dataclass
class AgentRequest:
    """A question for the agent; ``group`` None means the ``default`` group."""

    question: str = ""
    state: str = ""
    group: list[str] | None = None
    history: list[AgentStep] = field(default_factory=list)
    user: str = ""
    streaming: bool = False


@dataclass
class AgentResponse:
    """One agent output message.

    Streaming replies use ``chunk_type``/``content``.  The legacy fields
    (``answer``, ``thought``, ``observation``) are written explicitly as null
    by non-streaming replies: a consumer treats a non-null ``answer`` as the
    final message, so they are typed ``str | None``.
    """

    chunk_type: str = ""
    content: str = ""
    end_of_message: bool = False
    end_of_dialog: bool = False
    answer: str | None = ""
    error: Error | None = None
    thought: str | None = ""
    observation: str | None = ""
    #: Ours: how the dialog ended (``OUTCOME_*``), on its last message; empty on the others.
    outcome: str = ""
    #: Ours: the tools behind that ending (see ``OUTCOME_*``), or None.
    candidates: list[str] | None = None
    #: Ours: on an ``OUTCOME_APPROVAL`` ending, the paused call and its token; None on every
    #: other message.
    approval: AgentApproval | None = None
