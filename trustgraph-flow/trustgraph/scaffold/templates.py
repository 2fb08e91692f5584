"""The files ``tg-new-tool-service`` writes, as ``string.Template`` texts.

``$``-placeholders (``${script}`` the console script and service id,
``${package}`` the Python package, ``${topic}`` its topic, ``${tool}`` its
tool's name, ``${description}`` its description as a Python literal),
because the code they fill is full of the braces ``str.format`` would take
for its own.  The service is the joke service's kind
(``DynamicToolService``) with what a contributor copies from: a declared tool
with typed arguments and example calls, one config param, an error in the
service's own words.
"""

from __future__ import annotations

from string import Template

PACKAGE_INIT = Template('''\
"""${script}: a tool service (command ``${script}``)."""

from .service import Processor, run

__all__ = ["Processor", "run"]
''')

SERVICE = Template('''\
"""${script}: a tool service, made by tg-new-tool-service; now make it yours.

It offers one tool, ``${tool}``, described as you described it to
tg-new-tool-service (the agent chooses its tools by their descriptions), whose
work is for now a placeholder that greets a person: replace its arguments, its
examples and its work in ``invoke`` with what your service does, keeping the
description true to it.

* ``tools`` is what the agent sees of each tool: its name, its description,
  its typed ``arguments`` (``string``, ``integer``, ``number``, ``boolean``,
  ``array``, ``object``; ``required`` (default true) and ``enum``), and its
  ``examples``: questions a user might ask, or example calls (the arguments
  for a question), which the test every registered tool service gets sends
  (tests/unit/test_registered_tool_services.py);
* ``config_params`` are what each tool sets for the service (here
  ``greeting``), so one service can back several tools;
* ``invoke`` does the work: ``config`` holds the calling tool's values of the
  config params, ``arguments`` what the caller filled in (the agent checks
  them against the tool's arguments first; a direct call is not checked, so
  the service checks what it relies on).  It returns the observation (a
  string, or any JSON-able value), or yields chunks to stream them;
* ``ToolError("...")`` answers the caller with an error in your words; any
  other exception becomes an error reply too, and the service keeps serving.

It announces itself while it runs, so the agent can use its tool with no
config step.  ``make run`` starts it (it is registered in
trustgraph-flow/pyproject.toml); beside a running stack, ``.venv/bin/${script}``.
"""

from __future__ import annotations

from typing import Any

from trustgraph.base import DynamicToolService, ToolError

default_ident = "${script}"


class Processor(DynamicToolService):
    # Requests on non-persistent://tg/request/${topic}, replies on .../response/${topic}.
    default_topic = "${topic}"
    config_params = [{"name": "greeting", "required": False}]
    # Calling it twice does no harm, so a caller may retry a call that timed out.
    idempotent = True
    tools = [{
        "name": "${tool}",
        "description": ${description},
        "greeting": "Hello",
        "arguments": [
            {"name": "person", "type": "string", "description": "Who to greet"},
            {"name": "times", "type": "integer", "description": "How many times to greet them",
             "required": False, "enum": [1, 2, 3]},
        ],
        # Example calls of the placeholder; give each the question it answers too, e.g.
        # {"question": "What is 3 miles in km?", "arguments": {...}}: the agent ranks by them.
        "examples": [
            {"arguments": {"person": "Ada"}},
            {"arguments": {"person": "Grace", "times": 2}},
        ],
    }]

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> str:
        person = str(arguments.get("person") or "").strip()
        if not person:
            raise ToolError("say who to greet: the argument 'person' is missing or empty")
        times = arguments.get("times", 1)
        if isinstance(times, bool) or times not in (1, 2, 3):
            raise ToolError(f"'times' must be 1, 2 or 3, not {times!r}")
        greeting = str(config.get("greeting") or "Hello")
        return " ".join([f"{greeting}, {person}!"] * times)


def run() -> None:
    Processor.launch(default_ident, __doc__)
''')

TEST = Template('''\
"""${script} on the in-memory transport: what its tool answers, and its errors.

The rest (its declared tools, its announcement through the catalog, its
example calls) is checked as for every registered tool service, in
tests/unit/test_registered_tool_services.py.
"""

from __future__ import annotations

import json
from typing import Any

from trustgraph.base.testing import worker
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse
from trustgraph.tool_service.${package} import Processor


async def call(config: dict[str, Any], arguments: dict[str, Any]) -> ToolServiceResponse:
    async with worker(Processor) as w:
        request = ToolServiceRequest(user="ada", config=json.dumps(config), arguments=json.dumps(arguments))
        (reply,) = await w.call(w.processor.request_topic, w.processor.response_topic, request,
                                ToolServiceResponse, until=lambda r: r.end_of_stream)
    return reply


async def test_it_greets_with_the_tools_greeting() -> None:
    reply = await call({"greeting": "Hi"}, {"person": "Grace", "times": 2})
    assert (reply.error, reply.response) == (None, "Hi, Grace! Hi, Grace!")


async def test_a_call_without_a_person_is_told_what_to_give() -> None:
    reply = await call({}, {"person": " "})
    assert reply.error is not None and reply.error.type == "tool-service-error"
    assert "'person'" in reply.error.message
''')
