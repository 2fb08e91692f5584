"""tg-launch at run time, where no child is needed to tell: a refused start, the status lines."""

from __future__ import annotations

import asyncio
import json
import re
import socket

from support import NO_TOOL_SERVICES
from trustgraph.base.launching.listening import port_taken
from trustgraph.launch.launcher import Launcher, parse_args
from trustgraph.launch.supervisor import say


def listening(host: str) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((host, 0))
    s.listen()
    return s


def test_a_port_is_taken_by_a_listener_on_any_of_its_addresses():
    with listening("0.0.0.0") as s:
        port = s.getsockname()[1]
        # A connection to 127.0.0.1 would find it too; a listener on 127.0.0.2 would not be
        # found that way, and still makes a bind on 0.0.0.0 fail.
        assert port_taken("127.0.0.1", port) and port_taken("0.0.0.0", port)
    with listening("127.0.0.2") as s:
        assert port_taken("0.0.0.0", s.getsockname()[1])
    assert not port_taken("127.0.0.1", port)


def test_a_taken_gateway_port_stops_the_launch_with_the_flag_and_a_free_port(tmp_path, capsys):
    data = tmp_path / "data"
    with listening("127.0.0.1") as s:
        port = s.getsockname()[1]
        launcher = Launcher(parse_args(["--data-dir", str(data), "--gateway-port", str(port)]))
        assert asyncio.run(launcher.run()) == 1
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    head = f"tg-launch: error: the gateway's port {port} is already in use (by another stack or program); "
    assert line.startswith(head), line
    free = int(re.search(r'ARGS="--gateway-port (\d+)"', line)[1])
    assert free > port and not port_taken("127.0.0.1", free)
    assert line[len(head):] == (f'choose another with --gateway-port, e.g. make run ARGS="--gateway-port {free}" '
                                f"(and TRUSTGRAPH_URL=http://localhost:{free}/ for the tg-* commands), "
                                "or stop what holds it")
    assert not (data / "logs").exists()   # nothing was started
    # Without the gateway, its port is nobody's business.
    with listening("127.0.0.1") as s:
        launcher = Launcher(parse_args(["--data-dir", str(data), "--gateway-port", str(s.getsockname()[1]),
                                        "--no-api-gateway"]))
        assert launcher.gateway_port_problem() is None


def test_status_lines_keep_their_column_past_fourteen_characters(tmp_path, capsys):
    extra = tmp_path / "components.json"
    extra.write_text(json.dumps([{"name": "weather-service", "command": "weather.py"}]))
    plain = Launcher(parse_args(["--data-dir", str(tmp_path)]))
    # The built-in table's 14 (as the README shows it), or the longest registered service's name.
    assert plain.status_width() == max(14, *(len(c.name) for c in plain.selected()))
    # Without the registered tool services, whose names are whatever a contributor chose (a
    # service made with a longer name than these widens the column further: issue 35), the
    # longest names shown are this test's own.
    launcher = Launcher(parse_args(["--data-dir", str(tmp_path), "--extra-components", str(extra),
                                    "--announced-tools", "all", *NO_TOOL_SERVICES]))
    width = launcher.status_width()
    for name in ("broker", "weather-service", "announced tools"):
        say(name, "there", width)
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["  broker          there", "  weather-service there", "  announced tools there"]
