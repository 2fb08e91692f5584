"""A tool's arguments: declared once, compiled to one JSON Schema, checked with it.

A descriptor lists ``arguments`` as ``[{name, type, description}]`` (upstream's
shape), optionally with ``required`` (default true), ``enum``, for arrays
``items`` (a JSON Schema), ``default`` (an optional argument's value when a
call leaves it out) and ``free-text`` (ours: the agent lets the model
write the value in its own words instead of copying it from the dialog).  Each tool compiles its list to one JSON Schema for
an object (:func:`arguments_schema`); that schema is shown to whoever fills the
arguments in (a model, an MCP client) and is what :func:`check_arguments`
validates a call against, so what a tool promises and what it accepts cannot
drift apart.

Types are JSON Schema's: ``string``, ``number``, ``integer``, ``boolean``,
``object``, ``array``.  Python's spellings (``str``, ``int``, ``float``,
``bool``, ``dict``, ``list``) are read as those.  Upstream never checked the
type, so a descriptor written for it may name any type: an unknown one is
kept as written (the model still sees it), its values are not type-checked,
and the catalog warns about it rather than refusing the tool.

Before checking, a few unambiguous coercions are made, because small models
write ``"42"`` for a number: a numeric string for an ``integer`` or
``number``, ``"true"``/``"false"`` for a ``boolean``, and a number or boolean
for a ``string``.  Nothing else is guessed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

from ..safety import limits

#: The argument types a schema can check.
TYPES = ("string", "number", "integer", "boolean", "object", "array")

_ALIASES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean",
            "dict": "object", "list": "array"}

_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "number": (int, float), "integer": (int,), "boolean": (bool,),
    "object": (dict,), "array": (list,),
}


def _not_blank(value: str) -> str:
    # An empty or all-blank name cannot be shown to a model nor looked up.
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _type_name(value: Any) -> Any:
    if value is None:
        return "string"
    if isinstance(value, str):
        lowered = value.strip().lower()
        return _ALIASES.get(lowered, lowered if lowered in TYPES else value)
    return value


def _none_to_empty(value: Any) -> Any:
    return "" if value is None else value


Scalar = str | int | float | bool


def fits(value: Any, type_: str) -> bool:
    """Whether a JSON value has the JSON Schema type ``type_`` (unknown types accept anything)."""
    kinds = _PYTHON_TYPES.get(type_)
    if kinds is None:
        return True
    if isinstance(value, bool) and type_ != "boolean":
        return False  # JSON keeps true apart from 1
    if type_ == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, kinds)


class ToolArgument(BaseModel):
    """One argument a caller fills in when it calls a tool."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: Annotated[str, AfterValidator(_not_blank)]
    type: Annotated[str, BeforeValidator(_type_name)] = "string"
    description: Annotated[str, BeforeValidator(_none_to_empty)] = ""
    required: Annotated[bool, BeforeValidator(lambda v: True if v is None else v)] = True
    enum: tuple[Scalar, ...] | None = None
    items: dict[str, Any] | None = None
    #: The model may write this (string) argument's value in its own words ("free-text": true in
    #: a descriptor); otherwise the agent has the model copy it from the dialog (``agent/react/
    #: grounding.py``).
    free_text: bool | None = Field(None, validation_alias=AliasChoices("free-text", "free_text"),
                                   serialization_alias="free-text")
    #: What the tool gets for this optional argument when a call leaves it out (every caller that
    #: checks calls against the catalog fills it in: the agent, the gateway, MCP clients); JSON
    #: Schema's ``default``.  None: no default, the argument is left out.
    default: Any = None

    @model_validator(mode="after")
    def _consistent(self) -> ToolArgument:
        if self.enum is not None:
            if not self.enum:
                raise ValueError(f"argument {self.name!r}: 'enum' must list at least one value")
            wrong = [v for v in self.enum if not fits(v, self.type)]
            if wrong:
                raise ValueError(f"argument {self.name!r}: 'enum' value {wrong[0]!r} is not of type "
                                 f"{self.type!r}")
        if self.items is not None and self.type != "array":
            raise ValueError(f"argument {self.name!r}: 'items' is only for arguments of type 'array'")
        if self.default is not None:
            if self.required:
                raise ValueError(f"argument {self.name!r}: a default is for an optional argument "
                                 "(say \"required\": false)")
            if self.typed and not fits(self.default, self.type):
                raise ValueError(f"argument {self.name!r}: 'default' value {self.default!r} is not of type "
                                 f"{self.type!r}")
            if self.enum is not None and self.default not in self.enum:
                raise ValueError(f"argument {self.name!r}: 'default' value {self.default!r} is not one of its "
                                 "'enum'")
        return self

    @property
    def typed(self) -> bool:
        """Whether values of this argument can be type-checked (its type is a known one)."""
        return self.type in TYPES

    def json_schema(self) -> dict[str, Any]:
        """This argument's property schema."""
        schema: dict[str, Any] = {"type": self.type} if self.typed else {}
        if self.description:
            schema["description"] = self.description
        if self.enum is not None:
            schema["enum"] = list(self.enum)
        if self.items is not None:
            schema["items"] = self.items
        if self.default is not None:
            schema["default"] = self.default
        return schema


def unique_names(items: Sequence[Any], what: str = "argument") -> Sequence[Any]:
    """Refuse a list that declares one name twice (which value would the tool get?)."""
    seen: set[str] = set()
    for item in items:
        if item.name in seen:
            raise ValueError(f"duplicate {what} {item.name!r}")
        seen.add(item.name)
    return items


