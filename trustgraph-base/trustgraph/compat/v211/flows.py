"""Which flows 2.11 assigns a processor, as the definitions a FlowProcessor opens.

2.11's flow service writes each flow a processor serves as an item of config
type ``processor:<id>`` in the flow's workspace: key the flow (the
blueprint entry's variant), value the JSON ``{"topics": {spec: queue},
"parameters": {name: value}}`` (trustgraph-flow 2.11.1
``flow/service/flow.py``, read by trustgraph-base ``base/flow_processor.py``).
Our FlowProcessor reads 2.1's ``active-flow/<id>``, ``{flow: {spec:
topic-or-value}}`` (its :class:`~trustgraph.base.processors.flow_processor.ActiveFlows`);
:data:`PROCESSOR_ITEMS`, the 2.11 wire's ``flow-assignment`` component, turns
the one into the other, each queue name mapped to its Pulsar topic, so a flow
opens the same way under either wire.  It also names a flow consumer's
subscription as 2.11.1 does, with the workspace in it, so a processor of ours
put in place of 2.11.1's shares (on RabbitMQ: takes over) the same queue.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from trustgraph.base.safety import limits

from . import schema as v211

__all__ = ["PROCESSOR_ITEMS", "ProcessorItems", "assigned_flows"]

logger = logging.getLogger(__name__)


def _definition(processor_id: str, flow: str, text: str) -> dict[str, Any]:
    entry = limits.loads(text)
    if not isinstance(entry, dict):
        raise ValueError("not a JSON object")
    topics, parameters = entry.get("topics") or {}, entry.get("parameters") or {}
    if not isinstance(topics, dict) or not isinstance(parameters, dict):
        raise ValueError("'topics' and 'parameters' must be objects")
    definition: dict[str, Any] = dict(parameters)
    for spec, queue in topics.items():
        if not isinstance(queue, str):
            raise ValueError(f"topic {spec!r} is not a queue name")
        definition[spec] = v211.to_pulsar(queue)
    return definition


def assigned_flows(config: dict[str, dict[str, str]], processor_id: str) -> dict[str, dict[str, Any]]:
    """``{flow: definition}`` of the flows ``config`` assigns ``processor_id`` (2.11's layout).

    A flow whose item cannot be read is left out with an ERROR line naming it;
    the others are assigned.
    """
    items = config.get(v211.processor_type(processor_id)) or {}
    flows: dict[str, dict[str, Any]] = {}
    for flow, text in items.items():
        try:
            flows[flow] = _definition(processor_id, flow, text)
        except (ValueError, v211.QueueError) as e:
            logger.error("%s/%s is not usable (%s); flow %s not started",
                         v211.processor_type(processor_id), flow, e, flow)
    return flows


def _is_topic(value: Any) -> bool:
    try:
        return isinstance(value, str) and bool(v211.to_pulsar(value))
    except v211.QueueError:
        return False


class ProcessorItems:
    """2.11's flow assignment: one item of type ``processor:<id>`` per flow (see the module's docstring)."""

    def config_type(self, processor_id: str) -> str:
        """The config type holding ``processor_id``'s flows: ``processor:<id>``."""
        return v211.processor_type(processor_id)

    def read(self, config: dict[str, dict[str, str]], processor_id: str) -> dict[str, dict[str, Any]] | None:
        """The flows ``config`` assigns ``processor_id``; each unreadable item is only itself left out."""
        return assigned_flows(config, processor_id)

    def assignment(self, config: dict[str, dict[str, str]], processor_id: str, flow: str,
                   definition: dict[str, Any]) -> dict[str, dict[str, str]]:
        """The config type that assigns ``flow`` too, written as 2.11's flow service writes it:
        the definition's topics under ``topics``, its other values under ``parameters``."""
        kind = self.config_type(processor_id)
        entry = {"topics": {k: v for k, v in definition.items() if _is_topic(v)},
                 "parameters": {k: v for k, v in definition.items() if not _is_topic(v)}}
        return {kind: {**config.get(kind, {}), flow: json.dumps(entry)}}

    def subscription(self, processor_id: str, flow: str, spec: str) -> str:
        """``{id}--{workspace}--{flow}--{spec}``, as 2.11.1's ConsumerSpec names it (trustgraph-base
        ``base/consumer_spec.py``), in the workspace whose flows we read: a replica of 2.11.1's
        processor and ours share it, and on RabbitMQ ours consumes the queue 2.11.1's left."""
        return f"{processor_id}--{v211.DEFAULT_WORKSPACE}--{flow}--{spec}"


#: The 2.11 wire's ``flow-assignment`` component.
PROCESSOR_ITEMS = ProcessorItems()
