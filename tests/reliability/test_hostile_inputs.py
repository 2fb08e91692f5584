"""Garbage on every entry point of a launched stack: 0 exits, a reply for every id, memory back.

One real ``tg-launch`` stack (scripted LLM, so dialogs are quick and
reproducible) takes at least 50 malformed inputs on each request topic of
its processors, on the gateway's REST routes and on the websocket.  Each
scenario counts what came back against what was owed (an id was given and
its deadline had not passed), the processes that exited or restarted, and
the resident memory of every process before and after.  The REST routes
without a backend in this stack (graph-rag, librarian, ...) run only in
``make reliability`` (marker ``long``); the rest also in ``make test``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.request
from typing import Any

import aiohttp
import pytest
from hostile_kit import (
    DEEP,
    DEEPER,
    FORGED_VALUE,
    RawBus,
    Replies,
    body_cases,
    bus_cases,
    components,
    deep,
    rss_mb,
)
from support import Stack, descendants, wait_for
from trustgraph.gateway.translators import FLOW_KINDS, GLOBAL_KINDS, SENDERS
from trustgraph.launch.components import COMPONENTS

pytestmark = pytest.mark.slow

COMMANDS = {c.command: c.name for c in COMPONENTS}
# A bound on one reply, not a pause: the barrage is sent one message at a time, each
# after the reply of the one before (or this bound).  Sent all at once, pulsar-lite
# drops some replies on the non-persistent response topic before they reach us
# (a burst of a few hundred messages with 1 MB properties; replies lost on a
# busy non-persistent topic, tested elsewhere): that would be the broker's loss, not the service's, and this scenario
# is about what the service does with each malformed message.
REPLY_WAIT = 20.0
MEMORY_ROUNDS = 2  # rounds after the first, whose growth is measured
MEMORY_GROWTH_MB = 25.0  # noise of a process's RSS between rounds; a leak of the payloads is more per round

# topic, response topic, a good request, its fields, its JSON-text fields, extra properties to forge
BUS = {
    "config": (
        "non-persistent://tg/request/config",
        "non-persistent://tg/response/config",
        {"operation": "list", "type": "hostile"},
        ["operation", "keys", "type", "values"],
        [],
        {},
    ),
    "flow": (
        "non-persistent://tg/request/flow",
        "non-persistent://tg/response/flow",
        {"operation": "list-blueprints"},
        ["operation", "blueprint_name", "blueprint_definition", "description", "flow_id", "parameters"],
        ["blueprint_definition"],
        {},
    ),
    "prompt": (
        "non-persistent://tg/request/prompt:default",
        "non-persistent://tg/response/prompt:default",
        {"id": "agent-react-text", "terms": {"question": '"hi"'}},
        ["id", "terms", "streaming"],
        ["terms"],
        {"decision-schema": deep(DEEPER)},
    ),
    "text-completion": (
        "non-persistent://tg/request/text-completion:default",
        "non-persistent://tg/response/text-completion:default",
        {"system": "", "prompt": "hostile"},
        ["system", "prompt", "streaming"],
        [],
        {"schema": "{", "stop": deep(DEEP), "prefix": "p" * 100_000},
    ),
    "agent": (
        "non-persistent://tg/request/agent:default",
        "non-persistent://tg/response/agent:default",
        {"question": "Tell me a joke about cats", "user": "hostile"},
        ["question", "state", "group", "history", "user", "streaming"],
        [],
        {},
    ),
    "joke-service": (
        "non-persistent://tg/request/joke",
        "non-persistent://tg/response/joke",
        {"user": "hostile", "config": "{}", "arguments": '{"topic": "cats"}'},
        ["user", "config", "arguments"],
        ["config", "arguments"],
        {},
    ),
    "mcp-tool": (
        "non-persistent://tg/request/mcp-tool:default",
        "non-persistent://tg/response/mcp-tool:default",
        {"name": "nothing-here", "parameters": "{}"},
        ["name", "parameters"],
        ["parameters"],
        {},
    ),
}


class Watched:
    """The stack, and its processes as they were when the scenarios began."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.pids = components(descendants(stack.proc.pid), COMMANDS)
        self.baseline = {name: rss_mb(pid) for name, pid in self.pids.items()}

    def exits(self) -> list[str]:
        """Components whose process is not the one that was there at the start."""
        now = components(descendants(self.stack.proc.pid), COMMANDS)
        return sorted(name for name, pid in self.pids.items() if now.get(name) != pid)

    def restarts(self) -> int:
        return sum(
            1 for line in self.stack.output().splitlines() if " restart " in line or "giving up" in line
        )

    def memory(self) -> dict[str, tuple[float, float]]:
        return {name: (self.baseline[name], rss_mb(pid)) for name, pid in self.pids.items()}

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in (self.stack.data_dir / "logs").glob("*.log"))


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> Watched:
    tmp = tmp_path_factory.mktemp("hostile")
    script = tmp / "script.json"
    script.write_text(
        json.dumps(
            {
                "rules": [
                    {
                        "match": "Tell me a joke about cats",
                        "reply": json.dumps({"action": "tell-joke", "args": {"topic": "cats"}}),
                    }
                ],
                "default": "no rule matched",
            }
        )
    )
    stack = Stack(tmp / "data", ["--llm", "scripted", "--llm-script", str(script), "--max-iterations", "2"])
    stack.start()
    try:
        w = Watched(stack)
        assert set(w.pids) >= {
            "broker",
            "config-svc",
            "api-gateway",
            "prompt",
            "llm",
            "agent",
            "joke-service",
            "mcp-tool",
        }, w.pids
        yield w
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def bus(watched: Watched) -> RawBus:
    b = RawBus(watched.stack.broker_url())
    yield b
    b.close()


