"""What every registered tool service is checked for, with no test of its own naming it.

Parametrised over the registry tg-launch starts the stack from
(``trustgraph.launch.tool_services``): a service added in-tree with
``tg-new-tool-service`` is in it after ``make install``, and is checked here as
the joke service is:

* it is registered consistently: a ``DynamicToolService`` class, with a console
  script of the registered name (which tg-launch runs) from its package;
* its declared tools are valid, by the catalog's full check (what every reader
  would leave out, and why);
* what it announces, read by a ``ServiceDirectory`` as every reader reads it,
  builds into the catalog beside the bootstrap config with no error and no
  warning: its descriptor round-trips, and each declared tool is there as declared;
* each of its tools (declared, or configured for it in the bootstrap config)
  has an example call in its ``examples``, and answers every one on the
  in-memory transport, called the one way the agent calls tools
  (``trustgraph.catalog.calling``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import entry_points
from typing import Any

import pytest
from support import REPO
from trustgraph.base import DynamicToolService
from trustgraph.base.testing import MemoryBroker, Worker, memory_pubsub, worker
from trustgraph.base.tool_services.catalog_feed import configured_services
from trustgraph.base.tool_services.service_directory import ServiceDirectory
from trustgraph.base.tool_services.tool_service_client import ToolServiceClients
from trustgraph.catalog import Catalog, build_catalog
from trustgraph.catalog.calling import CallableTool, call_tool
from trustgraph.launch.bootstrap import read_bootstrap
from trustgraph.launch.tool_services import RegisteredService, registered

SERVICES = registered()
BOOTSTRAP = REPO / "config-examples" / "bootstrap.json"


@pytest.fixture(params=SERVICES, ids=[s.name for s in SERVICES])
def service(request: pytest.FixtureRequest) -> RegisteredService:
    return request.param


def bootstrap_config() -> dict[str, dict[str, str]]:
    """The config ``make run`` starts with (``tg-launch`` loads it into an empty store)."""
    values, _ = read_bootstrap(BOOTSTRAP)
    config: dict[str, dict[str, str]] = {}
    for v in values:
        config.setdefault(v.type, {})[v.key] = v.value
    return config


@asynccontextmanager
async def running(service: RegisteredService) -> AsyncIterator[tuple[Worker[Any], Catalog]]:
    """The service started on the in-memory transport, and the catalog a reader then builds."""
    broker = MemoryBroker()
    config = bootstrap_config()
    changed = asyncio.Event()
    directory = ServiceDirectory(memory_pubsub(broker, "reader"), on_change=changed.set)
    directory.configure(configured_services(config.get("tool-service") or {}))
    await directory.start()
    try:
        async with worker(service.load(), broker=broker, id=service.name) as w:
            async with asyncio.timeout(10):
                while service.name not in directory.announced():
                    changed.clear()
                    await changed.wait()
            yield w, build_catalog(config, directory.announced())
    finally:
        await directory.stop()


def test_it_is_a_tool_service_run_by_a_command_of_its_name(service: RegisteredService) -> None:
    cls = service.load()
    assert isinstance(cls, type) and issubclass(cls, DynamicToolService), service.target
    scripts = {ep.name: ep for ep in entry_points(group="console_scripts")}
    assert service.name in scripts, (f"no console script {service.name}: add it to [project.scripts] "
                                     "beside the entry point, then make install")
    module = scripts[service.name].module
    assert cls.__module__ == module or cls.__module__.startswith(module + "."), (
        f"console script {service.name} runs {module}, not the package of {service.target}")


def test_its_declared_tools_are_valid(service: RegisteredService) -> None:
    processor = service.load()(id=service.name, metrics=False)
    processor.declared_tools()   # raises naming the tool and the field, as the service's start would
    assert processor.declared_problems() == []


async def test_what_it_announces_round_trips_through_the_catalog(service: RegisteredService) -> None:
    async with running(service) as (w, catalog):
        assert [str(e) for e in (*catalog.errors, *catalog.warnings)] == []
        assert service.name in catalog.announced
        processor = w.processor
        used = catalog.find_service(service.name)
        assert used is not None and used.queues == (processor.request_topic, processor.response_topic)
        if service.name not in (bootstrap_config().get("tool-service") or {}):
            # Announced only: what the catalog uses is what the service said, field for field.
            assert used == processor.service_descriptor()
        # A declared tool also configured (the joke service's, for upstream agents) is used as
        # configured; with no warning, so the two say the same.
        configured = {json.loads(v).get("name") for v in (bootstrap_config().get("tool") or {}).values()}
        announced = processor.tool_descriptors()
        for declared in processor.declared_tools():
            tool = catalog.tools[declared.name]
            source = "config" if declared.name in configured else "announced"
            assert (tool.source, tool.service_key, tool.description) == (source, service.name,
                                                                         declared.description)
            assert tool.arguments == declared.tool_arguments()
            fields = announced[declared.name]
            assert dict(tool.config) == {p.name: fields[p.name] for p in used.config_params if p.name in fields}
            assert tool.descriptor.examples == declared.examples
            assert tool.annotations == declared.annotations.over(used.annotations)


async def test_each_of_its_tools_answers_its_example_calls(service: RegisteredService) -> None:
    async with running(service) as (w, catalog):
        tools = [t for t in catalog.tools.values() if t.service_key == service.name]
        assert tools, (f"{service.name} has no tool: declare one in its class's tools (or configure one "
                       "for it in config-examples)")
        clients = ToolServiceClients(memory_pubsub(w.broker, "caller"), name="test")
        try:
            for tool in tools:
                assert tool.example_calls, (f"tool {tool.name} of {service.name} has no example call: add one "
                                            'to its examples, {"arguments": {...}, "question": "..."}')
                callable_tool = CallableTool.build(tool, clients)
                for example in tool.example_calls:
                    result = await call_tool(callable_tool, example.arguments, user="test", flow=None, timeout=10)
                    assert result.answered and result.message.strip(), (tool.name, example.arguments, result.text)
        finally:
            await clients.close()
