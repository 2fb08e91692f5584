"""config-svc as a real process on the broker, and processors following its pushes."""

from __future__ import annotations

import json
import uuid

import pulsar
import pytest
from support import wait_for_async
from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.base.processors.async_processor import AsyncProcessor
from trustgraph.schema import (
    ConfigKey,
    ConfigRequest,
    ConfigResponse,
    ConfigValue,
    FlowRequest,
    FlowResponse,
)
from trustgraph.topics import (
    CONFIG_REQUEST,
    CONFIG_RESPONSE,
    FLOW_REQUEST,
    FLOW_RESPONSE,
    config_push_queue,
    to_pulsar,
)

CONFIG_PUSH = to_pulsar(config_push_queue)

# config-svc uses fixed, well-known topics, so each test here runs its own broker.


def config_client(ps: PubSub) -> RequestResponseClient:
    return RequestResponseClient(ps, request_topic=CONFIG_REQUEST, response_topic=CONFIG_RESPONSE,
                                 request_schema=ConfigRequest, response_schema=ConfigResponse,
                                 subscription=f"test-{uuid.uuid4()}")


async def put(c: RequestResponseClient, type_: str, key: str, value: str) -> ConfigResponse:
    return await c.request(ConfigRequest(operation="put", values=[ConfigValue(type=type_, key=key, value=value)]),
                           timeout=10)


async def get(c: RequestResponseClient, type_: str, key: str) -> str | None:
    r = await c.request(ConfigRequest(operation="get", keys=[ConfigKey(type=type_, key=key)]), timeout=10)
    assert r.error is None, r.error
    return r.values[0].value


async def test_put_reaches_a_processor_handler_with_the_new_version(own_broker, spawn, tmp_path):
    spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
    seen: list[tuple[int, dict]] = []

    class Follower(AsyncProcessor):
        pass

    proc = Follower(id="follower", pulsar_host=own_broker.url, metrics=False)

    async def on_tool(config, version):
        seen.append((version, config.get("tool", {})))

    proc.register_config_handler(on_tool, types=["tool"])
    ps = PubSub(own_broker.url, processor="t")
    try:
        await proc.start()
        c = config_client(ps)
        await put(c, "tool", "a", '{"x": 1}')
        await wait_for_async("the tool handler called", lambda: seen and seen[-1][1].get("a"), 60)
        version, tools = seen[-1]
        assert tools == {"a": '{"x": 1}'}
        assert version == 1
        # A change to another type does not call a handler registered for "tool": the next
        # change of a tool, pushed after it, is the next call the handler gets ...
        n = len(seen)
        await put(c, "other", "b", '"y"')
        await put(c, "tool", "z", '{"z": 1}')
        await wait_for_async("the next tool change", lambda: len(seen) > n and "z" in seen[-1][1], 60)
        assert [v for v, _ in seen[n:]] == [3]
        # ... and an old version never overwrites a newer one.
        await proc.apply_config({"tool": {}}, 0)
        assert proc.config_version == 3
        assert seen[-1][1] == {"a": '{"x": 1}', "z": '{"z": 1}'}
    finally:
        await ps.close()
        await proc.stop()


async def test_processor_started_before_config_svc_gets_config(own_broker, spawn, tmp_path):
    seen: list[int] = []
    proc = AsyncProcessor(id="early", pulsar_host=own_broker.url, metrics=False)

    async def handler(config, version):
        seen.append(version)

    proc.register_config_handler(handler)
    try:
        await proc.start()
        assert seen == []   # nothing can have come: no config service runs
        spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
        await wait_for_async("the first config", lambda: seen, 60)
        assert seen[0] == 0
    finally:
        await proc.stop()


async def test_data_survives_restart_and_kill_9(own_broker, spawn, tmp_path):
    store = str(tmp_path / "c.db")
    svc = spawn("config-svc", "--store", store, broker=own_broker)
    ps = PubSub(own_broker.url, processor="t")
    try:
        c = config_client(ps)
        await put(c, "tool", "kept", '"one"')
        assert svc.stop() == 0  # SIGTERM: clean exit
        svc = spawn("config-svc", "--store", store, broker=own_broker)
        assert await get(c, "tool", "kept") == '"one"'
        await put(c, "tool", "killed", '"two"')  # acknowledged ...
        svc.kill()                               # ... then kill -9
        spawn("config-svc", "--store", store, broker=own_broker)
        assert await get(c, "tool", "killed") == '"two"'
        r = await c.request(ConfigRequest(operation="config"), timeout=10)
        assert r.version == 2
    finally:
        await ps.close()