def _row(
    scenario: str, load: str, expected: str, observed: str, lost: int, exits: int, ok: bool
) -> dict[str, Any]:
    """One row's fields (for the ``scenario`` fixture) for a barrage of malformed input."""
    return dict(
        scenario=scenario,
        load=load,
        fault="malformed input (raw bytes, wrong types, missing and "
        "unknown fields, huge and nested values, bad JSON text, bad ids and properties)",
        expected=expected,
        observed=observed,
        lost=lost,
        hung=lost,
        exits=exits,
        ok=ok,
    )


def _bus_topic(entry: str, watched: Watched, bus: RawBus, scenario) -> bool:
    replies = bus.replies(BUS[entry][1])
    try:
        return _bus_barrage(entry, watched, bus, scenario, replies)
    finally:
        replies.close()


def _bus_barrage(entry: str, watched: Watched, bus: RawBus, scenario, replies: Replies) -> bool:
    topic, response, good, fields, json_fields, props = BUS[entry]
    cases = bus_cases(f"h-{entry}", good, fields, json_fields, props)
    owed = [c.rid for c in cases if c.expect_reply]
    assert len(cases) >= 50 and len(owed) >= 45
    # A good request first: the service is serving and our subscription settled before the barrage.
    probe = f"h-{entry}-probe"

    def answered() -> bool:   # each try waits up to 3 s for its reply: no pause between tries
        bus.send(topic, json.dumps(good).encode(), {"id": probe})
        return not replies.wait([probe], 3)

    wait_for(f"answer of {entry} to a good request", answered, 60, every=0)
    restarts = watched.restarts()
    began = time.monotonic()
    missing: set[str] = set()
    for case in cases:
        bus.send(topic, case.payload, case.props)
        if case.expect_reply:
            missing |= replies.wait([case.rid], REPLY_WAIT)
    missing = replies.wait(missing, 1.0)  # any that came late after all
    # A reply the broker lost on its way (non-persistent topics drop what a consumer's connection
    # cannot take at once: tested elsewhere, not this scenario's concern) shows as an
    # answer when the same message is sent again; a service that does not answer it, does not.
    resent = sorted(c.label for c in cases if c.rid in missing)
    for case in cases:
        if case.rid in missing:
            bus.send(topic, case.payload, case.props)
            missing -= {case.rid} - replies.wait([case.rid], REPLY_WAIT)
    took = time.monotonic() - began
    unowed = [c.rid for c in cases if not c.expect_reply and c.rid and replies.ids[c.rid]]
    exits = watched.exits()
    restarted = watched.restarts() - restarts
    ok = not missing and not exits and not restarted and not unowed
    scenario(
        **_row(
            f"malformed input: bus topic {entry}",
            f"{len(cases)} messages on {topic}, {len(owed)} with an id owed a reply",
            "0 exits, an error reply for every id given",
            f"{len(owed) - len(missing)}/{len(owed)} replied in {took:.1f}s; {len(exits)} exits, "
            f"{restarted} restarts; {len(unowed)} replies to requests past their deadline"
            + (f"; missing: {sorted(c.label for c in cases if c.rid in missing)[:5]}" if missing else "")
            + (
                f"; {len(resent)} replies lost on the way, answered when sent again: {resent[:5]}"
                if resent
                else ""
            ),
            len(missing),
            len(exits) + restarted,
            ok,
        )
    )
    return ok


