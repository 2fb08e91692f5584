"""tg-invoke-llm, tg-invoke-prompt, tg-set-prompt and tg-show-prompts.

The commands run in-process against a STAND-IN gateway (aiohttp in a thread):
REST ``config`` and flow-service endpoints plus the ``/api/v1/socket``
envelope, answering from canned rules.  Tests against a real stack come with
the launched-stack suite.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from aiohttp import web
from trustgraph.base.command_line import CliError
from trustgraph.cli import invoke_llm, invoke_prompt, set_prompt, show_prompts
from trustgraph.cli.invoke_prompt import parse_variables


class Gateway:
    """Config in a dict; text-completion echoes; prompt answers text or an object."""

    def __init__(self) -> None:
        self.config: dict[str, dict[str, str]] = {}
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.loop = asyncio.new_event_loop()
        self.url = ""

    def answer(self, kind: str, req: dict[str, Any]) -> list[dict[str, Any]]:
        if kind == "text-completion":
            if "fail" in req["prompt"]:
                return [{"error": {"type": "llm-error", "message": "model exploded"}}]
            words = f"[{req['system']}] {req['prompt']}".split(" ")
            chunks = [{"response": w + " ", "end_of_stream": False} for w in words]
            return chunks + [{"response": "", "in_token": 3, "out_token": len(words), "model": "m",
                              "end_of_stream": True}]
        if req["id"] == "obj":
            return [{"object": json.dumps({"vars": req["variables"]}), "end_of_stream": True}]
        return [{"text": "Hi ", "end_of_stream": False},
                {"text": str(req["variables"].get("name")), "end_of_stream": False},
                {"text": "", "end_of_stream": True}]

    async def config_api(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.seen.append(("config", body))
        if body["operation"] == "get":
            return web.json_response({"values": [
                {**k, "value": self.config.get(k["type"], {}).get(k["key"])} for k in body["keys"]]})
        for v in body["values"]:
            self.config.setdefault(v["type"], {})[v["key"]] = v["value"]
        return web.json_response({})

    async def service(self, request: web.Request) -> web.Response:
        body = await request.json()
        kind = request.match_info["kind"]
        self.seen.append((kind, body))
        if request.match_info["flow"] != "default":
            return web.json_response({"error": "Invalid flow"})
        msgs = self.answer(kind, body)
        final = dict(msgs[-1])
        if kind == "text-completion" and "error" not in final:
            final["response"] = "".join(m.get("response", "") for m in msgs).strip()
        return web.json_response(final)

    async def socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for msg in ws:
            data = json.loads(msg.data)
            self.seen.append((data["service"], data))
            if data.get("flow") != "default":
                await ws.send_json({"error": "Invalid flow"})
                continue
            await ws.send_json({"id": "someone-else", "response": {"text": "noise"}, "complete": True})
            msgs = self.answer(data["service"], data["request"])
            for n, m in enumerate(msgs):
                await ws.send_json({"id": data["id"], "response": m, "complete": n == len(msgs) - 1})
        return ws

    def start(self) -> None:
        app = web.Application()
        app.router.add_post("/api/v1/config", self.config_api)
        app.router.add_post("/api/v1/flow/{flow}/service/{kind}", self.service)
        app.router.add_get("/api/v1/socket", self.socket)
        runner = web.AppRunner(app)
        self.loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/"
        self.runner = runner
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)


@pytest.fixture
def gw():
    g = Gateway()
    g.start()
    yield g
    g.stop()


def run(module: Any, gw: Gateway, *argv: str) -> None:
    module.main(["-u", gw.url, *argv])


def fails(module: Any, gw: Gateway, capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as e:
        run(module, gw, *argv)
    assert e.value.code != 0
    return capsys.readouterr().err


def test_invoke_llm_streams_one_or_two_arguments(gw, capsys):
    run(invoke_llm, gw, "Say hello", "--show-usage")
    out = capsys.readouterr()
    assert out.out == "[] Say hello \n"
    assert out.err == "Input tokens: 3  Output tokens: 3  Model: m\n"
    run(invoke_llm, gw, "-f", "default", "Be kind.", "Hi")
    assert capsys.readouterr().out == "[Be kind.] Hi \n"
    assert gw.seen[-1][1]["request"] == {"system": "Be kind.", "prompt": "Hi", "streaming": True}


def test_invoke_llm_rest_errors_and_usage(gw, capsys):
    run(invoke_llm, gw, "--no-streaming", "Say hello")
    assert capsys.readouterr().out == "[] Say hello\n"
    assert fails(invoke_llm, gw, capsys, "please fail") == "tg-invoke-llm: error: llm-error: model exploded\n"
    assert fails(invoke_llm, gw, capsys, "--no-streaming", "please fail").endswith("model exploded\n")
    assert fails(invoke_llm, gw, capsys, "-f", "nope", "x") == "tg-invoke-llm: error: Invalid flow\n"
    assert "quote each one" in fails(invoke_llm, gw, capsys, "a", "b", "c")


def test_invoke_prompt_variables_and_outputs(gw, capsys, tmp_path):
    (tmp_path / "name.txt").write_text("Ada")
    assert parse_variables(["a=x=y", "n:=3", "l:=[1]", f"f=@{tmp_path / 'name.txt'}"]) == \
        {"a": "x=y", "n": 3, "l": [1], "f": "Ada"}
    for bad in ["novalue", "=x", "j:={"]:
        with pytest.raises(CliError):
            parse_variables([bad])

    run(invoke_prompt, gw, "greet", "name=Ada")
    assert capsys.readouterr().out == "Hi Ada\n"
    run(invoke_prompt, gw, "--no-streaming", "obj", "n:=1")
    assert json.loads(capsys.readouterr().out) == {"vars": {"n": 1}}
    assert gw.seen[-1] == ("prompt", {"id": "obj", "variables": {"n": 1}, "streaming": False})


def test_set_and_show_prompts(gw, capsys, tmp_path):
    run(set_prompt, gw, "--system", "You are {{persona}}.")
    (tmp_path / "agent.txt").write_text("Question: {{question}}\nThought:")
    run(set_prompt, gw, "--id", "agent", "--prompt-file", str(tmp_path / "agent.txt"),
        "--stop", "\nObservation", "--prefix", "Thought:")
    for _ in range(2):                                   # setting again keeps the index unique
        run(set_prompt, gw, "--id", "person", "--prompt", "Describe {{name}}", "--response", "json",
            "--schema", '{"type": "object"}')
    assert capsys.readouterr().out == "System prompt set.\nPrompt set.\nPrompt set.\nPrompt set.\n"
    prompts = gw.config["prompt"]
    assert json.loads(prompts["template-index"]) == ["agent", "person"]
    assert json.loads(prompts["system"]) == "You are {{persona}}."
    assert json.loads(prompts["template.person"]) == {
        "id": "person", "prompt": "Describe {{name}}", "response-type": "json", "schema": {"type": "object"}}

    run(show_prompts, gw)
    out = capsys.readouterr().out
    assert "System prompt:\n    You are {{persona}}.\n" in out
    assert "agent:\n    response-type: text\n    stop: [\"\\nObservation\"]\n    prefix: \"Thought:\"" in out
    assert "    prompt:\n        Describe {{name}}" in out
    run(show_prompts, gw, "--format", "json")
    assert json.loads(capsys.readouterr().out)["templates"]["agent"]["prompt"] == "Question: {{question}}\nThought:"

    assert "--system cannot be combined" in fails(set_prompt, gw, capsys, "--system", "x", "--id", "y")
    assert "--prompt or --prompt-file" in fails(set_prompt, gw, capsys, "--id", "y")
    assert "not valid JSON" in fails(set_prompt, gw, capsys, "--id", "y", "--prompt", "p",
                                     "--response", "json", "--schema", "{")


def test_unreachable_gateway_is_one_error_line(capsys):
    with pytest.raises(SystemExit) as e:
        invoke_llm.main(["-u", "http://127.0.0.1:9/", "hi"])
    err = capsys.readouterr().err
    assert e.value.code == 1 and err.count("\n") == 1
    assert err.startswith("tg-invoke-llm: error: cannot connect to http://127.0.0.1:9/")
