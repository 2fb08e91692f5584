"""What one ``template.<id>`` config value may hold (see templates.py for the fields), checked
by a pydantic model, and compiled into a :class:`Template` on first use."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Literal

import jinja2
import jsonschema
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError, field_validator
from trustgraph.base.safety import limits

from .budget import BudgetExceeded
from .sandbox import _environment, compiling

DEFAULT_SYSTEM = "Be helpful."
RESPONSE_TYPES = ("text", "json", "jsonl")
FIRST_STEPS = ("any", "tool")
AFTER_RESULTS = ("any", "answer", "observation")


class PromptError(Exception):
    """A request cannot be served; the message is sent to the caller as is."""


@dataclass(frozen=True)
class Decision:
    """A template's ``decision`` policy (see the module docstring)."""

    first_step: str = "any"
    after_result: str = "any"
    text_template: str | None = None


class _DecisionSpec(BaseModel):
    """``decision`` as written in the config: only these fields, with these values."""

    model_config = ConfigDict(extra="forbid")

    first_step: Literal["any", "tool"] = Field("any", alias="first-step")
    after_result: Literal["any", "answer", "observation"] = Field("any", alias="after-result")
    text_template: StrictStr | None = Field(None, alias="text-template")


class _TemplateSpec(BaseModel):
    """``template.<id>`` as written in the config.  Fields of upstream's we do not use
    (``object-schema``) and any others are ignored, as upstream does.  A missing or empty
    optional field means its default, as it always has."""

    model_config = ConfigDict(extra="ignore")

    prompt: StrictStr
    prompt_jinja2: StrictStr | None = Field(None, alias="prompt-jinja2")
    strict: StrictBool = False
    response_type: Literal["text", "json", "jsonl"] = Field("text", alias="response-type")
    stop: list[StrictStr] = []
    prefix: StrictStr = ""
    replay: StrictStr = ""
    decision: _DecisionSpec | None = None
    json_schema: Any = Field(None, alias="schema")

    @field_validator("response_type", "stop", "prefix", "replay", mode="before")
    @classmethod
    def _empty_is_default(cls, value: Any, info: Any) -> Any:
        if not value:
            return {"response_type": "text", "stop": [], "prefix": "", "replay": ""}[info.field_name]
        return [value] if info.field_name == "stop" and isinstance(value, str) else value

    @field_validator("decision", mode="before")
    @classmethod
    def _decision_flag(cls, value: Any) -> Any:
        if value is None or value is False or value == 0:   # absent, or switched off
            return None
        return {} if value is True else value


def _spec_problem(tid: str, e: ValidationError) -> str:
    """The first problem pydantic found, as the one line a template author reads."""
    errors = e.errors()
    unknown = sorted(str(err["loc"][1]) for err in errors
                     if err["loc"][:1] == ("decision",) and err["type"] == "extra_forbidden")
    if unknown:
        return f"template {tid!r}: 'decision' has unknown field(s) {', '.join(unknown)}"
    err = errors[0]
    loc = tuple(str(part) for part in err["loc"])
    name = loc[0] if loc else "prompt"
    if name == "prompt":   # also a value that is not an object at all
        return f"template.{tid} must be a JSON object with a string field 'prompt'"
    if name == "strict":
        return f"template {tid!r}: 'strict' must be true or false"
    if name == "response-type":
        return f"template {tid!r}: response-type {err['input']!r} is not one of {', '.join(RESPONSE_TYPES)}"
    if name == "stop":
        return f"template {tid!r}: 'stop' must be a list of strings"
    if name == "decision" and len(loc) == 1:
        return f"template {tid!r}: 'decision' must be a JSON object (or true)"
    if loc[:2] == ("decision", "first-step"):
        return f"template {tid!r}: decision first-step must be one of {', '.join(FIRST_STEPS)}"
    if loc[:2] == ("decision", "after-result"):
        return f"template {tid!r}: decision after-result must be one of {', '.join(AFTER_RESULTS)}"
    if loc[:2] == ("decision", "text-template"):
        return f"template {tid!r}: decision text-template must name another template"
    return f"template {tid!r}: {name!r} must be a string"   # prompt-jinja2, prefix, replay


