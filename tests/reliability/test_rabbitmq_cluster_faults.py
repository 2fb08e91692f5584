"""A RabbitMQ cluster losing two of its three nodes under a tool-call burst: every call ends, calls
succeed again within seconds, and nothing persistent is lost.

A real tool service of ours (``slow_tool_service.py``, a DynamicToolService) runs as a process on
``--pubsub-backend rabbitmq`` with the three nodes of a cluster of the test's own listed in
``--rabbitmq-host``; 5 clients (ToolServiceClient on PubSubs over RabbitMQTransports, each listing the
nodes from a different first one, so they are spread over the cluster) call it all along.  Then:

1. kill -9 of the node the service is connected to (its log says which).  That node also holds the
   service's request queue: a classic queue lives on the node that declared it, and the service
   declared it over that connection.  So the fault takes the service's connection, its request
   queue with the requests in it, and the connections of the clients on that node.
2. kill -9 of the node the service moved to: the same again, now with one node of three left.
3. the first node started again.

Per phase the row says how many calls were answered, ended at once with an error or a lost-call
notice (what the core promises for a call the fault swallowed), waited out their deadline (none
may) and hung past it (none may), and the seconds from the fault to the first success of a call
sent after it.

And a persistent topic: messages published (publisher-confirmed) before the kills to its quorum
queue, nobody consuming.  With two nodes of three down the queue has no majority: it delivers
nothing (that is RabbitMQ's promise: it waits, it does not lose), which the test checks for a
while; once one node is back, every message is consumed.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from recorded_calls import RecordedCalls
from support import Proc, wait_for_async
from trustgraph.base import PubSub, ToolServiceClient
from trustgraph.base.messaging.errors import PubSubError
from trustgraph.base.messaging.rabbitmq_transport import RabbitMQTransport
from trustgraph.base.messaging.request_response import CallLost, RequestTimeout
from trustgraph.schema import ToolServiceRequest
from trustgraph.topics import tool_service_topics

SERVICE = Path(__file__).with_name("slow_tool_service.py")
CLIENTS = 5
IN_FLIGHT = 4         # calls each client keeps going at once
CALL_SECONDS = 0.2    # each call takes this long in the service
DEADLINE = 20.0       # a call's own deadline
MARGIN = 15.0         # past its deadline plus this, a call that has not ended is hung
RECOVERY = 30.0       # what must hold: a fresh success within 30 s of a node's death
GIVE_UP = 120.0       # how long a phase waits for a fresh success at all
AFTER = 5.0           # the burst goes on this long after the fresh success, before the next fault
KEPT = 50             # persistent messages published before the kills
NO_MAJORITY_LOOK = 10.0   # seconds a consumer looks at the quorum queue while it has no majority

pytestmark = [pytest.mark.long, pytest.mark.timeout(900)]


def node_list(cluster, first: int) -> str:
    """The cluster's nodes as ``--rabbitmq-host`` takes them, starting from node ``first``."""
    nodes = cluster.nodes[first:] + cluster.nodes[:first]
    return ",".join(f"{n.host}:{n.port}" for n in nodes)


def pubsub(cluster, processor: str, first: int) -> PubSub:
    hosts, node = node_list(cluster, first), cluster.nodes[0]
    return PubSub(f"amqp://{hosts}", processor=processor, transport=RabbitMQTransport(
        hosts, node.port, node.username, node.password, node.vhost, name=processor))


class Burst(RecordedCalls):
    """Tool calls from several clients, each keeping a few in flight, sent again as each ends."""

    def __init__(self, clients: list[ToolServiceClient]) -> None:
        super().__init__()
        self.clients = clients
        self.errors: list[tuple[float, str]] = []            # (sent, what the error was)
        self._n = 0

    async def _one(self, client: ToolServiceClient) -> None:
        self._n += 1
        sent = time.monotonic()
        try:
            async with asyncio.timeout(DEADLINE + MARGIN):
                answer = await client.call("u", {}, {"n": self._n, "seconds": CALL_SECONDS}, timeout=DEADLINE)
            outcome = "ok" if answer.startswith("done") else "error"
        except CallLost:
            outcome = "lost"        # a lost-call notice (or this process's own lost connection)
        except RequestTimeout:
            outcome = "deadline"    # nothing ended it: it waited its whole deadline
        except TimeoutError:
            outcome = "hung"        # still waiting past its deadline
        except Exception as e:  # noqa: BLE001 - an error reply, a request the broker handed back, ...
            outcome = "error"
            self.errors.append((sent, "nothing consumes the request topic" if "nothing consumes" in str(e)
                                else type(e).__name__))
        self.record(sent, time.monotonic(), outcome)
        if outcome != "ok":
            await asyncio.sleep(0.2)   # pace the retries of a failing call (load shaping, not synchronisation)

    async def run(self) -> None:
        async def loop(client: ToolServiceClient) -> None:
            while not self._stop:
                await self._one(client)
        await asyncio.gather(*(loop(c) for c in self.clients for _ in range(IN_FLIGHT)))

    def phase(self, start: float, end: float) -> dict[str, int]:
        """Outcomes of the calls in flight at ``start`` or sent in ``[start, end)``."""
        counts = {"ok": 0, "lost": 0, "error": 0, "deadline": 0, "hung": 0}
        for sent, ended, outcome in self.results:
            if (sent < start < ended) or (start <= sent < end):
                counts[outcome] += 1
        return counts


