"""An OpenAI-compatible server on 127.0.0.1 for the interop rows: ``/v1/chat/completions``,
whole and streamed (SSE), answering an agent's ReAct step from what its prompt shows.

Run as a process (``python openai_stand_in.py PORT``); it writes ``$TG_READY_FILE`` once it
listens, as our processes do.  It is shown only what the Chat Completions API carries (the
messages), so a row through it proves that the dialog's history reaches a model that sees no
message properties: with no tool result in the prompt it calls ``tell-joke``, with one it
answers.  Each request is appended to ``$STAND_IN_RECORD`` (one JSON line) when that is set.

A question that says "upstream joke" is answered with a call of ``tell-upstream-joke``; one that
starts "Ask the model" with a call of ``ask-llm`` (a ``text-completion`` tool), whose own prompt
(:data:`LLM_QUESTION`, no ``Question:`` line) gets :data:`LLM_SAYS`; one that starts "Shout" with
a call of ``shout-it`` (an ``mcp-tool`` tool; the MCP server answers in capitals).  One that
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
#: The text-completion tool's question (words of the dialog's question, as the agent's argument check
#: wants), and what the model answers it.
LLM_QUESTION = "which word rhymes with cat"
CALL_LLM = f'Thought: I will use ask-llm\nAction: ask-llm\nArgs: {{"question": "{LLM_QUESTION}"}}'
LLM_SAYS = "The model says: hat rhymes with cat."
LLM_ANSWER = "Here is what the model said."
FINAL_LLM = f"Thought: I have the model's answer\nFinal Answer: {LLM_ANSWER}"
#: The mcp-tool tool's text, and what the MCP server's ``shout`` answers.
SHOUT_TEXT = "hello cats"
CALL_MCP = f'Thought: I will use shout-it\nAction: shout-it\nArgs: {{"text": "{SHOUT_TEXT}"}}'
SHOUTED = SHOUT_TEXT.upper()
MCP_ANSWER = "Here is the shout."
FINAL_MCP = f"Thought: I have the shout\nFinal Answer: {MCP_ANSWER}"
#: How the tools' results start, with the final turn that follows each: the joke services' (ours
#: "Hey <user>! ...", upstream 2.11.1's "Here's a pun ..."), the model's, the MCP server's; the
#: template's worked examples show other results.
FINALS = {"Hey ": FINAL, "Here's a ": FINAL, LLM_SAYS.split(":")[0]: FINAL_LLM, SHOUTED: FINAL_MCP}
REPEAT = "and repeat it"


def _observation(prompt: str) -> tuple[str, str] | None:
    """The last tool result the prompt shows, if it is one of the tools' (its words on one line),
    and the final turn for it."""
    for start, final in FINALS.items():
        for mark in (f"Observation: <tool-data>{start}", f"Observation: {start}"):
            if mark in prompt:
                text = start + prompt.rsplit(mark, 1)[1]
                return " ".join(text.split("</tool-data>", 1)[0].split()), final
    return None


def reply_to(prompt: str) -> str:
    """The ReAct turn for the dialog the prompt shows (or the text-completion tool's answer)."""
    if "Question: ping" in prompt:
        return PROBE
    if LLM_QUESTION in prompt and "Question:" not in prompt:
        return LLM_SAYS
    observed = _observation(prompt)
    if observed is not None:
        text, final = observed
        return f"{final} {text}" if REPEAT in prompt else final
    if "Question: Ask the model" in prompt:
        return CALL_LLM
    if "Question: Shout" in prompt:
        return CALL_MCP
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