def arguments_schema(arguments: Sequence[ToolArgument]) -> dict[str, Any]:
    """The JSON Schema of a call's arguments object.

    With no declared arguments the tool takes any object (upstream ``mcp-tool``
    descriptors often declare none and pass the model's arguments through).
    """
    if not arguments:
        return {"type": "object"}
    return {
        "type": "object",
        "properties": {a.name: a.json_schema() for a in arguments},
        "required": [a.name for a in arguments if a.required],
        "additionalProperties": False,
    }


def schema_validator(schema: dict[str, Any]) -> Any:
    """A JSON Schema validator of ``schema`` (an arguments schema): what :func:`argument_problems` checks with.

    jsonschema is imported on first use: it is slow to import, and only callers need it.
    """
    from jsonschema import Draft202012Validator
    return Draft202012Validator(schema)


class ArgumentError(ValueError):
    """The arguments of a call do not fit the tool; the message says how to fix them."""


def _coerce(value: Any, type_: str) -> Any:
    """The one unambiguous reading of ``value`` as ``type_``, or ``value`` unchanged."""
    if fits(value, type_):
        return value
    if isinstance(value, str):
        text = value.strip()
        if type_ == "boolean" and text.lower() in ("true", "false"):
            return text.lower() == "true"
        if type_ in ("integer", "number"):
            try:
                number = limits.loads(text)
            except ValueError:
                return value
            if isinstance(number, (int, float)) and not isinstance(number, bool) \
                    and math.isfinite(number) and fits(number, type_):
                return int(number) if type_ == "integer" else number
        return value
    if type_ == "string" and isinstance(value, (int, float, bool)):
        return json.dumps(value)
    return value


def coerce_arguments(arguments: Mapping[str, Any], declared: Sequence[ToolArgument]) -> dict[str, Any]:
    """The call's arguments with the unambiguous coercions applied to declared ones."""
    types = {a.name: a.type for a in declared if a.typed}
    return {k: _coerce(v, types[k]) if k in types else v for k, v in arguments.items()}


def _example(arg: ToolArgument) -> Any:
    if arg.enum:
        return arg.enum[0]
    return {"string": "...", "number": 0, "integer": 0, "boolean": True, "object": {},
            "array": []}.get(arg.type, "...")


def _listing(arg: ToolArgument) -> str:
    notes = [arg.type] + ([] if arg.required else ["optional"])
    if arg.default is not None:
        notes.append(f"default {json.dumps(arg.default)}")
    if arg.enum:
        notes.append("one of " + ", ".join(json.dumps(v) for v in arg.enum))
    text = f"{arg.name} ({', '.join(notes)})"
    return f"{text}: {arg.description}" if arg.description else text


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def argument_problems(arguments: Mapping[str, Any], declared: Sequence[ToolArgument],
                      validator: Any) -> tuple[dict[str, Any], list[str]]:
    """``arguments`` coerced, and every way they do not fit ``declared`` (empty: they fit).

    ``validator`` is a jsonschema validator of :func:`arguments_schema`
    (compiled once per tool).  :func:`check_arguments` words the problems for
    a model; the catalog, for the author of an example call.
    """
    if not declared:
        return dict(arguments), []
    coerced = coerce_arguments(arguments, declared)
    by_name = {a.name: a for a in declared}
    unknown = [n for n in coerced if n not in by_name]
    missing = [a.name for a in declared if a.required and a.name not in coerced]
    problems = []
    if unknown:
        problems.append("unknown argument(s) " + ", ".join(repr(n) for n in unknown))
    if missing:
        problems.append("missing argument(s) " + ", ".join(repr(n) for n in missing))
    for error in sorted(validator.iter_errors(coerced), key=lambda e: list(e.absolute_path)):
        if error.validator in ("required", "additionalProperties"):
            continue  # said above, in the model's terms
        path = list(error.absolute_path)
        if not path:
            problems.append(error.message)
            continue
        arg = by_name.get(str(path[0]))
        where = f"argument {path[0]!r}" + "".join(f"[{p!r}]" for p in path[1:])
        if error.validator == "type":
            expected = error.validator_value
            problems.append(f"{where} must be of type {expected}, got {_shown(error.instance)}")
        elif error.validator == "enum":
            problems.append(f"{where} must be one of {', '.join(json.dumps(v) for v in error.validator_value)}, "
                            f"got {_shown(error.instance)}")
        else:
            problems.append(f"{where}: {error.message}" if arg is not None else error.message)
    return coerced, problems


def check_arguments(tool: str, arguments: Mapping[str, Any], declared: Sequence[ToolArgument],
                    validator: Any) -> dict[str, Any]:
    """The arguments to call ``tool`` with, coerced; raise :class:`ArgumentError` if they do not fit.

    The error lists every problem at once (:func:`argument_problems`), the
    arguments the tool takes, and an example call, so a model can correct
    itself in one step.
    """
    coerced, problems = argument_problems(arguments, declared, validator)
    if not problems:
        # What the tool gets for an optional argument left out: its declared default, if any.
        return {**coerced, **{a.name: a.default for a in declared if a.default is not None and a.name not in coerced}}
    listed = "; ".join(_listing(a) for a in declared)
    example = json.dumps({a.name: _example(a) for a in declared if a.required} or
                         {declared[0].name: _example(declared[0])})
    raise ArgumentError(f"wrong arguments for tool '{tool}': {'; '.join(problems)}. "
                        f"Its arguments are: {listed}. Call it again with Args: {example}, "
                        "or use another tool.")