ANNOUNCE = "non-persistent://tg/config/tool-service-announce"
PROBE = "non-persistent://tg/config/tool-service-probe"


def _catalog(watched: Watched) -> dict[str, Any]:
    with urllib.request.urlopen(watched.stack.url + "api/v1/tool-catalog", timeout=60) as r:
        return json.loads(r.read())


def _tool_names(watched: Watched) -> set[str]:
    return {t["name"] for t in _catalog(watched)["tools"] if not t.get("errors") and "name" in t}


def _announcement(service: str, state: str, request_queue: str, tools: dict[str, Any]) -> dict[str, Any]:
    return {
        "service": service,
        "replica": f"{service}-1",
        "state": state,
        "lease": 30.0,
        "sent": time.time(),
        "descriptor": json.dumps(
            {
                "id": service,
                "request-queue": request_queue,
                "response-queue": f"non-persistent://tg/response/{service}",
            }
        ),
        "tools": json.dumps(tools),
    }


def _announcements(watched: Watched, bus: RawBus, scenario) -> bool:
    """Garbage on the topics every agent, gateway and mcp-server follows: nothing is owed a reply,
    and what must hold is that the catalog keeps its tools and nobody falls over."""
    before = _tool_names(watched)
    shadow = {
        "tell-joke": {
            "type": "tool-service",
            "name": "tell-joke",
            "description": "a shadow",
            "service": "h-svc",
        }
    }
    # Even the "good" one is hostile: it claims tell-joke, on the config push topic.
    good = _announcement("h-svc", "up", "persistent://tg/config/config", shadow)
    fields = ["service", "replica", "state", "lease", "descriptor", "tools", "sent"]
    cases = [
        *bus_cases("h-announce", good, fields, ["descriptor", "tools"]),
        *bus_cases("h-probe", {"requester": "hostile"}, ["requester"]),
    ]
    restarts = watched.restarts()
    for case in cases:
        bus.send(PROBE if case.label.startswith("h-probe") else ANNOUNCE, case.payload, case.props)
    # A benign announcement after the garbage: once the catalog shows it, every reader has
    # read everything before it (one topic, read in order).
    marker = {
        "marker-tool": {
            "type": "tool-service",
            "name": "marker-tool",
            "description": "d",
            "service": "h-marker",
        }
    }
    bus.send(
        ANNOUNCE,
        json.dumps(_announcement("h-marker", "up", "non-persistent://tg/request/h-marker", marker)).encode(),
        {},
    )
    wait_for("the marker tool", lambda: "marker-tool" in _tool_names(watched))
    bus.send(
        ANNOUNCE,
        json.dumps(
            _announcement("h-marker", "down", "non-persistent://tg/request/h-marker", marker)
        ).encode(),
        {},
    )
    wait_for("the marker tool gone", lambda: "marker-tool" not in _tool_names(watched))
    catalog = _catalog(watched)
    joke = next((t for t in catalog["tools"] if t.get("name") == "tell-joke" and not t.get("errors")), {})
    body = json.dumps({"tool": "tell-joke", "arguments": {"topic": "cats"}}).encode()
    request = urllib.request.Request(watched.stack.url + "api/v1/tool-service", data=body, method="POST")
    with urllib.request.urlopen(request, timeout=60) as r:
        answer = json.loads(r.read())
    after = _tool_names(watched)
    exits, restarted = watched.exits(), watched.restarts() - restarts
    ok = (
        after == before
        and joke.get("service") == "joke-service"
        and "response" in answer
        and not exits
        and not restarted
    )
    scenario(
        **_row(
            "malformed input: announcement and probe topics",
            f"{len(cases)} messages on {ANNOUNCE} and {PROBE} (no reply owed), then a benign announcement",
            "0 exits; the tools as before (a forged announcement of tell-joke on the config push topic "
            "refused), a call of tell-joke still answered by joke-service",
            f"tools before {sorted(before)}, after {sorted(after)}; tell-joke's service "
            f"{joke.get('service')!r}; call answered: {'response' in answer}; {len(exits)} exits, "
            f"{restarted} restarts",
            0 if "response" in answer else 1,
            len(exits) + restarted,
            ok,
        )
    )
    return ok


