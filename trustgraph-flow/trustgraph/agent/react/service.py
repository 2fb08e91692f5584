"""agent-manager-react: a ReAct agent whose tools may be tool services.

Serves AgentRequest on each flow's ``request`` topic and answers on
``response`` (upstream 2.1.4's topics and messages).  One message is one iteration: when
the model calls a tool, the dialog goes on as a new AgentRequest, with the
step added to its history, published on ``next`` with the same ``id``
property.

Tools come from the tool catalog (config types ``tool``, ``tool-service``
and ``mcp``, see :mod:`trustgraph.catalog`) and the ``--config-type``
(``agent``: ``additional-context``), rebuilt on every config push.  A bad
descriptor is logged at WARNING (tool key, field, reason) and left out while
the others load; the current errors are kept in ``descriptor_errors``.  The
gateway builds the same catalog for ``GET /api/v1/tool-catalog`` (shown by
``tg-show-tools``), so both report a problem in the same words.

Differences from upstream worth knowing:

* ``-c/--concurrency`` (default 8): requests are handled concurrently; each
  holds the tool registry it started with, so a reload never changes the
  tools under a running iteration.
* ``--tool-timeout`` (default 60 s) is the deadline of a whole tool call; a
  tool descriptor may set its own with a ``timeout`` field (seconds).  A
  late tool becomes an ``Error:`` observation and the dialog goes on.
* ``--prompt-timeout`` (default 120 s) bounds each call of the ``agent-react``
  prompt; missing it ends the dialog with an ``agent-error``.
* The model's arguments are checked against the tool's argument schema
  before the call; a mismatch is an ``Error:`` observation naming what to fix.
* Type ``row-embeddings-query`` embeds the query (``embeddings-*``) and
  searches the rows (``row-embeddings-query-*``), as upstream.
* A dialog stops, with an error saying why, once a broker connection was
  lost after its first request reached the agent (this agent's own, or one
  another process told of): every caller of ours has then ended the call
  as failed (``trustgraph.base.messaging.lost_calls``), so no further model step or
  tool call is made for it (a non-idempotent tool would otherwise run again
  for nobody).  When the dialog started travels with it on ``next``
  (property ``dialog-started``), so any replica can tell.
* ``--wire 2.11`` takes the place of upstream 2.11's agent-manager-react: its
  request, ``next`` and response records and its prompt service's reply, read
  and written by the wire's agent dialect (``wire.component("agent-dialect")``;
  ours: ``dialects.py``), and the records the built-in tools send 2.11's flow
  services (graph-rag, embeddings, row-embeddings query: the dialect's
  ``tools``); the loop is the same.
* A call of a tool that needs a person's approval (config
  ``tool-policy/approval``) ends the dialog as ``approval-required``, with a
  token signed under ``--approval-key-file`` (a key of this process's own
  without it: said at start); a request carrying the ``approval`` property
  resumes the dialog from that step (``approval.py``, docs/governing-tools.md).
"""

from __future__ import annotations

import argparse
import logging
import math
import time
from collections.abc import Mapping
from contextlib import aclosing
from typing import Any

from trustgraph.base.messaging import deadlines, tracing
from trustgraph.base.messaging.lost_calls import Loss
from trustgraph.base.messaging.pubsub import Message
from trustgraph.base.messaging.serving import Reply, ServiceError
from trustgraph.base.processors.async_processor import StartRefused
from trustgraph.base.processors.flow_processor import (
    ConsumerSpec,
    Flow,
    FlowProcessor,
    ProducerSpec,
    RequestResponseSpec,
)
from trustgraph.base.tool_services.catalog_feed import CatalogFeed
from trustgraph.base.tool_services.tool_service_client import ToolServiceClients
from trustgraph.base.wire import WIRES
from trustgraph.catalog import embedding
from trustgraph.catalog.implementations import FLOW_CLIENTS
from trustgraph.schema import (
    AgentRequest,
    PromptRequest,
    TextCompletionRequest,
    TextCompletionResponse,
)
from trustgraph.schema.services.agent import APPROVAL, DIALOG_STARTED, EMPTY_QUESTION, SHOW_ACTIONS

from .agent_manager import AgentManager
from .approval import ApprovalRefused, Approvals, read_key
from .decisions import Confidence
from .dialects import DIALECT, Dialect
from .dialects import ERROR_TYPE as ERROR_TYPE
from .dialects import REPLIES as REPLIES
from .dialects import to_response as to_response
from .registry import Registry, build_registry
from .steps import FAILURES_PROPERTY, carried_failures, failures_property
from .vocabulary import Act, Answer, Continue, Failed

