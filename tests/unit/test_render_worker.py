"""Templates render in worker processes, within limits the kernel enforces (prompt/template/worker.py).

The render budget stops a template between the steps it sees; one step in C
(a four-million-item list turned into text) runs to its end, and in the
service's own process it held the GIL for the whole of it.  In a worker the
service only waits on a pipe, a worker over its CPU time is killed, and one
over its memory exits so that the memory goes back to the system.
"""

from __future__ import annotations

import asyncio
import json

import psutil
import pytest
from trustgraph.prompt.template.templates import PromptError, PromptSet
from trustgraph.prompt.template.worker import RenderPool

TEMPLATES = {
    "hello": {"prompt": "Hello {{ name }}", "prefix": "Thought:", "stop": ["\nObservation"]},
    "strict": {"prompt": "{{ missing }}", "strict": True},
    "bigint": {"prompt": "{{ (10**4096)**4096 % 7 }}"},
    # One step the budget cannot see into: str() of a 4-million-item list, in C.
    # One C step (str of a 4M-item list of floats) of about half a second of CPU, three times
    # the limit below: of ints it took 0.17 s and could end inside it, failing on its length.
    "in-c": {"prompt": '{{ ((range(100000)|map("float")|list) * 40) ~ "" }}'},
    "memory": {"prompt": '{% set x = (range(100000)|list) * 40 %}{{ (x ~ x ~ x)|length }}'},
    "slow": {"prompt": "{% for i in range(300) %}{% for j in range(1000) %}{% endfor %}{% endfor %}slow"},
}
VALUES = {"template-index": json.dumps(list(TEMPLATES)),
          **{f"template.{k}": json.dumps(v) for k, v in TEMPLATES.items()}}
TERMS = {"name": json.dumps("Ann")}


async def _outcome(pool: RenderPool, prompts: PromptSet, tid: str) -> str:
    try:
        return (await pool.render(prompts, tid, TERMS)).prompt
    except PromptError as e:
        return f"error: {e}"


async def test_a_worker_renders_what_the_service_would_and_words_its_errors_alike():
    pool = RenderPool(workers=1)
    await pool.start()
    try:
        assert not pool.fallback
        prompts = pool.load(VALUES)
        here = prompts.render("hello", TERMS)
        there = await pool.render(prompts, "hello", TERMS)
        assert there == here and there.template is prompts.templates["hello"]
        assert there.properties == here.properties
        with pytest.raises(PromptError) as local:
            prompts.render("strict", TERMS)
        with pytest.raises(PromptError) as remote:
            await pool.render(prompts, "strict", TERMS)
        assert str(remote.value) == str(local.value) == "template 'strict': missing variable 'missing'"
        assert (await _outcome(pool, prompts, "bigint")).startswith(
            "error: template 'bigint' is over its render budget: a power of over 65,536 bits")
        # A new config version reaches the worker with the next request.
        assert await _outcome(pool, pool.load({**VALUES, "template.hello": json.dumps({"prompt": "Bye"})}),
                              "hello") == "Bye"
    finally:
        await pool.close()


async def test_a_worker_over_its_cpu_time_in_one_c_step_is_killed_and_replaced():
    pool = RenderPool(workers=1, cpu_seconds=0.1, grace=0.05)
    await pool.start()
    try:
        prompts = pool.load(VALUES)
        first = next(iter(pool._all)).proc.pid
        assert await _outcome(pool, prompts, "in-c") == \
            "error: template 'in-c' is over its render budget: rendering took more than 0.1s of CPU time"
        assert await _outcome(pool, prompts, "hello") == "Hello Ann"   # a new worker
        assert first not in {w.proc.pid for w in pool._all}
    finally:
        await pool.close()


async def test_a_worker_over_its_memory_fails_the_render_and_gives_the_memory_back():
    pool = RenderPool(workers=1, cpu_seconds=60, grace=60, memory=64 * 1024 * 1024)
    await pool.start()
    try:
        prompts = pool.load(VALUES)
        worker = next(iter(pool._all))
        outcome = await _outcome(pool, prompts, "memory")
        assert outcome == "error: template 'memory' is over its render budget: it needed more than 64 MiB of memory"
        assert await asyncio.wait_for(worker.proc.wait(), 10) == 3   # exited: its memory is the system's again
        assert await _outcome(pool, prompts, "hello") == "Hello Ann"
    finally:
        await pool.close()