NODE_LINE = re.compile(r"Connected to RabbitMQ at (\S+:\d+) \(default lane\)|RabbitMQ default lane restored on node (\S+:\d+)")


def _service_node(log: str) -> str:
    """``host:port`` of the node the service's default lane is on now, from its log."""
    found = [m.group(1) or m.group(2) for m in NODE_LINE.finditer(log)]
    assert found, log[-3000:]
    return found[-1]


def _holds(node, prefix: str) -> bool:
    """Whether ``node`` hosts a queue whose name starts with ``prefix`` (``list_queues --local``)."""
    queues = json.loads(node.ctl("list_queues", "--local", "name", "--formatter", "json"))
    return any(q["name"].startswith(prefix) for q in queues)


async def _consume(cluster, topic: str, look: float, first: int,
                   patience: float | None = None) -> tuple[list[str], str]:
    """What a new consumer of ``topic``'s shared subscription gets within ``look`` seconds of
    asking (opening included), and how its opening went (given up after ``patience`` seconds)."""
    got: list[str] = []
    ps = pubsub(cluster, f"keeper-{uuid.uuid4().hex[:6]}", first)
    began = time.monotonic()
    try:
        try:
            await ps.consumer(topic, "keeper", ToolServiceRequest, handler=lambda msg: got.append(msg.id),
                              patience=patience)
            opened = f"opened in {time.monotonic() - began:.1f} s"
        except PubSubError as e:
            said = "its queue's declaration got no answer" if "did not answer" in str(e) else str(e)[-160:]
            return got, f"could not open ({said}; gave up after {time.monotonic() - began:.0f} s)"
        await asyncio.sleep(max(0.0, look - (time.monotonic() - began)))   # the look itself: a bound, not a wait for an event
        return got, opened
    finally:
        await ps.close()


