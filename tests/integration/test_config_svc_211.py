"""config-svc --wire 2.11 as a real process, and processors of ours following it notify-then-fetch."""

from __future__ import annotations

import json
import uuid

from support import wait_for_async
from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.base.processors.async_processor import AsyncProcessor
from trustgraph.base.processors.flow_processor import ConsumerSpec, FlowProcessor
from trustgraph.compat.v211 import schema as v211
from trustgraph.schema import FlowRequest, FlowResponse

# config-svc uses fixed, well-known topics, so each test here runs its own broker.

WIRES = ("2.1", "2.11")


def client(ps: PubSub, request: str = v211.CONFIG_REQUEST, response: str = v211.CONFIG_RESPONSE,
           req_schema: type = v211.ConfigRequest, resp_schema: type = v211.ConfigResponse) -> RequestResponseClient:
    return RequestResponseClient(ps, request_topic=request, response_topic=response, request_schema=req_schema,
                                 response_schema=resp_schema, subscription=f"test-{uuid.uuid4()}")


async def put(c: RequestResponseClient, type_: str, key: str, value: str, workspace: str = "default") -> None:
    r = await c.request(v211.ConfigRequest(operation="put", workspace=workspace,
                                           values=[v211.ConfigValue(type=type_, key=key, value=value)]), timeout=10)
    assert r.error is None, r.error


async def test_a_put_reaches_a_211_processor_through_notify_then_fetch(own_broker, spawn, tmp_path):
    spawn("config-svc", "--store", str(tmp_path / "c.db"), "--wire", "2.11", broker=own_broker)
    seen: list[tuple[int, dict]] = []

    class Follower(AsyncProcessor):
        wires = WIRES

    proc = Follower(id="follower", pulsar_host=own_broker.url, metrics=False, wire="2.11")

    async def on_tool(config, version):
        seen.append((version, config.get("tool", {})))

    proc.register_config_handler(on_tool, types=["tool"])
    ps = PubSub(own_broker.url, processor="t")
    try:
        await proc.start()
        await wait_for_async("the start-up fetch", lambda: seen, 60)
        assert seen[-1][1] == {}
        c = client(ps)
        await put(c, "tool", "a", '{"x": 1}')
        await wait_for_async("the tool handler called", lambda: seen[-1][1].get("a"), 60)
        assert seen[-1] == (1, {"a": '{"x": 1}'})   # the default workspace's registration is no version
        # A change in another workspace, and one of another type, are no fetch for this handler:
        # the next tool change of the default workspace is the next call it gets.
        n = len(seen)
        await put(c, "tool", "elsewhere", '"y"', workspace="other")
        await put(c, "prompt", "p", '"z"')
        await put(c, "tool", "b", '{"b": 1}')
        await wait_for_async("the next tool change", lambda: len(seen) > n and "b" in seen[-1][1], 60)
        assert [v for v, _ in seen[n:]] == [4]
        assert seen[-1][1] == {"a": '{"x": 1}', "b": '{"b": 1}'}
        assert proc.config_version == 4
    finally:
        await ps.close()
        await proc.stop()