logger = logging.getLogger(__name__)

default_ident = "agent-manager"
default_max_iterations = 10
default_concurrency = 8
default_tool_timeout = 60.0
default_prompt_timeout = 120.0
#: A dialog's own limit when its caller set no deadline: under the 120 s a gateway (ours or
#: upstream's) waits, so the caller reads the agent's own words, never a transport timeout.
default_dialog_timeout = 90.0
#: The dialog ends this long before its caller's deadline, so its last message arrives in time.
REPLY_MARGIN = deadlines.REPLY_MARGIN

# Client flow keys, as upstream's agent registers them: prefix -> request and response records.
# The tools' own come with the tools; the agent asks the prompt service itself too.
CLIENTS: dict[str, tuple[type, type]] = {
    "text-completion": (TextCompletionRequest, TextCompletionResponse),
    **FLOW_CLIENTS,
}


def dialog_started(request: AgentRequest, properties: Mapping[str, str], now: float) -> float:
    """When the dialog reached the agent: ``now`` for its first request, else what the iteration
    before wrote on ``next`` (never later than ``now``; ``now`` when absent or unreadable, as
    from an older agent: then only this iteration is covered)."""
    if not request.history:
        return now
    try:
        started = float(properties.get(DIALOG_STARTED) or "nan")
    except ValueError:
        return now
    return min(started, now) if math.isfinite(started) else now


def abandoned_because(loss: Loss) -> str:
    """The error that ends a dialog whose caller was told it failed (see the module docstring)."""
    who = "the agent" if loss.by is None else loss.by
    return (f"The dialog stopped: {who} lost its broker connection during it, so its caller was told the "
            "call failed, and no further tool call or model step was made for it. Ask again.")


