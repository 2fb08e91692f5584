"""config-svc on the in-memory transport: only requests someone can hear about change the config."""

from __future__ import annotations

import json
import subprocess

import pytest
from support import BIN
from trustgraph.base.testing import worker
from trustgraph.config.service import Processor as ConfigService
from trustgraph.schema import ConfigKey, ConfigRequest, ConfigResponse, ConfigValue, FlowRequest, FlowResponse
from trustgraph.topics import (
    CONFIG_REQUEST,
    CONFIG_RESPONSE,
    FLOW_REQUEST,
    FLOW_RESPONSE,
    config_push_queue,
    to_pulsar,
)


@pytest.fixture
async def svc(tmp_path):
    async with worker(ConfigService, store=str(tmp_path / "config.db")) as w:
        yield w


def put(key: str, value: str) -> ConfigRequest:
    return ConfigRequest(operation="put", values=[ConfigValue(type="tool", key=key, value=value)])


async def ask(w, request: ConfigRequest) -> ConfigResponse:
    (reply,) = await w.call(CONFIG_REQUEST, CONFIG_RESPONSE, request, ConfigResponse)
    return reply


async def test_a_put_without_an_id_is_not_applied(svc):
    replies = await svc.listen(CONFIG_RESPONSE, ConfigResponse)
    await svc.send(CONFIG_REQUEST, put("ghost", '"boo"'), id=None)
    # Every request takes the store's write lock in arrival order, so this get
    # sees the id-less put if it was applied.
    got = await ask(svc, ConfigRequest(operation="get", keys=[ConfigKey(type="tool", key="ghost")]))
    assert got.values[0].value is None
    assert (await ask(svc, ConfigRequest(operation="config"))).version == 0
    assert replies.by_id(None) == [] and len(replies.messages) == 2
    # The same put with an id is applied, answered and pushed.
    assert (await ask(svc, put("real", '"yes"'))).error is None
    assert (await ask(svc, ConfigRequest(operation="config"))).config == {"tool": {"real": '"yes"'}}
    pushes = [json.loads(m.payload) for m in svc.broker.sent[to_pulsar(config_push_queue)]]
    assert [p["version"] for p in pushes] == [0, 1]  # at start, then after the put


async def test_malformed_requests_get_config_and_flow_errors(svc):
    config = await svc.listen(CONFIG_RESPONSE, ConfigResponse)
    rid = await svc.send(CONFIG_REQUEST, b'{"operation": 7}')
    (err,) = await config.wait_for(rid)
    assert err.error.type == "config-error" and err.error.message.startswith("ConfigRequest.operation")
    flow = await svc.listen(FLOW_RESPONSE, FlowResponse)
    rid = await svc.send(FLOW_REQUEST, b"not json")
    (err,) = await flow.wait_for(rid)
    assert err.error.type == "flow-error"
    (bad,) = await svc.call(FLOW_REQUEST, FLOW_RESPONSE, FlowRequest(operation="frobnicate"), FlowResponse)
    assert (bad.error.type, bad.error.message) == ("bad-operation", "Bad operation")


def test_upstreams_cassandra_flags_refuse_to_start_saying_how_to_move_the_config(tmp_path):
    # Started in place of upstream's config-svc, with its flags: starting empty would make every
    # processor that had a higher version ignore the new ones; one line says what to do instead.
    r = subprocess.run([str(BIN / "config-svc"), "--cassandra-host", "cassandra1", "--store",
                        str(tmp_path / "config.db"), "-p", "pulsar://127.0.0.1:1"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    [line] = r.stderr.splitlines()
    assert line.startswith("config-svc: error: --cassandra-host is upstream's Cassandra store")
    assert "tg-show-config > config.txt" in line and "tg-import-config config.txt" in line
    assert not (tmp_path / "config.db").exists()        # nothing was created
