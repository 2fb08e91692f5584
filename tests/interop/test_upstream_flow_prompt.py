"""Upstream 2.1.4's own prompt-template on our trustgraph-base, serving a flow on pulsar-lite.

``.interop/flow-on-ours`` holds our trustgraph-base with upstream's trustgraph-flow 2.1.4
(``interop/venvs.py``): upstream's prompt-template is a ``trustgraph.base.FlowProcessor`` with a
``ConsumerSpec``, a ``ProducerSpec`` and a ``TextCompletionClientSpec``, which there are our
compatibility layer over our FlowProcessor and request/response client.  It runs as a process
beside our config-svc and our ``text-completion-scripted``, takes its templates from config,
and answers prompt requests whole and streamed, and a template it does not know with its error.
"""

from __future__ import annotations

import json

import pytest
from flow_stack import pair, uid, until_served
from support import Proc
from trustgraph.schema import PromptRequest, PromptResponse

pytestmark = [pytest.mark.interop, pytest.mark.long, pytest.mark.timeout(900)]

PEER = "upstream prompt-template 2.1.4 on our base"


def templates() -> dict[tuple[str, str], str]:
    return {("prompt", "system"): json.dumps("You are terse."),
            ("prompt", "template-index"): json.dumps(["greet", "person"]),
            ("prompt", "template.greet"): json.dumps({"prompt": "Say hello to {{name}}."}),
            ("prompt", "template.person"): json.dumps({"prompt": "Describe {{name}} as JSON.",
                                                       "response-type": "json"})}


async def test_upstreams_prompt_template_answers_on_our_base(flow_on_ours, stack, procs, tmp_path, row):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [
        {"match": "Say hello to Ada", "reply": "Hello there, Ada, and welcome."},
        {"match": "Describe Bob", "reply": "{\"name\": \"Bob\", \"age\": 42}"}]}))
    llm_id, prompt_id = f"tc-{uid()}", f"prompt-{uid()}"
    tc, pr = pair(f"text-completion-{uid()}"), pair(f"prompt-{uid()}")
    stack.start("text-completion-scripted", llm_id, "--script", str(script))
    ready = tmp_path / "upstream-prompt-ready"
    proc = Proc([str(flow_on_ours.bin("prompt-template")), *stack.follow(prompt_id), "--no-metrics",
                 "--pulsar-host", stack.broker.url], tmp_path / "upstream-prompt.log",
                env={"TG_READY_FILE": str(ready)}).start()
    procs.append(proc)
    stack.ready()
    proc.wait_ready(ready, 60)
    await stack.put({
        ("active-flow", llm_id): json.dumps({"f": {"request": tc[0], "response": tc[1]}}),
        ("active-flow", prompt_id): json.dumps({"f": {
            "request": pr[0], "response": pr[1],
            "text-completion-request": tc[0], "text-completion-response": tc[1]}}),
        **templates()})
    prompt = stack.client(pr, PromptRequest, PromptResponse)

    def ask(tid: str, streaming: bool = False, **terms: str) -> PromptRequest:
        return PromptRequest(id=tid, terms={k: json.dumps(v) for k, v in terms.items()}, streaming=streaming)

    r = await until_served(lambda: prompt.request(ask("greet", name="Ada"), timeout=10),
                           "upstream's prompt-template", total=90, ok=lambda r: r.error is None)
    whole = (r.error, r.text, r.object, r.end_of_stream) == (None, "Hello there, Ada, and welcome.", None, True)
    row(PEER, "request → text answer (our text-completion-scripted behind it)", whole, repr(r.text))
    assert whole, r

    r = await prompt.request(ask("person", name="Bob"), timeout=30)
    parsed = r.error is None and r.text is None and json.loads(r.object) == {"name": "Bob", "age": 42}
    row(PEER, "request → JSON answer", parsed, repr(r.object))
    assert parsed, r

    chunks = [c async for c in prompt.stream(ask("greet", streaming=True, name="Ada"),
                                             final=lambda c: c.end_of_stream, timeout=30)]
    streamed = (not any(c.error for c in chunks) and len(chunks) > 1 and chunks[-1].end_of_stream
                and "".join(c.text or "" for c in chunks) == "Hello there, Ada, and welcome.")
    row(PEER, "request → streamed answer", streamed, f"{len(chunks)} messages")
    assert streamed, chunks

    r = await prompt.request(ask("nope"), timeout=30)
    refused = r.error is not None and r.error.type == "llm-error" and r.end_of_stream
    row(PEER, "unknown template → its error reply", refused, r.error.message if r.error else "")
    assert refused, r
