"""Config replies in parts: cut to fit one message, gathered back whole."""

from __future__ import annotations

import json

import pytest
from trustgraph.base.processors import config_parts
from trustgraph.base.testing import worker
from trustgraph.config.service.service import Processor as ConfigService
from trustgraph.schema import ConfigRequest, ConfigResponse, ConfigValue
from trustgraph.schema.codec import encode
from trustgraph.topics import CONFIG_NOTICE, CONFIG_PUSH, CONFIG_REQUEST, CONFIG_RESPONSE

LIMIT = 4096


def big_config(n: int = 60) -> ConfigResponse:
    return ConfigResponse(version=7, config={"tool": {f"t{i}": "x" * 200 for i in range(n)},
                                             "prompt": {"p": "y" * 100}})


def test_a_reply_that_fits_is_one_message_as_upstream_has_it():
    resp = ConfigResponse(version=1, config={"tool": {"a": "1"}})
    assert config_parts.split(resp, LIMIT) == [(resp, encode(resp))]


def test_a_big_reply_is_cut_into_messages_that_fit_and_gathered_back_whole():
    resp = big_config()
    parts = config_parts.split(resp, LIMIT)
    assert len(parts) > 3
    assert all(len(data) <= LIMIT for _, data in parts)
    gather = config_parts.Gather()
    # Parts may arrive in any order; the reply is whole once the last is in.
    order = list(reversed(range(len(parts))))
    out = None
    for n, i in enumerate(order):
        out = gather.add(parts[i][0], config_parts.part_property(i + 1, len(parts)))
        assert (out is None) is (n < len(order) - 1)
    assert out == resp


def test_one_item_bigger_than_a_message_is_an_error_naming_it():
    resp = ConfigResponse(version=1, config={"tool": {"huge": "z" * (2 * LIMIT)}})
    with pytest.raises(config_parts.PartsError, match="tool/huge"):
        config_parts.split(resp, LIMIT)


def test_parts_of_different_versions_are_refused():
    a, b = ConfigResponse(version=1, config={"t": {"a": "1"}}), ConfigResponse(version=2, config={"t": {"b": "2"}})
    with pytest.raises(config_parts.PartsError):
        config_parts.merge([a, b])


async def test_config_svc_answers_in_parts_only_a_caller_that_asks_and_announces_what_it_cannot_push(
        tmp_path, monkeypatch):
    monkeypatch.setattr(config_parts, "PART_LIMIT", 16 * 1024)
    async with worker(ConfigService, store=str(tmp_path / "c.db")) as w:
        values = [ConfigValue(type="tool", key=f"t{i:02d}", value="v" * 1000) for i in range(40)]
        for start in range(0, 40, 10):  # each put fits one message
            (r,) = await w.call(CONFIG_REQUEST, CONFIG_RESPONSE,
                                ConfigRequest(operation="put", values=values[start:start + 10]), ConfigResponse)
            assert r.error is None
        # An upstream-style caller: an error naming the size, not a reply the broker would refuse.
        (plain,) = await w.call(CONFIG_REQUEST, CONFIG_RESPONSE, ConfigRequest(operation="config"), ConfigResponse)
        assert plain.error.type == "config-error" and "bytes" in plain.error.message
        # A caller that asks: several parts, gathered whole.
        inbox = await w.listen(CONFIG_RESPONSE, ConfigResponse)
        rid = await w.send(CONFIG_REQUEST, ConfigRequest(operation="config"),
                           properties={config_parts.PARTS: "1"})
        whole = None
        await inbox.wait_for(rid)
        while whole is None:  # gathered from what has arrived; else wait for one more message
            msgs = [m for m in inbox.messages if m.id == rid]
            gather = config_parts.Gather()
            for m in msgs:
                whole = gather.add(m.value, m.properties) or whole
            if whole is None:
                await inbox.wait_for(rid, lambda _r, n=len(msgs): len(inbox.by_id(rid)) > n)
        assert len(msgs) > 1
        assert whole.config["tool"] == {v.key: v.value for v in values} and whole.version == 4
        # Pushes: whole while they fit (upstream peers read them), then a notice of the version.
        pushes = [json.loads(m.payload) for m in w.broker.sent[CONFIG_PUSH]]
        notices = [json.loads(m.payload) for m in w.broker.sent[CONFIG_NOTICE]]
        assert max(p["version"] for p in pushes) < 4
        assert notices[-1]["version"] == 4 and notices[-1]["config"] == {}