class Processor(FlowProcessor):
    """The agent: flows from ``active-flow[<id>]``, tools from config."""

    #: 2.1's records by default; with ``--wire 2.11``, 2.11's (the wire's ``agent-dialect``).
    wires = WIRES

    def __init__(self, **params: Any) -> None:
        params["concurrency"] = params.get("concurrency") or default_concurrency
        key_file = params.get("approval_key_file")
        try:
            # The key's bytes: never logged, never kept in params.
            approvals = Approvals(read_key(key_file) if key_file else None)
        except ValueError as e:
            raise StartRefused(str(e)) from None
        super().__init__(**params)
        self.approvals = approvals
        self.config_type: str = params.get("config_type") or "agent"
        prompt_timeout = float(params.get("prompt_timeout") or default_prompt_timeout)
        self.dialog_timeout = float(params.get("dialog_timeout") or default_dialog_timeout)
        min_confidence = params.get("min_confidence")
        tie = params.get("tie_ratio")
        lead = params.get("ranker_lead")
        sure = params.get("model_sure")
        self.manager = AgentManager(
            max_iterations=int(params.get("max_iterations") or default_max_iterations),
            tool_timeout=float(params.get("tool_timeout") or default_tool_timeout),
            prompt_timeout=prompt_timeout,
            confidence=Confidence(accept=Confidence.accept if min_confidence is None else float(min_confidence),
                                  tie=Confidence.tie if tie is None else float(tie),
                                  lead=None if lead is None else float(lead),
                                  sure=Confidence.sure if sure is None else float(sure),
                                  check_arguments=params.get("argument_check") is not False),
            approvals=approvals,
        )
        # Tools: config, and the services that announce themselves; calls to a
        # service known to be down fail at once (its liveness is the directory's).
        self.feed = CatalogFeed(self, self.on_tools, extra_types=[self.config_type])
        self.manager.stopped_service_of = self.feed.directory.stopped_service_of
        self.manager.stopped_tools = self.feed.directory.stopped_tools
        self.tool_clients = ToolServiceClients(
            self.pubsub, name=self.id, liveness=self.feed.directory.live_for,
            unserved=self.unserved_topics)
        self.manager.unavailable = self._unavailable
        self.registry = Registry()
        self.descriptor_errors: list[str] = []

        # The one place the wire matters: which records, and how a request is read and answered.
        self.dialect: Dialect = self.wire.component("agent-dialect", DIALECT)
        self.register_specification(ConsumerSpec("request", self.dialect.request, self.on_request,
                                                 replies=self.dialect.replies))
        self.register_specification(ProducerSpec("next", self.dialect.request))
        self.register_specification(ProducerSpec("response", self.dialect.response))
        clients = {**CLIENTS, **self.dialect.tools.clients, "prompt": (PromptRequest, self.dialect.prompt_response)}
        for prefix, (req, resp) in clients.items():
            self.register_specification(RequestResponseSpec(
                f"{prefix}-request", req, f"{prefix}-response", resp,
                timeout=prompt_timeout if prefix == "prompt" else default_tool_timeout))

    async def on_tools(self, config: dict[str, dict[str, str]], announced: Mapping[str, Any]) -> None:
        """Build a new registry and swap it in; requests in flight keep theirs."""
        registry = build_registry(config, self.tool_clients, self.config_type, announced,
                                  self.dialect.tools.builders)
        old = set(self.descriptor_errors)
        for error in registry.errors:
            if str(error) not in old:  # a rebuild for a heartbeat does not repeat known problems
                logger.warning("Tool descriptor skipped: %s", error)
        for warning in registry.catalog.new_warnings(self.registry.catalog):
            logger.warning("Tool descriptor: %s", warning)
        self.registry = registry
        self.descriptor_errors = [str(e) for e in registry.errors]
        await self.tool_clients.keep(registry.queue_pairs)
        # The count as well: a long list is cut in the log line.
        logger.info("Tools: %s (%d tool(s), %d announced service(s), %d descriptor error(s))",
                    ", ".join(sorted(registry.tools)) or "none", len(registry.tools), len(announced),
                    len(registry.errors))

    def _unavailable(self, tool: Any) -> str | None:
        """Why a tool cannot be used now (its tool service is known to be down), or None."""
        service = getattr(tool, "service", None)
        return None if service is None else self.tool_clients.unavailable(service)

    async def start(self) -> None:
        embedding.preload()   # the tool ranker's model, while the subscriptions are made
        if self.approvals.own_key:
            logger.info("Approvals: no --approval-key-file, so this process signs approval tokens with a key of "
                        "its own: a dialog paused for approval cannot be resumed after the agent restarts, nor "
                        "by another replica")
        await self.feed.start()
        await super().start()

    async def on_request(self, msg: Message, flow: Flow, reply: Reply) -> None:
        """Run one iteration and send its messages; a failure of ours becomes an agent-error.

        A question that is not a string, or is empty or only whitespace, is refused with an
        agent-error before any model step: there is nothing to answer."""
        rid = reply.id
        dialog = self.dialect.open(msg.value)
        request: AgentRequest = dialog.request
        now = time.time()
        if not isinstance(request.question, str):
            # null decodes as None, not the default: the caller's mistake, said as such, not a traceback.
            raise ServiceError("the request has no question: 'question' must be a string")
        if not request.question.strip():
            # A caller on the broker (the gateway refuses it before sending): the model would
            # answer nothing with a guess.
            raise ServiceError(EMPTY_QUESTION)
        registry = self.registry
        logger.debug("Agent request %s: iteration %d, streaming %s", rid,
                     len(request.history or []) + 1, bool(request.streaming))
        # The dialog's deadline (its caller's, else its own) goes on with it to the next iteration;
        # the dialog ends a margin before it, in its own words.
        caller = reply.deadline
        if not request.history:   # the dialog starts: its own limit too, whatever its caller allows
            own = time.time() + self.dialog_timeout + REPLY_MARGIN
            caller = own if caller is None else min(caller, own)
        elif caller is None:      # a next step from a peer that stamped none
            caller = time.time() + self.dialog_timeout + REPLY_MARGIN
        props = {"id": rid, deadlines.DEADLINE: f"{caller:.3f}"}
        end = caller - REPLY_MARGIN
        show_actions = msg.properties.get(SHOW_ACTIONS) == "true"
        if show_actions:
            props[SHOW_ACTIONS] = "true"   # and for the next iterations
        started = dialog_started(request, msg.properties, now)
        props[DIALOG_STARTED] = f"{started:.3f}"
        calls = self.pubsub.calls

        def abandoned() -> str | None:
            loss = calls.lost_since(started)
            return None if loss is None else abandoned_because(loss)

        # aclosing: if a send fails, the iteration's prompt call is cancelled at once.
        failures = carried_failures(msg.properties.get(FAILURES_PROPERTY), request.history or [])
        # This iteration's span (serving's, when tracing): the step, what it did and how it ended.
        span = tracing.current()
        resume = None
        if (raw := msg.properties.get(APPROVAL)) is not None:
            # The caller's answer to a call the dialog paused before: checked before anything runs
            # (a bad one is an agent-error and changes nothing), then the paused dialog goes on.
            try:
                resume = self.approvals.redeem(raw, request)
            except ApprovalRefused as e:
                logger.info("Agent request %s: approval refused: %s", rid, e)
                raise ServiceError(str(e)) from None
            request, failures = resume.paused.request(bool(request.streaming)), resume.paused.failures
            tracing.note(span, trustgraph_approval=resume.decision)
        tracing.note(span, trustgraph_dialog_step=len(request.history or []) + 1)
        async with aclosing(self.manager.react(request, registry, flow, end, abandoned, failures,
                                               resume)) as events:
            async for event in events:
                if isinstance(event, Continue):
                    tracing.note(span, trustgraph_outcome="next-step")
                    # The next iteration is a child of this one: a dialog is one trace.
                    await flow("next").send(dialog.next(event.request), tracing.outgoing(
                        {**props, FAILURES_PROPERTY: failures_property(event.failures)}))
                elif isinstance(event, Act) and not show_actions:
                    tracing.note(span, trustgraph_tool=event.name)
                    continue   # only for a caller that asked (upstream's clients would show it as a thought)
                else:
                    if isinstance(event, Act):
                        tracing.note(span, trustgraph_tool=event.name)
                    await reply.send(dialog.response(event))
                    if isinstance(event, Failed):
                        tracing.failed(span, event.message, "agent-error")
                        logger.info("Agent request %s failed: %s", rid, event.message)
                    elif isinstance(event, Answer) and event.end and event.outcome:
                        tracing.note(span, trustgraph_outcome=event.outcome)

    async def stop(self) -> None:
        await self.feed.stop()
        await self.tool_clients.close()
        await super().stop()

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument("--max-iterations", type=int, default=default_max_iterations,
                            help="iterations (tool calls) per dialog before it ends with an error "
                                 "(default %(default)s)")
        parser.add_argument("--config-type", default="agent",
                            help="config type holding additional-context (default %(default)s)")
        parser.add_argument("-c", "--concurrency", type=int, default=default_concurrency,
                            help="requests handled at once per flow (default %(default)s)")
        parser.add_argument("--tool-timeout", type=float, default=default_tool_timeout,
                            help="deadline of one tool call in seconds; a tool descriptor's "
                                 "'timeout' field overrides it (default %(default)s)")
        parser.add_argument("--min-confidence", type=float, default=Confidence.accept,
                            help="the share of the model's probability its chosen tool must have "
                                 "among the tools (from the LLM service's choice scores); below it the "
                                 "dialog asks back which tool was meant, or says no tool fits. 0 takes "
                                 "every choice (default %(default)s)")
        parser.add_argument("--tie-ratio", type=float, default=Confidence.tie,
                            help="when the next likeliest tool has at least this share of the chosen "
                                 "tool's probability, no tool is clearly the best and the dialog asks "
                                 "back, naming both; 0 turns it off (default %(default)s)")
        parser.add_argument("--ranker-lead", type=float, default=None,
                            help="with the tool ranker's embedding model and the LLM's choice scores: how "
                                 "much nearer the question (cosine similarity) the ranker's first tool must be "
                                 "than its second to be called in place of an unsure model's choice; 0 leaves "
                                 "the choice to the model's share alone (default: the embedding model's own, "
                                 "0.04 for the sentence encoder, 0.05 for the static model)")
        parser.add_argument("--model-sure", type=float, default=Confidence.sure,
                            help="the model's share of its chosen tool at which the ranker does not overrule "
                                 "it (default %(default)s)")
        parser.add_argument("--argument-check", action=argparse.BooleanOptionalAction, default=True,
                            help="ask back, rather than call the tool, when a value the model gave a "
                                 "tool's argument was never said in the dialog (a made-up city, a text "
                                 "the model wrote itself); --no-argument-check for a model trusted to "
                                 "infer values (default: on)")
        parser.add_argument("--dialog-timeout", type=float, default=default_dialog_timeout,
                            help="seconds a whole dialog may take (its caller's deadline may be "
                                 "shorter); past it the dialog ends with the agent's own error, before "
                                 "any gateway's timeout (default %(default)s)")
        parser.add_argument("--prompt-timeout", type=float, default=default_prompt_timeout,
                            help="deadline of one agent-react prompt call in seconds "
                                 "(default %(default)s)")
        parser.add_argument("--approval-key-file", metavar="FILE", default=None,
                            help="the key (the file's bytes, at least 16) that signs the tokens of dialogs paused "
                                 "for approval (tool-policy/approval); every replica needs the same one. Without "
                                 "it each process makes its own, and a paused dialog cannot be resumed after a "
                                 "restart (tg-launch gives its data directory's approval.key)")


def run() -> None:
    """Console script ``agent-manager-react``."""
    Processor.launch(default_ident, __doc__)
