"""tg-launch and the tg-* config/flow commands, as a user runs them."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from support import BIN, LIGHT, alive, descendants, launched, status_line, wait_for, wait_for_async
from trustgraph.base import PubSub
from trustgraph.base.launching.broker import free_port
from trustgraph.schema import AgentRequest


@pytest.fixture(scope="module")
def stack(stack_factory):
    return stack_factory(*LIGHT)


def test_launch_prints_where_components_listen(stack):
    out = stack.output()
    for name, start in (("broker", "pulsar://127.0.0.1:"), ("config-svc", "store "),
                        ("api-gateway", f"http://localhost:{stack.gateway_port}/"),
                        ("joke-service", "non-persistent://tg/request/joke"), ("bootstrap", "loaded")):
        assert status_line(out, name, start), out


def test_config_round_trip_through_the_cli(stack, tmp_path):
    r = stack.cli("tg-put-config-item", "widget/w1", input='{"size": 3}\n')
    assert (r.returncode, r.stdout.strip()) == (0, "Configuration item set: widget/w1"), r.stderr
    f = tmp_path / "w2.json"
    f.write_text('{"size": 4}')
    assert stack.cli("tg-put-config-item", "--type", "widget", "--key", "w2", "--file", str(f)).returncode == 0
    assert stack.cli("tg-put-config-item", "--type", "widget", "--key", "w3", "--stdin",
                     input='"three"').returncode == 0
    r = stack.cli("tg-get-config-item", "--type", "widget", "--key", "w1")
    assert (r.returncode, json.loads(r.stdout)) == (0, {"size": 3})
    r = stack.cli("tg-list-config-items", "--type", "widget")
    assert r.stdout.split() == ["w1", "w2", "w3"]
    r = stack.cli("tg-delete-config-item", "--type", "widget", "--key", "w2")
    assert r.stdout.strip() == "Configuration item deleted: widget/w2"
    r = stack.cli("tg-show-config")
    assert r.returncode == 0 and r.stdout.startswith("Version: ")
    body = json.loads(r.stdout.split("\n", 1)[1])
    assert set(body["widget"]) == {"w1", "w3"}
    assert "tell-joke" in body["tool"]


def test_invalid_json_is_refused_before_writing(stack):
    r = stack.cli("tg-put-config-item", "tool/broken", input='{"name": "x",}')
    assert r.returncode != 0
    assert len(r.stderr.strip().splitlines()) == 1 and "JSON" in r.stderr
    r = stack.cli("tg-list-config-items", "--type", "tool")
    assert "broken" not in r.stdout.split()


def test_flows_show_start_stop(stack):
    r = stack.cli("tg-show-flows")
    assert r.returncode == 0 and "default" in r.stdout and "agent" in r.stdout
    r = stack.cli("tg-start-flow", "-n", "agent", "-i", "second", "-d", "Second flow")
    assert r.returncode == 0, r.stderr
    assert "second" in stack.cli("tg-show-flows").stdout
    r = stack.cli("tg-start-flow", "-n", "agent", "-i", "second", "-d", "again")
    assert r.returncode != 0 and "Flow already exists" in r.stderr
    assert stack.cli("tg-stop-flow", "-i", "second").returncode == 0
    assert "second" not in stack.cli("tg-show-flows").stdout


def test_failures_exit_nonzero_with_one_line(stack):
    r = stack.cli("tg-get-config-item", "--type", "widget", "--key", "nope")
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1
    r = stack.cli("tg-show-config", env={"TRUSTGRAPH_URL": "http://127.0.0.1:9/"})
    assert r.returncode != 0
    assert "http://127.0.0.1:9/" in r.stderr and "make run" in r.stderr


def test_restart_keeps_config_and_sigterm_leaves_no_process(stack_factory):
    s = stack_factory(*LIGHT)
    assert s.cli("tg-put-config-item", "widget/keep", input='"kept"').returncode == 0
    assert status_line(s.output(), "bootstrap", "loaded")
    kids = descendants(s.proc.pid)
    assert len(kids) >= 4  # broker, config-svc, api-gateway, joke-service
    assert s.stop() == 0
    wait_for("every child of tg-launch gone", lambda: not [p for p in kids if alive(p)], 30,
             detail=lambda: f"left: {[p for p in kids if alive(p)]}")
    # A stop removes its run files (and only those).
    left = sorted(p.relative_to(s.data_dir).as_posix() for p in s.data_dir.rglob("*")
                  if p.name in ("pulsar-url", "tg-launch.lock") or p.suffix == ".ready")
    assert left == []
    assert (s.data_dir / "config.db").exists()
    # Same data dir again: the config is still there and bootstrap is skipped.
    s.start()
    r = s.cli("tg-get-config-item", "widget/keep")
    assert r.stdout.strip() == '"kept"'
    assert not status_line(s.output(), "bootstrap", "loaded")
    assert status_line(s.output(), "bootstrap", "skipped: the config store already holds config")


def test_on_the_2_11_wire_a_new_data_dir_is_bootstrapped_once(stack_factory, monkeypatch):
    # config-svc --wire 2.11 lists the default workspace in its store before tg-launch looks: that
    # is no config of anyone's, and the bootstrap was skipped as if it were.
    monkeypatch.setenv("TRUSTGRAPH_WIRE", "2.11")
    s = stack_factory(*LIGHT, "--no-api-gateway")   # api-gateway speaks 2.1 only
    assert status_line(s.output(), "bootstrap", "loaded"), s.output()
    assert s.stop() == 0
    s.start()
    assert status_line(s.output(), "bootstrap", "skipped: the config store already holds config"), s.output()
    assert s.stop() == 0


def test_a_second_launch_on_the_same_data_dir_is_refused_untouched(stack):
    url_file = stack.data_dir / "pulsar-url"
    before = url_file.read_text()
    logs = {p.name: p.stat().st_size for p in (stack.data_dir / "logs").iterdir()}
    r = subprocess.run([str(BIN / "tg-launch"), "--data-dir", str(stack.data_dir)],
                       capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.splitlines() == [
        f"tg-launch: error: a stack is already running on {stack.data_dir} (pid {stack.proc.pid}, "
        f"gateway http://localhost:{stack.gateway_port}/); stop it first (Ctrl-C in its terminal, "
        f"or kill {stack.proc.pid}), or give another --data-dir"]
    assert url_file.read_text() == before
    assert {p.name: p.stat().st_size for p in (stack.data_dir / "logs").iterdir()} == logs
    assert stack.cli("tg-show-config").returncode == 0


def test_a_model_file_that_is_not_there_or_not_gguf_stops_the_launch_before_anything_starts(tmp_path):
    not_gguf = tmp_path / "notes.gguf"
    not_gguf.write_text("not a model")
    for path, why in ((tmp_path / "missing.gguf", "does not exist; give --model the path of a GGUF file"),
                      (not_gguf, "is not a GGUF file (llama.cpp runs GGUF models: download the model in GGUF "
                                 "form, or convert it with llama.cpp's convert_hf_to_gguf.py)")):
        data = tmp_path / "data"
        r = subprocess.run([str(BIN / "tg-launch"), "--data-dir", str(data), "--model", str(path)],
                           capture_output=True, text=True, timeout=60)
        assert (r.returncode, r.stdout) == (1, "")
        assert r.stderr.splitlines() == [f"tg-launch: error: model file {path} {why}"]
        assert not data.exists()   # nothing was started, not even the data directory


def test_deleting_a_missing_item_fails_and_says_so(stack):
    r = stack.cli("tg-delete-config-item", "widget/never-there")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.splitlines() == [
        "tg-delete-config-item: error: no config item widget/never-there; nothing was deleted "
        "(tg-list-config-items --type widget lists its keys)"]
    assert stack.cli("tg-put-config-item", "widget/gone", input='"x"').returncode == 0
    r = stack.cli("tg-delete-config-item", "widget/gone")
    assert (r.returncode, r.stdout.strip()) == (0, "Configuration item deleted: widget/gone")


def listening() -> dict[int, set[str]]:
    """Every listening TCP port of this machine and the addresses it listens on (/proc/net)."""
    out: dict[int, set[str]] = {}
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[3] != "0A":  # LISTEN
                continue
            address, port = fields[1].split(":")
            if v6:
                shown = "::1" if address == "0" * 31 + "1" else ("::" if set(address) == {"0"} else address)
            else:
                shown = ".".join(str(int(address[i:i + 2], 16)) for i in (6, 4, 2, 0))
            out.setdefault(int(port, 16), set()).add(shown)
    return out


def test_everything_listens_on_loopback_each_metrics_server_on_its_own_port(stack_factory):
    s = stack_factory(*LIGHT, "--metrics")
    ports = [int(m) for m in re.findall(r"\(metrics http://127\.0\.0\.1:(\d+)/metrics\)", s.output())]
    # One each: config-svc, api-gateway and every registered tool service (the joke service's too).
    assert len(ports) == len(launched(*LIGHT)) and len(set(ports)) == len(ports), s.output()
    broker = urllib.parse.urlsplit(s.broker_url()).port
    lock = json.loads((s.data_dir / "tg-launch.lock").read_text())
    assert lock["pid"] == s.proc.pid
    table = listening()
    broker_metrics = re.findall(r'addr = "127\.0\.0\.1:(\d+)"',
                                (s.data_dir / "broker" / "pulsar-lite.toml").read_text())
    for port in (s.gateway_port, broker, int(broker_metrics[0]), *ports):
        assert table.get(port) == {"127.0.0.1"}, (port, table.get(port))
    for port in ports:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            assert b"processor_info" in r.read()


def interface_rows(out: str, name: str) -> list[str]:
    """The value lines of one interface's rows in tg-show-flows' table."""
    rows, inside = [], False
    for line in out.splitlines():
        if line.startswith("|"):
            label, value = (part.strip() for part in line.strip("|").split("|", 1))
            inside = label == name if label else inside
            if inside:
                rows.append(value)
        else:
            inside = False
    return rows


def test_show_flows_marks_interfaces_no_processor_serves(stack):
    """This stack runs no agent: its interface is marked until something consumes it."""
    mark = "(not served: no running processor consumes this)"
    out = stack.cli("tg-show-flows").stdout
    assert mark in interface_rows(out, "agent") and mark in interface_rows(out, "embeddings"), out

    async def serve_agent_meanwhile() -> str:
        ps = PubSub(stack.broker_url(), processor="show-flows-test")
        try:
            await ps.consumer("non-persistent://tg/request/agent:default", "show-flows-test",
                              AgentRequest, handler=lambda msg: asyncio.sleep(0))

            async def served() -> str | None:
                out = await asyncio.to_thread(lambda: stack.cli("tg-show-flows").stdout)
                return out if mark not in interface_rows(out, "agent") else None

            # The broker counts consumers every few seconds.
            return await wait_for_async("the agent interface shown as served", served, 60, every=0.5)
        finally:
            await ps.close()

    out = asyncio.run(serve_agent_meanwhile())
    assert mark not in interface_rows(out, "agent"), out
    assert mark in interface_rows(out, "embeddings"), out


def test_invoke_tool_service_by_tool_and_by_service(stack):
    r = stack.cli("tg-invoke-tool-service", "-n", "tell-joke", "-a", "topic=cats", "-U", "alice")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Hey alice! Here's a pun for you:\n\n")
    r = stack.cli("tg-invoke-tool-service", "-n", "tell-dad-joke", "--arguments", '{"topic": "dogs"}',
                  "--no-streaming")
    assert r.returncode == 0 and r.stdout.startswith("Hey trustgraph! Here's a dad-joke for you:")
    r = stack.cli("tg-invoke-tool-service", "-s", "joke-service", "--config", '{"style": "one-liner"}',
                  "-a", "topic=coffee")
    assert r.returncode == 0 and "one-liner" in r.stdout


def test_invoke_tool_service_errors_exit_nonzero(stack):
    r = stack.cli("tg-invoke-tool-service", "-n", "no-such-tool")
    assert r.returncode != 0 and "no-such-tool" in r.stderr
    r = stack.cli("tg-invoke-tool-service", "-s", "joke-service", "--config", '{"style": "sonnet"}')
    assert r.returncode != 0
    assert "tool-service-error" in r.stderr and "sonnet" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("url, says", [
    ("pulsar://127.0.0.1:{port}", "cannot reach the broker at pulsar://127.0.0.1:{port}: connection refused"),
    ("127.0.0.1:{port}", "malformed broker URL '127.0.0.1:{port}': it needs a scheme"),
])
def test_an_external_broker_that_is_not_there_is_one_line(tmp_path, url, says):
    port = free_port()
    # A gateway port of its own: 8088 may be a running stack's, which tg-launch would name first.
    r = subprocess.run([str(BIN / "tg-launch"), "--data-dir", str(tmp_path / "data"), "--gateway-port",
                        str(free_port()), "-p", url.format(port=port)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tg-launch: error: " + says.format(port=port)), r.stderr
    assert not (tmp_path / "data" / "pulsar-url").exists()
