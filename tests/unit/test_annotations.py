"""What a tool says of its effects: ``read-only``, ``destructive``, ``idempotent``, ``open-world``.

Each is refused unless true or false, in a configured tool, a configured
service, a service's declared tools and its class; an absent one is unknown,
never filled in; a tool's own win over its service's; MCP's hints map both
ways; and a call is repeated only for an idempotent tool that does not say it
is destructive (the pool and the catalog on the in-memory transport).
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import mcp_types
import pytest
from trustgraph.base import DynamicToolService
from trustgraph.base.descriptors.annotations import ASSUMED, KEYS, Annotations
from trustgraph.base.processors.async_processor import StartRefused
from trustgraph.base.testing import MemoryBroker, memory_pubsub
from trustgraph.base.testing.stand_ins import Responder
from trustgraph.base.tool_services.tool_service_client import ToolServiceClients
from trustgraph.catalog import build_catalog
from trustgraph.catalog.calling import CallableTool, Outcome, call_tool
from trustgraph.cli.show_tools import tool_rows
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse
from trustgraph.topics import tool_service_topics

REQ, RESP = tool_service_topics("unit-annotations")
SERVICE = {"id": "files", "request-queue": REQ, "response-queue": RESP}
TOOL = {"type": "tool-service", "name": "remove", "description": "Remove a file", "service": "files",
        "arguments": [{"name": "path", "type": "string", "description": "The file"}]}


def built(tool: dict | None = None, service: dict | None = None):
    return build_catalog({"tool-service": {"files": json.dumps({**SERVICE, **(service or {})})},
                          "tool": {"remove": json.dumps({**TOOL, **(tool or {})})}})


class Files(DynamicToolService):
    default_topic = "unit-annotations-files"
    tools = [{"name": "remove", "description": "Remove a file", "destructive": True,
              "arguments": [{"name": "path", "type": "string", "description": "The file"}]}]

    async def invoke(self, user, config, arguments):
        return "removed"


# -- each field refused unless a boolean, naming it, wherever it is written ----------------------------

@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("value", ["yes", 1, [], {}])
def test_a_configured_tool_or_service_with_a_non_boolean_is_refused_naming_the_field(key, value):
    catalog = built(tool={key: value})
    assert [str(e) for e in catalog.errors] == [f"tool/remove: field '{key}': must be true or false, got {value!r}"]
    catalog = built(service={key: value})
    assert str(catalog.errors[0]) == f"tool-service/files: field '{key}': must be true or false, got {value!r}"


@pytest.mark.parametrize("key", KEYS)
def test_a_declared_tool_or_a_service_class_with_a_non_boolean_does_not_start(key):
    tool = type("Bad", (Files,), {"tools": [{**Files.tools[0], key: "yes"}]})(id="files", metrics=False)
    with pytest.raises(StartRefused) as refused:
        asyncio.run(tool.start())
    assert str(refused.value) == (f"tool/files/remove: field '{key}': must be true or false, got 'yes'; fix the "
                                  "service's declaration")
    cls = type("Bad", (Files,), {key.replace("-", "_"): "yes"})(id="files", metrics=False)
    assert cls.declared_problems() == [f"tool-service/files: field '{key}': must be true or false, got 'yes'"]


def test_read_only_and_destructive_together_are_refused():
    catalog = built(tool={"read-only": True, "destructive": True})
    assert [str(e) for e in catalog.errors] == [
        "tool/remove: field 'destructive': a read-only tool cannot be destructive: say which it is"]
    assert built(tool={"read-only": True, "destructive": False}).errors == ()


# -- absent is unknown; a tool's own win ---------------------------------------------------------------

def test_an_upstream_descriptor_says_nothing_and_nothing_is_said_for_it():
    catalog = built()
    tool = catalog.tools["remove"]
    # A tool-service descriptor that says nothing of idempotent is not idempotent, as always.
    assert tool.annotations == Annotations(idempotent=False)
    entry = catalog.to_json()["tools"][0]
    assert entry["annotations"] == {"idempotent": False}
    assert not {"read-only", "destructive", "open-world"} & set(entry)
    assert [tool.annotations.assumed(k) for k in KEYS] == [ASSUMED[k] for k in KEYS] == [False, True, False, True]
    # MCP: destructive means something only for a tool that is not read-only.
    assert not Annotations(read_only=True).assumed("destructive")


def test_a_tools_own_annotations_win_over_its_services():
    tool = built(tool={"idempotent": False, "read-only": True},
                 service={"idempotent": True, "destructive": True, "open-world": False}).tools["remove"]
    # Its own idempotent and read-only; its service's open-world; read-only means not destructive.
    assert tool.annotations == Annotations(read_only=True, destructive=False, idempotent=False, open_world=False)
    tool = built(tool={"destructive": True}, service={"read-only": True}).tools["remove"]
    assert (tool.annotations.read_only, tool.annotations.destructive) == (False, True)


def test_a_service_announces_what_it_and_its_tools_say():
    svc = type("Says", (Files,), {"idempotent": True, "open_world": False})(id="files", metrics=False)
    assert svc.declared_problems() == []
    said = svc.descriptor()
    assert (said["idempotent"], said["open-world"]) == (True, False)
    assert "read-only" not in said and "destructive" not in said
    assert svc.tool_descriptors()["remove"]["destructive"] is True
    announced = {"files": SimpleNamespace(descriptor=json.dumps(svc.descriptor()),
                                          tools=json.dumps(svc.tool_descriptors()))}
    tool = build_catalog({}, announced).tools["remove"]
    assert tool.annotations == Annotations(destructive=True, idempotent=True, open_world=False)
    assert not tool.retries


def test_tg_show_tools_shows_what_was_said_and_how_the_rest_reads():
    entry = built(tool={"read-only": True}, service={"idempotent": True}).to_json()["tools"][0]
    rows = dict(tool_rows(entry))
    assert (rows["read-only"], rows["destructive"], rows["idempotent"], rows["open-world"]) == (
        "yes", "not said (MCP reads it as no)", "yes", "not said (MCP reads it as yes)")   # read-only: not destructive
    assert rows["retried"].startswith("yes")
    rows = dict(tool_rows({**built().to_json()["tools"][0], "annotations": {}}))
    assert rows["annotations"].startswith("none said")


# -- MCP's hints, both ways ----------------------------------------------------------------------------

def test_annotations_map_to_mcp_hints_and_back():
    said = Annotations(read_only=False, destructive=True, idempotent=True)
    assert said.to_mcp() == {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}
    sdk = mcp_types.ToolAnnotations.model_validate(said.to_mcp())
    assert Annotations.from_mcp(sdk) == said == Annotations.from_mcp(said.to_mcp())
    assert Annotations.from_mcp(None) == Annotations() and Annotations().to_mcp() == {}
    # A server not ours may send anything: what is not a boolean is unknown.
    assert Annotations.from_mcp({"readOnlyHint": "yes", "openWorldHint": False, "title": "x"}) == \
        Annotations(open_world=False)
    # destructiveHint means something only for a tool that is not read-only (MCP).
    assert Annotations.from_mcp({"readOnlyHint": True, "destructiveHint": True}) == Annotations(read_only=True)


# -- retries -------------------------------------------------------------------------------------------

class Lossy:
    """Loses the first request (as if it never arrived), answers the others."""

    def __init__(self) -> None:
        self.seen = 0

    def __call__(self, request: ToolServiceRequest, props=None) -> list:
        self.seen += 1
        return [] if self.seen == 1 else [ToolServiceResponse(response="done", end_of_stream=True)]


@pytest.fixture
async def calls():
    broker = MemoryBroker()
    ps = memory_pubsub(broker, "caller")
    clients = ToolServiceClients(ps, name="test")
    lossy = Lossy()
    await Responder(memory_pubsub(broker, "files"), REQ, RESP, ToolServiceRequest, lossy).start()

    async def call(tool: dict | None = None, service: dict | None = None):
        catalog = built(tool, service)
        assert catalog.errors == (), catalog.errors
        callable_tool = CallableTool.build(catalog.tools["remove"], clients)
        return await call_tool(callable_tool, {"path": "/tmp/x"}, user="u", flow=None, timeout=2)

    yield call, lossy, broker
    await clients.close()
    await ps.close()


@pytest.mark.parametrize(("tool", "service", "repeated"), [
    ({}, {"idempotent": True}, True),                                    # the service's idempotent, as before
    ({"idempotent": True}, {}, True),                                    # the tool's own
    ({"idempotent": False}, {"idempotent": True}, False),                # the tool's own wins
    ({"destructive": True}, {"idempotent": True}, False),                # a destructive tool is never retried
    ({"idempotent": True}, {"destructive": True}, False),                # ... nor one its service calls so
    ({}, {}, False),                                                     # nobody said: called once
])
async def test_a_call_is_repeated_only_for_an_idempotent_tool_not_said_to_be_destructive(calls, tool, service,
                                                                                         repeated):
    call, lossy, broker = calls
    result = await call(tool, service)
    assert len(broker.sent[REQ]) == lossy.seen == (2 if repeated else 1)
    assert result.outcome == (Outcome.ANSWERED if repeated else Outcome.TIMED_OUT), result.text