async def test_two_of_three_nodes_killed_under_a_tool_call_burst(rabbitmq_cluster, tmp_path, scenario):
    cluster = rabbitmq_cluster
    topic = f"cluster-{uuid.uuid4().hex[:8]}"
    kept_topic = f"persistent://tg/flow/kept-{uuid.uuid4().hex[:8]}"
    secret = tmp_path / "password"
    secret.write_text(cluster.nodes[0].password + "\n")
    ready = tmp_path / "service.ready"
    service = Proc([sys.executable, str(SERVICE), "-t", topic, "-c", "64", "--no-metrics",
                    "--pubsub-backend", "rabbitmq", "--rabbitmq-host", node_list(cluster, 0),
                    "--rabbitmq-port", str(cluster.nodes[0].port), "--rabbitmq-username", cluster.nodes[0].username,
                    "--rabbitmq-password-file", str(secret), "--log-level", "INFO"],
                   tmp_path / "service.log", env={"TG_READY_FILE": str(ready)}).start()
    request, response = tool_service_topics(topic)
    pubsubs = [pubsub(cluster, f"client-{i}", i % len(cluster.nodes)) for i in range(CLIENTS)]
    clients = [ToolServiceClient(ps, request_topic=request, response_topic=response, timeout=DEADLINE)
               for ps in pubsubs]
    burst = Burst(clients)
    runner: asyncio.Task | None = None
    phases: list[tuple[str, str, float, float | None]] = []   # (name, fault, at, recovery)
    by_port = {f"{n.host}:{n.port}": i for i, n in enumerate(cluster.nodes)}
    keeper = pubsub(cluster, "publisher", 2)
    try:
        await asyncio.to_thread(service.wait_ready, ready, 120)
        for c in clients:
            await c.start()
        # The quorum queue exists (a consumer declared it), then holds what is published with nobody consuming.
        _, how = await _consume(cluster, kept_topic, 0, 2)
        assert how.startswith("opened"), how
        out = await keeper.producer(kept_topic)
        for i in range(KEPT):
            await out.send(ToolServiceRequest(user=str(i)), {"id": str(i)})   # confirmed by the queue's majority
        await keeper.close()

        runner = asyncio.ensure_future(burst.run())
        assert await burst.wait_fresh_success(time.monotonic() - 1, 60) is not None, service.output()[-3000:]
        await asyncio.sleep(AFTER)   # the burst at its pace before the first fault (load, not synchronisation)

        for phase in ("first", "second"):
            victim = by_port[_service_node(service.output())]
            assert await asyncio.to_thread(_holds, cluster.nodes[victim], f"tg.request.{topic}."), \
                f"the service's request queue is not on node {victim + 1}, the service's"
            lost_before = service.output().count("Lost the connection")
            at = time.monotonic()
            await asyncio.to_thread(cluster.kill, victim)
            recovery = await burst.wait_fresh_success(at, GIVE_UP)
            phases.append((f"{phase} node", f"kill -9 of node {victim + 1} of 3, the one the tool service is "
                           "connected to and its request queue is on", at, recovery))
            await wait_for_async("the service back on another node",
                                 lambda n=lost_before, v=victim: service.output().count("Lost the connection") > n
                                 and by_port[_service_node(service.output())] != v, GIVE_UP, detail=service.output)
            await asyncio.sleep(AFTER)   # the burst goes on (load, not synchronisation)

        # Two of three down: the quorum queue has no majority.
        alive = next(i for i, n in enumerate(cluster.nodes) if n.running())
        during, during_how = await _consume(cluster, kept_topic, NO_MAJORITY_LOOK, alive, patience=NO_MAJORITY_LOOK)

        restarted = next(i for i, n in enumerate(cluster.nodes) if not n.running())
        at = time.monotonic()
        await asyncio.to_thread(cluster.restart, restarted)
        phases.append(("one node back", f"node {restarted + 1} started again (2 of 3 up)", at,
                       await burst.wait_fresh_success(at, GIVE_UP)))
        await asyncio.sleep(AFTER)
        after: list[str] = []
        ps = pubsub(cluster, "keeper-after", alive)
        try:
            await ps.consumer(kept_topic, "keeper", ToolServiceRequest, handler=lambda msg: after.append(msg.id))
            await wait_for_async(f"the {KEPT} persistent messages", lambda: len(set(after)) >= KEPT, 60,
                                 detail=lambda: f"got {sorted(set(after), key=int)}")
        finally:
            await ps.close()
        burst.stop()
        await asyncio.wait_for(runner, DEADLINE + MARGIN + 10)   # every call ends
    finally:
        burst.stop()
        if runner is not None and not runner.done():
            runner.cancel()
        for c in clients:
            await c.stop()
        for ps in pubsubs:
            await ps.close()
        await keeper.close()
        code = service.stop()

    failures = []
    ends = [at for _, _, at, _ in phases] + [float("inf")]
    load = (f"{CLIENTS} clients x {IN_FLIGHT} calls in flight to a tool service process ({CALL_SECONDS:g} s a "
            f"call, {DEADLINE:g} s deadline), all over RabbitMQ with the 3 nodes listed")
    for i, (name, fault, at, recovery) in enumerate(phases):
        counts = burst.phase(at, ends[i + 1])
        errors = Counter(what for sent, what in burst.errors if at <= sent < ends[i + 1])
        ok = recovery is not None and recovery <= RECOVERY and counts["deadline"] == 0 and counts["hung"] == 0
        scenario(scenario=f"RabbitMQ cluster: {name}", load=load, fault=fault,
                 expected=f"every call answered or ended at once (error or lost-call notice); a fresh call "
                          f"succeeds within {RECOVERY:.0f} s; none waits out its deadline or hangs",
                 observed=(f"{counts['ok']} answered, {counts['lost']} ended by a lost-call notice, "
                           f"{counts['error']} ended with an error"
                           + (f" ({', '.join(f'{what}: {k}' for what, k in errors.most_common())})" if errors else "")
                           + "; first fresh success after "
                           + (f"{recovery:.1f} s" if recovery is not None else f"none within {GIVE_UP:.0f} s")),
                 recovery_s=recovery, lost=counts["deadline"], hung=counts["hung"], ok=ok)
        if not ok:
            failures.append(f"{name}: recovery {recovery}, {counts}")
    missing = sorted(set(map(str, range(KEPT))) - set(after), key=int)
    duplicates = len(after) - len(set(after))
    ok = not during and not missing and code == 0
    scenario(scenario="RabbitMQ cluster: a quorum queue through two kills", load=f"{KEPT} persistent messages "
             "published (confirmed) to a quorum queue before the kills, nobody consuming",
             fault="kill -9 of 2 of its 3 nodes, then one started again",
             expected="with 2 of 3 down nothing is delivered (no majority: the queue waits); with one back every "
                      "message is consumed",
             observed=f"with 2 down a new consumer {during_how}, {len(during)} delivered; "
                      f"with one back {len(set(after))} of {KEPT} consumed ({duplicates} twice); tool service "
                      f"exit code {code} when stopped",
             lost=len(missing), exits=0 if code == 0 else 1, ok=ok)
    if not ok:
        failures.append(f"persistent: {len(during)} delivered without a majority ({during_how}), "
                        f"missing {missing}, service exit {code}")
    assert not failures, (failures, service.output()[-3000:])