def compile_problem(what: str, e: Exception) -> str:
    """Why ``what`` (``template 'x'``, ``system template``) could not be compiled, in one line."""
    if isinstance(e, BudgetExceeded):
        return f"{what} is over its compile budget: {e}"
    if isinstance(e, jinja2.TemplateSyntaxError):
        return f"{what} does not compile: {e.message} (line {e.lineno})"
    if isinstance(e, RecursionError):
        return f"{what} does not compile: it is nested too deeply"
    return f"{what} does not compile: {type(e).__name__}: {e}"


def compile_source(env: jinja2.Environment, source: str, what: str) -> tuple[jinja2.Template | None, str | None]:
    """``source`` compiled within a compile budget (``sandbox.compiling``), or why not.

    Anything a template's text makes the compiler do ends here as that one
    template's problem (a number literal over Python's 4,300 digits, nesting
    past the recursion limit), except running out of memory, which a render
    worker answers by exiting.
    """
    try:
        with compiling():
            return env.from_string(source), None
    except MemoryError:
        raise
    except Exception as e:  # noqa: BLE001 - every failure is the template's, said in one line
        return None, compile_problem(what, e)


@dataclass
class Template:
    """One loaded ``template.<id>``; ``error`` is set when it cannot be used.

    Its sources are compiled on first use (:meth:`compile`), in the process
    and thread that renders it (a render worker), each template within a
    compile budget of its own: compiling may cost what rendering may, and one
    template over it is refused alone.
    """

    id: str
    source: str = ""
    response_type: str = "text"
    schema: dict[str, Any] | None = None
    stop: list[str] = field(default_factory=list)
    prefix: str = ""
    replay: str = ""
    strict: bool = False
    decision: Decision | None = None
    error: str | None = None
    compiled: jinja2.Template | None = None
    prefix_compiled: jinja2.Template | None = None
    replay_compiled: jinja2.Template | None = None
    validator: Any = None
    _compile_lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def compile(self) -> None:
        """Compile the prompt, prefix and replay, once, within one compile budget; a problem
        becomes :attr:`error`.  Safe from several threads (the thread renderer's)."""
        with self._compile_lock:
            if self.compiled is not None or self.error is not None:
                return
            env = _environment(self.strict)
            parts: dict[str, jinja2.Template] = {}
            name = "prompt"
            try:
                with compiling():
                    for name, text in (("prefix", self.prefix), ("replay", self.replay), ("prompt", self.source)):
                        if text or name == "prompt":
                            parts[name] = env.from_string(text)
            except MemoryError:
                raise
            except Exception as e:  # noqa: BLE001 - every failure is the template's, said in one line
                if isinstance(e, jinja2.TemplateSyntaxError) and name != "prompt":
                    self.error = (f"template {self.id!r}: '{name}' is not a valid template: {e.message} "
                                  f"(line {e.lineno})")
                else:
                    self.error = compile_problem(f"template {self.id!r}", e)
                return
            self.prefix_compiled, self.replay_compiled = parts.get("prefix"), parts.get("replay")
            self.compiled = parts["prompt"]


def _load_template(tid: str, raw: str | None) -> Template:
    """Parse one template (compiled on first use: :meth:`Template.compile`); problems land in
    ``error``, never raise."""
    t = Template(id=tid)
    if raw is None:
        t.error = f"template {tid!r} is listed in template-index but template.{tid} is missing"
        return t
    try:
        spec = _TemplateSpec.model_validate(limits.loads(raw))
    except ValidationError as e:
        t.error = _spec_problem(tid, e)
        return t
    except ValueError as e:
        t.error = f"template.{tid} is not valid JSON: {e}"
        return t
    t.source = spec.prompt_jinja2 or spec.prompt
    t.strict = spec.strict
    t.response_type = spec.response_type
    t.stop = [s for s in spec.stop if s]
    t.prefix, t.replay = spec.prefix, spec.replay
    if spec.decision is not None:
        text_template = spec.decision.text_template
        if text_template is not None and (not text_template or text_template == tid):
            t.error = f"template {tid!r}: decision text-template must name another template"
            return t
        t.decision = Decision(spec.decision.first_step, spec.decision.after_result, text_template)
    schema = spec.json_schema
    if schema is not None:
        try:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
        except jsonschema.SchemaError as e:
            t.error = f"template {tid!r}: schema is not a valid JSON Schema: {e.message}"
            return t
        t.schema, t.validator = schema, cls(schema)
    return t
