"""The agent's records as upstream TrustGraph 2.11 writes them.

Why separate records: 2.11 dropped ``user`` from the request (workspaces are
its tenancy axis), added the orchestrator's fields to request and step, and
replaced the response's ``chunk_type`` and legacy ``answer``/``thought``/
``observation`` fields with ``message_type``, ``message_id``, explain and
token fields, with no version field to tell the two apart on the wire.  A
processor run with ``--wire 2.11`` encodes and decodes these with the one
codec (``trustgraph.schema.codec``): 2.11 writes every field, ``None`` as
null, as 2.1 does.  Read from trustgraph-base 2.11.1's ``schema/agent.py``.
"""

from dataclasses import dataclass, field

from trustgraph.schema.core.primitives import Error, Triple
from trustgraph.schema.services.agent import AgentApproval

#: The orchestration patterns 2.11 names (``AgentRequest.pattern``); "" leaves the choice
#: to the agent.  agent-manager-react runs ReAct only.
PATTERN_REACT = "react"
PATTERN_PLAN = "plan-then-execute"
PATTERN_SUPERVISOR = "supervisor"


@dataclass
class PlanStep:
    """One step of a plan-then-execute plan (the orchestrator's; carried, never made, by ReAct)."""

    goal: str = ""
    tool_hint: str = ""
    depends_on: list[int] = field(default_factory=list)
    status: str = "pending"
    result: str = ""


@dataclass
class AgentStep:
    """One completed iteration; ``step_type``, ``plan`` and ``subagent_results`` are the orchestrator's."""

    thought: str = ""
    action: str = ""
    arguments: dict[str, str] = field(default_factory=dict)
    observation: str = ""
    step_type: str = ""
    plan: list[PlanStep] = field(default_factory=list)
    subagent_results: dict[str, str] = field(default_factory=dict)


@dataclass
class AgentRequest:
    """A question for the agent, or the next iteration of a dialog.

    ``state`` is typed ``str | None`` because 2.11's gateway writes null when
    its caller gave no state; ``session_id`` ties a dialog's iterations (and
    its ``message_id``s) together.  The fields from ``conversation_id`` on are
    the orchestrator's.
    """

    question: str = ""
    state: str | None = ""
    group: list[str] | None = None
    history: list[AgentStep] = field(default_factory=list)
    collection: str = "default"
    streaming: bool = False
    session_id: str = ""
    conversation_id: str = ""
    pattern: str = ""
    task_type: str = ""
    framing: str = ""
    correlation_id: str = ""
    parent_session_id: str = ""
    subagent_goal: str = ""
    expected_siblings: int = 0


@dataclass
class AgentResponse:
    """One agent output message.

    ``message_type`` is one of thought, action, observation, answer, explain,
    error; ``message_id`` names the thought, observation or answer it belongs
    to, so a client can join streamed chunks.  The token fields are null
    unless filled on the end-of-dialog message.  ``outcome``,
    ``candidates`` and ``approval`` are ours, as in the 2.1 record (how the
    dialog ended); 2.11's decoders ignore keys they do not know.
    """

    message_type: str = ""
    content: str = ""
    end_of_message: bool = False
    end_of_dialog: bool = False
    explain_id: str | None = None
    explain_graph: str | None = None
    explain_triples: list[Triple] = field(default_factory=list)
    message_id: str = ""
    error: Error | None = None
    in_token: int | None = None
    out_token: int | None = None
    model: str | None = None
    #: Ours: how the dialog ended (``trustgraph.schema.services.agent.OUTCOME_*``), on its last message.
    outcome: str = ""
    #: Ours: the tools behind that ending, or None.
    candidates: list[str] | None = None
    #: Ours: the call a dialog paused before for approval, and its token, or None.
    approval: AgentApproval | None = None
