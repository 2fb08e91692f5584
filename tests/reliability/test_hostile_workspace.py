"""A hostile workspace: config-svc --wire 2.11 asked for names no topic can hold, and for thousands.

Before the fix, anyone on the bus could register workspace ``a/b`` in
``__workspaces__``: the running config-svc logged an ERROR, and every later
start crashed on ``'request:tg:config:a/b' is not a valid topic`` (tg-launch
gave up after five restarts and stopped the stack, for good, until the store
was edited by hand); and nothing bounded how many workspaces it served (four
puts registered 2,000: config-svc +160 MB, broker +212 MB).  Now a name that
cannot be a topic and a registration past ``--max-workspaces`` (1,000) are
refused when put, and a store holding such a name, as an older config-svc
wrote it, starts with one WARNING naming it.
"""

from __future__ import annotations

import time
import uuid

import pytest
from hostile_kit import rss_mb
from support import wait_for_async
from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.compat.v211 import schema as v211
from trustgraph.config.service.service import DEFAULT_MAX_WORKSPACES
from trustgraph.config.service.store import ConfigStore

WAIT = 180.0   # bound on each wait for an event; serving a thousand workspaces takes ~15 s loaded
BAD = "a/b"


def client(ps: PubSub, workspace: str | None = None) -> RequestResponseClient:
    """A 2.11 config client: on the system queue, or on ``workspace``'s own."""
    queue = v211.workspace_queue
    request, response = ((v211.CONFIG_REQUEST, v211.CONFIG_RESPONSE) if workspace is None else
                         (v211.to_pulsar(queue(v211.config_request_queue, workspace)),
                          v211.to_pulsar(queue(v211.config_response_queue, workspace))))
    return RequestResponseClient(ps, request_topic=request, response_topic=response,
                                 request_schema=v211.ConfigRequest, response_schema=v211.ConfigResponse,
                                 subscription=f"hostile-{uuid.uuid4()}")


def register(*names: str) -> v211.ConfigRequest:
    return v211.ConfigRequest(operation="put", workspace=v211.WORKSPACES, values=[
        v211.ConfigValue(type=v211.WORKSPACE_TYPE, key=name, value='{"enabled": true}') for name in names])


async def answers(c: RequestResponseClient) -> bool:
    """Whether a workspace's own queue answers now (a request sent before its consumer is lost)."""
    try:
        reply = await c.request(v211.ConfigRequest(operation="config", workspace="x"), timeout=3)
    except TimeoutError:
        return False
    return reply.error is None


@pytest.mark.long
@pytest.mark.timeout(900)
async def test_a_hostile_workspace_is_refused_and_a_store_holding_one_still_starts(own_broker, spawn, tmp_path,
                                                                                   scenario):
    db = str(tmp_path / "c.db")
    svc = spawn("config-svc", "--store", db, "--wire", "2.11", broker=own_broker, timeout=WAIT)
    broker_pid = own_broker.proc.pid
    before = {"config-svc": rss_mb(svc.p.pid), "broker": rss_mb(broker_pid)}
    ps = PubSub(own_broker.url, processor="hostile")
    try:
        system = client(ps)
        bad = await system.request(register(BAD), timeout=30)
        # 2,000 asked for, as the report's four puts did: up to the cap (the default workspace is one
        # of them), then more.
        names = [f"ws-{i:04d}" for i in range(2000)]
        cap = DEFAULT_MAX_WORKSPACES - 1
        batches = [names[:cap], names[cap:cap + 500], names[cap + 500:]]
        started = time.monotonic()
        replies = [await system.request(register(*batches[0]), timeout=WAIT)]
        # config-svc answers a put once it serves the workspaces the put registered.
        serving_s = time.monotonic() - started
        replies += [await system.request(register(*batch), timeout=60) for batch in batches[1:]]
        refused = [r.error.message for r in replies if r.error is not None]
        last = client(ps, names[cap - 1])
        await wait_for_async("the last workspace's queue answering", lambda: answers(last), WAIT,
                             gone=svc.exited, detail=svc.output)
        after = {"config-svc": rss_mb(svc.p.pid), "broker": rss_mb(broker_pid)}
        listed = await system.request(v211.ConfigRequest(operation="list", workspace=v211.WORKSPACES,
                                                         type=v211.WORKSPACE_TYPE), timeout=30)
        registered = len(listed.directory)
        # What an older config-svc let through, then a restart: every start after it used to crash.
        stopped = svc.stop(timeout=60)
        with ConfigStore(db) as store:
            store.apply(puts=[(v211.WORKSPACE_TYPE, BAD, "{}")], workspace=v211.WORKSPACES)
        started = time.monotonic()
        again = spawn("config-svc", "--store", db, "--wire", "2.11", broker=own_broker, timeout=WAIT)
        restart_s = time.monotonic() - started
        warnings = [line for line in again.log.read_text().splitlines() if "WARNING" in line]
        named = [line for line in warnings if f"Workspace '{BAD}'" in line]
        over = [line for line in warnings if "past config-svc's limit" in line]
        served = await answers(client(ps, names[0])) and await answers(client(ps, "default"))
        put = await system.request(v211.ConfigRequest(operation="put", workspace="default", values=[
            v211.ConfigValue(type="tool", key="after", value='"x"')]), timeout=30)
        exits = int(again.exited() is not None) + int(stopped not in (0, None))
    finally:
        await ps.close()
    grown = {name: after[name] - before[name] for name in before}
    ok = (bad.error is not None and "cannot be registered" in bad.error.message
          and replies[0].error is None and len(refused) == 2 and registered == DEFAULT_MAX_WORKSPACES
          and len(named) == 1 and not over and served and put.error is None and exits == 0)
    scenario(scenario="hostile workspace",
             load=f"config-svc --wire 2.11; 2,000 workspaces asked for in 3 puts "
                  f"(cap {DEFAULT_MAX_WORKSPACES:,})",
             fault=f"a put registering workspace '{BAD}'; then '{BAD}' written into the store as an older "
                   "config-svc let it be, and config-svc restarted",
             expected="the bad name and the puts past the cap refused with a config-error, nothing written; "
                      "the restart serves, the bad name one WARNING",
             observed=f"'{BAD}' refused; {registered:,} workspaces registered, {len(refused)} puts refused; "
                      f"the put answered, its {cap:,} served, in {serving_s:.1f} s: "
                      f"config-svc +{grown['config-svc']:.0f} MB, "
                      f"broker +{grown['broker']:.0f} MB; restart ready in {restart_s:.1f} s with "
                      f"{len(named)} WARNING for '{BAD}', serving and writing",
             recovery_s=restart_s, exits=exits, ok=ok)
    assert bad.error is not None and "cannot be registered" in bad.error.message, bad.error
    assert replies[0].error is None, replies[0].error
    assert len(refused) == 2 and all("serves at most 1,000 workspaces" in m for m in refused), refused
    assert registered == DEFAULT_MAX_WORKSPACES
    assert len(named) == 1, warnings
    assert over == [], over   # the store holds the cap and a name it cannot serve: nothing past the cap
    assert served and put.error is None
    assert exits == 0
