"""The flow operations of config-svc, as pure logic over a ConfigStore.

Flows live in config like everything else (upstream 2.1.4's layout):

* ``flow-blueprint/<name>``: a blueprint, JSON text stored verbatim;
* ``flow/<id>``: a running flow, ``{"description", "blueprint-name",
  "interfaces", "parameters"}``;
* ``active-flow/<processor>``: ``{variant: {specName: topic-or-value}}``, what
  each processor reads to know which flows to serve;
* ``parameter-type/<type>``: parameter types, whose ``default`` fills
  parameters the user left out.

Every mutating operation reads what it needs and then writes with ONE
:meth:`ConfigStore.apply`, holding the store lock throughout: the change is
atomic (a crash leaves the flow fully started or not at all) and bumps the
version exactly once, as the wire requires.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from trustgraph.base.safety import limits

from .operations import Refused, run_operation
from .store import ConfigStore

__all__ = ["FlowOperations"]

logger = logging.getLogger(__name__)

Response = dict[str, Any]

BLUEPRINT_TYPE = "flow-blueprint"
FLOW_TYPE = "flow"
ACTIVE_FLOW_TYPE = "active-flow"
PARAMETER_TYPE_TYPE = "parameter-type"



def _response(**fields: Any) -> Response:
    """A FlowResponse dict with every field present; unused ones are null."""
    out: Response = {
        "blueprint_names": None,
        "flow_ids": None,
        "blueprint_definition": None,
        "flow": None,
        "description": None,
        "parameters": None,
        "error": None,
    }
    out.update(fields)
    return out


def _error(kind: str, message: str) -> Response:
    return _response(error={"type": kind, "message": message})


def _optional_str(request: Mapping[str, Any], name: str) -> str | None:
    """``request[name]`` if it is a string or null/absent; anything else is refused."""
    value = request.get(name)
    if value is not None and not isinstance(value, str):
        raise Refused(f"'{name}' must be a string, got {type(value).__name__}")
    return value


def _param_text(value: Any, what: str = "parameter value") -> str:
    """A parameter value as the string a template receives.

    Booleans become ``true``/``false`` (the JSON spelling a processor flag
    parser expects, not Python's ``True``); containers become JSON.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    raise Refused(f"{what} must be a string, number or boolean, got {type(value).__name__}")


def _load_json_object(text: str, what: str) -> dict[str, Any]:
    try:
        value = limits.loads(text)
    except ValueError as e:
        raise Refused(f"{what} is not valid JSON: {e}") from None
    if not isinstance(value, dict):
        raise Refused(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


class _Substituter:
    """Plain text replacement of ``{blueprint}``, ``{id}`` and ``{<param>}``.

    Replacement is sequential and not recursive, as upstream: a parameter value
    that itself contains ``{id}`` is left as written.
    """

    def __init__(self, blueprint: str, flow_id: str, parameters: Mapping[str, str],
                 first: Sequence[tuple[str, str]] = ()) -> None:
        """``first``: ``(placeholder, value)`` pairs replaced before the flow's own (a wire's
        flow operations may substitute more than these)."""
        self._pairs = list(first)
        self._pairs += [("{blueprint}", blueprint), ("{id}", flow_id)]
        self._pairs += [("{" + name + "}", value) for name, value in parameters.items()]

    def text(self, template: str) -> str:
        for placeholder, value in self._pairs:
            template = template.replace(placeholder, value)
        return template

    def deep(self, value: Any) -> Any:
        """Substitute every string inside nested dicts/lists (dict keys kept).

        Interfaces are either a topic string or ``{"request", "response"}``;
        2.1.4 substitutes inside the nested form too.
        """
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.deep(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.deep(v) for v in value]
        return value


class FlowOperations:
    """Answers FlowRequest dicts from a :class:`ConfigStore`.

    Start-flow and stop-flow check and record the flow here; what each processor is
    told is :meth:`_started_processors` and :meth:`_stopped_processors`, and how a
    template is filled in :meth:`_substituter`, which a wire's own flow operations
    may replace.
    """

    #: Whether start-flow refuses a missing description before looking the blueprint up (ours looks
    #: the blueprint up first; a wire's own flow operations may check in the other order).
    _DESCRIPTION_FIRST = False
    #: Stop-flow's refusal of a flow record that names no blueprint.
    _NO_BLUEPRINT_NAME = "flow/{flow_id} has no 'blueprint-name'"

    def __init__(self, store: ConfigStore) -> None:
        self.store = store
        self._handlers: dict[str, Callable[[Mapping[str, Any]], tuple[Response, bool]]] = {
            "list-blueprints": self._list_blueprints,
            "get-blueprint": self._get_blueprint,
            "put-blueprint": self._put_blueprint,
            "delete-blueprint": self._delete_blueprint,
            "list-flows": self._list_flows,
            "get-flow": self._get_flow,
            "start-flow": self._start_flow,
            "stop-flow": self._stop_flow,
        }

    def handle(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        """Run one request; return ``(FlowResponse dict, push_needed)``.

        Never raises: failures become ``flow-error`` (or ``bad-operation`` for
        an unknown operation) so one bad request cannot stop the service.
        """
        return run_operation(request, self._handlers, error_type="flow-error", error=_error)

    # -- blueprints -------------------------------------------------------

    def _list_blueprints(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        return _response(blueprint_names=self.store.keys(BLUEPRINT_TYPE)), False

    def _get_blueprint(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        name = self._blueprint_name(request)
        return _response(blueprint_definition=self.store.get(BLUEPRINT_TYPE, name)), False

    def _put_blueprint(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        name = self._blueprint_name(request)
        definition = request.get("blueprint_definition")
        if not isinstance(definition, str):
            shown = "null" if definition is None else type(definition).__name__
            raise Refused(f"'blueprint_definition' must be a string of JSON text, got {shown}")
        # Stored verbatim, unvalidated, as upstream: start-flow reports problems.
        self.store.apply(puts=[(BLUEPRINT_TYPE, name, definition)], deletes=[])
        return _response(), True

    def _delete_blueprint(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        name = self._blueprint_name(request)
        self.store.apply(puts=[], deletes=[(BLUEPRINT_TYPE, name)])
        return _response(), True

    # -- flows ------------------------------------------------------------

    def _list_flows(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        return _response(flow_ids=self.store.keys(FLOW_TYPE)), False

    def _get_flow(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        flow_id = self._flow_id(request)
        text = self.store.get(FLOW_TYPE, flow_id)
        if text is None:
            raise Refused("Flow ID invalid")
        record = _load_json_object(text, f"flow/{flow_id}")
        return (
            _response(
                flow=text,
                description=record.get("description"),
                parameters=record.get("parameters") or {},
            ),
            False,
        )

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
            if description is None and self._DESCRIPTION_FIRST:
                raise Refused("No description")
            text = self.store.get(BLUEPRINT_TYPE, blueprint_name)
            if text is None:
                raise Refused("Blueprint does not exist")
            if description is None:
                raise Refused("No description")

            blueprint = _load_json_object(text, f"Blueprint '{blueprint_name}'")
            parameters = self._resolve_parameters(blueprint, user_params)
            sub = self._substituter(blueprint_name, flow_id, parameters)
            puts = self._started_processors(blueprint, blueprint_name, sub)

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

    def _substituter(self, blueprint_name: str, flow_id: str, parameters: Mapping[str, str]) -> _Substituter:
        """What fills a flow's templates in: ``{blueprint}``, ``{id}`` and its parameters."""
        return _Substituter(blueprint_name, flow_id, parameters)

    def _started_processors(self, blueprint: Mapping[str, Any], blueprint_name: str,
                            sub: _Substituter) -> list[tuple[str, str, str]]:
        """The puts that give each processor its part of a starting flow: 2.1's ``active-flow`` maps."""
        active: dict[str, dict[str, Any]] = {}
        for section in ("blueprint", "flow"):
            for processor, variant, spec in self._entries(blueprint, blueprint_name, section, sub):
                target = self._active_flow(processor, active)
                # Only if absent: a blueprint-level variant shared by
                # several flows is created by the first and left alone.
                if variant not in target:
                    target[variant] = spec
        return [(ACTIVE_FLOW_TYPE, p, json.dumps(m)) for p, m in active.items()]

    def _stop_flow(self, request: Mapping[str, Any]) -> tuple[Response, bool]:
        flow_id = self._flow_id(request)
        with self.store.locked():
            text = self.store.get(FLOW_TYPE, flow_id)
            if text is None:
                raise Refused("Flow ID invalid")
            record = _load_json_object(text, f"flow/{flow_id}")
            blueprint_name = record.get("blueprint-name")
            if not isinstance(blueprint_name, str):
                raise Refused(self._NO_BLUEPRINT_NAME.format(flow_id=flow_id))
            blueprint_text = self.store.get(BLUEPRINT_TYPE, blueprint_name)
            if blueprint_text is None:
                # Without the blueprint we cannot tell which variants are this
                # flow's.  Refusing is recoverable (put the blueprint back, stop
                # again); guessing could stop other flows' processors.
                raise Refused(
                    f"Blueprint '{blueprint_name}' of flow '{flow_id}' no longer "
                    "exists, so its processors cannot be found; put the blueprint "
                    "back and stop the flow again"
                )
            blueprint = _load_json_object(blueprint_text, f"Blueprint '{blueprint_name}'")
            stored_params = record.get("parameters") or {}
            if not isinstance(stored_params, dict):
                raise Refused(f"flow/{flow_id}: 'parameters' must be an object")
            # The stored parameters are the resolved ones, so substitution
            # reproduces exactly the variant names start-flow created.
            sub = self._substituter(
                blueprint_name,
                flow_id,
                {k: _param_text(v, f"flow/{flow_id} parameter '{k}'") for k, v in stored_params.items()},
            )
            puts, deletes = self._stopped_processors(blueprint, blueprint_name, sub)
            deletes.append((FLOW_TYPE, flow_id))
            self.store.apply(puts=puts, deletes=deletes)
        return _response(), True

    def _stopped_processors(self, blueprint: Mapping[str, Any], blueprint_name: str, sub: _Substituter
                            ) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
        """The puts and deletes that take a stopping flow from its processors: 2.1's ``active-flow`` maps."""
        # Only the flow section: blueprint-level variants serve every flow
        # of the blueprint and stay.
        active: dict[str, dict[str, Any]] = {}
        changed: set[str] = set()
        for processor, variant, _spec in self._entries(blueprint, blueprint_name, "flow", sub):
            target = self._active_flow(processor, active)
            if variant in target:
                del target[variant]
                changed.add(processor)
        # An emptied map is written as {} rather than deleted: processors
        # then see an explicit "no flows for you" and stop their variants.
        return [(ACTIVE_FLOW_TYPE, p, json.dumps(active[p])) for p in sorted(changed)], []

    # -- helpers ------------------------------------------------------------

    @staticmethod
    def _blueprint_name(request: Mapping[str, Any]) -> str:
        name = _optional_str(request, "blueprint_name")
        if name is None:
            raise Refused("No blueprint name")
        return name

    @staticmethod
    def _flow_id(request: Mapping[str, Any]) -> str:
        flow_id = _optional_str(request, "flow_id")
        if flow_id is None:
            raise Refused("No flow ID")
        return flow_id

    @staticmethod
    def _user_parameters(request: Mapping[str, Any]) -> dict[str, str]:
        """The request's parameters, stringified as upstream stores them: ``str(value)``.

        So ``1`` is ``"1"``, ``true`` is ``"True"``, ``{"a": 1}`` is
        ``"{'a': 1}"`` and null is ``"None"`` (a value given, so it beats the
        parameter type's default), byte for byte what an upstream config-svc
        writes for the same request; defaults from a parameter type keep
        their JSON spelling, as upstream's do.
        """
        raw = request.get("parameters")
        if raw is None:
            return {}
        if not isinstance(raw, Mapping):
            raise Refused(f"'parameters' must be an object of name to value, got {type(raw).__name__}")
        out = {}
        for name, value in raw.items():
            if not isinstance(name, str):
                raise Refused(f"parameter names must be strings, got {name!r}")
            if value is not None and not isinstance(value, (str, int, float, bool, list, dict)):
                raise Refused(f"parameter '{name}' must be a string or another JSON value, "
                                f"got {type(value).__name__}")
            out[name] = value if isinstance(value, str) else str(value)
        return out

    def _type_default(self, type_name: Any, param: str) -> tuple[str | None, bool]:
        """``(default as text or None, required)`` of a parameter type.

        An unknown type has no default and is not required: the parameter just
        stays unresolved, as upstream.
        """
        if not isinstance(type_name, str):
            return None, False
        text = self.store.get(PARAMETER_TYPE_TYPE, type_name)
        if text is None:
            return None, False
        definition = _load_json_object(text, f"parameter-type '{type_name}' (of parameter '{param}')")
        default = definition.get("default")
        return (
            None if default is None else _param_text(default, f"default of parameter-type '{type_name}'"),
            definition.get("required") is True,
        )

    def _resolve_parameters(self, blueprint: Mapping[str, Any], user: Mapping[str, str]) -> dict[str, str]:
        """Resolve parameters as upstream 2.1.4's start-flow does.

        Pass 1: the user's value, else the type's default.  Pass 2: a
        ``controlled-by`` parameter the user did not set takes its controller's
        value.  A required parameter still without a value after both passes
        is an error (checking after pass 2 lets a controlled parameter of a
        required type follow its controller).  Extra user parameters are kept.
        """
        declared = blueprint.get("parameters") or {}
        if not isinstance(declared, dict):
            raise Refused("Blueprint 'parameters' must be an object")
        resolved: dict[str, str] = {}
        missing: list[str] = []
        for name, meta in declared.items():
            meta = meta if isinstance(meta, dict) else {}
            if name in user:
                resolved[name] = user[name]
                continue
            default, required = self._type_default(meta.get("type"), name)
            if default is not None:
                resolved[name] = default
            elif required:
                missing.append(name)
        for name, meta in declared.items():
            controller = meta.get("controlled-by") if isinstance(meta, dict) else None
            if isinstance(controller, str) and name not in user and controller in resolved:
                resolved[name] = resolved[controller]
        missing = [m for m in missing if m not in resolved]
        if missing:
            raise Refused("Required parameter(s) with no value and no default: " + ", ".join(missing))
        for name, value in user.items():
            resolved.setdefault(name, value)
        return resolved

    @staticmethod
    def _entries(
        blueprint: Mapping[str, Any], blueprint_name: str, section: str, sub: _Substituter
    ) -> list[tuple[str, str, dict[str, str]]]:
        """``(processor, variant, spec)`` for each entry of a section, substituted.

        The key is split at its first ':' into processor and variant; only the
        variant is substituted.  Spec values must be strings: the nested
        ``settings`` objects of old docs are refused rather than half-applied.
        """
        where = f"Blueprint '{blueprint_name}'"
        if section not in blueprint:
            raise Refused(f"{where} has no '{section}' section")
        entries = blueprint[section]
        if not isinstance(entries, dict):
            raise Refused(f"{where}: '{section}' must be an object")
        out = []
        for key, spec in entries.items():
            processor, sep, variant = key.partition(":")
            if not sep:
                raise Refused(f"{where}: {section} entry '{key}' must be '<processor>:<variant>'")
            if not isinstance(spec, dict):
                raise Refused(f"{where}: {section} entry '{key}' must be an object")
            for spec_name, value in spec.items():
                if not isinstance(value, str):
                    raise Refused(
                        f"{where}: {section} entry '{key}', '{spec_name}' must be a "
                        f"string, got {type(value).__name__}"
                    )
            out.append(
                (
                    processor,
                    sub.text(variant),
                    {sub.text(k): sub.text(v) for k, v in spec.items()},
                )
            )
        return out

    def _active_flow(self, processor: str, cache: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """The ``active-flow/<processor>`` map being edited, loaded once.

        Several entries may name one processor; they must all edit the same
        in-memory map so the single write at the end carries every change.
        """
        if processor not in cache:
            text = self.store.get(ACTIVE_FLOW_TYPE, processor)
            cache[processor] = {} if text is None else _load_json_object(text, f"active-flow/{processor}")
        return cache[processor]
