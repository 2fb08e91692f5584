"""mcp-server's approvals (``trustgraph.mcp_server.approval``): who can be asked, and what a retry's
state allows once the SDK's boundary has unsealed it (the sealing itself: tests/integration/test_mcp_approval.py)."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import mcp_types as types
import pytest
from trustgraph.catalog import build_catalog
from trustgraph.catalog.calling import CallableTool
from trustgraph.catalog.policy import ApprovalPolicy
from trustgraph.mcp_server import approval
from trustgraph.mcp_server.approval import Approvals, can_elicit

SERVICE = {"id": "s", "request-queue": "non-persistent://tg/request/s",
           "response-queue": "non-persistent://tg/response/s", "config-params": []}
YES = {"approve": types.ElicitResult(action="accept", content={"approve": True})}


def erase() -> CallableTool:
    catalog = build_catalog({"tool-service": {"s": json.dumps(SERVICE)},
                             "tool": {"erase": json.dumps({
                                 "type": "tool-service", "name": "erase", "description": "Erases", "service": "s",
                                 "destructive": True,
                                 "arguments": [{"name": "what", "type": "string", "description": "what"}]})}})
    return CallableTool.of(catalog.tools["erase"], None)


def ctx(version: str = "2026-07-28", elicitation: types.ElicitationCapability | None = None):
    caps = types.ClientCapabilities(elicitation=elicitation)
    return SimpleNamespace(protocol_version=version, session=SimpleNamespace(client_capabilities=caps))


def params(state: dict | None, responses: dict | None = YES, what: str = "x") -> types.CallToolRequestParams:
    return types.CallToolRequestParams(name="erase", arguments={"what": what}, input_responses=responses,
                                       request_state=None if state is None else json.dumps(state))


FORM = types.ElicitationCapability(form=types.FormElicitationCapability())


@pytest.mark.parametrize("version, elicitation, can", [
    ("2026-07-28", FORM, True),
    ("2026-07-28", types.ElicitationCapability(), True),   # no mode named: form
    ("2026-07-28", types.ElicitationCapability(url=types.UrlElicitationCapability()), False),
    ("2026-07-28", None, False),
    ("2025-11-25", FORM, False),
])
def test_only_a_2026_client_that_takes_a_form_is_asked(version, elicitation, can):
    assert can_elicit(ctx(version, elicitation)) is can


def test_an_approval_makes_one_call_before_it_expires_and_an_expired_one_none():
    approvals, tool, policy = Approvals(), erase(), ApprovalPolicy()
    asked = approvals.check(ctx(elicitation=FORM), params(None), tool, policy)
    assert isinstance(asked, types.InputRequiredResult)
    state = json.loads(asked.request_state)
    assert time.time() + 590 < state["until"] <= time.time() + 600   # the policy's expires

    assert approvals.check(ctx(elicitation=FORM), params(state), tool, policy) is None
    again = approvals.check(ctx(elicitation=FORM), params(state), tool, policy)
    assert again.is_error and "used for a call already" in again.content[0].text

    late = approvals.check(ctx(elicitation=FORM), params({"id": "late", "until": time.time() - 1}), tool, policy)
    assert late.is_error and "its approval expired" in late.content[0].text
    assert len(approvals) == 1   # only the one used; an expired one is not remembered



def test_a_used_approval_is_forgotten_once_it_would_have_expired_anyway(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(approval, "time", SimpleNamespace(time=lambda: now[0]))
    approvals, tool, policy = Approvals(), erase(), ApprovalPolicy(expires=10)
    assert approvals.check(ctx(elicitation=FORM), params({"id": "a", "until": 1010.0}), tool, policy) is None
    now[0] = 1009.0
    assert approvals.check(ctx(elicitation=FORM), params({"id": "b", "until": 1019.0}), tool, policy) is None
    assert len(approvals) == 2
    now[0] = 1010.0   # a's time is up: forgotten (it would be refused as expired now)
    assert approvals.check(ctx(elicitation=FORM), params({"id": "c", "until": 1020.0}), tool, policy) is None
    assert len(approvals) == 2
    late = approvals.check(ctx(elicitation=FORM), params({"id": "a", "until": 1010.0}), tool, policy)
    assert "its approval expired" in late.content[0].text


def test_arguments_that_would_be_refused_are_refused_without_asking():
    refused = Approvals().check(ctx(elicitation=FORM), types.CallToolRequestParams(name="erase", arguments={}),
                                erase(), ApprovalPolicy())
    assert refused.is_error and "what" in refused.content[0].text
    assert Approvals().check(ctx(elicitation=FORM), params(None), erase(), ApprovalPolicy(destructive=False)) is None
