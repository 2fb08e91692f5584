"""Upstream TrustGraph 2.11.1's tool services and ours, both ways, on one broker.

2.11.1's ``ToolServiceRequest`` has no ``user`` and its ``DynamicToolService.invoke`` takes
``(config, arguments)``; the topics are still ``non-persistent://tg/request/<topic>``.  Its
processes and its caller run from ``.interop/upstream-2.11`` (PyPI).  Its callers take the first
reply as the whole answer, so a streaming service of ours answers them (they send no
``reads-streams`` property) with one reply, its chunks joined.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from support import ANNOUNCING_SERVICE, BIN, Proc
from tool_calls import first_answer

from interop.venvs import UPSTREAM_211, Venv

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600)]

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def venv_211() -> Venv:
    return UPSTREAM_211.ensure()


async def test_our_client_calls_a_2_11_dynamic_tool_service(venv_211, broker, row, tmp_path) -> None:
    topic = f"interop-211-{uuid.uuid4().hex[:6]}"
    server = Proc([str(venv_211.bin("joke-service")), "-p", broker.url, "-t", topic, "--id", f"joke-{topic}",
                   "--no-metrics", "--no-loki-enabled"], tmp_path / "server.log").start()
    try:
        text = await first_answer(broker.url, topic, {"style": "pun"}, {"topic": "cats"},
                                  what="an answer of the 2.11.1 service", detail=server.output, gone=server.exited)
        ok = (text or "").startswith("Here's a pun for you:")
        row("upstream 2.11.1 joke-service (DynamicToolService, invoke(config, arguments))",
            "our ToolServiceClient -> 2.11.1 service", ok, "" if ok else f"got {text!r}")
        assert ok, server.output()
    finally:
        server.stop()


@pytest.mark.parametrize("streaming", [False, True], ids=["request", "request_stream"])
def test_a_2_11_caller_calls_our_tool_service(venv_211, broker, row, tmp_path, streaming) -> None:
    topic = f"interop-211-{uuid.uuid4().hex[:6]}"
    ready = tmp_path / "ready"
    ours = Proc([str(BIN / "joke-service"), "-p", broker.url, "-t", topic, "--id", f"joke-{topic}", "--no-metrics",
                 "--no-announce"], tmp_path / "ours.log", env={"TG_READY_FILE": str(ready)}).start()
    try:
        ours.wait_ready(ready, 60)
        r = subprocess.run([str(venv_211.python), str(HERE / "caller_211.py"), broker.url, topic,
                            *(["stream"] if streaming else [])], capture_output=True, text=True, timeout=120)
        got = json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else None
        messages = got if streaming else [got] if got else []
        text = "".join(m["response"] or "" for m in messages or [])
        ok = bool(messages) and all(m["error"] is None for m in messages) and \
            text.startswith("Hey trustgraph! Here's a pun for you:")
        row(f"upstream 2.11.1 RequestResponseClient ({'request_stream' if streaming else 'request'})",
            "2.11.1 caller (no user) -> our joke-service", ok,
            "" if ok else (r.stderr.strip().splitlines() or [r.stdout])[-1][:200])
        assert ok, (r.stdout, r.stderr[-2000:], ours.output()[-2000:])
    finally:
        ours.stop()


def test_a_2_11_caller_gets_the_whole_answer_of_our_streaming_tool_service(venv_211, broker, row, tmp_path) -> None:
    topic = f"interop-211-{uuid.uuid4().hex[:6]}"
    ready = tmp_path / "ready"
    # announcing_service.py --stream: invoke yields the answer word by word.
    ours = Proc([sys.executable, str(ANNOUNCING_SERVICE), "-p", broker.url, "-t", topic, "--id", f"weather-{topic}",
                 "--stream", "--no-metrics", "--no-announce"], tmp_path / "ours.log",
                env={"TG_READY_FILE": str(ready)}).start()
    try:
        ours.wait_ready(ready, 60)
        r = subprocess.run([str(venv_211.python), str(HERE / "caller_211.py"), broker.url, topic,
                            "--config", json.dumps({"units": "metric"}), "--arguments", json.dumps({"city": "Oslo"})],
                           capture_output=True, text=True, timeout=120)
        got = json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else None
        whole = "It is sunny in Oslo (metric), trustgraph. "
        ok = got == {"response": whole, "end": True, "error": None}
        row("upstream 2.11.1 RequestResponseClient (request) -> our streaming service",
            "2.11.1 caller (first reply only) -> our tool service that yields chunks", ok,
            "" if ok else f"got {got!r}" if got else (r.stderr.strip().splitlines() or [r.stdout])[-1][:200])
        assert ok, (r.stdout, r.stderr[-2000:], ours.output()[-2000:])
    finally:
        ours.stop()