async def test_a_211_flow_started_through_config_svc_opens_in_a_211_flow_processor(own_broker, spawn, tmp_path):
    spawn("config-svc", "--store", str(tmp_path / "c.db"), "--wire", "2.11", broker=own_broker)
    got: list[str] = []

    class Echo(FlowProcessor):
        wires = WIRES

        def __init__(self, **params):
            super().__init__(**params)
            self.register_specification(ConsumerSpec("request", v211.ConfigKey, self.on_request))

        async def on_request(self, msg, flow):
            got.append(f"{flow.name}:{msg.value.key}")

    proc = Echo(id="echo", pulsar_host=own_broker.url, metrics=False, wire="2.11")
    blueprint = {"blueprint": {},
                 "flow": {"echo:{id}": {"topics": {"request": "flow:tg:echo:{workspace}:{id}"}}}}
    ps = PubSub(own_broker.url, processor="t")
    queue = v211.workspace_queue
    flows = client(ps, v211.to_pulsar(queue(v211.flow_request_queue, "default")),
                   v211.to_pulsar(queue(v211.flow_response_queue, "default")), FlowRequest, FlowResponse)
    try:
        await proc.start()
        for request in (FlowRequest(operation="put-blueprint", blueprint_name="bp",
                                    blueprint_definition=json.dumps(blueprint)),
                        FlowRequest(operation="start-flow", blueprint_name="bp", flow_id="f1", description="d")):
            r = await flows.request(request, timeout=10)
            assert r.error is None, r.error
        await wait_for_async("flow f1 open", lambda: "f1" in proc.flows, 60)
        producer = await ps.producer("persistent://tg/flow/echo:default:f1")
        await producer.send(v211.ConfigKey(type="t", key="hello"))
        await wait_for_async("the flow's consumer got it", lambda: got, 60)
        assert got == ["f1:hello"]
        r = await flows.request(FlowRequest(operation="stop-flow", flow_id="f1"), timeout=10)
        assert r.error is None, r.error
        await wait_for_async("flow f1 closed", lambda: "f1" not in proc.flows, 60)
    finally:
        await ps.close()
        await proc.stop()


async def test_tg_launchs_bootstrap_loads_into_a_new_store_on_the_211_wire_once(own_broker, spawn, tmp_path):
    # config-svc lists the default workspace before anything else: that is no config a user wrote.
    from trustgraph.launch.bootstrap import bootstrap
    spawn("config-svc", "--store", str(tmp_path / "c.db"), "--wire", "2.11", broker=own_broker)
    boot = tmp_path / "bootstrap.json"
    boot.write_text(json.dumps({"config": {"tool": {"a": {"x": 1}}}}))
    assert await bootstrap(own_broker.url, boot) == 0
    assert await bootstrap(own_broker.url, boot) == 1   # a store that holds config keeps it
    ps = PubSub(own_broker.url, processor="t")
    try:
        got = await client(ps).request(v211.ConfigRequest(operation="config", workspace="default"), timeout=10)
        assert (got.version, got.config) == (1, {"tool": {"a": '{"x": 1}'}})
    finally:
        await ps.close()


async def test_a_name_no_topic_can_hold_is_refused_and_one_an_older_version_wrote_does_not_stop_a_start(
        own_broker, spawn, tmp_path):
    from trustgraph.config.service.store import ConfigStore
    db = str(tmp_path / "c.db")
    svc = spawn("config-svc", "--store", db, "--wire", "2.11", broker=own_broker)
    ps = PubSub(own_broker.url, processor="t")
    try:
        c = client(ps)
        r = await c.request(v211.ConfigRequest(operation="put", workspace=v211.WORKSPACES, values=[
            v211.ConfigValue(type=v211.WORKSPACE_TYPE, key="a/b", value="{}")]), timeout=10)
        assert r.error is not None and "'a/b' cannot be registered" in r.error.message
        assert svc.stop(timeout=30) == 0
        with ConfigStore(db) as store:   # what a config-svc without the check let through
            store.apply(puts=[(v211.WORKSPACE_TYPE, "a/b", "{}")], workspace=v211.WORKSPACES)
        again = spawn("config-svc", "--store", db, "--wire", "2.11", broker=own_broker)
        assert sum("Workspace 'a/b', registered in __workspaces__, is not served" in line
                   for line in again.output().splitlines()) == 1
        await put(c, "tool", "after", '"x"')
        flows = client(ps, v211.to_pulsar(v211.workspace_queue(v211.flow_request_queue, "default")),
                       v211.to_pulsar(v211.workspace_queue(v211.flow_response_queue, "default")),
                       FlowRequest, FlowResponse)
        r = await flows.request(FlowRequest(operation="list-blueprints"), timeout=10)
        assert r.error is None   # the default workspace's queues are served
    finally:
        await ps.close()
