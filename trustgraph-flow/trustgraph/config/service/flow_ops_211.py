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
2.1's (:mod:`.flow_ops`), which 2.11 did not change.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from trustgraph.schema.v211 import processor_type

from .flow_ops import (
    BLUEPRINT_TYPE,
    FLOW_TYPE,
    FlowOperations,
    Response,
    _load_json_object,
    _optional_str,
    _param_text,
    _response,
    _Substituter,
)
from .operations import Refused
from .store import WorkspaceStore

__all__ = ["Flow211Operations"]


class Flow211Operations(FlowOperations):
    """Answers 2.11 FlowRequest dicts inside one workspace (the store view's)."""

    def __init__(self, store: WorkspaceStore) -> None:
        super().__init__(store)
        self.workspace = store.workspace

    def _start_flow(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        blueprint_name = _optional_str(request, "blueprint_name")
        flow_id = _optional_str(request, "flow_id")
        description = _optional_str(request, "description")
        if blueprint_name is None:
            raise Refused("No blueprint name")
        if not flow_id:
            raise Refused("No flow ID")
        user_params = self._user_parameters(request)

        with self.store.locked():
            if self.store.get(FLOW_TYPE, flow_id) is not None:
                raise Refused("Flow already exists")
            if description is None:
                raise Refused("No description")
            text = self.store.get(BLUEPRINT_TYPE, blueprint_name)
            if text is None:
                raise Refused("Blueprint does not exist")
            blueprint = _load_json_object(text, f"Blueprint '{blueprint_name}'")
            parameters = self._resolve_parameters(blueprint, user_params)
            sub = _Substituter(blueprint_name, flow_id, parameters, workspace=self.workspace)

            puts = []
            for section in ("blueprint", "flow"):
                for processor, variant, entry in self._entries_211(blueprint, blueprint_name, section, sub):
                    puts.append((processor_type(processor), variant, json.dumps(entry)))
            interfaces = blueprint.get("interfaces", {})
            if not isinstance(interfaces, dict):
                raise Refused(f"Blueprint '{blueprint_name}': 'interfaces' must be an object")
            record = {
                "description": description,
                "blueprint-name": blueprint_name,
                "interfaces": sub.deep(interfaces),
                "parameters": parameters,
            }
            puts.append((FLOW_TYPE, flow_id, json.dumps(record)))
            self.store.apply(puts=puts, deletes=[])
        return _response(), True

    def _stop_flow(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        flow_id = self._flow_id(request)
        with self.store.locked():
            text = self.store.get(FLOW_TYPE, flow_id)
            if text is None:
                raise Refused("Flow ID invalid")
            record = _load_json_object(text, f"flow/{flow_id}")
            blueprint_name = record.get("blueprint-name")
            if not isinstance(blueprint_name, str):
                raise Refused("Internal error: flow has no flow blueprint")
            blueprint_text = self.store.get(BLUEPRINT_TYPE, blueprint_name)
            if blueprint_text is None:
                raise Refused(
                    f"Blueprint '{blueprint_name}' of flow '{flow_id}' no longer exists, so its "
                    "processors cannot be found; put the blueprint back and stop the flow again")
            blueprint = _load_json_object(blueprint_text, f"Blueprint '{blueprint_name}'")
            stored = record.get("parameters") or {}
            if not isinstance(stored, dict):
                raise Refused(f"flow/{flow_id}: 'parameters' must be an object")
            sub = _Substituter(
                blueprint_name, flow_id,
                {k: _param_text(v, f"flow/{flow_id} parameter '{k}'") for k, v in stored.items()},
                workspace=self.workspace)
            deletes = [(processor_type(processor), variant)
                       for processor, variant, _entry in self._entries_211(blueprint, blueprint_name, "flow", sub)]
            deletes.append((FLOW_TYPE, flow_id))
            self.store.apply(puts=[], deletes=deletes)
        return _response(), True

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
