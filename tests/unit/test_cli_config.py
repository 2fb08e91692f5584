"""Tests for the config and flow ``tg-*`` commands (trustgraph.cli).

Each command runs as a real subprocess (``python -m trustgraph.cli.<cmd>``)
against a real HTTP server, so argument parsing, stdin handling, output,
stderr and exit codes are all exercised exactly as a user would see them.

The server is a STAND-IN: a tiny in-memory imitation of the API gateway's
``POST /api/v1/config`` and ``POST /api/v1/flow`` endpoints (upstream 2.1.4's JSON),
backed by a dict instead of config-svc.  It only mimics what the commands
rely on; tests against the real stack come later.
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

REPO = Path(__file__).resolve().parents[2]
BASE = REPO / "trustgraph-base"


# ------------------------------------------------------------ fake gateway


@dataclass
class FakeGateway:
    """In-memory imitation of the gateway + config-svc, recording requests."""

    url: str = ""
    token: str | None = None
    version: int = 0
    config: dict[str, dict[str, str]] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # When set, the next reply is this object verbatim (fault injection).
    next_reply: dict[str, Any] | None = None
    # When set, the next reply is this text, served as HTTP 200 (not JSON).
    raw_reply: str | None = None
    # Seconds to stall before answering (to provoke client timeouts).
    delay: float = 0.0

    def _bump(self) -> None:
        self.version += 1

    def handle_config(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req.get("operation")
        if op == "get":
            return {
                "version": self.version,
                "values": [
                    {
                        "type": k["type"],
                        "key": k["key"],
                        "value": self.config.get(k["type"], {}).get(k["key"]),
                    }
                    for k in req.get("keys", [])
                ],
            }
        if op == "list":
            return {
                "version": self.version,
                "directory": sorted(self.config.get(req.get("type", ""), {})),
            }
        if op == "getvalues":
            type_ = req.get("type", "")
            items = sorted(self.config.get(type_, {}).items())
            return {"version": self.version, "values": [{"type": type_, "key": k, "value": v} for k, v in items]}
        if op == "put":
            for v in req.get("values", []):
                self.config.setdefault(v["type"], {})[v["key"]] = v["value"]
            self._bump()
            return {}
        if op == "delete":
            for k in req.get("keys", []):
                self.config.get(k["type"], {}).pop(k["key"], None)
            self._bump()
            return {}
        if op == "config":
            return {"version": self.version, "config": self.config}
        return {"error": {"type": "bad-operation", "message": "Bad operation"}}

    def handle_flow(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req.get("operation")
        flows = self.config.setdefault("flow", {})
        if op == "list-flows":
            return {"flow-ids": sorted(flows)}
        if op == "get-flow":
            stored = flows.get(req.get("flow-id", ""))
            if stored is None:
                return {"error": {"type": "flow-error", "message": "Flow ID invalid"}}
            data = json.loads(stored)
            return {
                "flow": stored,
                "description": data["description"],
                "parameters": data["parameters"],
            }
        if op == "start-flow":
            fid, bp = req.get("flow-id"), req.get("blueprint-name")
            if fid in flows:
                return {"error": {"type": "flow-error", "message": "Flow already exists"}}
            blueprint = self.config.get("flow-blueprint", {}).get(bp or "")
            if blueprint is None:
                return {"error": {"type": "flow-error", "message": "Blueprint does not exist"}}
            if req.get("description") is None:
                return {"error": {"type": "flow-error", "message": "No description"}}
            text = blueprint.replace("{id}", fid).replace("{blueprint}", bp)
            flows[fid] = json.dumps(
                {
                    "description": req["description"],
                    "blueprint-name": bp,
                    "interfaces": json.loads(text).get("interfaces", {}),
                    "parameters": {k: str(v) for k, v in (req.get("parameters") or {}).items()},
                }
            )
            self._bump()
            return {}
        if op == "stop-flow":
            if flows.pop(req.get("flow-id", ""), None) is None:
                return {"error": {"type": "flow-error", "message": "Flow ID invalid"}}
            self._bump()
            return {}
        return {"error": {"type": "bad-operation", "message": "Bad operation"}}

    async def endpoint(self, request: web.Request) -> web.Response:
        kind = request.match_info["kind"]
        if self.token and request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.Response(status=401, text="Unauthorized")
        body = await request.json()
        self.requests.append((kind, body))
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.raw_reply is not None:
            text, self.raw_reply = self.raw_reply, None
            return web.Response(text=text, content_type="text/html")
        if self.next_reply is not None:
            reply, self.next_reply = self.next_reply, None
        elif kind == "config":
            reply = self.handle_config(body)
        elif kind == "flow":
            reply = self.handle_flow(body)
        else:
            reply = {"error": "Invalid kind"}
        # Like the gateway: HTTP 200 with a JSON body even for errors.
        return web.json_response(reply)


def _serve(fake: FakeGateway, sock: socket.socket, ready: threading.Event, holder: dict[str, Any]) -> None:
    """Run the aiohttp app on its own loop in this (background) thread, so
    the test thread can block in subprocess.run."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    app = web.Application(client_max_size=32 * 1024 * 1024)  # as our gateway (MAX_BODY)
    app.router.add_post("/api/v1/{kind}", fake.endpoint)
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.SockSite(runner, sock).start())
    holder["loop"], holder["runner"] = loop, runner
    ready.set()
    loop.run_forever()
    loop.run_until_complete(runner.cleanup())
    loop.close()


