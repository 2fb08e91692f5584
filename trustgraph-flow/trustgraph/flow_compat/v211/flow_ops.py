"""2.11's flow operations, as pure logic over one workspace of a ConfigStore.

In 2.11 flows are a workspace's (upstream's ``flow-svc`` answers on
``request:tg:flow:<workspace>``), and a started flow is assigned to each
processor as config a 2.11 processor reads (trustgraph-flow 2.11.1
``flow/service/flow.py``; trustgraph-base ``base/flow_processor.py`` reads it):

* a blueprint entry ``"<processor>:<variant>": {"topics": {spec: queue},
  "parameters": {name: value}}`` becomes the item ``processor:<processor>`` /
  ``<variant>`` of the workspace, its value the JSON ``{"topics",
  "parameters"}`` with ``{workspace}``, ``{blueprint}``, ``{id}`` and every
  ``{<parameter>}`` substituted, for the ``blueprint`` and ``flow`` sections
  alike, written whether or not it was there (2.1 kept an existing variant);
* ``flow/<id>`` is ``{"description", "blueprint-name", "interfaces",
  "parameters"}``, as in 2.1;
* stop-flow deletes the ``flow`` section's ``processor:`` items and
  ``flow/<id>``; the blueprint section's stay, serving the blueprint's
  other flows.

2.11 writes a start in two requests (the processor items, then the flow) and
a stop in three (the flow marked ``stopping``, the items, the flow), each a
version and a notice; here each is one :meth:`ConfigStore.apply`, so a flow
is never half started, at one version.  2.11 also creates and deletes the
flow's topics through the broker's admin API: pulsar-lite has none, and a
Pulsar topic is created by its first producer or consumer, so nothing is
done for them here.  The blueprint operations and parameter resolution are
2.1's (:mod:`trustgraph.config.service.flow_ops`), which 2.11 did not change.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from trustgraph.compat.v211.schema import processor_type
from trustgraph.config.service.flow_ops import FlowOperations, _Substituter
from trustgraph.config.service.operations import Refused
from trustgraph.config.service.store import WorkspaceStore

__all__ = ["Flow211Operations"]


class Flow211Operations(FlowOperations):
    """Answers 2.11 FlowRequest dicts inside one workspace (the store view's)."""

    _DESCRIPTION_FIRST = True
    _NO_BLUEPRINT_NAME = "Internal error: flow has no flow blueprint"

    def __init__(self, store: WorkspaceStore) -> None:
        super().__init__(store)
        self.workspace = store.workspace

    def _substituter(self, blueprint_name: str, flow_id: str, parameters: Mapping[str, str]) -> _Substituter:
        """2.1's placeholders, and ``{workspace}`` before them (2.11's flow service's order)."""
        return _Substituter(blueprint_name, flow_id, parameters, first=[("{workspace}", self.workspace)])

    def _started_processors(self, blueprint: Mapping[str, Any], blueprint_name: str,
                            sub: _Substituter) -> list[tuple[str, str, str]]:
        """Every entry of both sections as its ``processor:<name>`` item, written over what is there."""
        return [(processor_type(processor), variant, json.dumps(entry))
                for section in ("blueprint", "flow")
                for processor, variant, entry in self._entries_211(blueprint, blueprint_name, section, sub)]

    def _stopped_processors(self, blueprint: Mapping[str, Any], blueprint_name: str, sub: _Substituter
                            ) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
        """The flow section's ``processor:<name>`` items deleted; the blueprint section's serve other flows."""
        return [], [(processor_type(processor), variant)
                    for processor, variant, _entry in self._entries_211(blueprint, blueprint_name, "flow", sub)]

    @staticmethod
    def _entries_211(blueprint: Mapping[str, Any], blueprint_name: str, section: str,
                     sub: _Substituter) -> list[tuple[str, str, dict[str, dict[str, str]]]]:
        """``(processor, variant, {"topics", "parameters"})`` for each entry of a section, substituted."""
        where = f"Blueprint '{blueprint_name}'"
        entries = blueprint.get(section)
        if not isinstance(entries, dict):
            raise Refused(f"{where} has no '{section}' section" if entries is None
                          else f"{where}: '{section}' must be an object")
        out = []
        for key, entry in entries.items():
            processor, sep, variant = key.partition(":")
            if not sep:
                raise Refused(f"{where}: {section} entry '{key}' must be '<processor>:<variant>'")
            if not isinstance(entry, dict):
                raise Refused(f"{where}: {section} entry '{key}' must be an object")
            resolved: dict[str, dict[str, str]] = {}
            for part in ("topics", "parameters"):
                table = entry.get(part) or {}
                if not isinstance(table, dict):
                    raise Refused(f"{where}: {section} entry '{key}', '{part}' must be an object")
                for name, value in table.items():
                    if not isinstance(value, str):
                        raise Refused(f"{where}: {section} entry '{key}', {part} '{name}' must be a "
                                      f"string, got {type(value).__name__}")
                resolved[part] = {sub.text(k): sub.text(v) for k, v in table.items()}
            out.append((processor, sub.text(variant), resolved))
        return out
