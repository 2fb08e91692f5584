"""Our trustgraph-base offers upstream 2.1.4's public Python API: its code imports ours unchanged.

The expectations were recorded from upstream's installed packages (``tests/unit/data/
upstream-2.1.4-*.json``): every schema record with its fields, defaults and field order; every
class and function of ``trustgraph.api``, ``trustgraph.clients``, ``trustgraph.knowledge``,
``trustgraph.log_level`` and ``trustgraph.exceptions`` with its methods and parameter names; and
what ``trustgraph.knowledge`` computes (content ids, emitted triples), which must match byte for
byte because ids and metadata end up in stores that both packages read.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


def load(name: str):
    return json.loads((DATA / name).read_text())


SCHEMA = load("upstream-2.1.4-schema.json")
NAMES = load("upstream-2.1.4-api-names.json")


def _default(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        return repr(f.default)
    if f.default_factory is not dataclasses.MISSING:
        return "factory:" + repr(f.default_factory())
    return "MISSING"


#: The fields we add to upstream's records (docs/compatibility.md): how an agent dialog ended, and
#: the call a dialog paused before for approval.
EXTENSIONS = {"AgentResponse": ["outcome", "candidates", "approval"]}


@pytest.mark.parametrize("name", sorted(SCHEMA))
def test_every_upstream_schema_name_is_ours(name: str) -> None:
    import trustgraph.schema as schema

    ours = getattr(schema, name, None)
    assert ours is not None, f"trustgraph.schema has no {name}"
    expected = SCHEMA[name]
    if isinstance(expected, str):  # a topic
        assert ours == expected
        return
    fields = {f.name: _default(f) for f in dataclasses.fields(ours)}
    # Upstream's fields, in upstream's order and with its defaults; then only the extensions
    # listed here, each with a default (so upstream's messages still decode, and upstream's
    # decoders ignore the extra keys).
    assert list(fields)[:len(expected)] == list(expected), f"{name}: field names or order differ"
    assert {k: fields[k] for k in expected} == expected
    extra = list(fields)[len(expected):]
    assert extra == EXTENSIONS.get(name, []), f"{name}: fields beyond upstream's"
    assert all(fields[k] != "MISSING" for k in extra)


@pytest.mark.parametrize("qualified", sorted(NAMES))
def test_every_upstream_api_name_is_ours(qualified: str) -> None:
    module_name, name = qualified.split(":")
    obj = getattr(importlib.import_module(module_name), name, None)
    assert obj is not None, f"{module_name} has no {name}"
    expected = NAMES[qualified]
    if isinstance(expected, list):  # a function: upstream's parameters, by name
        params = list(inspect.signature(obj).parameters)
        assert params[:len(expected)] == expected
        return
    for method, params in expected.items():
        ours = getattr(obj, method, None)
        assert ours is not None, f"{qualified}.{method} is missing"
        if params and method != "__init__" or not dataclasses.is_dataclass(obj):
            sig = inspect.signature(ours).parameters
            if any(p.kind is p.VAR_KEYWORD for p in sig.values()):
                continue  # takes any keyword
            missing = [p for p in params if p not in sig]
            assert not missing, f"{qualified}.{method} lacks parameters {missing}"


#: Module paths under ``trustgraph.base`` that upstream 2.1.4's own code imports (found by grepping
#: its installed packages), with the names it takes from each that we offer: code written for
#: upstream keeps importing them from there, wherever our modules live.
UPSTREAM_BASE_IMPORTS = {
    # tg-dump-queues, upstream's gateway and its trustgraph.clients base
    "trustgraph.base.pubsub": ["get_pubsub"],
    "trustgraph.base.subscriber": ["Subscriber"],  # tg-dump-queues
    "trustgraph.base.tool_service_client": ["ToolServiceClient"],  # its agent's tools
    # the module of upstream's service base class (upstream's joke service takes it from the package)
    "trustgraph.base.dynamic_tool_service": ["DynamicToolService"],
    "trustgraph.base": ["AsyncProcessor", "Consumer", "ConsumerSpec", "DynamicToolService", "FlowProcessor",
                        "ParameterSpec", "Producer", "ProducerSpec", "RequestResponseSpec"],
}


@pytest.mark.parametrize("module_name", sorted(UPSTREAM_BASE_IMPORTS))
def test_upstream_base_import_paths_still_work(module_name: str) -> None:
    module = importlib.import_module(module_name)
    missing = [n for n in UPSTREAM_BASE_IMPORTS[module_name] if getattr(module, n, None) is None]
    assert not missing, f"{module_name} lacks {missing}"


def test_content_ids_are_upstreams() -> None:
    from trustgraph.knowledge import PREF_DOC, hash, to_uri

    assert hash("hello") == "2f4b5ba0-2e32-cbe9-1115-1a4570369892"
    assert hash(b"\x00\x01") == "b1f71e2e-c4be-11f1-e5d4-c4a877b965cd"
    assert to_uri(PREF_DOC, "x") == "https://trustgraph.ai/doc/x"


def test_entities_emit_upstreams_triples() -> None:
    from trustgraph.knowledge import DigitalDocument, Organization, PublicationEvent

    org = Organization(id="https://x/org", name="Org", description="d")
    pub = PublicationEvent(id="https://x/pub", organization=org, name="P", start_date="2020")
    doc = DigitalDocument(id="https://x/doc", name="Doc", copyright_year="2021", keywords=["a", "b"],
                          publication=pub, url="https://u")
    out: list[list[str]] = []
    doc.emit(lambda t: out.append([type(t["s"]).__name__, t["s"], type(t["p"]).__name__, t["p"],
                                   type(t["o"]).__name__, t["o"]]))
    assert out == load("upstream-2.1.4-knowledge-emit.json")


def test_bytes_fields_travel_as_their_text() -> None:
    from trustgraph.schema import Document, LibrarianRequest, decode, encode

    wire = encode(Document(data=b"aGk="))
    assert json.loads(wire)["data"] == "aGk="
    assert decode(Document, wire).data == b"aGk="
    assert decode(LibrarianRequest, b'{"content": "x", "operation": "add-document"}').content == b"x"


def test_error_types_map_to_upstreams_exceptions() -> None:
    from trustgraph.api import AgentError, GatewayError, UnexpectedError
    from trustgraph.api.exceptions import raise_from_error_dict

    for error, cls in (({"type": "agent-error", "message": "m"}, AgentError),
                       ({"type": "who-knows", "message": "m"}, UnexpectedError),
                       ("Invalid flow", GatewayError)):
        with pytest.raises(cls) as info:
            raise_from_error_dict(error)
        assert info.value.message in ("m", "Invalid flow")


def test_gateway_terms_round_trip() -> None:
    from trustgraph.api.terms import from_value, to_value
    from trustgraph.knowledge import Literal, QuotedTriple, Uri

    for value in (Uri("https://a"), Literal("b"), QuotedTriple(Uri("https://s"), Uri("https://p"), Literal("o"))):
        assert to_value(from_value(value)) == value
    assert from_value(Uri("https://a")) == {"t": "i", "i": "https://a"}
    assert from_value("plain") == {"t": "l", "v": "plain"}


def _sample(tp: object, depth: int = 0) -> object:
    """A non-default value of a field type, so a round trip exercises every field."""
    import types
    import typing

    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _sample(next(a for a in typing.get_args(tp) if a is not type(None)), depth)
    if origin is list:
        item = _sample(typing.get_args(tp)[0], depth + 1)
        return [] if item is None else [item]
    if origin is dict:
        return {"k": _sample(typing.get_args(tp)[1], depth + 1)}
    if dataclasses.is_dataclass(tp):
        if depth > 2:
            return None
        hints = typing.get_type_hints(tp)
        return tp(**{f.name: _sample(hints[f.name], depth + 1) for f in dataclasses.fields(tp)})
    return {str: "s", int: 7, float: 0.5, bool: True, bytes: b"b", typing.Any: "any"}[tp]


@pytest.mark.parametrize("name", sorted(n for n, v in SCHEMA.items() if isinstance(v, dict)))
def test_every_record_round_trips_with_every_field_set(name: str) -> None:
    import trustgraph.schema as schema

    cls = getattr(schema, name)
    record = _sample(cls)
    assert schema.decode(cls, schema.encode(record)) == record
