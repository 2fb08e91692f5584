"""Approval of a tool call (issue 38 point 2): the policy, the token, and the agent pausing and resuming.

The token and the policy are tested alone; the agent on the in-memory transport, with the
scripted prompt (its calls counted) and a real tool service that records every call it gets.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import time

import pytest
from support import wait_for_async
from trustgraph.agent.react import Processor as Agent
from trustgraph.agent.react.approval import ApprovalRefused, Approvals, read_key
from trustgraph.base import DynamicToolService
from trustgraph.base.descriptors.annotations import Annotations
from trustgraph.base.processors.async_processor import StartRefused
from trustgraph.base.testing import MemoryBroker, ScriptedPrompt, action, final_answer, worker
from trustgraph.catalog import build_catalog, check_item
from trustgraph.catalog.policy import APPROVAL_DEFAULT, DESTRUCTIVE, NAMED, ApprovalPolicy, parse_approval
from trustgraph.cli.show_tools import approval_line, tool_rows
from trustgraph.schema import AgentRequest, AgentResponse, AgentStep, PromptRequest
from trustgraph.schema.services.agent import APPROVAL, OUTCOME_APPROVAL
from trustgraph.topics import tool_service_topics

QUESTION = "Delete the note called groceries"
ARGS = {"title": "groceries"}

# -- the policy -------------------------------------------------------------------------------


def policy(value: object) -> tuple[ApprovalPolicy, str | None]:
    got, error = parse_approval(value if value is None or isinstance(value, str) else json.dumps(value))
    return got, None if error is None else str(error)


def test_no_policy_asks_first_for_every_tool_that_says_it_is_destructive():
    assert policy(None) == (APPROVAL_DEFAULT, None)
    assert APPROVAL_DEFAULT == ApprovalPolicy(frozenset(), True, 600.0)
    assert APPROVAL_DEFAULT.reason("rm", Annotations(destructive=True)) == DESTRUCTIVE
    # An annotation nobody gave claims nothing: such a tool is not destructive for approval
    # (Annotations.assumed would read it as destructive: MCP's worst case, not used here).
    assert Annotations().assumed("destructive") is True
    assert APPROVAL_DEFAULT.reason("rm", Annotations()) is None
    assert APPROVAL_DEFAULT.reason("rm", Annotations(destructive=False)) is None
    assert APPROVAL_DEFAULT.reason("ls", Annotations(read_only=True)) is None


def test_a_policy_names_tools_and_may_turn_the_destructive_rule_off():
    got, error = policy({"tools": ["send-mail"], "destructive": False, "expires": 30})
    assert error is None and got == ApprovalPolicy(frozenset({"send-mail"}), False, 30.0)
    assert got.reason("send-mail", Annotations()) == NAMED
    assert got.reason("rm", Annotations(destructive=True)) is None
    assert policy({"tools": ["a"]})[0] == ApprovalPolicy(frozenset({"a"}), True, 600.0)   # the rest: defaults


@pytest.mark.parametrize(("value", "line"), [
    ("{", "tool-policy/approval: field '(json)': not valid JSON"),
    (["rm"], "tool-policy/approval: field '(json)': it must be an object"),
    ({"tool": ["rm"]}, "tool-policy/approval: field 'tool': unknown key (did you mean 'tools'?)"),
    ({"tools": "rm"}, "tool-policy/approval: field 'tools': must be a list of tool names, got a string"),
    ({"tools": ["rm", ""]}, "tool-policy/approval: field 'tools': must be a list of tool names (non-empty strings)"),
    ({"destructive": "yes"}, "tool-policy/approval: field 'destructive': must be true or false, got \"yes\""),
    ({"expires": 0}, "tool-policy/approval: field 'expires': must be a number of seconds from 1 to 604800"),
    ({"expires": True}, "tool-policy/approval: field 'expires': must be a number"),
    ({"expires": "600"}, "tool-policy/approval: field 'expires': must be a number"),
])
def test_an_unreadable_policy_is_reported_and_read_as_the_default(value, line):
    got, error = policy(value)
    assert got == APPROVAL_DEFAULT
    assert error is not None and error.startswith(line), error
    assert error.endswith('(read as the default, {"tools": [], "destructive": true, "expires": 600}, until it is '
                          "fixed)")


SERVICE = {"id": "notes", "request-queue": tool_service_topics("unit-notes")[0],
           "response-queue": tool_service_topics("unit-notes")[1]}
NOTE_TOOL = {"type": "tool-service", "name": "delete-note", "description": "Delete a note", "service": "notes",
             "arguments": [{"name": "title", "type": "string", "description": "the note's title"}]}
READ_TOOL = {**NOTE_TOOL, "name": "read-note", "description": "Read a note", "read-only": True}


def catalog_config(*, service: dict | None = None, tool: dict | None = None, approval: object = None):
    config = {"tool-service": {"notes": json.dumps(service or SERVICE)},
              "tool": {"delete-note": json.dumps(tool or NOTE_TOOL), "read-note": json.dumps(READ_TOOL)}}
    if approval is not None:
        config["tool-policy"] = {"approval": json.dumps(approval)}
    return config


def test_the_catalog_says_which_tools_need_approval_its_service_s_word_counting_too():
    catalog = build_catalog(catalog_config(service={**SERVICE, "destructive": True}))
    assert catalog.errors == () and catalog.approval == APPROVAL_DEFAULT
    # the service says destructive: its tools are, unless a tool says otherwise (read-only)
    assert catalog.approval_reason(catalog.tools["delete-note"]) == DESTRUCTIVE
    assert catalog.approval_reason(catalog.tools["read-note"]) is None
    body = catalog.to_json()
    assert {t["name"]: t["approval"] for t in body["tools"]} == {"delete-note": DESTRUCTIVE, "read-note": None}
    assert body["approval-policy"] == {"tools": [], "destructive": True, "expires": 600.0}
    # A tool that says nothing, of a service that says nothing: not asked about, unless named.
    assert build_catalog(catalog_config()).to_json()["tools"][0]["approval"] is None
    named = build_catalog(catalog_config(approval={"tools": ["delete-note"]}))
    assert named.approval_reason(named.tools["delete-note"]) == NAMED


def test_a_bad_policy_is_a_catalog_problem_and_tg_put_config_item_refuses_it():
    catalog = build_catalog(catalog_config(tool={**NOTE_TOOL, "destructive": True}, approval={"expires": -1}))
    assert [str(e).split(":")[0] for e in catalog.errors] == ["tool-policy/approval"]
    assert catalog.approval_reason(catalog.tools["delete-note"]) == DESTRUCTIVE   # the default, meanwhile
    refused = check_item(catalog_config(), "tool-policy", "approval", '{"tools": "delete-note"}')
    assert [str(e) for e in refused.errors][0].startswith("tool-policy/approval: field 'tools': ")
    # A name that is no tool is written with a warning (a typo would leave the meant tool unasked).
    typo = check_item(catalog_config(), "tool-policy", "approval", '{"tools": ["delete-notes"]}')
    assert typo.errors == () and [str(w) for w in typo.warnings] == [
        "tool-policy/approval: field 'tools': names 'delete-notes', which is no tool of the catalog now "
        "(a tool of that name will need approval)"]


def test_tg_show_tools_says_which_tools_need_approval():
    body = build_catalog(catalog_config(tool={**NOTE_TOOL, "destructive": True},
                                        approval={"tools": ["read-note"], "expires": 120})).to_json()
    rows = {t["name"]: dict(tool_rows(t)) for t in body["tools"]}
    assert rows["delete-note"]["approval"] == f"asked first: {DESTRUCTIVE}"
    assert rows["read-note"]["approval"] == f"asked first: {NAMED}"
    plain = build_catalog(catalog_config(approval={"destructive": False})).to_json()["tools"][0]
    assert dict(tool_rows(plain))["approval"] == "not asked: the agent calls it when the model decides to"
    assert "approval" not in dict(tool_rows({"key": "x", "name": "x"}))   # an older gateway's entry
    assert approval_line(body["approval-policy"]) == (
        "Approval (tool-policy/approval): the agent asks before calling every tool that says it is destructive "
        "and the tool read-note; an approval waits 120 s")
    assert "the tools a, b;" in approval_line({"tools": ["a", "b"], "destructive": False, "expires": 60})
    assert approval_line({"tools": [], "destructive": False, "expires": 600}).endswith("calling no tool; an "
                                                                                    "approval waits 600 s")


# -- the token ----------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


HISTORY = [AgentStep(thought="look", action="read-note", arguments={"title": "groceries"}, observation="milk")]


def paused(approvals: Approvals, expires_in: float = 600.0, **request: object):
    req = AgentRequest(question=QUESTION, user="alice", state="s1", group=["notes"], history=HISTORY)
    for k, v in request.items():
        setattr(req, k, v)
    return approvals.issue(req, {0: "failed"}, "delete-note", {"title": "groceries", "n": 2}, "I will delete it",
                           expires_in)


def answer(token: str, decision: str = "approve") -> str:
    return json.dumps({"token": token, "decision": decision})


def test_a_token_is_the_paused_dialog_signed_and_resumes_it_once():
    clock = Clock()
    approvals = Approvals(b"k" * 32, clock=clock)
    approval = paused(approvals)
    assert (approval.tool, approval.arguments, approval.expires) == ("delete-note", {"title": "groceries", "n": 2},
                                                                      clock.now + 600)
    assert approval.token.startswith("a1.") and approval.token.count(".") == 2
    resume = approvals.redeem(answer(approval.token), AgentRequest(question=QUESTION, user="alice"))
    p = resume.paused
    assert resume.approved and resume.decision == "approve"
    assert (p.question, p.user, p.state, p.group, p.history, p.failures, p.step) == (
        QUESTION, "alice", "s1", ["notes"], HISTORY, {0: "failed"}, 2)
    assert (p.tool, p.arguments, p.thought) == ("delete-note", {"title": "groceries", "n": 2}, "I will delete it")
    assert p.request(streaming=True) == AgentRequest(question=QUESTION, state="s1", group=["notes"],
                                                     history=HISTORY, user="alice", streaming=True)
    with pytest.raises(ApprovalRefused, match=r"^the approval was already used: ask again$"):
        approvals.redeem(answer(approval.token, "refuse"), AgentRequest(question=QUESTION, user="alice"))
    # Another replica with the same key takes it (it does not know the first used it: documented).
    assert Approvals(b"k" * 32, clock=clock).redeem(answer(approval.token),
                                                    AgentRequest(question=QUESTION, user="alice")).approved
    # Two tokens of one pause are two nonces.
    assert paused(approvals).token != paused(approvals).token


def flip(token: str, part: int) -> str:
    parts = token.split(".")
    text = parts[part]
    parts[part] = text[:5] + ("A" if text[5] != "A" else "B") + text[6:]
    return ".".join(parts)


@pytest.mark.parametrize("forge", [
    lambda t: flip(t, 1),                                        # the dialog altered
    lambda t: flip(t, 2),                                        # the signature altered
    lambda t: Approvals(b"x" * 32).issue(AgentRequest(question=QUESTION, user="alice"), {}, "delete-note", ARGS,
                                         "", 600).token,        # signed under another key
])
def test_a_forged_or_altered_token_is_refused_and_uses_nothing_up(forge):
    approvals = Approvals(b"k" * 32)
    token = paused(approvals).token
    with pytest.raises(ApprovalRefused, match=r"^the approval's token was not signed by this agent \(forged or "
                                              r"altered, or signed under another approval key"):
        approvals.redeem(answer(forge(token)), AgentRequest(question=QUESTION, user="alice"))
    assert approvals.redeem(answer(token), AgentRequest(question=QUESTION, user="alice")).approved


def test_an_approval_for_another_question_or_user_or_after_its_expiry_is_refused():
    clock = Clock()
    approvals = Approvals(b"k" * 32, clock=clock)
    token = paused(approvals, expires_in=60).token
    with pytest.raises(ApprovalRefused, match=r"^the approval is for another question: "):
        approvals.redeem(answer(token), AgentRequest(question=QUESTION + "!", user="alice"))
    with pytest.raises(ApprovalRefused, match=r"^the approval is for another user: "):
        approvals.redeem(answer(token), AgentRequest(question=QUESTION, user="bob"))
    clock.now += 60.5
    with pytest.raises(ApprovalRefused, match=r"^the approval expired: ask again$"):
        approvals.redeem(answer(token), AgentRequest(question=QUESTION, user="alice"))
    # A used token's nonce is forgotten once it has expired: refused as expired, not kept forever.
    fresh = paused(approvals, expires_in=10).token
    approvals.redeem(answer(fresh), AgentRequest(question=QUESTION, user="alice"))
    clock.now += 11
    with pytest.raises(ApprovalRefused, match="expired"):
        approvals.redeem(answer(fresh), AgentRequest(question=QUESTION, user="alice"))
    assert repr(approvals) == "Approvals(own_key=False, used=0)"


@pytest.mark.parametrize(("raw", "why"), [
    ("not json", "not JSON"),
    ('["a"]', "not an object"),
    ('{"decision": "approve"}', "it has no token"),
    ('{"token": "a1.x.y", "decision": "yes"}', 'its decision is "yes", not "approve" or "refuse"'),
    ('{"token": "a1.x.y"}', "its decision is null"),
    ('{"token": "v9.x.y", "decision": "approve"}', "its token is not one of the agent's approval tokens"),
    ('{"token": "a1.xy", "decision": "refuse"}', "its token is not one of the agent's approval tokens"),
])
def test_a_malformed_approval_says_what_to_send_back(raw, why):
    with pytest.raises(ApprovalRefused) as refused:
        Approvals(b"k" * 32).redeem(raw, AgentRequest(question=QUESTION, user="alice"))
    assert str(refused.value).startswith(f"the approval is malformed: {why}")
    assert str(refused.value).endswith('send back {"token": ..., "decision": "approve" or "refuse"} with the token '
                                       "of the agent's approval-required answer")


def test_the_key_file_gives_its_bytes_and_a_missing_or_short_one_is_one_line(tmp_path):
    key = tmp_path / "approval.key"
    key.write_bytes(b"\x00\xff" * 16)
    assert read_key(str(key)) == b"\x00\xff" * 16
    with pytest.raises(ValueError, match=r"^cannot read the approval key file .*/nothing: No such file"):
        read_key(str(tmp_path / "nothing"))
    key.write_bytes(b"short")
    with pytest.raises(ValueError, match=r"holds 5 byte\(s\); an approval key needs at least 16"):
        read_key(str(key))
    # The agent refuses to start on it, in that one line (launch prints it, exit 2).
    with pytest.raises(StartRefused, match="holds 5 byte"):
        Agent(id="a", approval_key_file=str(key), metrics=False, follow_config=False)


def test_tg_launch_makes_the_stack_s_key_once_private_and_keeps_it(tmp_path):
    from trustgraph.launch.launcher import approval_key

    path = approval_key(tmp_path)
    first = path.read_bytes()
    assert path.name == "approval.key" and len(first) == 32
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert approval_key(tmp_path) == path and path.read_bytes() == first   # kept: tokens outlive a restart
    assert read_key(str(path)) == first


# -- the agent ----------------------------------------------------------------------------------


class Notes(DynamicToolService):
    """A tool service that records every call it gets (``calls``)."""

    default_topic = "unit-notes"
    calls: list[dict] = []

    async def invoke(self, user, config, arguments):
        Notes.calls.append({"user": user, **arguments})
        return f"Deleted the note {arguments['title']}."


def done(r: AgentResponse) -> bool:
    return r.end_of_dialog or r.error is not None


@pytest.fixture
async def agent():
    """The agent with flow ``f``, its prompt scripted, the notes service running and a destructive
    ``delete-note`` tool (its service says so) beside a read-only ``read-note``."""
    Notes.calls = []
    broker = MemoryBroker()
    async with worker(Notes, broker=broker), worker(Agent, broker=broker) as w:
        d = w.flow_definition("f")
        d["next"] = d["request"]
        await w.open_flow("f", d)
        w.prompt = ScriptedPrompt(replies=[action("delete-note", **ARGS),
                                           final_answer(lambda t: t["history"][-1]["observation"])])
        await w.respond(d["prompt-request"], d["prompt-response"], PromptRequest, w.prompt)
        await w.configure({"tool-service": {"notes": {**SERVICE, "destructive": True}},
                           "tool": {"delete-note": NOTE_TOOL, "read-note": READ_TOOL}})

        async def ask(streaming: bool = False, approval: dict | None = None, question: str = QUESTION,
                      user: str = "alice") -> list[AgentResponse]:
            props = None if approval is None else {APPROVAL: json.dumps(approval)}
            return await w.call(d["request"], d["response"],
                                AgentRequest(question=question, user=user, streaming=streaming),
                                AgentResponse, until=done, properties=props)

        w.ask = ask
        yield w


def answer_messages(got: list[AgentResponse]) -> list[str]:
    """The answer text of each message that has some (streamed: ``content``; whole: ``answer``)."""
    return [r.content if r.chunk_type else r.answer for r in got
            if (r.chunk_type == "answer" and r.content) or (not r.chunk_type and r.answer)]


def prompt_steps(agent) -> list[int]:
    """The history length of each question the model was asked: one entry per model step."""
    return [len(c["history"]) for c in agent.prompt.calls]


@pytest.mark.parametrize("streaming", [False, True])
async def test_the_agent_stops_before_a_destructive_call_and_an_approval_runs_it_with_no_second_model_step(
        agent, streaming):
    got = await agent.ask(streaming)
    last = got[-1]
    text = 'Approval needed to run delete-note with {"title": "groceries"}: approve or refuse it to go on.'
    # One message: the words (content or answer) and the ending together, so a client that decides
    # need not unprint them; upstream's clients read a normal answer.
    assert answer_messages(got) == [text]
    assert (last.outcome, last.candidates, last.end_of_dialog, last.error) == (OUTCOME_APPROVAL, ["delete-note"],
                                                                               True, None)
    assert (last.approval.tool, last.approval.arguments) == ("delete-note", ARGS)
    assert last.approval.expires == pytest.approx(time.time() + 600, abs=60)
    assert Notes.calls == [] and prompt_steps(agent) == [0]
    resumed = await agent.ask(streaming, {"token": last.approval.token, "decision": "approve"})
    # The call, with exactly the approved arguments, then the dialog goes on from that step: the
    # model is asked once more (history 1), never again for the step it decided.
    assert Notes.calls == [{"user": "alice", **ARGS}]
    assert prompt_steps(agent) == [0, 1]
    assert agent.prompt.calls[1]["history"][0]["action"] == "delete-note"
    end = resumed[-1]
    assert (end.outcome, end.candidates, end.approval) == ("tool-result", ["delete-note"], None)
    assert "".join(answer_messages(resumed)) == "Deleted the note groceries."
    assert all(r.approval is None for r in resumed)


async def test_a_refusal_tells_the_model_and_the_dialog_goes_on_without_the_call(agent):
    agent.prompt.replies = [action("delete-note", **ARGS), final_answer("I left the note alone.")]
    token = (await agent.ask())[-1].approval.token
    got = await agent.ask(approval={"token": token, "decision": "refuse"})
    assert Notes.calls == []
    (observed,) = [r.observation for r in got if r.observation]
    assert observed.startswith("Error: the user refused this call of tool 'delete-note', so it was not made.")
    assert agent.prompt.calls[1]["history"][0]["observation"] == observed   # the model decides what next
    assert prompt_steps(agent) == [0, 1]
    end = got[-1]
    assert end.outcome == "no-tool" and end.answer.endswith("I left the note alone.")
    assert end.answer.startswith("No tool answered this question")   # the model's own words, marked


async def test_the_same_call_after_a_refusal_is_not_asked_again_the_dialog_ends(agent):
    agent.prompt.replies = [action("delete-note", **ARGS), action("delete-note", **ARGS), final_answer("Kept.")]
    token = (await agent.ask())[-1].approval.token
    got = await agent.ask(approval={"token": token, "decision": "refuse"})
    end = got[-1]
    assert end.outcome == "no-tool" and end.approval is None and Notes.calls == []
    assert end.answer.startswith("No tool answered this question (the user refused the call of tool 'delete-note'),")


async def test_bad_approvals_are_one_agent_error_each_and_change_nothing(agent):
    token = (await agent.ask())[-1].approval.token
    other = Approvals().issue(AgentRequest(question=QUESTION, user="alice"), {}, "delete-note", ARGS, "", 600).token
    for approval, kwargs, message in [
        ({"token": other, "decision": "approve"}, {}, "the approval's token was not signed by this agent"),
        ({"token": flip(token, 1), "decision": "approve"}, {}, "the approval's token was not signed by this agent"),
        ({"token": token, "decision": "approve"}, {"question": "Delete the note called bread"},
         "the approval is for another question"),
        ({"token": token, "decision": "approve"}, {"user": "mallory"}, "the approval is for another user"),
        ({"token": token}, {}, "the approval is malformed: its decision is null"),
        ("yes", {}, "the approval is malformed: not an object"),
    ]:
        (err,) = await agent.ask(approval=approval, **kwargs)
        assert err.error.type == "agent-error" and err.error.message.startswith(message), err.error.message
    assert Notes.calls == [] and prompt_steps(agent) == [0]
    # None of them used the token up: it still resumes, once.
    await agent.ask(approval={"token": token, "decision": "approve"})
    assert Notes.calls == [{"user": "alice", **ARGS}]
    (again,) = await agent.ask(approval={"token": token, "decision": "approve"})
    assert again.error.message == "the approval was already used: ask again"
    assert len(Notes.calls) == 1 and prompt_steps(agent) == [0, 1]


async def test_an_expired_approval_is_refused(agent):
    token = (await agent.ask())[-1].approval.token
    agent.processor.approvals.clock = lambda: time.time() + 601
    (err,) = await agent.ask(approval={"token": token, "decision": "approve"})
    assert err.error.message == "the approval expired: ask again" and Notes.calls == []


async def test_the_policy_decides_which_calls_wait(agent):
    # No destructive rule: the service's destructive tool is called at once.
    await agent.configure({"tool-policy": {"approval": {"destructive": False}}})
    got = await agent.ask()
    assert got[-1].outcome == "tool-result" and Notes.calls == [{"user": "alice", **ARGS}]
    # A tool that says nothing, named in the policy: asked about.
    await agent.configure({"tool-service": {"notes": SERVICE},
                           "tool-policy": {"approval": {"tools": ["delete-note"], "destructive": False}}})
    assert (await agent.ask())[-1].outcome == OUTCOME_APPROVAL
    # A tool that says nothing, not named: the default policy does not ask (unknown is not destructive).
    await agent.configure({"tool-policy": {}})
    assert (await agent.ask())[-1].outcome == "tool-result" and len(Notes.calls) == 2


async def test_a_token_outlives_the_agent_when_the_key_is_the_stack_s(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    key = tmp_path / "approval.key"
    key.write_bytes(os.urandom(32))
    request = AgentRequest(question=QUESTION, user="alice")
    broker = MemoryBroker()
    async with worker(Agent, broker=broker, approval_key_file=str(key)) as first:
        token = first.processor.approvals.issue(request, {}, "delete-note", ARGS, "", 600).token
    async with worker(Agent, broker=broker, approval_key_file=str(key)) as second:   # "restarted"
        assert second.processor.approvals.redeem(answer(token), request).approved
    assert "no --approval-key-file" not in caplog.text
    # Without a key file each process has its own (said once at start): a restarted agent cannot
    # take the tokens of the one before.
    async with worker(Agent, broker=broker) as own:
        assert own.processor.approvals.own_key
        token = own.processor.approvals.issue(request, {}, "delete-note", ARGS, "", 600).token
    assert caplog.text.count("no --approval-key-file, so this process signs approval tokens with a key of its "
                             "own") == 1
    async with worker(Agent, broker=broker) as restarted:
        with pytest.raises(ApprovalRefused, match="not signed by this agent"):
            restarted.processor.approvals.redeem(answer(token), request)
    assert key.read_bytes().hex() not in caplog.text   # the key is never logged


def test_on_2_11_s_wire_a_resumed_dialog_goes_on_with_the_token_s_history_and_the_pause_carries_approval():
    from trustgraph.agent.react.dialects import DIALECT
    from trustgraph.agent.react.vocabulary import Answer
    from trustgraph.base.wire import wire_for
    from trustgraph.compat.v211 import schema as v211

    dialect = wire_for("2.11").component("agent-dialect", DIALECT)
    # The resuming request comes with no history; the loop continues the token's (one step) with a new one.
    dialog = dialect.open(v211.AgentRequest(question=QUESTION, session_id="s-1"))
    step = AgentStep(thought="t", action="delete-note", arguments=ARGS, observation="Deleted.")
    following = dialog.next(AgentRequest(question=QUESTION, history=[HISTORY[0], step]))
    assert [(h.action, h.observation) for h in following.history] == [("read-note", "milk"),
                                                                       ("delete-note", "Deleted.")]
    # A request that came with its steps keeps them as 2.11 wrote them, and gets the new one.
    own = v211.AgentStep(thought="t0", action="read-note", arguments={}, observation="milk", step_type="react")
    dialog = dialect.open(v211.AgentRequest(question=QUESTION, session_id="s-1", history=[own]))
    assert dialog.next(AgentRequest(question=QUESTION, history=[HISTORY[0], step])).history == [
        own, v211.AgentStep(thought="t", action="delete-note", arguments=ARGS, observation="Deleted.")]
    approval = Approvals().issue(AgentRequest(question=QUESTION), {}, "delete-note", ARGS, "", 600)
    paused = dialog.response(Answer("Approval needed", outcome=OUTCOME_APPROVAL, candidates=("delete-note",),
                                    approval=approval))
    assert (paused.message_type, paused.outcome, paused.approval) == ("answer", OUTCOME_APPROVAL, approval)


async def test_a_traced_pause_and_resume_say_so_in_their_spans(agent):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from trustgraph.base.messaging import tracing

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.install(provider)


    def step_spans() -> list:
        return [s.attributes for s in exporter.get_finished_spans() if s.name.startswith("serve ")
                and "trustgraph.dialog.step" in s.attributes]

    try:
        token = (await agent.ask())[-1].approval.token
        await agent.ask(approval={"token": token, "decision": "approve"})
        # A step's span ends once its handler returns, just after its last message went.
        await wait_for_async("the three steps' spans", lambda: len(step_spans()) == 3, 30)
    finally:
        tracing.shutdown()
    assert [(a["trustgraph.dialog.step"], a.get("trustgraph.approval"), a.get("trustgraph.outcome"))
            for a in step_spans()] == [
        (1, None, OUTCOME_APPROVAL), (1, "approve", "next-step"), (2, None, "tool-result")]
    (call,) = [s.attributes for s in exporter.get_finished_spans() if s.name == "tool call delete-note"]
    assert call["trustgraph.outcome"] == "answered"
