"""The schema of an agent's next step, shared by the agent that builds it and the services that use it.

The agent (``agent/react/decisions.py``) asks for its next step as one JSON
object, ``{"action": <tool name>, "args": {...}}`` or ``{"action":
"final-answer", "answer": "..."}``, and sends the JSON Schema of what is
allowed with its prompt request (message property :data:`PROPERTY`).
prompt-template may narrow it (a template's ``decision`` policy:
:func:`narrow`) and passes it to the LLM service (property ``schema``),
which constrains generation with it.  Both ends read the schema through
this module, so the format is defined once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..safety import limits

#: The prompt request's property carrying the schema of the next step.
PROPERTY = "decision-schema"
#: The text-completion request's property carrying the JSON Schema its output
#: must follow (any schema, not only a decision's).
LLM_PROPERTY = "schema"
#: The ``action`` of a final answer.
FINAL_ACTION = "final-answer"
#: The text-completion request's property asking how likely each option is as the value of one
#: field of the JSON output: ``{"field": "action", "options": ["tell-joke", ..., "final-answer"]}``.
#: A service that can tell (text-completion-llamacpp reads the model's token probabilities,
#: before the schema's grammar applies) answers with :data:`SCORES_PROPERTY`; others ignore it.
CHOICES_PROPERTY = "score-choices"
#: The ``field`` of a :data:`CHOICES_PROPERTY` asking about free text rather than JSON: how
#: likely each option was where the text first names one (a ReAct reply's tool).
FIRST_MENTION = "*"
#: The property of a final text-completion (and prompt) response with those likelihoods:
#: ``{"tell-joke": 0.61, "weather": 0.05, ...}``, each option's probability as the model saw it
#: (not renormalised: what is missing to 1 went to values that are none of the options).
SCORES_PROPERTY = "choice-scores"
# Bounds that make a constrained generation always end in valid JSON: a
# model that loops inside a string would otherwise run into its token limit.
STRING_LIMIT = 300
ANSWER_LIMIT = 2000
ITEMS_LIMIT = 20


def _bounded(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with a length limit on every string and every list that has none (a copy)."""
    out = dict(schema)
    if out.get("type") == "string" and "maxLength" not in out and "enum" not in out:
        out["maxLength"] = STRING_LIMIT
    if out.get("type") == "array" and "maxItems" not in out:
        out["maxItems"] = ITEMS_LIMIT
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _bounded(v) if isinstance(v, dict) else v for k, v in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = _bounded(out["items"])
    return out


# Keywords of a schema that hold prose or annotations, not constraints (a ``default`` is what the
# catalog's check gives the tool for an argument left out, nothing a model writes).
_PROSE = ("description", "title", "examples", "$comment", "default")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_SCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def without_prose(schema: Any) -> Any:
    """``schema`` without its descriptions, titles, examples and defaults (a copy), at every level.

    An argument's description is its tool provider's text (any process on
    the broker, for an announced tool).  In the prompt it is shown inside
    the templates' data block; a model server that shows the model the
    schema of its output (structured output) would show it outside, as part
    of what to write.  The constraints are all that generation needs.
    """
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k not in _PROSE}
    for key in _SCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {k: without_prose(v) for k, v in out[key].items()}
    for key in _SCHEMA_ONE:
        if isinstance(out.get(key), dict):
            out[key] = without_prose(out[key])
    for key in _SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [without_prose(v) for v in out[key]]
    return out


def _declared_only(args_schema: dict[str, Any]) -> dict[str, Any]:
    """``args_schema``, or the empty object when it declares no argument and says nothing of others.

    The catalog's schema of a tool with no declared arguments takes any object (upstream's
    pass-through descriptors), but the prompt names no argument, so whatever a model writes there
    is made up: the 135M model, asked for now-playing's arguments, invented a playlist until its
    512-token limit (10 s).  A schema that says it takes other keys keeps them."""
    if "properties" in args_schema or "additionalProperties" in args_schema or "patternProperties" in args_schema:
        return args_schema
    return {**args_schema, "properties": {}, "additionalProperties": False}


