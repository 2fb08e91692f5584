"""Whether a push comes from config-svc: the decision, config-svc's stamps, and a processor following both.

The decision (``config_source.decide``) is pure; config-svc and a following
processor run on the in-memory transport, the processor's pushes sent the
way a stranger on the broker would send them.
"""

from __future__ import annotations

import json

import pytest
from support import wait_for_async
from trustgraph.base.processors import config_follower, config_parts
from trustgraph.base.processors.async_processor import AsyncProcessor, TokenFileError, pulsar_token
from trustgraph.base.processors.config_source import (
    DIGEST,
    STORE,
    Answer,
    Held,
    config_digest,
    decide,
    restart_reason,
    stamp_of,
)
from trustgraph.base.testing import MemoryBroker, memory_pubsub, worker
from trustgraph.base.testing.stand_ins import Responder
from trustgraph.compat.v211 import schema as v211
from trustgraph.config.service import Processor as ConfigService
from trustgraph.schema import ConfigPush, ConfigRequest, ConfigResponse, ConfigValue
from trustgraph.topics import CONFIG_PUSH, CONFIG_REQUEST, CONFIG_RESPONSE

A = {"tool": {"a": '"1"'}}
B = {"tool": {"a": '"2"'}}


def test_the_digest_does_not_depend_on_order():
    assert config_digest({"x": {"b": "2", "a": "1"}, "w": {}}) == config_digest({"w": {}, "x": {"a": "1", "b": "2"}})
    assert config_digest(A) != config_digest(B)


@pytest.mark.parametrize(("version", "config", "answer", "held", "action"), [
    (5, A, Answer(5, config_digest(A)), Held(4), "apply"),
    (5, A, Answer(5, None), Held(4), "apply"),                       # upstream's config-svc: the version alone
    (3, A, Answer(5, config_digest(B)), Held(4), "superseded"),      # the push of 5 follows
    (10**12, A, Answer(5, config_digest(B)), Held(5, config_digest(B)), "ignore"),
    (10**12, A, Answer(5, config_digest(B)), Held(4), "ignore+fetch"),
    (5, A, Answer(5, config_digest(B)), Held(5, config_digest(B)), "ignore"),   # not config-svc's content
    (5, A, Answer(5, config_digest(B)), Held(2), "ignore+fetch"),
    (1, A, Answer(1, config_digest(A), "new"), Held(9, "x", "old"), "apply"),   # history restarted
])
def test_a_push_is_applied_only_when_config_svc_holds_it(version, config, answer, held, action):
    decision = decide(version, config_digest(config), answer, held)
    assert decision.action == action
    if action.startswith("ignore"):
        assert decision.why.endswith("so it did not send it")


def test_a_restart_is_named():
    assert restart_reason(Held(9, "d", "s1"), 10, "s1") is None
    assert restart_reason(Held(9, "d", "s1"), 1, "s2") == "a new config store (s2, was s1)"
    assert restart_reason(Held(9, "d", "s1"), 4, "s1") == "store s1 went back from version 9 (restored from a backup?)"
    assert restart_reason(Held(9), 4, None) == "config-svc says its current version is 4, behind 9"
    assert stamp_of({STORE: "s", DIGEST: ""}) == ("s", None)


async def test_config_svc_stamps_its_pushes_and_replies(tmp_path):
    async with worker(ConfigService, store=str(tmp_path / "c.db")) as w:
        (r,) = await w.call(CONFIG_REQUEST, CONFIG_RESPONSE, ConfigRequest(
            operation="put", values=[ConfigValue(type="tool", key="a", value='"1"')]), ConfigResponse)
        inbox = await w.listen(CONFIG_RESPONSE, ConfigResponse)
        rid = await w.send(CONFIG_REQUEST, ConfigRequest(operation="get", keys=[]))
        (got,) = await inbox.wait_for(rid)
        (msg,) = [m for m in inbox.messages if m.id == rid]
        store = w.processor.store.identity()
        assert got.version == 1
        assert stamp_of(msg.properties) == (store, config_digest(A))
        pushes = w.broker.sent[CONFIG_PUSH]
        assert [json.loads(p.payload)["version"] for p in pushes] == [0, 1]
        assert stamp_of(pushes[-1].properties()) == (store, config_digest(A))


