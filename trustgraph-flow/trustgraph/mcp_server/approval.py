"""A call that needs a person's approval, asked of an MCP client before it is made.

Which calls wait is the agent's rule, read from the same config item by the
same code (``tool-policy/approval``: :class:`trustgraph.catalog.policy.ApprovalPolicy`,
carried by the catalog): a tool the policy names, or one that says it is
destructive while the policy's ``destructive`` is true.  mcp-server does not
make such a call until the person approves it:

* a client of MCP 2026-07-28 that answers elicitations is answered with
  ``input_required``: one form elicitation (key :data:`APPROVE`, a yes/no
  field of the same name) naming the tool, its arguments and why it is
  asked, and a ``requestState``.  The client asks its user and retries the
  same ``tools/call`` with the answer and the state.  "Yes" makes that call
  once; "no", a declined or cancelled form, refuses it (a result flagged
  ``isError`` saying so, nothing called).
* any other client (the session era, 2024-11-05 to 2025-11-25, or a
  2026-07-28 client without elicitation) is answered with a result flagged
  ``isError`` saying the tool needs approval and this client cannot give it.
  The session era's own elicitation (a server-to-client request in the middle
  of a call) is not used: one way of asking, bound the one way below.

The approval is bound to the call it was asked about by the SDK's
``RequestStateBoundary``: the state is sealed (AES-GCM under a key this
process makes at start) with the tool's name and a digest of the arguments,
so a retry with other arguments, another tool, or a state we did not make is
refused with the protocol's ``Invalid or expired requestState`` error, before
anything runs.  Inside the state: an id and when the approval expires (the
policy's ``expires`` at the time of asking).  An id is used once: a replayed
approved retry is refused, and remembered until it would have expired.  The
key and the used ids live in this process, as tasks do: an approval asked by
another replica, or before a restart, is refused and asked again on the next
call.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from typing import Any

import mcp_types as types
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from trustgraph.catalog.calling import CallableTool, check_call
from trustgraph.catalog.policy import MAX_EXPIRES, ApprovalPolicy

from .tools import error_result

logger = logging.getLogger(__name__)

#: The key of the one input request, and the form's yes/no field.
APPROVE = "approve"
#: The audience sealed into each state: a state made by another service is refused.
AUDIENCE = "trustgraph-mcp-server"


def can_elicit(ctx: Any) -> bool:
    """Whether this request's client takes ``input_required`` with a form elicitation in it."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    # An elicitation capability that names no mode means form (the revision that added modes says so).
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def arguments_text(arguments: Any) -> str:
    return json.dumps(arguments or {}, ensure_ascii=False)


class Approvals:
    """Asks for, and checks, approvals of this mcp-server's calls (see the module)."""

    def __init__(self) -> None:
        # The outer bound on any state; each approval's own expiry is the policy's, inside the state.
        self.boundary = RequestStateBoundary(RequestStateSecurity.ephemeral(ttl=MAX_EXPIRES),
                                             default_audience=AUDIENCE)
        self._used: dict[str, float] = {}    # approval id -> when it expires

    def __len__(self) -> int:
        """Approvals used and still remembered."""
        return len(self._used)

    def check(self, ctx: Any, params: types.CallToolRequestParams, tool: CallableTool,
              policy: ApprovalPolicy) -> types.CallToolResult | types.InputRequiredResult | None:
        """None when the call may be made now; otherwise what to answer instead of making it."""
        reason = policy.reason(tool.name, tool.annotations)
        if reason is None:
            return None
        _, refusal = check_call(tool, params.arguments or {})
        if refusal is not None:   # nobody is asked about a call that would be refused anyway
            return error_result(refusal.text)
        said = f"tool '{tool.name}' with {arguments_text(params.arguments)}"
        if not can_elicit(ctx):
            why = ("it does not answer elicitations" if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
                   else f"it speaks MCP {ctx.protocol_version}, which has no input_required")
            return error_result(
                f"The call of {said} needs a person's approval ({reason}), and this client cannot give it "
                f"({why}), so it was not made. Use an MCP 2026-07-28 client that answers elicitations, or "
                "the agent (tg-invoke-agent asks on the terminal).")
        if params.request_state is None:
            return self._ask(tool.name, said, reason, policy)
        return self._answered(params, said)

    def _ask(self, tool: str, said: str, reason: str, policy: ApprovalPolicy) -> types.InputRequiredResult:
        state = json.dumps({"id": uuid.uuid4().hex, "until": time.time() + policy.expires})
        form = types.ElicitRequestFormParams(
            message=f"Run {said}? It needs your approval: {reason}.",
            requested_schema={"type": "object", "required": [APPROVE],
                              "properties": {APPROVE: {"type": "boolean", "title": "Run it?",
                                                       "description": f"Yes runs {said} once; no refuses it"}}})
        logger.info("Tool %s: asking the client for approval", tool)
        logger.debug("Asking the client to approve %s", said)
        return types.InputRequiredResult(input_requests={APPROVE: types.ElicitRequest(params=form)},
                                         request_state=state)

    def _answered(self, params: types.CallToolRequestParams, said: str) -> types.CallToolResult | None:
        # The boundary has checked the seal, the tool and the arguments: this is the state we made
        # for this very call.
        try:
            state = json.loads(params.request_state or "")
            aid, until = str(state["id"]), float(state["until"])
        except (ValueError, KeyError, TypeError):
            return error_result(f"The call of {said} was not made: its approval state is unreadable; call again "
                                "to be asked again.")
        now = time.time()
        self._used = {k: t for k, t in self._used.items() if t > now}
        if until <= now:
            return error_result(f"The call of {said} was not made: its approval expired; call again to be "
                                "asked again.")
        if aid in self._used:
            logger.info("Tool %s: a used approval was sent again, refused", params.name)
            return error_result(f"The call of {said} was not made: this approval was used for a call already "
                                "(each approval makes one); call again to be asked again.")
        answer = (params.input_responses or {}).get(APPROVE)
        if not isinstance(answer, types.ElicitResult):
            return error_result(f"The call of {said} was not made: the retry carried no answer to the approval "
                                f"request '{APPROVE}'; call again to be asked again.")
        self._used[aid] = until
        if answer.action == "accept" and (answer.content or {}).get(APPROVE) is True:
            logger.info("Tool %s: approved by the client", params.name)
            return None
        logger.info("Tool %s: refused by the client (%s)", params.name, answer.action)
        return error_result(f"The user refused the call of {said}, so it was not made.")
