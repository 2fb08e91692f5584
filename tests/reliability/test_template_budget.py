"""Templates that burn CPU or memory are refused, and the prompt service answers others meanwhile.

Before the fix ``{{ (10**4096)**4096 % 7 }}`` rendered in 13.5-14.5 s of one
multiplication in C, with the GIL held: the prompt service answered nothing
else meanwhile; ``{% set l=[1]*4000000 %}{{ (l+l+...)|length }}`` built 40
million items, 1.2-1.5 GB that stayed with the process.  Now every operation
is counted against the budget (sizes checked before it runs, CPU time at
every step, what it builds in all), templates render in worker processes,
and a worker over its CPU time or memory is replaced.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import psutil
from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.base.messaging import deadlines
from trustgraph.schema import ConfigRequest, ConfigResponse, ConfigValue, PromptRequest, PromptResponse
from trustgraph.topics import CONFIG_REQUEST, CONFIG_RESPONSE

BOMBS = {
    "bigint": "{{ (10**4096)**4096 % 7 }}",
    "lists": "{% set l=[1]*4000000 %}{{ (l+l+l+l+l+l+l+l+l+l)|length }}",
    # One step in C the budget cannot look into: text of a 4-million-item list.
    "in-c": '{{ ((range(100000)|list) * 40) ~ "" }}',
}
FAST = "Say {{ word }}"
TIMEOUT = 60.0
REFUSED_WITHIN = 5.0     # a bomb's refusal (it took 14 s of a frozen service before)
MEMORY_MB = 200          # what the prompt service and its workers may hold more after the bombs


def _tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its children (the render workers), in MB."""
    total = 0
    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children()]
    except psutil.NoSuchProcess:
        return 0.0
    for one in procs:
        try:
            total += one.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return total / 2**20


async def test_burning_templates_are_refused_and_others_answered_meanwhile(own_broker, spawn, tmp_path, scenario):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [], "default": "done"}))
    tag = uuid.uuid4().hex[:6]
    tc = (f"non-persistent://tg/request/tc-{tag}", f"non-persistent://tg/response/tc-{tag}")
    pr = (f"non-persistent://tg/request/prompt-{tag}", f"non-persistent://tg/response/prompt-{tag}")
    ps = PubSub(own_broker.url, processor="template-budget")
    config = RequestResponseClient(ps, request_topic=CONFIG_REQUEST, response_topic=CONFIG_RESPONSE,
                                   request_schema=ConfigRequest, response_schema=ConfigResponse,
                                   subscription=f"budget-{uuid.uuid4()}")
    client = RequestResponseClient(ps, request_topic=pr[0], response_topic=pr[1], request_schema=PromptRequest,
                                   response_schema=PromptResponse, subscription=f"budget-{uuid.uuid4()}")

    async def ask(tid: str, **terms: str) -> tuple[PromptResponse, float, float]:
        t0 = time.monotonic()
        reply = await client.request(PromptRequest(id=tid, terms={k: json.dumps(v) for k, v in terms.items()}),
                                     timeout=TIMEOUT, properties={deadlines.DEADLINE: deadlines.stamp(TIMEOUT)})
        return reply, time.monotonic() - t0, time.monotonic()

    rows = []
    try:
        spawn("config-svc", "--store", str(tmp_path / "c.db"), broker=own_broker)
        templates = {"fast": FAST, **BOMBS}
        values = [ConfigValue(type="active-flow", key="text-completion",
                              value=json.dumps({"f": {"request": tc[0], "response": tc[1]}})),
                  ConfigValue(type="active-flow", key="prompt", value=json.dumps({"f": {
                      "request": pr[0], "response": pr[1],
                      "text-completion-request": tc[0], "text-completion-response": tc[1]}})),
                  ConfigValue(type="prompt", key="template-index", value=json.dumps(list(templates))),
                  *[ConfigValue(type="prompt", key=f"template.{k}", value=json.dumps({"prompt": v}))
                    for k, v in templates.items()]]
        put = await config.request(ConfigRequest(operation="put", values=values), timeout=TIMEOUT)
        assert put.error is None, put.error
        spawn("text-completion-scripted", "--script", str(script), broker=own_broker,
              env={"TG_READY_AFTER_CONFIG": "1"})
        prompt = spawn("prompt-template", broker=own_broker, env={"TG_READY_AFTER_CONFIG": "1"}, timeout=60)
        warm, _, _ = await ask("fast", word="hi")
        assert warm.error is None and warm.text == "done", warm.error
        before = _tree_rss_mb(prompt.p.pid)
        for name in BOMBS:
            sent = time.monotonic()
            bomb = asyncio.ensure_future(ask(name))
            answered: list[float] = []                    # when each fast request was answered
            while not bomb.done():
                reply, _took, at = await ask("fast", word="hi")
                assert reply.error is None, reply.error
                answered.append(at)
            reply, took, at = await bomb
            # The longest the service went without answering while the bomb rendered.
            marks = [sent, *[a for a in answered if a < at], at]
            frozen = max(b - a for a, b in zip(marks, marks[1:], strict=False))
            rows.append((name, reply, took, len(marks) - 2, frozen))
        after = _tree_rss_mb(prompt.p.pid)
        assert prompt.p.poll() is None, prompt.output()
    finally:
        await client.stop()
        await config.stop()
        await ps.close()
    grew = after - before
    problems = []
    for name, reply, took, _meanwhile, frozen in rows:
        if reply.error is None or "over its render budget" not in (reply.error.message or ""):
            problems.append(f"{name}: not refused ({reply.error})")
        if took > REFUSED_WITHIN:
            problems.append(f"{name}: refused after {took:.1f} s")
        if took > 1.0 and frozen > took / 2:
            problems.append(f"{name}: nothing else answered for {frozen:.1f} s of its {took:.1f} s")
    if grew > MEMORY_MB:
        problems.append(f"the prompt service holds {grew:.0f} MB more after the bombs")
    for name, reply, took, meanwhile, frozen in rows:
        scenario(scenario=f"template budget: {name}", load="prompt requests through prompt-template, "
                 "a fast template asked again and again meanwhile", fault=f"a template of {BOMBS[name]!r}",
                 expected=f"refused within {REFUSED_WITHIN:g} s as over the render budget; other requests "
                          "answered meanwhile; memory given back",
                 observed=f"{'refused' if reply.error else 'rendered'} after {took:.2f} s"
                          f" ({(reply.error.message if reply.error else '')[-70:]}); "
                          f"{meanwhile} other requests answered meanwhile, the longest without an answer "
                          f"{frozen:.2f} s; the service and its workers {before:.0f} -> {after:.0f} MB",
                 ok=not [p for p in problems if p.startswith(name) or p.startswith("the prompt")])
    assert not problems, problems
