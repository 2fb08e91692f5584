"""A tool service's ``--check-tools``: its declared tools checked as it checks them before it serves,
from the command line, with no broker (a service author's first run)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SERVICE = textwrap.dedent('''
    from trustgraph.base import DynamicToolService

    class Processor(DynamicToolService):
        default_topic = "checked"
        tools = TOOLS

        async def invoke(self, user, config, arguments):
            return "ok"

    if __name__ == "__main__":
        Processor.launch("checked-service", "A service to check")
''')


def check(tmp_path: Path, tools: str) -> subprocess.CompletedProcess:
    path = tmp_path / "service.py"
    path.write_text(SERVICE.replace("TOOLS", tools))
    # An unreachable broker: the check connects to nothing, so it never waits on one.
    return subprocess.run([sys.executable, str(path), "--check-tools", "-p", "pulsar://127.0.0.1:9"],
                          capture_output=True, text=True, timeout=120)


def test_a_sound_declaration_passes_and_says_how_many_tools(tmp_path):
    r = check(tmp_path, '[{"name": "greet", "description": "Greet someone", '
                        '"arguments": [{"name": "who", "type": "string", "description": "Whom"}]}]')
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.strip() == "checked-service: 1 declared tool(s) would be announced"


def test_an_error_fails_in_one_line_naming_the_tool_and_field_and_warnings_are_said(tmp_path):
    r = check(tmp_path, '[{"name": "greet", "arguments": []}]')
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == ("checked-service: error: tool/checked-service/greet: field 'description': "
                                "required field is missing")
    r = check(tmp_path, '[{"name": "greet", "description": "Greet someone", "argument": []}]')
    assert r.returncode == 0
    assert "checked-service: warning: tool/checked-service/greet: field 'argument': unknown key" in r.stderr
    assert "(1 warning(s))" in r.stdout


def test_a_class_that_names_no_topic_would_not_start_and_says_so(tmp_path):
    # The check had said "would be announced", exit 0, of a class the real start refuses.
    path = tmp_path / "service.py"
    path.write_text(SERVICE.replace('    default_topic = "checked"\n', "").replace(
        "TOOLS", '[{"name": "greet", "description": "Greet someone"}]'))
    r = subprocess.run([sys.executable, str(path), "--check-tools"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == "", r
    assert r.stderr.startswith("checked-service: error: Processor names no topic to serve"), r.stderr
    # Given one with -t, it would start.
    r = subprocess.run([sys.executable, str(path), "--check-tools", "-t", "greetings"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "1 declared tool(s) would be announced" in r.stdout, r


def test_help_names_the_flag(tmp_path):
    path = tmp_path / "service.py"
    path.write_text(SERVICE.replace("TOOLS", "[]"))
    r = subprocess.run([sys.executable, str(path), "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "--check-tools" in r.stdout