@pytest.fixture
def gateway() -> Iterator[FakeGateway]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    fake = FakeGateway(url=f"http://127.0.0.1:{port}/")
    ready, holder = threading.Event(), {}
    thread = threading.Thread(target=_serve, args=(fake, sock, ready, holder), daemon=True)
    thread.start()
    assert ready.wait(10), "fake gateway did not start"
    yield fake
    holder["loop"].call_soon_threadsafe(holder["loop"].stop)
    thread.join(10)


def _free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tg(
    module: str, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m trustgraph.cli.<module> args...`` as a user would."""
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith("TRUSTGRAPH_") and "proxy" not in k.lower()
    }
    clean["PYTHONPATH"] = os.pathsep.join(
        [str(BASE)] + ([os.environ["PYTHONPATH"]] if "PYTHONPATH" in os.environ else [])
    )
    clean.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", f"trustgraph.cli.{module}", *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=clean,
        timeout=60,
    )


def one_error_line(proc: subprocess.CompletedProcess[str], prog: str) -> str:
    """Assert the failure contract: nonzero exit, nothing on stdout, exactly
    one stderr line ``prog: error: ...``; return that line."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"{prog}: error: "), lines[0]
    return lines[0]


TOOL = {"id": "tell-joke", "name": "tell-joke", "type": "tool-service", "description": "Tell a joke",
        "service": "joke-service"}


# ------------------------------------------------------------ put


def test_put_with_value_flag(gateway: FakeGateway) -> None:
    p = tg(
        "put_config_item",
        "-u",
        gateway.url,
        "--type",
        "agent",
        "--key",
        "additional-context",
        "--value",
        "Be brief.",
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout == "Configuration item set: agent/additional-context\n"
    assert p.stderr == ""
    assert gateway.requests == [
        (
            "config",
            {
                "operation": "put",
                "values": [{"type": "agent", "key": "additional-context", "value": "Be brief."}],
            },
        )
    ]


def test_put_with_stdin_flag(gateway: FakeGateway) -> None:
    text = json.dumps(TOOL, indent=2) + "\n"
    p = tg(
        "put_config_item", "-u", gateway.url, "--type", "tool", "--key", "tell-joke", "--stdin", stdin=text
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout == "Configuration item set: tool/tell-joke\n"
    # The trailing newline is stripped, the rest is sent verbatim.
    assert gateway.config["tool"]["tell-joke"] == text[:-1]


def test_put_positional_reads_stdin(gateway: FakeGateway) -> None:
    text = json.dumps(TOOL) + "\n"
    p = tg("put_config_item", "-u", gateway.url, "tool/tell-joke", stdin=text)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "Configuration item set: tool/tell-joke\n"
    assert json.loads(gateway.config["tool"]["tell-joke"]) == TOOL


def test_put_from_file(gateway: FakeGateway, tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"url": "http://mcp:9000/mcp"}\n', encoding="utf-8")
    p = tg("put_config_item", "-u", gateway.url, "--type", "mcp", "--key", "weather", "--file", str(path))
    assert p.returncode == 0, p.stderr
    assert gateway.config["mcp"]["weather"] == '{"url": "http://mcp:9000/mcp"}'


def test_put_missing_file_is_an_error(gateway: FakeGateway, tmp_path: Path) -> None:
    p = tg("put_config_item", "-u", gateway.url, "tool/x", "--file", str(tmp_path / "nope.json"))
    line = one_error_line(p, "tg-put-config-item")
    assert "nope.json" in line
    assert gateway.requests == []


def test_put_invalid_json_refused_before_sending(gateway: FakeGateway) -> None:
    bad = '{\n  "name": "tell-joke",\n  "type": tool-service\n}\n'
    p = tg("put_config_item", "-u", gateway.url, "tool/tell-joke", stdin=bad)
    line = one_error_line(p, "tg-put-config-item")
    assert "tool/tell-joke" in line and "not valid JSON" in line
    assert "line 3 column 11" in line
    assert gateway.requests == []
    assert "tool" not in gateway.config


SERVICE = {"id": "joke-service", "request-queue": "non-persistent://tg/request/joke",
           "response-queue": "non-persistent://tg/response/joke"}


def test_put_refuses_a_descriptor_the_agent_would_skip(gateway: FakeGateway) -> None:
    gateway.config = {"tool-service": {"joke-service": json.dumps(SERVICE)}}
    bad = json.dumps({**TOOL, "description": ""})
    p = tg("put_config_item", "-u", gateway.url, "tool/tell-joke", stdin=bad)
    line = one_error_line(p, "tg-put-config-item")
    assert line == ("tg-put-config-item: error: tool/tell-joke: field 'description': must not be empty; "
                    "nothing was written (fix it, or give --force to write it anyway)")
    assert "tool" not in gateway.config
    assert [b["operation"] for _, b in gateway.requests] == ["getvalues"] * 5  # the catalog's types


def test_put_force_writes_it_and_says_what_is_wrong(gateway: FakeGateway) -> None:
    p = tg("put_config_item", "-u", gateway.url, "tool/x", "--force", stdin='{"type": "magic", "name": "x"}')
    assert (p.returncode, p.stdout) == (0, "Configuration item set: tool/x\n"), p.stderr
    assert p.stderr.startswith("tg-put-config-item: warning: tool/x: field 'type': unknown tool type 'magic'")
    assert gateway.config["tool"]["x"] == '{"type": "magic", "name": "x"}'


def test_put_tool_before_its_service_warns_and_writes(gateway: FakeGateway) -> None:
    p = tg("put_config_item", "-u", gateway.url, "tool/tell-joke", stdin=json.dumps(TOOL))
    assert p.returncode == 0, p.stderr
    assert p.stderr == ("tg-put-config-item: warning: tool/tell-joke: field 'service': "
                        "unknown tool service 'joke-service'\n")
    p = tg("put_config_item", "-u", gateway.url, "tool-service/joke-service", stdin=json.dumps(SERVICE))
    assert (p.returncode, p.stderr) == (0, "")


def test_put_a_key_nothing_reads_warns_and_writes_unless_strict(gateway: FakeGateway) -> None:
    gateway.config = {"tool-service": {"joke-service": json.dumps(SERVICE)}}
    typo = {k: v for k, v in TOOL.items() if k != "id"} | {"argument": [{"name": "topic", "type": "string"}]}
    said = ("tool/tell-joke: field 'argument': unknown key, not read: did you mean 'arguments'? it is not a "
            "key of a 'tool-service' tool, nor a config param of service 'joke-service' (it has none)")
    p = tg("put_config_item", "-u", gateway.url, "tool/tell-joke", "--strict", stdin=json.dumps(typo))
    assert one_error_line(p, "tg-put-config-item") == (
        f"tg-put-config-item: error: {said}; nothing was written (fix it, or give --force to write it anyway)")
    assert "tool" not in gateway.config
    p = tg("put_config_item", "-u", gateway.url, "tool/tell-joke", stdin=json.dumps(typo))
    assert (p.returncode, p.stdout, p.stderr) == (0, "Configuration item set: tool/tell-joke\n",
                                                  f"tg-put-config-item: warning: {said}\n")
    assert json.loads(gateway.config["tool"]["tell-joke"]) == typo


def test_import_says_what_the_catalog_would_of_the_descriptors_it_writes(gateway: FakeGateway, tmp_path: Path
                                                                          ) -> None:
    gateway.config = {"tool-service": {"joke-service": json.dumps(SERVICE)}}
    typo = {k: v for k, v in TOOL.items() if k != "id"} | {"argument": []}
    dump = tmp_path / "config.json"
    dump.write_text(json.dumps({"tool": {"tell-joke": typo}, "greeting": {"hello": "Hi"}}))
    p = tg("import_config", "-u", gateway.url, str(dump))
    assert p.returncode == 0 and p.stdout.startswith("set greeting/hello (new)\nset tool/tell-joke (new)\n")
    assert p.stderr == ("tg-import-config: warning: tool/tell-joke: field 'argument': unknown key, not read: did "
                        "you mean 'arguments'? it is not a key of a 'tool-service' tool, nor a config param of "
                        "service 'joke-service' (it has none)\n")
    assert json.loads(gateway.config["tool"]["tell-joke"]) == typo


def test_put_refuses_a_bad_mcp_entry(gateway: FakeGateway) -> None:
    p = tg("put_config_item", "-u", gateway.url, "mcp/weather", stdin='{"url": "mcp:9000"}')
    line = one_error_line(p, "tg-put-config-item")
    assert "mcp/weather: field 'url': 'mcp:9000' is not an http:// or https:// URL" in line
    assert "mcp" not in gateway.config


def test_put_non_json_type_accepts_plain_text(gateway: FakeGateway) -> None:
    p = tg("put_config_item", "-u", gateway.url, "agent/additional-context", stdin="not { json")
    assert p.returncode == 0, p.stderr
    assert gateway.config["agent"]["additional-context"] == "not { json"


@pytest.mark.parametrize(
    "args",
    [
        ["--type", "tool", "--value", "{}"],  # no key
        ["--key", "k", "--value", "{}"],  # no type
        ["--type", "tool", "--key", "k"],  # no value source
        ["tool-without-slash"],  # malformed shorthand
        ["tool/k", "--type", "tool"],  # both forms at once
        ["--type", "t", "--key", "k", "--value", "v", "--stdin"],  # two sources
    ],
)
def test_put_usage_errors(gateway: FakeGateway, args: list[str]) -> None:
    p = tg("put_config_item", "-u", gateway.url, *args)
    assert p.returncode == 2
    assert "usage: tg-put-config-item" in p.stderr
    assert "tg-put-config-item: error:" in p.stderr
    assert gateway.requests == []


# ------------------------------------------------------------ get / list / delete / show


def test_get_text_and_json(gateway: FakeGateway) -> None:
    gateway.config = {"prompt": {"system": '"Be helpful."'}}
    p = tg("get_config_item", "-u", gateway.url, "--type", "prompt", "--key", "system")
    assert (p.returncode, p.stdout, p.stderr) == (0, '"Be helpful."\n', "")
    assert gateway.requests[-1] == (
        "config",
        {"operation": "get", "keys": [{"type": "prompt", "key": "system"}]},
    )

    p = tg("get_config_item", "-u", gateway.url, "prompt/system", "--format", "json")
    assert p.returncode == 0, p.stderr
    assert p.stdout == json.dumps('"Be helpful."') + "\n"


def test_get_missing_item(gateway: FakeGateway) -> None:
    p = tg("get_config_item", "-u", gateway.url, "tool/nope")
    line = one_error_line(p, "tg-get-config-item")
    assert "tool/nope does not exist" in line


def test_list_text_and_json(gateway: FakeGateway) -> None:
    gateway.config = {"tool": {"b": "{}", "a": "{}"}}
    p = tg("list_config_items", "-u", gateway.url, "--type", "tool")
    assert (p.returncode, p.stdout) == (0, "a\nb\n")
    assert gateway.requests[-1] == ("config", {"operation": "list", "type": "tool"})
    p = tg("list_config_items", "-u", gateway.url, "--type", "tool", "--format", "json")
    assert p.returncode == 0
    assert json.loads(p.stdout) == ["a", "b"]
    p = tg("list_config_items", "-u", gateway.url, "--type", "empty")
    assert (p.returncode, p.stdout) == (0, "")


def test_delete(gateway: FakeGateway) -> None:
    gateway.config = {"tool": {"a": "{}", "b": "{}"}}
    p = tg("delete_config_item", "-u", gateway.url, "--type", "tool", "--key", "a")
    assert (p.returncode, p.stdout) == (0, "Configuration item deleted: tool/a\n")
    p = tg("delete_config_item", "-u", gateway.url, "tool/b")
    assert (p.returncode, p.stdout) == (0, "Configuration item deleted: tool/b\n")
    assert gateway.config["tool"] == {}
    assert gateway.requests[0] == ("config", {"operation": "delete", "keys": [{"type": "tool", "key": "a"}]})


def test_show_config(gateway: FakeGateway) -> None:
    gateway.version = 7
    gateway.config = {"tool": {"kb": '{"type":"knowledge-query"}'}}
    p = tg("show_config", "-u", gateway.url)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "Version: 7\n" + json.dumps(gateway.config, indent=4) + "\n"
    assert gateway.requests == [("config", {"operation": "config"})]


def test_round_trip_and_env_url_without_slash(gateway: FakeGateway) -> None:
    env = {"TRUSTGRAPH_URL": gateway.url.rstrip("/")}
    p = tg("put_config_item", "tool/kb", stdin='{"type": "knowledge-query", "name": "kb"}', env=env)
    assert p.returncode == 0, p.stderr
    p = tg("get_config_item", "tool/kb", env=env)
    assert p.stdout == '{"type": "knowledge-query", "name": "kb"}\n'


# ------------------------------------------------------------ failures


def test_connection_refused(gateway: FakeGateway) -> None:
    url = f"http://127.0.0.1:{_free_port()}/"
    p = tg("list_config_items", "-u", url, "--type", "tool")
    line = one_error_line(p, "tg-list-config-items")
    assert f"{url}api/v1/config" in line
    assert "connection refused" in line and "make run" in line


def test_unauthorized(gateway: FakeGateway) -> None:
    gateway.token = "s3cret"
    p = tg("show_config", "-u", gateway.url, "-t", "wrong")
    line = one_error_line(p, "tg-show-config")
    assert "unauthorized: set --token or TRUSTGRAPH_TOKEN" in line

    p = tg("show_config", "-u", gateway.url, env={"TRUSTGRAPH_TOKEN": "s3cret"})
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("Version: 0\n")


def test_error_reply_structured(gateway: FakeGateway) -> None:
    gateway.next_reply = {"error": {"type": "config-error", "message": "Cassandra down"}}
    p = tg("get_config_item", "-u", gateway.url, "tool/x")
    line = one_error_line(p, "tg-get-config-item")
    assert line == "tg-get-config-item: error: config-error: Cassandra down"


def test_error_reply_string(gateway: FakeGateway) -> None:
    gateway.next_reply = {"error": "Invalid kind"}
    p = tg("show_config", "-u", gateway.url)
    assert one_error_line(p, "tg-show-config") == "tg-show-config: error: Invalid kind"


def test_http_error_status(gateway: FakeGateway) -> None:
    # A URL with an extra path segment: aiohttp answers 404 (not JSON).
    p = tg("show_config", "-u", gateway.url + "nowhere/")
    line = one_error_line(p, "tg-show-config")
    assert "HTTP 404" in line and "nowhere/api/v1/config" in line


def test_invalid_json_reply(gateway: FakeGateway) -> None:
    gateway.raw_reply = "<html>proxy says hello</html>"
    p = tg("show_config", "-u", gateway.url)
    line = one_error_line(p, "tg-show-config")
    assert "invalid JSON reply" in line and "proxy says hello" in line


def test_timeout_in_process(gateway: FakeGateway) -> None:
    """The client timeout is not a flag, so drive the GatewayClient class directly."""
    sys.path.insert(0, str(BASE))
    try:
        from trustgraph.base.command_line import CliError, GatewayClient
    finally:
        sys.path.remove(str(BASE))
    gateway.delay = 1.0
    with pytest.raises(CliError, match=r"timed out after 0.3s waiting for http://"):
        GatewayClient(gateway.url, timeout=0.3).post("api/v1/config", {"operation": "config"})


# ------------------------------------------------------------ flows

BLUEPRINT = {
    "description": "Everything",
    "interfaces": {
        "agent": {
            "request": "non-persistent://tg/request/agent:{id}",
            "response": "non-persistent://tg/response/agent:{id}",
        },
        "text-load": "persistent://tg/flow/text-document-load:{id}",
    },
    "blueprint": {},
    "flow": {},
}


def test_start_flow_sends_kebab_case(gateway: FakeGateway, tmp_path: Path) -> None:
    gateway.config = {"flow-blueprint": {"everything": json.dumps(BLUEPRINT)}}
    pfile = tmp_path / "params.json"
    pfile.write_text('{"llm-model": "gpt-4o", "temperature": "0.1"}')
    p = tg(
        "start_flow",
        "-u",
        gateway.url,
        "-n",
        "everything",
        "-i",
        "default",
        "-d",
        "Default flow",
        "--parameters-file",
        str(pfile),
        "-p",
        '{"temperature": "0.3", "chunk-size": 2000}',
        "--param",
        "llm-model=gpt-4o-mini",
        "--param",
        "note=a=b",
    )
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")
    assert gateway.requests == [
        (
            "flow",
            {
                "operation": "start-flow",
                "blueprint-name": "everything",
                "flow-id": "default",
                "description": "Default flow",
                "parameters": {
                    "llm-model": "gpt-4o-mini",
                    "temperature": "0.3",
                    "chunk-size": 2000,
                    "note": "a=b",
                },
            },
        )
    ]
    assert "default" in gateway.config["flow"]


def test_start_flow_without_parameters(gateway: FakeGateway) -> None:
    gateway.config = {"flow-blueprint": {"everything": json.dumps(BLUEPRINT)}}
    p = tg("start_flow", "-u", gateway.url, "-n", "everything", "-i", "f1", "-d", "x")
    assert p.returncode == 0, p.stderr
    assert gateway.requests[0][1]["parameters"] == {}


def test_start_flow_errors(gateway: FakeGateway) -> None:
    p = tg("start_flow", "-u", gateway.url, "-n", "missing", "-i", "f1", "-d", "x")
    line = one_error_line(p, "tg-start-flow")
    assert line == "tg-start-flow: error: flow-error: Blueprint does not exist"

    p = tg("start_flow", "-u", gateway.url, "-n", "b", "-i", "f1", "-d", "x", "-p", "[1, 2]")
    assert "JSON object" in one_error_line(p, "tg-start-flow")

    p = tg("start_flow", "-u", gateway.url, "-n", "b", "-i", "f1")  # no -d
    assert p.returncode == 2 and "-d/--description" in p.stderr
    assert len(gateway.requests) == 1


def test_stop_flow(gateway: FakeGateway) -> None:
    gateway.config = {"flow-blueprint": {"everything": json.dumps(BLUEPRINT)}}
    assert tg("start_flow", "-u", gateway.url, "-n", "everything", "-i", "f1", "-d", "x").returncode == 0
    p = tg("stop_flow", "-u", gateway.url, "-i", "f1")
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")
    assert gateway.requests[-1] == ("flow", {"operation": "stop-flow", "flow-id": "f1"})
    assert gateway.config["flow"] == {}
    p = tg("stop_flow", "-u", gateway.url, "-i", "f1")
    assert "Flow ID invalid" in one_error_line(p, "tg-stop-flow")


def test_show_flows(gateway: FakeGateway) -> None:
    p = tg("show_flows", "-u", gateway.url)
    assert (p.returncode, p.stdout) == (0, "No flows.\n")

    gateway.config = {"flow-blueprint": {"everything": json.dumps(BLUEPRINT)}}
    assert (
        tg(
            "start_flow",
            "-u",
            gateway.url,
            "-n",
            "everything",
            "-i",
            "default",
            "-d",
            "Default flow",
            "--param",
            "llm-model=gpt-4o",
        ).returncode
        == 0
    )
    p = tg("show_flows", "-u", gateway.url)
    assert p.returncode == 0, p.stderr
    assert [r[1]["operation"] for r in gateway.requests[-2:]] == ["list-flows", "get-flow"]
    assert gateway.requests[-1][1]["flow-id"] == "default"
    expected = """\
+-------------+------------------------------------------------------+
| id          | default                                              |
+-------------+------------------------------------------------------+
| blueprint   | everything                                           |
+-------------+------------------------------------------------------+
| description | Default flow                                         |
+-------------+------------------------------------------------------+
| parameters  | llm-model=gpt-4o                                     |
+-------------+------------------------------------------------------+
| agent       | request: non-persistent://tg/request/agent:default   |
|             | response: non-persistent://tg/response/agent:default |
+-------------+------------------------------------------------------+
| text-load   | persistent://tg/flow/text-document-load:default      |
+-------------+------------------------------------------------------+

"""
    assert p.stdout == expected


# ------------------------------------------------------------ import


DUMP = {"prompt": {"system": json.dumps("Be brief.")}, "tool": {"tell-joke": TOOL},
        "greeting": {"hello": "Hello, world"}}


def test_import_takes_a_show_config_dump_once(gateway: FakeGateway, tmp_path: Path) -> None:
    gateway.config = {"greeting": {"hello": "Hello, world"}, "agent": {"context": "kept"}}
    # What tg-show-config (upstream's and ours) prints: a version line, then the config.
    dump = tmp_path / "config.txt"
    dump.write_text("Version: 9\n" + json.dumps(DUMP, indent=4) + "\n")
    p = tg("import_config", "-u", gateway.url, str(dump))
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "set prompt/system (new)", "set tool/tell-joke (new)",
        f"Imported 2 item(s) (2 new, 0 changed, 1 unchanged; 1 item(s) of the store not in {dump} kept); "
        "config version 1"]
    puts = [body for _, body in gateway.requests if body.get("operation") == "put"]
    assert puts == [{"operation": "put", "values": [
        {"type": "prompt", "key": "system", "value": json.dumps("Be brief.")},
        {"type": "tool", "key": "tell-joke", "value": json.dumps(TOOL)}]}]   # one put: one version
    assert gateway.config["agent"] == {"context": "kept"}
    # The same file again changes nothing.
    gateway.requests.clear()
    p = tg("import_config", "-u", gateway.url, str(dump))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("Imported 0 item(s) (0 new, 0 changed, 3 unchanged")
    assert not [body for _, body in gateway.requests if body.get("operation") == "put"]


def test_an_import_too_big_for_one_message_goes_in_several_puts(gateway: FakeGateway, tmp_path: Path) -> None:
    from trustgraph.base.safety.limits import MAX_MESSAGE_BYTES

    # Six items of 1 MiB each: more than one broker message (about 5 MiB) holds.
    big = {"document": {f"d{i}": "x" * (1024 * 1024) for i in range(6)}}
    dump = tmp_path / "big.json"
    dump.write_text(json.dumps(big))
    p = tg("import_config", "-u", gateway.url, str(dump), "--dry-run")
    assert p.stdout.splitlines()[-1] == ("Dry run: 6 new, 0 changed, 0 unchanged; in 2 puts, each a config "
                                         "version, as one would not fit in a broker message; nothing written")
    gateway.requests.clear()
    p = tg("import_config", "-u", gateway.url, str(dump))
    assert p.returncode == 0, p.stderr
    puts = [body for _, body in gateway.requests if body.get("operation") == "put"]
    assert [len(put["values"]) for put in puts] == [4, 2]
    assert all(len(json.dumps(put).encode()) < MAX_MESSAGE_BYTES for put in puts)
    assert p.stdout.splitlines()[-1].endswith("config version 2")
    assert gateway.config["document"] == big["document"]
    # The version is read from a list of one written type, not from a second whole-config read.
    reads = [body.get("operation") for _, body in gateway.requests]
    assert reads.count("config") == 1 and reads[-1] == "list"


def test_an_item_too_big_for_any_message_is_named_and_nothing_is_written(gateway: FakeGateway,
                                                                         tmp_path: Path) -> None:
    dump = tmp_path / "huge.json"
    dump.write_text(json.dumps({"greeting": {"small": "hi"}, "document": {"huge": "x" * (6 * 1024 * 1024)}}))
    line = one_error_line(tg("import_config", "-u", gateway.url, str(dump)), "tg-import-config")
    assert "document/huge is 6,291,5" in line and "nothing imported" in line
    assert not [body for _, body in gateway.requests if body.get("operation") == "put"]
    assert gateway.config == {}


def test_import_dry_run_says_what_would_change_and_writes_nothing(gateway: FakeGateway) -> None:
    gateway.config = {"greeting": {"hello": "Hi"}}
    p = tg("import_config", "-u", gateway.url, "-", "--dry-run",
           stdin=json.dumps({"version": 4, "config": DUMP}))     # the gateway's reply shape
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["would set prompt/system (new)", "would set tool/tell-joke (new)",
                                     "would set greeting/hello (changed)",
                                     "Dry run: 2 new, 1 changed, 0 unchanged; nothing written"]
    assert gateway.config == {"greeting": {"hello": "Hi"}}


def test_import_prints_types_and_keys_escaped_so_a_key_cannot_forge_or_reorder_a_line(gateway: FakeGateway
                                                                                       ) -> None:
    gateway.config = {"tool-service": {"joke-service": json.dumps(SERVICE)}}
    typo = {k: v for k, v in TOOL.items() if k != "id"} | {"argument": []}
    dump = {"greeting": {"a\nset tool/forged (new)": "x", "b\u202etxt.exe": "y"},
            "tool": {"t\rx": typo}}
    p = tg("import_config", "-u", gateway.url, "-", "--dry-run", stdin=json.dumps(dump))
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "would set greeting/a\\nset tool/forged (new) (new)", "would set greeting/b\\u202etxt.exe (new)",
        "would set tool/t\\rx (new)",
        "Dry run: 3 new, 0 changed, 0 unchanged; 1 item(s) of the store not in standard input kept; "
        "nothing written"]
    [warning] = p.stderr.splitlines()
    assert warning.startswith("tg-import-config: warning: tool/t\\rx: field 'argument'")
    bad = tg("import_config", "-u", gateway.url, "-", stdin=json.dumps({"tool": {"x\n\u202ey": "{"}}))
    assert "tool/x\\n\\u202ey: not JSON" in one_error_line(bad, "tg-import-config")


def test_import_refuses_a_dump_nested_too_deep_in_one_line(gateway: FakeGateway, tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"tool": ' + "[" * 200_000 + "]" * 200_000 + "}")
    line = one_error_line(tg("import_config", "-u", gateway.url, str(deep)), "tg-import-config")
    assert line == (f"tg-import-config: error: {deep} cannot be a config dump: JSON nested deeper than 100 "
                    "levels is over the limit (a config is a few levels deep); nothing imported")
    # The same nesting inside a value of a JSON type: that item named, nothing imported.
    value = json.dumps({"tool": {"deep": "[" * 200_000 + "]" * 200_000}})
    line = one_error_line(tg("import_config", "-u", gateway.url, "-", stdin=value), "tg-import-config")
    assert "tool/deep: not JSON (JSON nested deeper than 100 levels is over the limit)" in line
    assert not gateway.requests


def test_import_refuses_a_file_no_service_could_read(gateway: FakeGateway, tmp_path: Path) -> None:
    broken = {"tool": {"ok": json.dumps(TOOL), "oops": "{not json"}}
    p = tg("import_config", "-u", gateway.url, "-", stdin=json.dumps(broken))
    line = one_error_line(p, "tg-import-config")
    assert "tool/oops: not JSON" in line and "nothing imported" in line
    assert gateway.config == {} and not gateway.requests       # checked before anything was asked
    p = tg("import_config", "-u", gateway.url, "-", stdin="this is not a dump")
    assert "not a config dump" in one_error_line(p, "tg-import-config")
    p = tg("import_config", "-u", gateway.url, str(tmp_path / "missing.txt"))
    assert "cannot read" in one_error_line(p, "tg-import-config")
