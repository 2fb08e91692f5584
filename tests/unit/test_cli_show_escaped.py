"""tg-show-tools and tg-show-tool-services show announced text escaped.

A description, a name or a service id is written by whoever runs a service.
Printed raw, an escape sequence in it cleared the screen or recoloured the
terminal, and a newline started a row of its own inside the table.
"""

from __future__ import annotations

from trustgraph.cli.show_tool_services import service_rows
from trustgraph.cli.show_tools import tool_rows
from trustgraph.cli.table import render_table

HOSTILE = "Looks up\x1b[2J\x1b[31m things\n| forged | row |\r\x07\x9b1m\u202eevil"


def _lines(table: str) -> list[str]:
    return table.split("\n")


def test_a_tool_table_has_no_control_character_and_one_line_per_value():
    table = render_table(tool_rows({"key": "k", "name": "n\x1b[1m", "description": HOSTILE, "type": "tool-service",
                                    "arguments": [{"name": "a\nb", "type": "string", "description": HOSTILE}],
                                    "errors": ["tool/k: bad\nforged line"]}))
    assert not any(c in table for c in "\x1b\r\x07\x9b\u202e")
    description = [line for line in _lines(table) if line.startswith("| description")]
    assert description == [line for line in _lines(table) if "forged | row" in line and "description" in line]
    assert "Looks up\\x1b[2J\\x1b[31m things\\n| forged | row |\\r\\x07\\x9b1m\\u202eevil" in description[0]
    # The argument's own two lines (name and type, then its description) stay two.
    arg = _lines(table)[[i for i, line in enumerate(_lines(table)) if line.startswith("| arg 0")][0]:][:2]
    assert "a\\nb: string" in arg[0] and "Looks up\\x1b" in arg[1]
    assert all(line[0] in "+|" for line in _lines(table))


def test_a_service_table_shows_announced_values_escaped_and_survives_odd_numbers():
    table = render_table(service_rows({"id": "svc\x1b]0;pwned\x07", "source": "announced", "live": True,
                                       "replicas": ["r1\nr2"], "last-heartbeat-seconds-ago": "soon\x1b[2J",
                                       "timeout": "never"}))
    assert not any(c in table for c in "\x1b\x07")
    assert "svc\\x1b]0;pwned\\x07" in table and "r1\\nr2" in table
    assert "soon\\x1b[2J ago" in table and "| timeout        | never" in table


def test_render_table_still_importable_from_show_flows() -> None:
    """Upstream-style code imports the table from tg-show-flows' module; it is the shared one."""
    from trustgraph.cli import show_flows, table

    assert show_flows.render_table is table.render_table
