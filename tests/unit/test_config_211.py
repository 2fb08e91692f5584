"""TrustGraph 2.11's config records and queues, and config-svc serving 2.11's config protocol.

config-svc runs on the in-memory transport with ``wire="2.11"``; the JSON a
2.11 peer sends is written out by hand as upstream 2.11.1's encoder writes it
(``json.dumps`` of every field of the dataclass, in field order, ``None`` as
null: trustgraph-base 2.11.1 ``base/serialization.py`` and
``base/async_pulsar_backend.py``).
"""

from __future__ import annotations

import json

import pytest
from trustgraph.base.testing import worker
from trustgraph.compat.v211 import schema as v211
from trustgraph.config.service import Processor as ConfigService
from trustgraph.schema import ConfigKey, ConfigRequest, ConfigResponse, FlowRequest, FlowResponse
from trustgraph.schema.codec import decode, encode
from trustgraph.topics import CONFIG_PUSH

TOOL = '{"name": "t"}'


# -- records and queue names ---------------------------------------------------

def test_a_211_request_encodes_as_upstream_writes_it_and_decodes_back():
    request = v211.ConfigRequest(operation="put", workspace="default",
                                 values=[v211.ConfigValue(type="tool", key="a", value=TOOL)])
    upstream = ('{"operation": "put", "workspace": "default", "keys": [], "type": "", "values": '
                '[{"type": "tool", "key": "a", "value": "{\\"name\\": \\"t\\"}", "workspace": ""}]}')
    assert encode(request) == upstream.encode()
    assert decode(v211.ConfigRequest, upstream.encode()) == request


def test_a_211_push_and_response_round_trip_and_read_upstreams_json():
    push = v211.ConfigPush(version=4, changes={"tool": ["default", "w2"]},
                           workspace_changes=v211.WorkspaceChanges(created=["w2"]))
    assert decode(v211.ConfigPush, encode(push)) == push
    upstream = b'{"version": 3, "changes": {}, "workspace_changes": null}'   # config-svc's start notice
    assert decode(v211.ConfigPush, upstream) == v211.ConfigPush(version=3)
    assert encode(v211.ConfigPush(version=3)) == upstream
    reply = b'{"version": 2, "values": [{"type": "tool", "key": "a", "value": null, "workspace": "w"}], ' \
            b'"directory": [], "config": {}, "error": null}'
    got = decode(v211.ConfigResponse, reply)
    assert got.values == [v211.ConfigValue(type="tool", key="a", value=None, workspace="w")]
    assert encode(got) == reply


def test_the_211_config_queues_are_the_topics_upstreams_backend_uses():
    # The grammar is trustgraph.topics' (tests/unit/test_topics.py); these are the names 2.11 gives.
    assert (v211.CONFIG_REQUEST, v211.CONFIG_RESPONSE, v211.CONFIG_NOTIFY) == (
        "non-persistent://tg/request/config", "non-persistent://tg/response/config",
        "non-persistent://tg/notify/config")
    assert v211.to_pulsar(v211.workspace_queue(v211.flow_request_queue, "default")) == \
        "non-persistent://tg/request/flow:default"


# -- config-svc --wire 2.11 ----------------------------------------------------

@pytest.fixture
async def svc(tmp_path):
    async with worker(ConfigService, store=str(tmp_path / "config.db"), wire="2.11") as w:
        yield w


async def ask(w, request, request_topic: str = v211.CONFIG_REQUEST,
              response_topic: str = v211.CONFIG_RESPONSE) -> v211.ConfigResponse:
    (reply,) = await w.call(request_topic, response_topic, request, v211.ConfigResponse)
    return reply


def put(workspace: str, type_: str, key: str, value: str) -> v211.ConfigRequest:
    return v211.ConfigRequest(operation="put", workspace=workspace,
                              values=[v211.ConfigValue(type=type_, key=key, value=value)])


def notices(w) -> list[dict]:
    return [json.loads(m.payload) for m in w.broker.sent.get(v211.CONFIG_NOTIFY, [])]