def _log_lines(watched: Watched, bus: RawBus, scenario) -> bool:
    """After the bus barrages (ids with newlines, a 1 MB id): one record per line, none huge."""
    # Our own, so this test also stands alone: a newline id and a megabyte id, malformed payloads.
    for topic, *_ in BUS.values():
        bus.send(topic, b"\x00", {"id": f"log-probe\n{FORGED_VALUE}"})
        bus.send(topic, b"\x00", {"id": "log-probe-" + "m" * 1_000_000})
    replies = bus.replies("non-persistent://tg/response/config")

    def synced() -> bool:   # each try waits up to 3 s for its reply: no pause between tries
        bus.send(BUS["config"][0], b"{}", {"id": "log-sync"})
        return not replies.wait(["log-sync"], 3)

    with contextlib.suppress(pytest.fail.Exception):   # the logs are read either way
        wait_for("answer of config-svc to the log-sync request", synced, 60, every=0)
    replies.close()
    lines = watched.logs().splitlines()
    forged = [ln for ln in lines if ln.startswith(FORGED_VALUE[:10]) and "forged" in ln]
    longest = max(len(ln) for ln in lines)
    quoted = sum(1 for ln in lines if "forged: this line" in ln)
    ok = not forged and longest < 20_000 and quoted > 0
    scenario(
        **dict(
            scenario="malformed input: ids in log lines",
            load=f"ids with a newline and of 1 MB on {len(BUS)} topics, after every barrage",
            fault="a newline in an id (a forged log line), a 1 MB id",
            expected="no line starts with the forged text; no line over 20,000 characters",
            observed=f"{len(forged)} forged lines, {quoted} lines quoting it escaped; longest line "
            f"{longest:,} characters of {len(lines):,} lines",
            exits=len(watched.exits()),
            ok=ok,
        )
    )
    return ok


# -- REST and websocket ------------------------------------------------------------------