async def test_a_slow_render_holds_up_no_other():
    pool = RenderPool(workers=2)
    await pool.start()
    try:
        prompts = pool.load(VALUES)
        finished: list[str] = []

        async def render(tid: str) -> None:
            await _outcome(pool, prompts, tid)
            finished.append(tid)

        slow = asyncio.ensure_future(render("slow"))
        await asyncio.sleep(0)   # the slow one takes its worker first
        await render("hello")
        await slow
        assert finished == ["hello", "slow"]
    finally:
        await pool.close()


async def test_without_workers_it_renders_in_a_thread():
    pool = RenderPool(workers=1)
    prompts = pool.load(VALUES)   # not started: no worker
    assert (await pool.render(prompts, "hello", TERMS)).prompt == "Hello Ann"


# Jinja folds a filter of literals into a constant while it compiles the template: 14-25 s and
# 2 GB of the service's own event loop when the config loaded, then every worker killed compiling it.
COMPILE_BOMB = "{{ ([1]|slice(30000000))|list|length }}"
WITH_BOMB = {**VALUES, "template-index": json.dumps([*TEMPLATES, "bomb"]),
             "template.bomb": json.dumps({"prompt": COMPILE_BOMB})}


def _cpu(pid: int | None = None) -> float:
    """Seconds of CPU a process (this one by default, all its threads) has used: what compiling the
    bomb would cost wherever it ran (at least its 1 s budget), whatever the machine's load, where a
    wall-clock bound on the event loop's pauses failed on a loaded machine with nothing compiled."""
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


async def test_a_template_over_its_compile_budget_is_refused_alone_and_the_loop_never_waits():
    pool = RenderPool(workers=1)
    await pool.start()
    try:
        here = _cpu()
        prompts = pool.load(WITH_BOMB)
        worker = next(iter(pool._all))
        bomb = await _outcome(pool, prompts, "bomb")
        assert bomb == "error: template 'bomb' is over its compile budget: compiling took more than 1s of CPU time"
        # Compiled in the worker, never in this process (its loop's thread or another): the compile
        # took the worker's 1 s budget, and this process far less in all.
        assert _cpu() - here < 0.5, f"this process used {_cpu() - here:.2f} s of CPU"
        assert worker.alive and pool._all == {worker}   # stopped by the budget, in the worker
        there = _cpu(worker.proc.pid)
        assert await _outcome(pool, prompts, "bomb") == bomb   # refused at once: recorded, not compiled again
        assert _cpu(worker.proc.pid) - there < 0.5
        assert await _outcome(pool, prompts, "hello") == "Hello Ann"
        assert prompts.errors["bomb"] == bomb.removeprefix("error: ")
    finally:
        await pool.close()


async def test_a_worker_killed_compiling_a_template_refuses_that_template_alone():
    # A watch tighter than the compile budget: the worker is killed in the compile, as one step the
    # budget cannot see into would be; the template is refused from then on, without another worker.
    pool = RenderPool(workers=1, cpu_seconds=0.1, grace=0.05)
    await pool.start()
    try:
        prompts = pool.load(WITH_BOMB)
        first = next(iter(pool._all)).proc.pid
        assert await _outcome(pool, prompts, "bomb") == \
            "error: template 'bomb' is over its compile budget: compiling took more than 0.1s of CPU time"
        assert await _outcome(pool, prompts, "hello") == "Hello Ann"   # a new worker
        second = next(iter(pool._all)).proc.pid
        assert second != first
        assert (await _outcome(pool, prompts, "bomb")).startswith("error: template 'bomb' is over its compile")
        assert {w.proc.pid for w in pool._all} == {second}   # refused without spending the worker
    finally:
        await pool.close()


async def test_a_system_template_over_its_compile_budget_is_named():
    pool = RenderPool(workers=1)
    await pool.start()
    try:
        prompts = pool.load({**VALUES, "system": json.dumps(COMPILE_BOMB)})
        assert await _outcome(pool, prompts, "hello") == \
            "error: system template is over its compile budget: compiling took more than 1s of CPU time"
    finally:
        await pool.close()