async def test_it_registers_the_default_workspace_in_a_new_store_as_its_content_at_version_0(svc):
    # config-svc's own bookkeeping is no change: the store still reads as new (tg-launch bootstraps it).
    got = await ask(svc, v211.ConfigRequest(operation="getvalues", workspace="__workspaces__", type="workspace"))
    assert [(v.key, v.value) for v in got.values] == [("default", '{"enabled": true}')]
    assert got.version == 0
    [start] = notices(svc)
    assert start == {"version": 0, "changes": {}, "workspace_changes": None}


async def test_a_store_past_version_0_without_the_default_workspace_gets_it_as_a_change(tmp_path):
    from trustgraph.config.service.store import ConfigStore
    with ConfigStore(str(tmp_path / "config.db")) as store:   # what a 2.1 config-svc left
        store.apply(puts=[("tool", "a", TOOL)])
    async with worker(ConfigService, store=str(tmp_path / "config.db"), wire="2.11") as w:
        got = await ask(w, v211.ConfigRequest(operation="list", workspace="__workspaces__", type="workspace"))
        assert (got.version, got.directory) == (2, ["default"])
        assert notices(w) == [{"version": 2, "changes": {},
                               "workspace_changes": {"created": ["default"], "deleted": []}}]


async def test_every_operation_but_the_all_workspace_ones_needs_a_workspace(svc):
    for op in ("get", "list", "getvalues", "put", "delete", "config"):
        got = await ask(svc, v211.ConfigRequest(operation=op, workspace="", type="tool"))
        assert (got.error.type, got.error.message) == ("bad-request", "Workspace is required"), op
    bad = await ask(svc, v211.ConfigRequest(operation="frobnicate", workspace="default"))
    assert (bad.error.type, bad.error.message) == ("bad-operation", "Bad operation")


async def test_a_211_put_is_2_1s_config_in_the_default_workspace_and_is_notified(svc):
    assert (await ask(svc, put("default", "tool", "a", TOOL))).error is None
    assert (await ask(svc, put("other", "tool", "b", TOOL))).error is None
    # 2.1's view is the default workspace: a 2.1 request (no workspace key) on the same topic.
    (old,) = await svc.call(v211.CONFIG_REQUEST, v211.CONFIG_RESPONSE, ConfigRequest(operation="config"),
                            ConfigResponse)
    assert old.config["tool"] == {"a": TOOL} and old.version == 2
    assert json.loads(svc.broker.sent[CONFIG_PUSH][-1].payload)["config"]["tool"] == {"a": TOOL}
    assert notices(svc)[1:] == [
        {"version": 1, "changes": {"tool": ["default"]}, "workspace_changes": None},
        {"version": 2, "changes": {"tool": ["other"]}, "workspace_changes": None},
    ]
    got = await ask(svc, v211.ConfigRequest(operation="config", workspace="other"))
    assert (got.version, got.config) == (2, {"tool": {"b": TOOL}})
    one = await ask(svc, v211.ConfigRequest(operation="get", workspace="other",
                                            keys=[v211.ConfigKey(type="tool", key="a")]))
    assert one.values == [v211.ConfigValue(type="tool", key="a", value=None)]


async def test_the_all_workspace_operations_name_each_items_workspace(svc):
    await ask(svc, put("default", "tool", "a", TOOL))
    await ask(svc, put("other", "tool", "b", TOOL))
    both = await ask(svc, v211.ConfigRequest(operation="getvalues-all-ws", type="tool"))
    assert [(v.workspace, v.key, v.value) for v in both.values] == [("default", "a", TOOL), ("other", "b", TOOL)]
    keys = await ask(svc, v211.ConfigRequest(operation="getkeys-all-ws", type="tool"))
    assert [(v.workspace, v.key, v.value) for v in keys.values] == [("default", "a", ""), ("other", "b", "")]