async def test_push_carries_full_config_on_start_and_change(own_broker, spawn, tmp_path):
    raw = pulsar.Client(own_broker.url)
    sub = raw.subscribe(CONFIG_PUSH, "watch", initial_position=pulsar.InitialPosition.Earliest)
    ps = PubSub(own_broker.url, processor="t")
    try:
        spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
        first = json.loads(sub.receive(timeout_millis=10000).data())
        assert first == {"version": 0, "config": {}}
        await put(config_client(ps), "prompt", "system", '"Be brief."')
        second = json.loads(sub.receive(timeout_millis=10000).data())
        assert second == {"version": 1, "config": {"prompt": {"system": '"Be brief."'}}}
    finally:
        raw.close()
        await ps.close()


async def test_bad_requests_get_error_replies_and_service_goes_on(own_broker, spawn, tmp_path):
    spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
    ps = PubSub(own_broker.url, processor="t")
    raw = pulsar.Client(own_broker.url)
    try:
        c = config_client(ps)
        r = await c.request(ConfigRequest(operation="frobnicate"), timeout=10)
        assert (r.error.type, r.error.message) == ("bad-operation", "Bad operation")
        # Undecodable payload with an id: an error reply to that id.
        resp = raw.subscribe(CONFIG_RESPONSE, "raw-resp")
        raw.create_producer(CONFIG_REQUEST).send(b'{"operation": 7}', properties={"id": "bad-1"})
        msg = resp.receive(timeout_millis=10000)
        body = json.loads(msg.data())
        assert msg.properties()["id"] == "bad-1"
        assert body["error"]["type"] == "config-error"
        assert "ConfigRequest.operation" in body["error"]["message"]
        # Still serving.
        await put(c, "t", "k", '"v"')
        assert await get(c, "t", "k") == '"v"'
    finally:
        raw.close()
        await ps.close()


async def test_flow_operations_over_the_wire(own_broker, spawn, tmp_path):
    spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
    ps = PubSub(own_broker.url, processor="t")
    try:
        f = RequestResponseClient(ps, request_topic=FLOW_REQUEST, response_topic=FLOW_RESPONSE,
                                  request_schema=FlowRequest, response_schema=FlowResponse,
                                  subscription=f"t-{uuid.uuid4()}")
        blueprint = {
            "description": "test", "blueprint": {},
            "flow": {"echo:{id}": {"request": "non-persistent://tg/request/echo:{id}"}},
            "interfaces": {"echo": {"request": "non-persistent://tg/request/echo:{id}",
                                    "response": "non-persistent://tg/response/echo:{id}"}},
        }
        r = await f.request(FlowRequest(operation="put-blueprint", blueprint_name="bp",
                                        blueprint_definition=json.dumps(blueprint)), timeout=10)
        assert r.error is None
        r = await f.request(FlowRequest(operation="start-flow", blueprint_name="bp", flow_id="f1",
                                        description="d"), timeout=10)
        assert r.error is None
        r = await f.request(FlowRequest(operation="list-flows"), timeout=10)
        assert r.flow_ids == ["f1"]
        r = await f.request(FlowRequest(operation="start-flow", blueprint_name="bp", flow_id="f1",
                                        description="d"), timeout=10)
        assert r.error.message == "Flow already exists"
        c = config_client(ps)
        active = json.loads(await get(c, "active-flow", "echo"))
        assert active == {"f1": {"request": "non-persistent://tg/request/echo:f1"}}
    finally:
        await ps.close()


@pytest.mark.parametrize("sig", ["term"])
async def test_sigterm_exits_zero_quickly(own_broker, spawn, tmp_path, sig):
    svc = spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
    assert svc.stop(timeout=30) == 0   # by itself: stop() kills it (not 0) past the 30 s


async def test_ready_after_config_waits_for_the_first_config(own_broker, spawn, tmp_path):
    """Under tg-launch a processor's ready file means its config (and flows) are in place."""
    import os

    from support import BIN, Proc
    ready = tmp_path / "agent-ready"
    agent = Proc([str(BIN / "agent-manager-react"), "--no-metrics", "-p", own_broker.url],
                 tmp_path / "agent.log", env={"TG_READY_FILE": str(ready), "TG_READY_AFTER_CONFIG": "1"}).start()
    try:
        # Its first fetch of config went unanswered (10 s): up, but not ready.
        await wait_for_async("a config fetch unanswered", lambda: "Config service not answering yet"
                             in agent.output(), 60, gone=agent.exited)
        assert not ready.exists(), agent.output()   # no config service yet: not ready
        spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
        agent.wait_ready(ready, timeout=30)
        assert "Config version 0 applied" in agent.output()
        assert os.environ.get("TG_READY_AFTER_CONFIG") is None  # the test did not leak it
    finally:
        agent.stop()