class Follower(AsyncProcessor):
    pass


async def _following(broker: MemoryBroker, seen: list[tuple[int, dict]]) -> Follower:
    proc = Follower(id="follower", pubsub=memory_pubsub(broker, "follower"), metrics=False)

    async def handler(config, version):
        seen.append((version, config.get("tool", {})))

    proc.register_config_handler(handler, types=["tool"])
    await proc.start()
    return proc


async def until(probe, what: str) -> None:
    await wait_for_async(what, probe, 30, every=0.01)


async def test_a_processor_applies_only_what_config_svc_holds(tmp_path, caplog):
    broker = MemoryBroker()
    seen: list[tuple[int, dict]] = []
    async with worker(ConfigService, broker=broker, store=str(tmp_path / "c.db")) as w:
        proc = await _following(broker, seen)
        try:
            await until(lambda: proc.config_version == 0, "the first config")
            stranger = await memory_pubsub(broker, "stranger").producer(CONFIG_PUSH)
            await stranger.send(ConfigPush(version=10**12, config=B))
            await until(lambda: "Config push of version 1000000000000 ignored: config-svc is at version 0"
                        in caplog.text, "the warning")
            await stranger.send(ConfigPush(version=0, config=B))   # config-svc's version, not its content
            await until(lambda: "its content is not the config config-svc holds" in caplog.text, "the warning")
            await w.call(CONFIG_REQUEST, CONFIG_RESPONSE, ConfigRequest(
                operation="put", values=[ConfigValue(type="tool", key="a", value='"1"')]), ConfigResponse)
            await until(lambda: proc.config_version == 1, "the real put")
            assert seen == [(0, {}), (1, {"a": '"1"'})]   # B was never applied
        finally:
            await proc.stop()


async def test_a_processor_follows_a_new_store(tmp_path, caplog):
    broker = MemoryBroker()
    seen: list[tuple[int, dict]] = []
    async with worker(ConfigService, broker=broker, store=str(tmp_path / "a.db")) as w:
        for key in ("a", "b", "c"):
            await w.call(CONFIG_REQUEST, CONFIG_RESPONSE, ConfigRequest(
                operation="put", values=[ConfigValue(type="tool", key=key, value='"x"')]), ConfigResponse)
        proc = await _following(broker, seen)
        await until(lambda: proc.config_version == 3, "store a's config")
    try:
        async with worker(ConfigService, broker=broker, store=str(tmp_path / "b.db")):
            await until(lambda: proc.config_version == 0, "the new store's start push")
            assert seen[-1] == (0, {})
            assert "version history restarted (a new config store" in caplog.text
    finally:
        await proc.stop()


async def test_beside_upstreams_config_svc_an_unstamped_push_at_its_version_is_applied(caplog):
    # Upstream 2.1.4's config-svc: no stamp on its pushes, no digest on its replies.
    broker = MemoryBroker()
    held = {"version": 3, "config": A}

    def upstream(req: ConfigRequest) -> list[ConfigResponse]:
        return [ConfigResponse(version=held["version"], config=held["config"] if req.operation == "config" else None,
                               values=[] if req.operation == "get" else None)]

    ps = memory_pubsub(broker, "upstream-config-svc")
    await Responder(ps, CONFIG_REQUEST, CONFIG_RESPONSE, ConfigRequest, upstream).start()
    seen: list[tuple[int, dict]] = []
    proc = await _following(broker, seen)
    try:
        await until(lambda: proc.config_version == 3, "the first config")
        held.update(version=4, config=B)
        pushes = await ps.producer(CONFIG_PUSH)
        await pushes.send(ConfigPush(version=4, config=B))
        await until(lambda: proc.config_version == 4, "upstream's push")
        await pushes.send(ConfigPush(version=10**12, config=A))   # ahead of it: not from it
        await until(lambda: "Config push of version 1000000000000 ignored: config-svc is at version 4"
                    in caplog.text, "the warning")
        assert seen == [(3, A["tool"]), (4, B["tool"])]
    finally:
        await proc.stop()


