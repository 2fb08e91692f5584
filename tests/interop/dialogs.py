"""What a caller saw: gateway websocket frames and ``tg-invoke-agent`` output, read one way.

The interop rows compare what upstream's and our parts produce, so they need one reading of a
dialog that both sides' shapes map onto: streamed chunks (``chunk_type``) or whole legacy
messages (``thought`` / ``observation`` / ``answer``), and either command's printout.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import aiohttp


@dataclass
class Dialog:
    thoughts: list[str] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)
    answer: str | None = None
    complete: bool = False
    streamed: bool | None = None  # every frame a chunk (True), none (False), or a mix (None)
    answer_chunks: int = 0        # streamed answer chunks that carried text


def read_dialog(frames: list[dict[str, Any]]) -> Dialog:
    """A dialog from websocket frames.

    Streamed thoughts and observations are runs of chunks of one type, ended by
    ``end_of_message`` or by a chunk of another type (upstream may never set it on a thought).
    """
    d = Dialog(complete=bool(frames) and frames[-1].get("complete") is True)
    chunked = {bool((frame.get("response") or {}).get("chunk_type")) for frame in frames}
    d.streamed = chunked.pop() if len(chunked) == 1 else None
    open_run: str | None = None
    for frame in frames:
        r = frame.get("response") or {}
        assert not r.get("error"), f"error frame: {r['error']}"
        kind = r.get("chunk_type")
        if kind in ("thought", "observation"):
            runs = d.thoughts if kind == "thought" else d.observations
            if open_run == kind:
                runs[-1] += r.get("content") or ""
            else:
                runs.append(r.get("content") or "")
            open_run = None if r.get("end_of_message") else kind
            continue
        open_run = None
        if kind == "answer":
            d.answer = (d.answer or "") + (r.get("content") or "")
            d.answer_chunks += bool(r.get("content"))
        elif not kind:
            for key, runs in (("thought", d.thoughts), ("observation", d.observations)):
                if r.get(key):
                    runs.append(r[key])
            if r.get("answer") is not None:
                d.answer = r["answer"]
    d.thoughts = [t.strip() for t in d.thoughts]
    d.observations = [o.strip() for o in d.observations]
    return d


def words(text: str) -> str:
    return " ".join(text.split())


def cli_words(out: str) -> str:
    """What ``tg-invoke-agent -v`` printed (ours or upstream's), as words in order, without marks.

    Thoughts (🤔), observations (💡) and the answer come in the order they happened; upstream's
    command also echoes the question (❓) and wraps at 75 columns repeating the mark, so the
    comparison is of the words.
    """
    kept = [line for line in out.splitlines() if not line.startswith("❓")]
    return words(" ".join(kept).replace("🤔", " ").replace("💡", " "))


async def socket_call(gateway: str, service: str, request: dict[str, Any], flow: str | None = None,
                      timeout: float = 60) -> list[dict[str, Any]]:
    """Every frame of one request on a gateway's websocket, up to the complete one.

    The frame says when we stop waiting (``deadline``, which our gateway honours and
    upstream's ignores), so a row whose peer is broken fails in ``timeout``, not in the
    gateway's 120 s.
    """
    rid = str(uuid.uuid4())
    frame: dict[str, Any] = {"id": rid, "service": service, "request": request,
                             "deadline": time.time() + timeout}
    if flow:
        frame["flow"] = flow
    got: list[dict[str, Any]] = []
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout + 10)) as session:
        async with session.ws_connect(f"{gateway}api/v1/socket") as ws:
            await ws.send_json(frame)
            async for msg in ws:
                data = json.loads(msg.data)
                assert data.get("id") == rid, data
                got.append(data)
                if data.get("complete"):
                    break
    return got