async def test_a_2_1_put_is_notified_to_211_processors_too(svc):
    from trustgraph.schema import ConfigValue
    (done,) = await svc.call(v211.CONFIG_REQUEST, v211.CONFIG_RESPONSE,
                             ConfigRequest(operation="put", values=[ConfigValue(type="prompt", key="p", value='"x"')]),
                             ConfigResponse)
    assert done.error is None
    assert notices(svc)[-1] == {"version": 1, "changes": {"prompt": ["default"]}, "workspace_changes": None}


async def test_reserved_workspaces_are_stored_quietly_and_new_workspaces_get_their_queues(svc):
    await ask(svc, put("__template__", "tool", "seed", TOOL))
    assert notices(svc)[-1]["changes"] == {}
    await ask(svc, put("__workspaces__", "workspace", "w2", '{"enabled": true}'))
    assert notices(svc)[-1]["workspace_changes"] == {"created": ["w2"], "deleted": []}
    # w2's own queue: the workspace is the queue's, whatever the request says.
    queue = v211.workspace_queue
    request = v211.to_pulsar(queue(v211.config_request_queue, "w2"))
    response = v211.to_pulsar(queue(v211.config_response_queue, "w2"))
    await ask(svc, put("ignored", "tool", "x", TOOL), request, response)
    got = await ask(svc, v211.ConfigRequest(operation="config", workspace="w2"))
    assert got.config == {"tool": {"x": TOOL}}
    only = await ask(svc, v211.ConfigRequest(operation="getkeys-all-ws", type="tool"), request, response)
    assert only.error.type == "bad-operation"


BLUEPRINT = {
    "parameters": {"model": {"type": "llm-model"}},
    "blueprint": {"embeddings:{blueprint}": {"topics": {"request": "request:tg:embeddings:{blueprint}"}}},
    "flow": {
        "agent-manager:{id}": {
            "topics": {"request": "request:tg:agent:{workspace}:{id}",
                       "response": "response:tg:agent:{workspace}:{id}"},
            "parameters": {"model": "{model}"},
        },
    },
    "interfaces": {"agent": {"request": "request:tg:agent:{workspace}:{id}",
                             "response": "response:tg:agent:{workspace}:{id}"}},
}


async def flow_call(w, request: FlowRequest) -> FlowResponse:
    queue = v211.workspace_queue
    (reply,) = await w.call(v211.to_pulsar(queue(v211.flow_request_queue, "default")),
                            v211.to_pulsar(queue(v211.flow_response_queue, "default")), request, FlowResponse)
    return reply


async def test_a_211_flow_started_on_the_workspace_flow_queue_assigns_its_processors(svc):
    await ask(svc, put("default", "parameter-type", "llm-model", '{"default": "m1"}'))
    put_bp = await flow_call(svc, FlowRequest(operation="put-blueprint", blueprint_name="bp",
                                              blueprint_definition=json.dumps(BLUEPRINT)))
    assert put_bp.error is None
    started = await flow_call(svc, FlowRequest(operation="start-flow", blueprint_name="bp", flow_id="f1",
                                               description="d"))
    assert started.error is None
    got = await ask(svc, v211.ConfigRequest(operation="config", workspace="default"))
    assert json.loads(got.config["processor:agent-manager"]["f1"]) == {
        "topics": {"request": "request:tg:agent:default:f1", "response": "response:tg:agent:default:f1"},
        "parameters": {"model": "m1"},
    }
    assert json.loads(got.config["processor:embeddings"]["bp"]) == {
        "topics": {"request": "request:tg:embeddings:bp"}, "parameters": {}}
    flow = json.loads(got.config["flow"]["f1"])
    assert flow["interfaces"]["agent"]["request"] == "request:tg:agent:default:f1"
    assert flow["parameters"] == {"model": "m1"}
    assert sorted(notices(svc)[-1]["changes"]) == ["flow", "processor:agent-manager", "processor:embeddings"]
    # stop-flow removes the flow section's assignments; the blueprint section's stay.
    assert (await flow_call(svc, FlowRequest(operation="stop-flow", flow_id="f1"))).error is None
    got = await ask(svc, v211.ConfigRequest(operation="config", workspace="default"))
    assert "processor:agent-manager" not in got.config and "flow" not in got.config
    assert "bp" in got.config["processor:embeddings"]