class BothWires(AsyncProcessor):
    wires = ("2.1", "2.11")


def applied_gauge(processor_id: str) -> float | None:
    """The ``config_version`` gauge of ``processor_id`` in this process's registry (None: never set)."""
    from prometheus_client import REGISTRY

    return REGISTRY.get_sample_value("config_version", {"processor": processor_id})


@pytest.mark.parametrize("wire", ["2.1", "2.11"])
async def test_the_config_version_gauge_shows_a_version_once_its_handlers_ran(tmp_path, wire):
    broker = MemoryBroker()
    ident = f"gauge-follower-{wire}"
    during: list[tuple[int, float | None]] = []
    async with worker(ConfigService, broker=broker, store=str(tmp_path / "c.db"), wire=wire) as w:
        proc = BothWires(id=ident, pubsub=memory_pubsub(broker, ident), metrics=False, wire=wire)

        async def handler(config, version):
            during.append((version, applied_gauge(ident)))

        proc.register_config_handler(handler, types=["tool"])
        await proc.start()
        try:
            await until(lambda: proc.config_version is not None, "the first config")
            first = proc.config_version
            assert applied_gauge(ident) == first
            await w.call(CONFIG_REQUEST, CONFIG_RESPONSE, ConfigRequest(
                operation="put", values=[ConfigValue(type="tool", key="a", value='"1"')]), ConfigResponse)
            await until(lambda: applied_gauge(ident) == first + 1, "the gauge at the put's version")
            assert proc.config_version == first + 1
            # Each handler ran before the gauge showed its version.
            assert during == [(first, None), (first + 1, first)]
        finally:
            await proc.stop()


def test_a_token_file_wins_and_a_bad_one_says_what_to_do(tmp_path):
    (tmp_path / "t").write_text("  tok-from-file\n")
    assert pulsar_token({"pulsar_api_key": "tok-env", "pulsar_api_key_file": str(tmp_path / "t")}) == "tok-from-file"
    assert pulsar_token({"pulsar_api_key": "tok-env"}) == "tok-env"
    assert pulsar_token({}) is None
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(TokenFileError, match="is empty"):
        pulsar_token({"pulsar_api_key_file": str(tmp_path / "empty")})
    with pytest.raises(TokenFileError, match="cannot read the Pulsar token file .*No such file"):
        pulsar_token({"pulsar_api_key_file": str(tmp_path / "missing")})


@pytest.mark.parametrize("wire", ["2.1", "2.11"])
async def test_a_fetch_sent_before_config_svc_started_is_asked_again_when_it_starts(
        tmp_path, wire, monkeypatch):
    """A processor started before its config-svc sends its first fetch to nobody (a non-persistent
    topic drops it). config-svc's start push (2.11: its start notice) means it is there: the fetch
    is asked again then, not after its timeout, made an hour here so that only the push can end it."""
    monkeypatch.setattr(config_follower, "FETCH_TIMEOUT", 3600.0)
    monkeypatch.setattr(config_parts, "PAGE_WAIT", 3600.0)   # a read's own "ask again" (2.1)
    broker = MemoryBroker()
    ident = f"early-follower-{wire}"
    proc = BothWires(id=ident, pubsub=memory_pubsub(broker, ident), metrics=False, wire=wire)
    seen: list[int] = []

    async def handler(config, version):
        seen.append(version)

    proc.register_config_handler(handler, types=["tool"])
    await proc.start()
    try:
        request_topic = CONFIG_REQUEST if wire == "2.1" else v211.CONFIG_REQUEST
        await until(lambda: broker.sent.get(request_topic), "the first fetch, sent to nobody")
        assert proc.config_version is None
        async with worker(ConfigService, broker=broker, store=str(tmp_path / "c.db"), wire=wire):
            await until(lambda: proc.config_version is not None, "the config, fetched again")
        assert seen == [proc.config_version]
    finally:
        await proc.stop()