GOOD_BODIES: dict[str, dict[str, Any]] = {
    "config": {"operation": "list", "type": "hostile"},
    "flow": {"operation": "list-blueprints"},
    "librarian": {"operation": "list-documents", "user": "hostile"},
    "knowledge": {"operation": "list-kg-cores", "user": "hostile"},
    "collection-management": {"operation": "list-collections", "user": "hostile"},
    "agent": {"question": "Tell me a joke about cats"},
    "text-completion": {"prompt": "hostile"},
    "prompt": {"id": "agent-react-text", "variables": {"question": "hi"}},
    "mcp-tool": {"name": "nothing-here", "parameters": {}},
    "tool-service": {"tool": "tell-joke", "arguments": {"topic": "cats"}},
}
# The request keys of each kind (upstream 2.1.4's gateway JSON), each given every wrong value.
REST_FIELDS: dict[str, tuple[str, ...]] = {
    "config": ("operation", "keys", "type", "values"),
    "flow": ("operation", "blueprint-name", "blueprint-definition", "description", "flow-id", "parameters"),
    "agent": ("question", "state", "group", "history", "user", "streaming"),
    "text-completion": ("system", "prompt", "streaming"),
    "prompt": ("id", "variables", "terms", "streaming"),
    "mcp-tool": ("name", "parameters"),
    "tool-service": ("tool", "service", "config", "arguments", "user"),
}
SERVED = ("config", "flow", "agent", "text-completion", "prompt", "mcp-tool", "tool-service")


def _routes(kinds: list[str]) -> list[tuple[str, str]]:
    out = []
    for kind in kinds:
        if kind == "tool-service":
            out.append((kind, "api/v1/tool-service"))
        elif kind in GLOBAL_KINDS:
            out.append((kind, f"api/v1/{kind}"))
        else:
            out.append((kind, f"api/v1/flow/default/service/{kind}"))
    return out


ALL_POST = sorted({*GLOBAL_KINDS, *FLOW_KINDS, *SENDERS, "tool-service"})


async def _barrage(url: str, path: str, bodies: list[tuple[str, bytes]]) -> tuple[Any, list[str], float]:
    """POST every body (16 at once); the statuses and the bodies that got no JSON answer in time."""
    statuses: dict[int, int] = {}
    bad: list[str] = []
    slots = asyncio.Semaphore(16)
    began = time.monotonic()
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as http:

        async def one(label: str, body: bytes) -> None:
            async with slots:
                # Kinds nothing serves here wait for their deadline: make it short.
                headers = {
                    "TrustGraph-Deadline": f"{time.time() + 5:.3f}",
                    "Content-Type": "application/json",
                }
                try:
                    async with http.post(url + path, data=body, headers=headers) as r:
                        statuses[r.status] = statuses.get(r.status, 0) + 1
                        reply = await r.json(content_type=None)
                        if r.status >= 500 or not isinstance(reply, dict):
                            bad.append(f"{label}: HTTP {r.status} {str(reply)[:80]}")
                except (aiohttp.ClientError, TimeoutError, ValueError) as e:
                    bad.append(f"{label}: {type(e).__name__} {e}")

        await asyncio.gather(*(one(label, body) for label, body in bodies))
    return statuses, bad, time.monotonic() - began


async def _rest(kinds: list[str], watched: Watched, scenario, name: str) -> bool:
    restarts = watched.restarts()
    total, failures, statuses, took = 0, [], {}, 0.0
    for kind, path in _routes(kinds):
        bodies = body_cases(GOOD_BODIES.get(kind, {"x": 1}), REST_FIELDS.get(kind, ("operation", "user")))
        assert len(bodies) >= 50
        got, bad, t = await _barrage(watched.stack.url, path, bodies)
        total += len(bodies)
        failures += [f"{path} {b}" for b in bad]
        took += t
        for status, n in got.items():
            statuses[status] = statuses.get(status, 0) + n
    exits = watched.exits()
    restarted = watched.restarts() - restarts
    tracebacks = (watched.stack.data_dir / "logs" / "api-gateway.log").read_text().count("Traceback")
    ok = not failures and not exits and not restarted and tracebacks == 0
    scenario(
        **_row(
            f"malformed input: REST {name}",
            f"{total} bodies on {len(kinds)} routes, 16 at once",
            "0 exits, a JSON answer for each (HTTP 200 with an error, 413 over the body limit), "
            "never 500, no traceback",
            f"{total - len(failures)}/{total} answered in {took:.1f}s (status counts "
            f"{dict(sorted(statuses.items()))}); {len(exits)} exits, {restarted} restarts, "
            f"{tracebacks} tracebacks in the gateway log",
            len(failures),
            len(exits) + restarted,
            ok,
        )
    )
    return ok