async def test_a_2_1_config_svc_still_takes_a_211_request_as_2_1(tmp_path):
    # The default wire is unchanged: the workspace key is ignored, nothing is notified.
    async with worker(ConfigService, store=str(tmp_path / "c.db")) as w:
        (got,) = await w.call(v211.CONFIG_REQUEST, v211.CONFIG_RESPONSE,
                              ConfigRequest(operation="get", keys=[ConfigKey(type="tool", key="a")]), ConfigResponse)
        assert got.error is None and got.version == 0
        assert notices(w) == []


def test_each_wire_gives_config_svc_its_protocol_and_2_1s_workspace_is_2_11s_default():
    from trustgraph.base.wire import wire_for
    from trustgraph.config.service.protocol import ROLE, ConfigProtocol
    from trustgraph.config.service.store import DEFAULT_WORKSPACE
    from trustgraph.flow_compat.v211.config_service import ConfigProtocol211
    assert wire_for("2.1").component(ROLE, ConfigProtocol) is ConfigProtocol
    assert wire_for("2.11").component(ROLE, ConfigProtocol) is ConfigProtocol211
    # The store keeps 2.1's config as its default workspace, the one 2.11's peers read as theirs.
    assert DEFAULT_WORKSPACE == v211.DEFAULT_WORKSPACE


def registered(w) -> list[str]:
    return [k for k in w.processor.store.keys("workspace", workspace="__workspaces__")]


@pytest.mark.parametrize("name", ["a/b", "a b", "tab\there", "line\nbreak", "", "x" * 257])
async def test_a_workspace_name_that_cannot_be_a_topic_is_refused_and_nothing_written(svc, name):
    before = len(notices(svc))
    got = await ask(svc, v211.ConfigRequest(operation="put", workspace="__workspaces__", values=[
        v211.ConfigValue(type="workspace", key="fine", value='{"enabled": true}'),
        v211.ConfigValue(type="workspace", key=name, value='{"enabled": true}')]))
    assert got.error.type == "config-error"
    assert got.error.message.startswith("nothing written: ")
    # One line, and a long name is not copied whole.
    assert "\n" not in got.error.message and len(got.error.message) < 400
    assert registered(svc) == ["default"] and len(notices(svc)) == before   # neither name: one put, one outcome
    assert (await ask(svc, put("default", "tool", "after", TOOL))).error is None


async def test_a_bad_name_is_refused_on_a_workspace_queue_too(svc):
    # Every path a request writes __workspaces__ by: here its own queue, once it is a workspace.
    assert (await ask(svc, put("__workspaces__", "workspace", "__workspaces__", "{}"))).error is None
    queue = v211.workspace_queue
    request = v211.to_pulsar(queue(v211.config_request_queue, "__workspaces__"))
    response = v211.to_pulsar(queue(v211.config_response_queue, "__workspaces__"))
    got = await ask(svc, put("ignored", "workspace", "a/b", "{}"), request, response)
    assert got.error.message == ("nothing written: workspace 'a/b' cannot be registered: its name cannot be "
                                 "part of a topic ('request:tg:config:a/b' is not one): use a name without '/' "
                                 "or white space")
    assert registered(svc) == ["__workspaces__", "default"]