def call_alternative(name: str, args_schema: dict[str, Any]) -> dict[str, Any]:
    """One tool call: its name, and its arguments as its argument schema says (without its prose)."""
    return {"type": "object", "properties": {"action": {"const": name},
                                             "args": _bounded(without_prose(_declared_only(args_schema)))},
            "required": ["action", "args"], "additionalProperties": False}


def final_alternative() -> dict[str, Any]:
    return {"type": "object",
            "properties": {"action": {"const": FINAL_ACTION},
                           "answer": {"type": "string", "minLength": 1, "maxLength": ANSWER_LIMIT}},
            "required": ["action", "answer"], "additionalProperties": False}


def decision_schema(tools: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The schema of the next step: a call of one of ``tools`` (``(name, argument schema)``), or the answer."""
    alternatives = [call_alternative(name, schema) for name, schema in tools if name != FINAL_ACTION]
    alternatives.append(final_alternative())
    return {"anyOf": alternatives}


def _is_final(alternative: Any) -> bool:
    try:
        return alternative["properties"]["action"]["const"] == FINAL_ACTION
    except (KeyError, TypeError):
        return False


def parse(raw: str | None, what: str = PROPERTY) -> dict[str, Any] | None:
    """A schema property's value: None when absent; ValueError saying why when it is not a JSON object."""
    if not raw:
        return None
    try:
        value = limits.loads(raw)
    except ValueError:
        raise ValueError(f"request property {what!r} is not JSON: {raw[:80]!r}") from None
    if not isinstance(value, dict):
        raise ValueError(f"request property {what!r} must be a JSON Schema object")
    return value


def final(answer: str) -> str:
    """The decision text of a final answer."""
    return json.dumps({"action": FINAL_ACTION, "answer": answer}, ensure_ascii=False)


def narrow(schema: dict[str, Any], *, calls: bool = True, answer: bool = True) -> dict[str, Any]:
    """``schema`` with only the tool calls (``answer=False``) or only the answer (``calls=False``).

    Returns ``schema`` itself when narrowing would leave nothing (no tools:
    only the answer is possible anyway).
    """
    alternatives = schema.get("anyOf")
    if not isinstance(alternatives, list):
        return schema
    kept = [a for a in alternatives if (answer if _is_final(a) else calls)]
    return {**schema, "anyOf": kept} if kept else schema


def action_names(schema: dict[str, Any]) -> list[str]:
    """The ``action`` values a decision schema allows, in its order (tools, then the answer)."""
    names = []
    for alternative in schema.get("anyOf") or []:
        try:
            name = alternative["properties"]["action"]["const"]
        except (KeyError, TypeError):
            continue
        if isinstance(name, str) and name not in names:
            names.append(name)
    return names


def choices_request(options: list[str], field: str = "action") -> str:
    """The :data:`CHOICES_PROPERTY` value asking for ``options`` as values of ``field``."""
    return json.dumps({"field": field, "options": options}, ensure_ascii=False)


def parse_choices(raw: str | None) -> tuple[str, list[str]] | None:
    """``(field, options)`` of a :data:`CHOICES_PROPERTY`, None when absent or unusable."""
    value = limits.object_or_none(raw)
    if value is None:
        return None
    field, options = value.get("field"), value.get("options")
    if not isinstance(field, str) or not field or not isinstance(options, list):
        return None
    kept = [o for o in options if isinstance(o, str) and o]
    return (field, kept[:1000]) if kept else None


def parse_scores(raw: str | None) -> dict[str, float] | None:
    """A :data:`SCORES_PROPERTY` value: ``{option: probability}``, None when absent or unusable."""
    value = limits.object_or_none(raw)
    if value is None:
        return None
    out = {k: float(v) for k, v in value.items()
           if isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1}
    return out or None