async def _get_routes(watched: Watched, scenario) -> bool:
    """The GET routes, import/export sockets and knowledge cores: odd paths, queries and bodies."""
    url = watched.stack.url
    odd = ["%00", "%0a%0dX", "..%2f..%2fetc", "x" * 4000, "%ff%fe", "\u202e", "a/b/c", "%25", "{}", "[]"]
    paths = [
        "api/v1/health",
        "api/v1/tool-catalog",
        "api/v1/tool-services",
        "api/v1/tool-service/errors",
        "api/v1/broker/consumers",
        "api/v1/export-core",
        "api/metrics/query",
    ]
    requests = [(p + "?" + q, None) for p in paths for q in ("a=" + o for o in odd)]
    requests += [(f"api/v1/config/{t}/{k}", None) for t in odd for k in odd[:6]]
    requests += [("api/v1/import-core?id=x&user=y", b"\xc1" * n) for n in (1, 10, 1000)]
    requests += [("api/v1/import-core", b"")] + [
        (f"api/v1/flow/{f}/import/{k}", None) for f in ("default", "nope", "%00") for k in ("triples", "x")
    ]
    restarts, bad = watched.restarts(), []
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as http:
        for path, body in requests:
            try:
                method = "POST" if body is not None else "GET"
                async with http.request(method, url + path, data=body) as r:
                    if r.status >= 500 and "metrics" not in path and "broker" not in path:
                        bad.append(f"{path[:60]}: HTTP {r.status}")
                    await r.read()
            except (aiohttp.ClientError, TimeoutError) as e:
                bad.append(f"{path[:60]}: {type(e).__name__}")
    exits, restarted = watched.exits(), watched.restarts() - restarts
    ok = not bad and not exits and not restarted
    scenario(
        **_row(
            "malformed input: REST GET routes, sockets, knowledge cores",
            f"{len(requests)} requests",
            "0 exits, never 500 (but the proxies' 502)",
            f"{len(requests) - len(bad)}/{len(requests)} answered; {len(exits)} exits",
            len(bad),
            len(exits) + restarted,
            ok,
        )
    )
    return ok


def _nested(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels - 1):
        value = [value]
    return value


