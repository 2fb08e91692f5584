"""tg-invoke-agent and tg-show-tools, run as a user runs them, against a stand-in gateway.

The server is a STAND-IN for the API gateway: an aiohttp app in a thread
that answers the websocket (``GET /api/v1/socket``) with agent responses a
test scripts, ``POST /api/v1/config`` from a dict, and ``GET /api/v1/tool-catalog``
as the gateway builds it from that dict (with the errors a test gives).  It
mimics only what the two commands rely on (upstream 2.1.4's gateway JSON).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from trustgraph.catalog import build_catalog

BASE = Path(__file__).resolve().parents[2] / "trustgraph-base"


@dataclass
class Gateway:
    url: str = ""
    token: str | None = None
    responses: list[dict[str, Any]] = field(default_factory=list)   # agent responses to send
    turns: list[list[dict[str, Any]]] = field(default_factory=list)  # when given: the responses to frame i
    frames: list[dict[str, Any]] = field(default_factory=list)      # frames received
    routing_error: str | None = None
    config: dict[str, dict[str, str]] = field(default_factory=dict)
    errors: list[str] | None = None               # the catalog's errors; None: route not served

    async def socket(self, request: web.Request) -> web.StreamResponse:
        if self.token and request.query.get("token") != self.token:
            return web.Response(status=401, text="Unauthorized")
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for msg in ws:
            frame = json.loads(msg.data)
            self.frames.append(frame)
            if self.routing_error:
                await ws.send_str(json.dumps({"error": self.routing_error}))
                continue
            await ws.send_str(json.dumps({"id": "someone-else", "response": {"answer": "not yours"},
                                          "complete": True}))
            responses = self.turns[min(len(self.frames), len(self.turns)) - 1] if self.turns else self.responses
            for i, r in enumerate(responses):
                await ws.send_str(json.dumps({"id": frame["id"], "response": r,
                                              "complete": i == len(responses) - 1}))
        return ws

    async def config_endpoint(self, request: web.Request) -> web.Response:
        body = await request.json()
        assert body["operation"] == "getvalues"
        values = [{"type": body["type"], "key": k, "value": v}
                  for k, v in sorted(self.config.get(body["type"], {}).items())]
        return web.json_response({"version": 3, "values": values})

    async def catalog_endpoint(self, request: web.Request) -> web.Response:
        if self.errors is None:
            return web.json_response({"error": "Not found"}, status=404)
        return web.json_response({**build_catalog(self.config).to_json(), "errors": self.errors})


def _serve(gw: Gateway, sock: socket.socket, ready: threading.Event, holder: dict[str, Any]) -> None:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    app = web.Application()
    app.router.add_get("/api/v1/socket", gw.socket)
    app.router.add_post("/api/v1/config", gw.config_endpoint)
    app.router.add_get("/api/v1/tool-catalog", gw.catalog_endpoint)
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.SockSite(runner, sock).start())
    holder["loop"] = loop
    ready.set()
    loop.run_forever()
    loop.run_until_complete(runner.cleanup())
    loop.close()


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    gw = Gateway(url=f"http://127.0.0.1:{sock.getsockname()[1]}/")
    ready, holder = threading.Event(), {}
    thread = threading.Thread(target=_serve, args=(gw, sock, ready, holder), daemon=True)
    thread.start()
    assert ready.wait(10)
    yield gw
    holder["loop"].call_soon_threadsafe(holder["loop"].stop)
    thread.join(10)


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRUSTGRAPH_") and "proxy" not in k.lower()}
    env["PYTHONPATH"] = os.pathsep.join([str(BASE), *([os.environ["PYTHONPATH"]] if "PYTHONPATH" in os.environ
                                                      else [])])
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def tg(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli_env()
    return subprocess.run([sys.executable, "-m", f"trustgraph.cli.{module}", *args], capture_output=True,
                          text=True, env=env, timeout=60, encoding="utf-8", stdin=subprocess.DEVNULL)


def agent(gw: Gateway, *args: str) -> subprocess.CompletedProcess[str]:
    return tg("invoke_agent", "-u", gw.url, *args)


def one_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tg-invoke-agent: error: "), proc.stderr
    return lines[0]


STREAM = [
    {"chunk_type": "thought", "content": "I need ", "end_of_message": False, "end_of_dialog": False},
    {"chunk_type": "thought", "content": "a joke", "end_of_message": True, "end_of_dialog": False},
    {"chunk_type": "action", "content": 'tell-joke {"topic": "cats"}', "end_of_message": True,
     "end_of_dialog": False},
    {"chunk_type": "observation", "content": "Hey! A pun.", "end_of_message": True, "end_of_dialog": False},
    {"chunk_type": "thought", "content": "Done", "end_of_message": True, "end_of_dialog": False},
    {"chunk_type": "answer", "content": "A ", "end_of_message": False, "end_of_dialog": False},
    {"chunk_type": "answer", "content": "pun.", "end_of_message": False, "end_of_dialog": False},
    {"chunk_type": "answer", "end_of_message": True, "end_of_dialog": True},
]


def test_streaming_answer_only(gateway):
    gateway.responses = STREAM
    proc = agent(gateway, "-q", "Tell me a joke")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "A pun.\n", "")
    frame = gateway.frames[0]
    assert (frame["service"], frame["flow"]) == ("agent", "default")
    assert frame["request"] == {"question": "Tell me a joke", "user": "trustgraph", "streaming": True}


@pytest.mark.parametrize("flag", ["--api-url", "--url"])
def test_url_flag_as_every_command_spells_it_and_as_upstream_does(gateway, flag):
    gateway.responses = STREAM
    proc = tg("invoke_agent", flag, gateway.url, "-q", "Tell me a joke")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "A pun.\n", "")


def test_verbose_shows_thoughts_actions_and_observations(gateway):
    gateway.responses = STREAM
    proc = agent(gateway, "-q", "q", "-v", "-f", "other", "-U", "alice", "-s", "start", "-g", "fun", "admin",
                 "-C", "ignored", "-l", "ignored")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == '🤔 I need a joke\n🛠️ tell-joke {"topic": "cats"}\n💡 Hey! A pun.\n🤔 Done\nA pun.\n'
    frame = gateway.frames[0]
    assert frame["flow"] == "other"
    assert frame["request"] == {"question": "q", "user": "alice", "streaming": True, "state": "start",
                                "group": ["fun", "admin"], "show_actions": True}


def test_no_streaming_reads_legacy_messages(gateway):
    gateway.responses = [{"thought": "Let me see", "end_of_message": True, "end_of_dialog": False},
                         {"observation": "42", "end_of_message": True, "end_of_dialog": False},
                         {"answer": "It is 42", "end_of_message": True, "end_of_dialog": True}]
    proc = agent(gateway, "-q", "q", "--no-streaming", "-v")
    assert proc.stdout == "🤔 Let me see\n💡 42\nIt is 42\n"
    assert gateway.frames[0]["request"]["streaming"] is False
    assert agent(gateway, "-q", "q", "--no-streaming").stdout == "It is 42\n"


@pytest.mark.parametrize("response, message", [
    ({"error": {"type": "agent-error", "message": "Too many agent iterations"}},
     "agent-error: Too many agent iterations"),
    ({"chunk_type": "error", "content": "Too many agent iterations", "end_of_message": True,
      "end_of_dialog": True}, "Too many agent iterations"),
])
def test_agent_error_is_one_line_and_nonzero(gateway, response, message):
    gateway.responses = [STREAM[0], response]
    proc = agent(gateway, "-q", "q")
    assert one_error(proc) == f"tg-invoke-agent: error: {message}"
    assert proc.stdout == ""


def test_routing_error_and_no_gateway(gateway):
    gateway.routing_error = "Invalid flow"
    assert one_error(agent(gateway, "-q", "q", "-f", "nope")).endswith("error: Invalid flow")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = tg("invoke_agent", "-u", f"http://127.0.0.1:{port}/", "-q", "q")
    assert "cannot connect" in one_error(proc)
    # Something answers, but not the gateway's routes: the URL is the likely mistake.
    url = f"{gateway.url}nowhere/"
    assert one_error(tg("invoke_agent", "-u", url, "-q", "q")).endswith(
        f"refused: HTTP 404: nothing there serves the API gateway's routes; is {url} the gateway's URL? "
        "(http://localhost:8088/ under make run, where 8089 is the MCP server)")


@pytest.mark.parametrize("question", ["", "   ", "\n", " \t\n "])
@pytest.mark.parametrize("streaming", [[], ["--no-streaming"]])
def test_a_blank_question_is_a_one_line_usage_error_before_any_connection(gateway, question, streaming):
    gateway.responses = STREAM
    proc = agent(gateway, "-q", question, *streaming)
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert proc.stderr == ('tg-invoke-agent: error: the question is empty: ask a question, '
                           'e.g. -q "What is the weather in Paris?"\n')
    assert gateway.frames == []     # nothing was sent
    # Nor was a connection tried: no gateway at all gives the same line, not "cannot connect".
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    nowhere = tg("invoke_agent", "-u", f"http://127.0.0.1:{port}/", f"--question={question}", *streaming)
    assert (nowhere.returncode, nowhere.stderr) == (2, proc.stderr)


def test_token_goes_in_the_query(gateway):
    gateway.token = "s3cret"
    gateway.responses = STREAM
    assert "unauthorized" in one_error(agent(gateway, "-q", "q"))
    assert agent(gateway, "-q", "q", "-t", "s3cret").stdout == "A pun.\n"


# -- tg-show-tools ---------------------------------------------------------------------

SERVICE = {"id": "joke-service", "request-queue": "non-persistent://tg/request/joke",
           "response-queue": "non-persistent://tg/response/joke", "config-params": [{"name": "style"}]}
JOKE = {"type": "tool-service", "name": "tell-joke", "description": "Tell a joke", "service": "joke-service",
        "style": "pun", "arguments": [{"name": "topic", "type": "string", "description": "The topic"}],
        "group": ["fun"], "examples": ["Make me laugh about cats", "Got a pun on dogs?",
                                  {"question": "One about owls?", "arguments": {"topic": "owls"}},
                                  {"arguments": {"topic": "cats"}}]}
KB = {"type": "knowledge-query", "name": "kb", "description": "Graph", "collection": "space",
      "state": "searched", "applicable-states": ["undefined"]}
ORPHAN = {"type": "tool-service", "name": "orphan", "description": "d", "service": "missing"}


def test_show_tools_tables_and_gateway_errors(gateway):
    gateway.config = {"tool": {"tell-joke": json.dumps(JOKE), "kb": json.dumps(KB)},
                      "tool-service": {"joke-service": json.dumps(SERVICE)}}
    gateway.errors = ["tool/other: field 'service': reported by the gateway"]
    proc = tg("show_tools", "-u", gateway.url)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    rows = [tuple(c.strip() for c in line.strip("|").split("|")) for line in out.splitlines()
            if line.startswith("|")]
    for row in [("id", "kb"), ("collection", "space"), ("next state", "searched"),
                ("available in", "undefined"), ("id", "tell-joke"), ("service", "joke-service"),
                ("request queue", "non-persistent://tg/request/joke"), ("config", "style=pun"),
                ("arg 0", "topic: string"), ("", "The topic"), ("groups", "fun"),
                ("examples", "Make me laugh about cats"), ("", "Got a pun on dogs?"),
                ("", 'One about owls? -> {"topic": "owls"}'), ("", '{"topic": "cats"}')]:
        assert row in rows, row
    assert rows.index(("id", "kb")) < rows.index(("id", "tell-joke"))
    assert [r for r in rows if r[0] == "examples"] == [("examples", "Make me laugh about cats")]   # kb has none
    assert out.rstrip().endswith("Descriptor errors:\n  tool/other: field 'service': reported by the gateway")


def test_show_tools_computes_errors_without_the_route(gateway):
    gateway.config = {"tool": {"orphan": json.dumps(ORPHAN)}, "tool-service": {}}
    proc = tg("show_tools", "-u", gateway.url)
    assert proc.returncode == 0, proc.stderr
    assert "Descriptor errors:\n  tool/orphan: field 'service': unknown tool service 'missing'" in proc.stdout
    # The broken tool says why in its own table too.
    table = proc.stdout.split("Descriptor errors:")[0]
    assert "| error       | tool/orphan: field 'service': unknown tool service 'missing' |" in table
    gateway.config = {}
    gateway.errors = []
    assert tg("show_tools", "-u", gateway.url).stdout == "No tools.\n"


def test_the_exit_status_says_how_the_dialog_ended():
    import io

    import pytest
    from trustgraph.base.command_line import CliError
    from trustgraph.cli import invoke_agent

    printer = invoke_agent.Printer(False, out=io.StringIO())
    invoke_agent.handle({"chunk_type": "answer", "content": "Did you mean `a` or `b`?", "end_of_message": True,
                         "end_of_dialog": True, "outcome": "asked-back", "candidates": ["a", "b"]}, printer)
    assert invoke_agent._EXIT[printer.outcome] == invoke_agent.EXIT_ASKED_BACK == 4
    assert invoke_agent._EXIT["no-tool"] == invoke_agent.EXIT_NO_TOOL == 3
    assert "tool-result" not in invoke_agent._EXIT and "answer" not in invoke_agent._EXIT   # exit 0
    printer = invoke_agent.Printer(False, out=io.StringIO())
    with pytest.raises(CliError) as failed:
        invoke_agent.handle({"error": {"type": "agent-error", "message": "tool 'w' cannot be used now"},
                             "outcome": "tool-unavailable"}, printer)
    assert failed.value.status == invoke_agent.EXIT_UNAVAILABLE == 5
    with pytest.raises(CliError) as failed:   # an upstream agent's error: no outcome
        invoke_agent.handle({"chunk_type": "error", "content": "boom", "end_of_dialog": True},
                            invoke_agent.Printer(False, out=io.StringIO()))
    assert failed.value.status == 1


TOOL_ANSWER = [
    {"chunk_type": "observation", "content": "It is sunny.", "end_of_message": True, "end_of_dialog": False},
    {"chunk_type": "answer", "content": "It is sunny.", "end_of_message": False, "end_of_dialog": False},
    {"chunk_type": "answer", "end_of_message": True, "end_of_dialog": True, "outcome": "tool-result",
     "candidates": ["weather\x1b[31m"]},
]


@pytest.mark.parametrize("streaming", [True, False])
def test_an_answer_that_is_a_tools_output_is_named_on_stderr_and_stdout_stays_the_answer(gateway, streaming):
    gateway.responses = TOOL_ANSWER if streaming else [
        {"answer": "It is sunny.", "end_of_message": True, "end_of_dialog": True, "outcome": "tool-result",
         "candidates": ["weather\x1b[31m"]}]
    proc = agent(gateway, "-q", "Weather in Oslo?", *([] if streaming else ["--no-streaming"]))
    assert (proc.returncode, proc.stdout) == (0, "It is sunny.\n")
    # One line, the tool's name escaped (a name is its provider's text too).
    assert proc.stderr == ("tg-invoke-agent: the answer is the output of tool 'weather\\x1b[31m', as its "
                           "provider wrote it (not the agent's own words)\n")
    # The model's own answer, or an upstream agent's (no outcome): nothing on stderr.
    gateway.responses = [{**TOOL_ANSWER[-1], "outcome": "answer", "candidates": None, "content": "Hi"}]
    assert agent(gateway, "-q", "hi").stderr == ""
    gateway.responses = STREAM
    assert agent(gateway, "-q", "hi").stderr == ""


def test_an_answer_of_several_tools_outputs_names_each(gateway):
    # A question of two requests is answered by two tools' results, each named.
    gateway.responses = [{"answer": "Saturday.\n24 days.", "end_of_message": True, "end_of_dialog": True,
                          "outcome": "tool-result", "candidates": ["day-of-week", "days-until"]}]
    proc = agent(gateway, "-q", "What day is 31 October and how many days away is it?", "--no-streaming")
    assert (proc.returncode, proc.stdout) == (0, "Saturday.\n24 days.\n")
    assert proc.stderr == ("tg-invoke-agent: the answer is the output of tools 'day-of-week' and 'days-until', in "
                           "turn, as their providers wrote it (not the agent's own words)\n")


# -- approval: a dialog the agent paused before a tool call that needs it ----------------------

PAUSE_TEXT = 'Approval needed to run delete-note with {"title": "groceries"}: approve or refuse it to go on.'
APPROVAL = {"tool": "delete-note", "arguments": {"title": "groceries"}, "token": "a1.dialog.sig", "expires": 1e10}
PAUSE = [{"chunk_type": "answer", "content": PAUSE_TEXT, "end_of_message": True, "end_of_dialog": True,
          "outcome": "approval-required", "candidates": ["delete-note"], "approval": APPROVAL}]
PAUSE_WHOLE = [{"answer": PAUSE_TEXT, "end_of_message": True, "end_of_dialog": True,
                "outcome": "approval-required", "candidates": ["delete-note"], "approval": APPROVAL}]
DELETED = [
    {"chunk_type": "observation", "content": "Deleted the note groceries.", "end_of_message": True,
     "end_of_dialog": False},
    {"chunk_type": "answer", "content": "Deleted the note groceries.", "end_of_message": True,
     "end_of_dialog": True, "outcome": "tool-result", "candidates": ["delete-note"]}]
DELETED_WHOLE = [{"observation": "Deleted the note groceries.", "end_of_message": True},
                 {"answer": "Deleted the note groceries.", "end_of_message": True, "end_of_dialog": True,
                  "outcome": "tool-result", "candidates": ["delete-note"]}]


@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.parametrize("decision", ["approve", "refuse"])
def test_approve_and_refuse_resume_the_dialog_with_the_agents_token(gateway, streaming, decision):
    gateway.turns = [PAUSE if streaming else PAUSE_WHOLE, DELETED if streaming else DELETED_WHOLE]
    proc = agent(gateway, "-q", "Delete the note called groceries", "-U", "alice", f"--{decision}",
                 *([] if streaming else ["--no-streaming"]))
    assert (proc.returncode, proc.stdout) == (0, "Deleted the note groceries.\n"), proc.stderr
    first, resumed = gateway.frames
    assert "approval" not in first["request"]
    # The same question and user, the token and the decision: the gateway makes it the property.
    assert resumed["request"] == {**first["request"], "approval": {"token": "a1.dialog.sig", "decision": decision}}
    assert proc.stderr.splitlines()[0] == (f"tg-invoke-agent: {decision}d by --{decision}: tool 'delete-note' with "
                                           '{"title": "groceries"}')


def test_with_no_terminal_and_no_flag_the_approval_message_is_printed_and_the_exit_status_says_so(gateway):
    gateway.turns = [PAUSE, DELETED]
    proc = agent(gateway, "-q", "Delete the note called groceries")
    assert (proc.returncode, proc.stdout) == (6, PAUSE_TEXT + "\n")
    assert proc.stderr == ("tg-invoke-agent: tool 'delete-note' with {\"title\": \"groceries\"} needs approval, and "
                           "there is no terminal to ask on: run again with --approve or --refuse\n")
    assert len(gateway.frames) == 1   # nothing resumed
    from trustgraph.cli import invoke_agent
    assert invoke_agent.EXIT_APPROVAL == 6


def test_a_gateway_that_drops_the_approval_is_said_not_asked_forever(gateway):
    # An upstream gateway drops "approval": the agent starts the dialog again and pauses again,
    # with no call made or refused in between.
    gateway.turns = [PAUSE]
    proc = agent(gateway, "-q", "Delete the note called groceries", "--approve")
    assert proc.returncode == 1 and len(gateway.frames) == 2
    assert proc.stderr.splitlines()[-1] == (
        "tg-invoke-agent: error: the agent asked for approval again without making or refusing the call: the "
        "gateway did not pass the approval on (an upstream gateway does not); use a gateway of this fork")


@pytest.mark.parametrize(("typed", "decision"), [(b"y\n", "approve"), (b"yes\n", "approve"), (b"\n", "refuse"),
                                                 (b"n\n", "refuse")])
def test_on_a_terminal_it_shows_the_call_and_asks(gateway, tmp_path, typed, decision):
    import pty

    from support import wait_for

    gateway.turns = [PAUSE, DELETED]
    master, terminal = pty.openpty()
    err = tmp_path / "stderr"
    with open(err, "wb") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "trustgraph.cli.invoke_agent", "-u", gateway.url, "-q",
                                 "Delete the note called groceries"], stdin=terminal, stdout=subprocess.PIPE,
                                stderr=stderr, env=cli_env())
    os.close(terminal)
    try:
        wait_for("the question on the terminal", lambda: err.read_text().endswith("Run it? [y/N] "), 60,
                 gone=lambda: None if proc.poll() is None else f"exited {proc.returncode}")
        assert len(gateway.frames) == 1   # it waits for the answer
        os.write(master, typed)
        out, _ = proc.communicate(timeout=60)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, out) == (0, b"Deleted the note groceries.\n")
    assert err.read_text().startswith("tg-invoke-agent: the agent needs your approval to run tool 'delete-note' with "
                                      '{"title": "groceries"}\nRun it? [y/N] ')
    assert gateway.frames[1]["request"]["approval"] == {"token": "a1.dialog.sig", "decision": decision}
