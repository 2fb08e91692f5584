"""An OpenAI-compatible server on 127.0.0.1 for the interop rows: ``/v1/chat/completions``,
whole and streamed (SSE), answering an agent's ReAct step from what its prompt shows.

Run as a process (``python openai_stand_in.py PORT``); it writes ``$TG_READY_FILE`` once it
listens, as our processes do.  It is shown only what the Chat Completions API carries (the
messages), so a row through it proves that the dialog's history reaches a model that sees no
message properties: with no tool result in the prompt it calls ``tell-joke``, with one it
answers.  Each request is appended to ``$STAND_IN_RECORD`` (one JSON line) when that is set.

A question that says "upstream joke" is answered with a call of ``tell-upstream-joke``; one that
ends "and repeat it" gets a final answer that repeats the tool's result (its words on one line),
so a caller can check that what the tool said came back through every hop.  A message's content
may be a string or, as upstream 2.11.1's client sends it, a list of ``{"type": "text"}`` parts.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from aiohttp import web

ANSWER = "Here is the joke you asked for."
CALL = 'Thought: I will use tell-joke\nAction: tell-joke\nArgs: {"topic": "cats"}'
FINAL = f"Thought: I have the joke\nFinal Answer: {ANSWER}"
PROBE = "Thought: a probe\nFinal Answer: pong"
CALL_UPSTREAM = 'Thought: I will use tell-upstream-joke\nAction: tell-upstream-joke\nArgs: {"topic": "cats"}'
#: How the joke services' results start: ours "Hey <user>! ...", upstream 2.11.1's "Here's a pun ...";
#: the template's worked examples show other results.
JOKE_STARTS = ("Hey ", "Here's a ")
REPEAT = "and repeat it"


def _observation(prompt: str) -> str | None:
    """The last tool result the prompt shows, if it is a joke: its words on one line."""
    for start in JOKE_STARTS:
        for mark in (f"Observation: <tool-data>{start}", f"Observation: {start}"):
            if mark in prompt:
                text = start + prompt.rsplit(mark, 1)[1]
                return " ".join(text.split("</tool-data>", 1)[0].split())
    return None


def reply_to(prompt: str) -> str:
    """The ReAct turn for the dialog the prompt shows."""
    if "Question: ping" in prompt:
        return PROBE
    observed = _observation(prompt)
    if observed is not None:
        return f"{FINAL} {observed}" if REPEAT in prompt else FINAL
    return CALL_UPSTREAM if "upstream joke" in prompt else CALL


def _text(content: object) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content
                         if isinstance(part, dict) and part.get("type") == "text")
    return str(content or "")


async def chat(request: web.Request) -> web.StreamResponse:
    body = await request.json()
    prompt = "\n".join(_text(m.get("content")) for m in body.get("messages", []))
    if record := os.environ.get("STAND_IN_RECORD"):
        with open(record, "a", encoding="utf-8") as f:
            f.write(json.dumps({"messages": body.get("messages"), "stream": bool(body.get("stream"))}) + "\n")
    text = reply_to(prompt)
    base = {"id": "stand-in", "created": 0, "model": body.get("model", "stand-in")}
    usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": len(text.split()),
             "total_tokens": len(prompt.split()) + len(text.split())}
    if not body.get("stream"):
        return web.json_response({**base, "object": "chat.completion", "usage": usage, "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]})
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    words = text.split(" ")
    for i, word in enumerate(words):
        piece = word if i == len(words) - 1 else word + " "
        chunk = {**base, "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
        await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
    end = {**base, "object": "chat.completion.chunk", "usage": usage,
           "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    await resp.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
    return resp


async def serve(port: int) -> None:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    if path := os.environ.get("TG_READY_FILE"):   # listening now
        Path(path).write_text("ready")
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1])))