def _frames() -> list[tuple[str, str | bytes, Any]]:
    """(label, frame, the id its answer carries, or None for an id-less error)."""
    frames: list[tuple[str, str | bytes, Any]] = [
        ("not-json", "nope", None),
        ("empty", "", None),
        ("binary", b"\xff\xfe", None),
        ("list", "[]", None),
        ("number", "1", None),
        ("null", "null", None),
        ("deep", deep(DEEPER), None),
        ("deep-990", deep(DEEP), None),
        ("no-id", json.dumps({"service": "config", "request": {}}), None),
        ("id-object", json.dumps({"id": {}, "service": "config", "request": {}}), None),
        ("id-list", json.dumps({"id": [1], "service": "config", "request": {}}), None),
        ("id-bool", json.dumps({"id": True, "service": "config", "request": {}}), None),
        ("id-null", json.dumps({"id": None, "service": "config", "request": {}}), None),
        (
            "bytes-utf8",
            json.dumps(
                {"id": "w-bytes", "service": "config", "request": {"operation": "list", "type": "x"}}
            ).encode(),
            "w-bytes",
        ),
    ]
    n = 0

    def with_id(label: str, frame: dict[str, Any]) -> None:
        nonlocal n
        n += 1
        rid = f"w-{n}"
        frames.append((label, json.dumps({"id": rid, **frame}), rid))

    long_id = "L" * 5000  # over the id limit: its error still carries it
    frames.append(("id-long", json.dumps({"id": long_id, "service": "config", "request": {}}), long_id))
    with_id("no-request", {"service": "config"})
    with_id("no-service", {"request": {}})
    for service in ("", "bogus", "x" * 10_000, "config\n" + FORGED_VALUE):
        with_id(f"service={service[:10]!r}", {"service": service, "request": {}})
    for flow in (1, [], {}, "nope", "default\n", "%00"):
        with_id(f"flow={flow!r}", {"service": "agent", "flow": flow, "request": {"question": "q"}})
    for deadline in ("soon", -1, 1e300, [], {}, True):
        with_id(
            f"deadline={deadline!r}",
            {"service": "config", "deadline": deadline, "request": {"operation": "list", "type": "x"}},
        )
    for label, value in [
        ("int", 1),
        ("text", "x"),
        ("list", []),
        ("null", None),
        ("deep", _nested(150)),
        ("huge", "y" * 1_000_000),
    ]:
        with_id(f"request={label}", {"service": "config", "request": value})
        with_id(f"config-op={label}", {"service": "config", "request": {"operation": value}})
        with_id(
            f"prompt-terms={label}",
            {
                "service": "prompt",
                "flow": "default",
                "request": {"id": "agent-react-text", "variables": value},
            },
        )
        with_id(
            f"tool-args={label}",
            {"service": "tool-service", "request": {"tool": "tell-joke", "arguments": value}},
        )
    with_id("agent-null-question", {"service": "agent", "flow": "default", "request": {"question": None}})
    with_id(
        "text-completion-list", {"service": "text-completion", "flow": "default", "request": {"prompt": []}}
    )
    # An id at the start of a frame the decoder refuses still gets its answer.
    frames.append(
        ("deep-with-id", '{"id": "w-deep", "service": "config", "request": ' + deep(DEEPER) + "}", "w-deep")
    )
    return frames


async def _websocket(watched: Watched, scenario) -> bool:
    frames = _frames()
    assert len(frames) >= 50
    owed = {rid for _, _, rid in frames if rid is not None}
    anonymous = sum(1 for _, _, rid in frames if rid is None)
    restarts = watched.restarts()
    got: dict[Any, int] = {}
    errors = 0
    began = time.monotonic()
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as http:
        async with http.ws_connect(watched.stack.url + "api/v1/socket", max_msg_size=0) as ws:
            # A call in flight across the whole barrage: an agent dialog.
            await ws.send_json(
                {
                    "id": "w-alive",
                    "service": "agent",
                    "flow": "default",
                    "request": {"question": "Tell me a joke about cats"},
                }
            )
            for _, frame, _ in frames:
                await (ws.send_bytes(frame) if isinstance(frame, bytes) else ws.send_str(frame))
            while not (owed | {"w-alive"}) <= {k for k, v in got.items() if v} or errors < anonymous:
                try:
                    msg = await asyncio.wait_for(ws.receive_json(), 60)
                except (TimeoutError, TypeError):
                    break  # TypeError: the socket closed (not JSON)
                if "id" in msg:
                    if msg.get("complete"):
                        got[msg["id"]] = got.get(msg["id"], 0) + 1
                else:
                    errors += 1
            await ws.send_json(
                {"id": "w-last", "service": "config", "request": {"operation": "list", "type": "x"}}
            )
            last = await asyncio.wait_for(ws.receive_json(), 30)
            still_open = last.get("id") == "w-last" and not ws.closed
    took = time.monotonic() - began
    missing = sorted(str(i) for i in owed | {"w-alive"} if not got.get(i))
    exits, restarted = watched.exits(), watched.restarts() - restarts
    ok = not missing and errors == anonymous and still_open and not exits and not restarted
    scenario(
        **_row(
            "malformed input: websocket",
            f"{len(frames)} frames on one socket ({len(owed)} with an id), an agent dialog in flight",
            "an answer with the frame's id for every id, an error frame "
            "for each id-less one, the socket and the dialog go on, 0 exits",
            f"{len(owed) - len(set(missing) - {'w-alive'})}/{len(owed)} answered with their id, "
            f"{errors}/{anonymous} id-less errors, dialog {'finished' if got.get('w-alive') else 'LOST'}, "
            f"socket {'open' if still_open else 'CLOSED'}, in {took:.1f}s; {len(exits)} exits",
            len(missing),
            len(exits) + restarted,
            ok,
        )
    )
    return ok


