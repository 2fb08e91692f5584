"""Upstream 2.1.4's own text-completion-openai on our trustgraph-base, serving a flow on pulsar-lite.

``.interop/flow-on-ours`` holds our trustgraph-base with upstream's trustgraph-flow 2.1.4
(``interop/venvs.py``): upstream's provider subclasses ``trustgraph.base.LlmService``, which
there is our compatibility layer over our LLM service base.  It runs as a process beside our
config-svc, in front of an OpenAI-compatible stand-in on 127.0.0.1 (``openai_stand_in.py``),
and answers text-completion requests whole and streamed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from flow_stack import pair, uid, until_served
from openai_stand_in import CALL
from support import Proc
from trustgraph.base.launching.broker import free_port
from trustgraph.schema import TextCompletionRequest, TextCompletionResponse

pytestmark = [pytest.mark.interop, pytest.mark.long, pytest.mark.timeout(900)]

STAND_IN = Path(__file__).with_name("openai_stand_in.py")


@pytest.fixture
def stand_in(tmp_path):
    port = free_port()
    ready = tmp_path / "stand-in-ready"
    record = tmp_path / "stand-in.jsonl"
    proc = Proc([sys.executable, str(STAND_IN), str(port)], tmp_path / "stand-in.log",
                env={"TG_READY_FILE": str(ready), "STAND_IN_RECORD": str(record)}).start()
    proc.wait_ready(ready, 30)
    yield f"http://127.0.0.1:{port}/v1", record
    proc.stop()


async def test_upstreams_text_completion_openai_answers_on_our_base(flow_on_ours, stack, stand_in, procs,
                                                                   tmp_path, row):
    url, record = stand_in
    ident, topics = f"tc-{uid()}", pair(f"text-completion-{uid()}")
    # Upstream's console script, from that venv.
    ready = tmp_path / "upstream-openai-ready"
    proc = Proc([str(flow_on_ours.bin("text-completion-openai")), *stack.follow(ident), "-u", url, "-k", "sk-test",
                 "-x", "321", "--no-metrics", "--pulsar-host", stack.broker.url], tmp_path / "upstream-openai.log",
                env={"TG_READY_FILE": str(ready), "OPENAI_TOKEN": ""}).start()
    procs.append(proc)
    stack.ready()
    proc.wait_ready(ready, 60)
    await stack.put({("active-flow", ident): json.dumps({"f": {
        "request": topics[0], "response": topics[1], "model": "gpt-flow"}})})
    llm = stack.client(topics, TextCompletionRequest, TextCompletionResponse)

    r = await until_served(lambda: llm.request(TextCompletionRequest(system="Be brief.", prompt="hello"),
                                               timeout=10), "upstream's text-completion-openai", total=90)
    whole = (r.error, r.response, r.model, r.end_of_stream, r.in_token > 0, r.out_token > 0) == \
        (None, CALL, "gpt-flow", True, True, True)
    sent = [json.loads(line) for line in record.read_text().splitlines()]
    shaped = sent[-1]["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Be brief.\n\nhello"}]}]
    row("upstream text-completion-openai 2.1.4 on our base", "request → whole answer", whole and shaped,
        f"{r.response!r}, model {r.model}, tokens {r.in_token}/{r.out_token}")
    assert whole and shaped, (r, sent[-1])

    chunks = [c async for c in llm.stream(TextCompletionRequest(prompt="stream it", streaming=True),
                                          final=lambda c: c.end_of_stream, timeout=30)]
    streamed = ("".join(c.response for c in chunks) == CALL and len(chunks) > 2 and sent and
                not any(c.error for c in chunks) and chunks[-1].out_token == len(CALL.split()))
    row("upstream text-completion-openai 2.1.4 on our base", "request → streamed answer", streamed,
        f"{len(chunks)} messages, last {chunks[-1].in_token}/{chunks[-1].out_token} tokens")
    assert streamed, chunks
    assert json.loads(record.read_text().splitlines()[-1])["stream"] is True
    assert "OpenAI LLM service initialized" in proc.output()
