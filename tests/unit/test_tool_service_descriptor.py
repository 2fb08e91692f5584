"""The tool-service descriptor model, and a service that refuses to start on a broken declaration.

One model (``trustgraph.base.descriptors``) for the service and its readers: what stops a service
at start is, in the same words, what every reader of its announcement would leave out."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap

import pytest
from trustgraph.base import DynamicToolService
from trustgraph.base.descriptors.checks import check_declaration
from trustgraph.base.descriptors.errors import InvalidDescriptor
from trustgraph.base.descriptors.models import ToolServiceDescriptor, queues_of
from trustgraph.base.processors.async_processor import StartRefused

REQ, RESP = "non-persistent://tg/request/wx", "non-persistent://tg/response/wx"
GOOD = {"name": "weather", "description": "Current weather in a city", "units": "metric",
        "arguments": [{"name": "city", "type": "string", "description": "The city"}],
        "examples": ["Do I need an umbrella in Oslo?"]}


class Weather(DynamicToolService):
    default_topic = "wx"
    config_params = [{"name": "units", "required": True}]
    tools = [GOOD]

    async def invoke(self, user, config, arguments):
        return "sunny"


def declare_tools(service: str, tools: list, params: list | tuple = ()) -> tuple:
    """``tools`` declared by service ``service`` with these config params, checked as a service checks its own."""
    declared = check_declaration(ToolServiceDescriptor.from_wire(
        {"id": service, "request-queue": REQ, "response-queue": RESP, "config-params": list(params)}), tools)
    if declared.errors:
        raise InvalidDescriptor(declared.errors[0])
    return declared.tools


def test_a_descriptor_round_trips_and_keeps_upstreams_shape() -> None:
    d = ToolServiceDescriptor.from_wire({"id": "wx", "request-queue": REQ, "response-queue": RESP,
                                         "config-params": [{"name": "units", "required": True}, "lang"],
                                         "timeout": 5})
    wire = d.to_wire()
    assert wire == {"id": "wx", "request-queue": REQ, "response-queue": RESP,
                    "config-params": [{"name": "units", "required": True}, "lang"], "idempotent": False,
                    "timeout": 5.0}
    assert ToolServiceDescriptor.from_wire(wire) == d
    # Upstream's form (q0 topics, no id: the key names it) reads too.
    up = ToolServiceDescriptor.from_wire({"request-queue": "q0/tg/request/wx", "response-queue": "q0/tg/response/wx"},
                                         "wx")
    assert (up.id, up.queues) == ("wx", (REQ, RESP))


@pytest.mark.parametrize(("data", "message"), [
    ({"id": "wx", "response-queue": RESP}, "tool-service/wx: field 'request-queue': required field is missing"),
    ({"id": "wx", "request-queue": "wx", "response-queue": RESP}, "tool-service/wx: field 'request-queue': "),
    ({"id": "wx", "request-queue": REQ, "response-queue": RESP, "config-params": "units"},
     "tool-service/wx: field 'config-params': must be a list, got a string"),
    ({"id": "wx", "request-queue": REQ, "response-queue": RESP, "timeout": 0},
     "tool-service/wx: field 'timeout': must be a positive number of seconds"),
])
def test_a_broken_descriptor_names_its_field(data: dict, message: str) -> None:
    with pytest.raises(InvalidDescriptor) as info:
        ToolServiceDescriptor.from_wire(data, "wx")
    assert str(info.value).startswith(message)


def test_queues_are_read_even_when_another_field_is_wrong() -> None:
    assert queues_of({"request-queue": REQ, "response-queue": RESP, "timeout": "soon"}) == (REQ, RESP)
    assert queues_of(f'{{"request-queue": "{REQ}", "response-queue": "{RESP}"}}') == (REQ, RESP)
    assert queues_of({"request-queue": REQ}) is None
    assert queues_of("not json") is None


BROKEN = [
    ({"description": "no name"}, "tool/wx/#1: field 'name': required field is missing"),
    ({"name": "weather", "units": "metric"}, "tool/wx/weather: field 'description': required field is missing"),
    ({**GOOD, "units": None}, "tool/wx/weather: field 'units': required config param 'units' of service 'wx' is "
                              "missing"),
    ({**GOOD, "arguments": [{"type": "string"}]}, "tool/wx/weather: field 'arguments[0].name': required field is missing"),
    ({**GOOD, "arguments": {"city": "string"}}, "tool/wx/weather: field 'arguments': must be a list"),
    ({**GOOD, "examples": ["?" * 300]}, "tool/wx/weather: field 'examples[0]': is 300 characters long, over "
                                        "the limit of 200"),
    ({**GOOD, "examples": [{"arguments": "Oslo"}]}, "tool/wx/weather: field 'examples[0]': an example call needs "
                                                    "'arguments', an object of argument values, got a string"),
]


@pytest.mark.parametrize(("tool", "message"), BROKEN)
def test_a_broken_declared_tool_names_the_tool_and_the_field(tool: dict, message: str) -> None:
    with pytest.raises(InvalidDescriptor) as info:
        declare_tools("wx", [tool], [{"name": "units", "required": True}])
    assert str(info.value).startswith(message)


@pytest.mark.parametrize(("tool", "message"), BROKEN)
def test_the_catalog_refuses_what_stops_the_service(tool: dict, message: str) -> None:
    # What stops a service at start is what readers of its announcement drop, in the same words.
    from types import SimpleNamespace

    from trustgraph.catalog import build_catalog

    svc = type("Svc", (Weather,), {"tools": [tool]})(id="wx", metrics=False)
    assert svc.declared_problems()[0].startswith(message)
    announced = {"wx": SimpleNamespace(descriptor=json.dumps(svc.descriptor()), tools=json.dumps(
        {"t": {**tool, "type": "tool-service", "service": "wx"}}))}
    assert [str(e) for e in build_catalog({}, announced).errors] == [
        p.replace("tool/wx/weather", "tool/wx/t").replace("tool/wx/#1", "tool/wx/t") for p in svc.declared_problems()]


def test_duplicate_tool_names_are_refused() -> None:
    with pytest.raises(InvalidDescriptor, match="tool/wx/weather: field 'name': another declared"):
        declare_tools("wx", [GOOD, GOOD])


def test_a_good_declaration_is_announced_as_written() -> None:
    svc = Weather(id="wx", metrics=False)
    assert svc.declared_problems() == []
    assert svc.tool_descriptors() == {"weather": {**GOOD, "type": "tool-service", "service": "wx"}}
    assert [t.name for t in svc.declared_tools()] == ["weather"]
    assert svc.descriptor()["config-params"] == [{"name": "units", "required": True}]


def test_a_misspelled_key_in_a_declared_tool_is_a_warning_the_service_logs(caplog) -> None:
    typo = {k: v for k, v in GOOD.items() if k != "arguments"} | {"argument": GOOD["arguments"]}
    svc = type("Typo", (Weather,), {"tools": [typo]})(id="wx", metrics=False)
    said = ("tool/wx/weather: field 'argument': unknown key, not read: did you mean 'arguments'? it is not a "
            "key of a 'tool-service' tool, nor a config param of service 'wx' (units)")
    assert svc.declared_problems() == [said]
    with caplog.at_level("WARNING"):
        asyncio.run(svc._check_declarations())
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [("WARNING", f"Declared {said}")]


def test_what_an_author_most_likely_did_not_mean_is_a_warning() -> None:
    # A tool service's author found each of these passed --check-tools without a word.
    slips = {**GOOD, "arguments": [
        {"name": "city"},                                                         # no type, no description
        {"name": "days", "type": "integer", "description": "Days ahead", "required": "no", "free-text": True},
        {"name": "hours", "type": "array", "description": "Hours of the day"},     # items unsaid
        {"name": "note", "type": "string", "description": "A note", "required": False, "free-text": True}]}
    svc = type("Slips", (Weather,), {"tools": [slips]})(id="wx", metrics=False)
    assert svc.declaration().errors == ()
    assert svc.declared_problems() == [
        "tool/wx/weather: field 'arguments[0].type': no type: read as 'string' (say its type)",
        "tool/wx/weather: field 'arguments[0].description': no description: the agent chooses and fills an "
        "argument by its description",
        "tool/wx/weather: field 'arguments[1].required': 'no' is read as false: write true or false (unquoted)",
        "tool/wx/weather: field 'arguments[1].free-text': only a string is written freely; a value of type "
        "'integer' is taken as said",
        "tool/wx/weather: field 'arguments[2].items': a list with no 'items': neither the agent nor the check "
        "knows what its items are"]


@pytest.mark.parametrize("invoke, starts", [
    ("async def invoke(self, arguments): return 'x'", False),
    ("async def invoke(self, config, arguments, *, units): return 'x'", False),
    ("async def invoke(self, config, arguments): return 'x'", True),
    ("async def invoke(self, user, config, arguments): return 'x'", True),
    ("async def invoke(self, *args): return 'x'", True),
])
def test_an_invoke_no_call_fits_refuses_to_start(invoke: str, starts: bool) -> None:
    scope: dict = {}
    exec(invoke, scope)   # noqa: S102 (a test's own method definitions)
    svc = type("Shaped", (Weather,), {"invoke": scope["invoke"]})(id="wx", metrics=False)
    if starts:
        assert svc._unservable() == []
        return
    with pytest.raises(StartRefused, match=r"^Shaped\.invoke\(.*\): it must take \(config, arguments\), or "
                                           r"\(user, config, arguments\)"):
        asyncio.run(svc.start())


def test_a_service_with_a_broken_declaration_refuses_to_start() -> None:
    svc = type("Bad", (Weather,), {"tools": [{"name": "weather", "units": "metric"}]})(id="wx", metrics=False)
    with pytest.raises(StartRefused) as info:
        asyncio.run(svc.start())
    assert str(info.value) == ("tool/wx/weather: field 'description': required field is missing; fix the "
                               "service's declaration")
    # The catalog, which readers use, says the same of it.
    assert svc.declared_problems() == ["tool/wx/weather: field 'description': required field is missing"]


def test_launch_prints_the_refusal_as_one_line(tmp_path) -> None:
    # The real command line: exit 2 and one line naming the tool and the field, no traceback.
    script = tmp_path / "bad_service.py"
    script.write_text(textwrap.dedent("""
        from trustgraph.base import DynamicToolService

        class Bad(DynamicToolService):
            tools = [{"name": "weather", "description": "Weather", "arguments": [{"type": "string"}]}]

        Bad.launch("bad-service")
    """))
    r = subprocess.run([sys.executable, str(script), "-p", "pulsar://127.0.0.1:9", "--no-metrics"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("bad-service: error:")]
    assert lines == ["bad-service: error: tool/bad-service/weather: field 'arguments[0].name': required field "
                     "is missing; fix the service's declaration"]
    assert "Traceback" not in r.stderr


def test_2_11_queue_names_are_read_as_the_topics_2_11_uses() -> None:
    # A configured descriptor written for a 2.11 deployment keys the same replicas as the URL form.
    assert queues_of({"request-queue": "request:tg:wx", "response-queue": "response:tg:wx"}) == (REQ, RESP)
    assert queues_of({"request-queue": "rpc:tg:wx", "response-queue": "response:tg:wx"}) is None
    d = ToolServiceDescriptor.from_wire({"id": "wx", "request-queue": "request:tg:wx",
                                         "response-queue": "response:tg:wx"})
    assert d.queues == (REQ, RESP)