def _memory(watched: Watched, scenario, settled: dict[str, float], rounds: int) -> bool:
    """Every process's RSS after ``rounds`` more rounds against its own after the first.

    The first round leaves allocator arenas and buffers behind (Python and the
    broker keep what they once needed), so the baseline is taken after it: a
    leak grows with every round, kept memory does not.
    """
    memory = watched.memory()
    grown = {
        name: round(after - settled[name], 1)
        for name, (_, after) in memory.items()
        if after - settled[name] > MEMORY_GROWTH_MB
    }
    exits = watched.exits()
    shown = ", ".join(
        f"{name} {start:.0f}->{settled[name]:.0f}->{after:.0f}"
        for name, (start, after) in sorted(memory.items())
    )
    ok = not grown and not exits
    scenario(
        scenario="malformed input: memory back to its baseline",
        load=f"the barrages of this module (bus topics, REST, websocket), {1 + rounds} rounds",
        fault="malformed input, 1 MB and 4.5 MB payloads",
        expected=f"each process's RSS after {rounds} more rounds within {MEMORY_GROWTH_MB:.0f} MB of its RSS "
        "after the first",
        observed=f"RSS MB at start->after round 1->after round {1 + rounds}: {shown}"
        + (f"; grown: {grown}" if grown else ""),
        exits=len(exits),
        ok=ok,
    )
    return ok


def _failures_only(scenario, round_no: int):
    """A ``scenario`` for the rounds after the first: they load the stack, and only a row that
    failed is recorded (named with its round), so the report says what went wrong."""

    def add(**fields: Any) -> None:
        if not fields.get("ok", True):
            scenario(**{**fields, "scenario": f"{fields['scenario']} (round {round_no})"})

    return add


async def _round(watched: Watched, bus: RawBus, scenario) -> dict[str, bool]:
    results = {
        f"bus {entry}": await asyncio.to_thread(_bus_topic, entry, watched, bus, scenario) for entry in BUS
    }
    results["REST"] = await _rest(list(SERVED), watched, scenario, "routes with a service behind them")
    results["websocket"] = await _websocket(watched, scenario)
    return results


# One test per stack: xdist spreads tests, not modules, over its workers, and a
# stack per test would cost more than the scenarios themselves.


@pytest.mark.timeout(900)
async def test_malformed_input_on_every_entry_point(watched: Watched, bus: RawBus, scenario) -> None:
    results = await _round(watched, bus, scenario)
    results["log lines"] = await asyncio.to_thread(_log_lines, watched, bus, scenario)
    results["announcements"] = await asyncio.to_thread(_announcements, watched, bus, scenario)
    settled = {name: after for name, (_, after) in watched.memory().items()}
    for n in range(MEMORY_ROUNDS):
        again = await _round(watched, bus, _failures_only(scenario, n + 2))
        results.update({f"{k} (round {n + 2})": v for k, v in again.items()})
    results["memory"] = _memory(watched, scenario, settled, MEMORY_ROUNDS)
    assert all(results.values()), {k: v for k, v in results.items() if not v}


@pytest.mark.long
@pytest.mark.timeout(1800)
async def test_malformed_input_on_every_rest_route(watched: Watched, scenario) -> None:
    results = {
        "POST routes": await _rest(ALL_POST, watched, scenario, "every POST route"),
        "GET routes": await _get_routes(watched, scenario),
    }
    assert all(results.values()), {k: v for k, v in results.items() if not v}