async def test_workspaces_past_the_cap_are_refused_with_what_to_do(tmp_path):
    async with worker(ConfigService, store=str(tmp_path / "c.db"), wire="2.11", max_workspaces=3) as w:
        assert (await ask(w, put("__workspaces__", "workspace", "w1", "{}"))).error is None
        got = await ask(w, v211.ConfigRequest(operation="put", workspace="__workspaces__", values=[
            v211.ConfigValue(type="workspace", key=k, value="{}") for k in ("w2", "w3")]))
        assert got.error.type == "config-error"
        assert got.error.message == (
            "nothing written: config-svc serves at most 3 workspaces (--max-workspaces), 2 registered already, "
            "so not 2 more; delete workspaces no longer used, or start config-svc with a higher "
            "--max-workspaces")
        assert registered(w) == ["default", "w1"]
        assert (await ask(w, put("__workspaces__", "workspace", "w2", "{}"))).error is None
        # At the cap: a registered one may be written again, a new one only after a delete.
        assert (await ask(w, put("__workspaces__", "workspace", "w1", '{"enabled": false}'))).error is None
        assert (await ask(w, put("__workspaces__", "workspace", "w3", "{}"))).error is not None
        assert (await ask(w, v211.ConfigRequest(operation="delete", workspace="__workspaces__", keys=[
            v211.ConfigKey(type="workspace", key="w1")]))).error is None
        assert (await ask(w, put("__workspaces__", "workspace", "w3", "{}"))).error is None
        assert sorted(w.processor.protocol.workspaces) == ["default", "w2", "w3"]


async def test_a_store_holding_names_it_cannot_serve_or_too_many_starts_and_serves_the_rest(tmp_path, caplog):
    # What an older config-svc let through: it stopped every later start at the first bad name.
    from trustgraph.config.service.store import ConfigStore
    with ConfigStore(str(tmp_path / "c.db")) as store:
        store.apply(puts=[("workspace", name, "{}") for name in ("a/b", "c d", "w1", "w2", "w3", "w4")],
                    workspace="__workspaces__")
    async with worker(ConfigService, store=str(tmp_path / "c.db"), wire="2.11", max_workspaces=3) as w:
        assert sorted(w.processor.protocol.workspaces) == ["default", "w1", "w2"]
        warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert [line for line in warnings if "'a/b'" in line] == [
            "Workspace 'a/b', registered in __workspaces__, is not served: its name cannot be part of a "
            "topic ('request:tg:config:a/b' is not one): use a name without '/' or white space. Its config "
            "is kept; to serve it, register it under a name that can be a topic, then delete this entry "
            "(a 2.11 config delete in workspace __workspaces__, type workspace)"]
        assert sum(line.startswith("Workspace 'c d'") for line in warnings) == 1
        assert [line for line in warnings if "past config-svc's limit" in line] == [
            "2 registered workspaces are not served, past config-svc's limit of 3 (--max-workspaces): "
            "'w3', 'w4'; delete workspaces no longer used from workspace __workspaces__, or start config-svc "
            "with a higher --max-workspaces"]
        queue = v211.workspace_queue
        got = await ask(w, v211.ConfigRequest(operation="config", workspace="x"),
                        v211.to_pulsar(queue(v211.config_request_queue, "w1")),
                        v211.to_pulsar(queue(v211.config_response_queue, "w1")))
        assert got.error is None
        assert (await ask(w, put("default", "tool", "after", TOOL))).error is None


def test_a_workspace_name_is_checked_against_the_topic_grammar_and_a_length():
    assert v211.workspace_problem("default") is None
    assert v211.workspace_problem("tenant-42:eu.west") is None   # colons are the topic's: allowed
    assert v211.workspace_problem("x" * v211.MAX_WORKSPACE_NAME) is None
    assert v211.workspace_problem("") == "a workspace needs a name"
    assert v211.workspace_problem("x" * 300) == "its name is 300 characters long, over the limit of 256"
    for name in ("a/b", "a b", "a\nb", "\u3000"):
        assert "cannot be part of a topic" in v211.workspace_problem(name), name


def test_2_11_flow_assignments_become_flow_definitions_and_a_bad_one_only_itself(caplog):
    from trustgraph.compat.v211.flows import assigned_flows
    config = {"processor:echo": {
        "f1": json.dumps({"topics": {"request": "flow:tg:echo:default:f1"}, "parameters": {"model": "m"}}),
        "f2": "not json",
        "f3": json.dumps({"topics": {"request": "bogus:tg:x"}}),
    }}
    assert assigned_flows(config, "echo") == {
        "f1": {"request": "persistent://tg/flow/echo:default:f1", "model": "m"}}
    assert sum("not started" in r.getMessage() for r in caplog.records) == 2
    assert assigned_flows(config, "other") == {}
