"""Prompt templates: loading from config, rendering, and reading the LLM's answer.

Pure logic, no messaging, so that every rule here is unit-tested without a
broker.  The config layout is upstream 2.1.4's, type ``prompt``:

* ``system``: JSON string, the system template (``"Be helpful."`` when missing
  or not a JSON string);
* ``template-index``: JSON array of ids; only listed ids load;
* ``template.<id>``: JSON ``{"prompt", "response-type": text|json|jsonl,
  "schema"}``.  Upstream's templates repo also writes ``object-schema``, which
  2.1.4 ignores, and so do we.

Optional fields are our extensions, which upstream ignores; ``stop`` and
the prefix travel to the LLM service as message properties so the wire
records stay upstream's:

* ``"stop": ["\\nObservation"]``: stop strings;
* ``"prefix": "Thought:"``: the start of the assistant's turn, given back
  whole in front of the answer (streamed or not, so both read the same);
* ``"replay"``: a template put into the assistant's turn before the prefix
  and not given back (an agent's earlier turns, so a chat model continues
  after them);
* ``"prompt-jinja2"``: the Jinja2 version of ``prompt``, preferred by this
  service, so a config can carry ``prompt`` in what upstream's ibis parses
  and a richer template for us;
* ``"strict": true``: a variable the terms do not supply is an error naming
  the template and the variable;
* ``"decision"``: the template asks for the agent's next step as one JSON
  object constrained by the schema the agent sends (request property
  ``decision-schema``, ``trustgraph.base.formats.decision_schema``), which goes on to
  the LLM service as its ``schema`` property.  Its policy, read from the
  agent's ``history`` term::

      {"first-step": "tool" | "any",
       "after-result": "answer" | "observation" | "any",
       "text-template": "<id>"}

  ``first-step: tool`` leaves the final answer out of the first step's
  schema when there are tools, so the model must pick one; after a tool
  result (the last step's observation not starting ``Error:``),
  ``answer`` leaves only the final answer, and ``observation`` answers with
  the observation itself, without asking the LLM.  A request without a
  schema (an upstream agent) is rendered with ``text-template`` instead,
  when one is named (a ReAct text template).

The ``tools``, ``tool_names`` and ``history`` terms hold the tools' providers'
text (descriptions, results); the bootstrap agent templates show it between
``<tool-data>`` and ``</tool-data>`` as data, not instructions, and before any
template renders, whatever in those terms reads as one of the two tags is
removed (``trustgraph.catalog.data_blocks``), so the text cannot end its block.

Rendering uses Jinja2's sandbox where upstream uses ibis.  Differences a
template author may meet:

* by default a missing variable renders as empty text and is false and
  empty, as in ibis (``strict`` makes it an error);
* Jinja's filter and test names, not ibis's (``|join``, ``|tojson``, ...);
* a trailing newline of the template is kept, as ibis does;
* the sandbox refuses access to private attributes and unsafe callables.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import partial, wraps
from typing import Any

import jinja2
import jsonschema
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import missing
from jsonschema.exceptions import best_match
from trustgraph.base.formats import decision_schema
from trustgraph.base.formats.text import strip_fences
from trustgraph.base.safety import limits
from trustgraph.catalog import data_blocks, relevance

from . import budget

DEFAULT_SYSTEM = "Be helpful."
RESPONSE_TYPES = ("text", "json", "jsonl")
FIRST_STEPS = ("any", "tool")
AFTER_RESULTS = ("any", "answer", "observation")


class PromptError(Exception):
    """A request cannot be served; the message is sent to the caller as is."""


class _MissingVariable(jinja2.exceptions.UndefinedError):
    """Raised on first use of an undefined value, carrying what was missing."""

    def __init__(self, name: str | None, detail: str) -> None:
        super().__init__(detail)
        self.name = name
        self.detail = detail


class _Strict(jinja2.StrictUndefined):
    """StrictUndefined whose error carries the missing name, for the error reply.

    Every failing use (str, iteration, truth, arithmetic...) raises
    ``self._undefined_exception(message)``; we make that our exception type.
    """

    __slots__ = ()

    def __init__(self, hint: str | None = None, obj: Any = missing, name: str | None = None,
                 exc: Any = None) -> None:
        super().__init__(hint, obj, name, partial(_MissingVariable, name))


_PADDING_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})


class _Sandbox(SandboxedEnvironment):
    """The sandbox, refusing unsafe attributes at once even where missing values are lenient,
    and counting every operator and call against the render budget (budget.py): refused before
    it runs when its one result would be over it, its CPU time checked before, what it built
    counted after."""

    # Intercepted, so also never folded into a constant when the template compiles.
    intercepted_binops = frozenset({"*", "**", "+", "-", "/", "//", "%"})

    def __init__(self, **options: Any) -> None:
        super().__init__(finalize=budget.check_printed, **options)
        for name in ("center", "indent"):
            self.filters[name] = _width_checked(name, self.filters[name])
        # Filters are called directly by the compiled template, not through call().
        for name, fn in list(self.filters.items()):
            self.filters[name] = _counted(name, fn)

    def wrap_str_format(self, value: Any) -> Any:
        """``str.format`` as the sandbox wraps it (at attribute access), with its widths checked first."""
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        owner, is_map = value.__self__, value.__name__ == "format_map"

        @wraps(wrapped)
        def checked(*args: Any, **kwargs: Any) -> Any:
            mapping = (args[0] if args and isinstance(args[0], dict) else {}) if is_map else kwargs
            budget.check_format(owner, () if is_map else args, mapping)
            return wrapped(*args, **kwargs)
        return checked

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        raise jinja2.exceptions.SecurityError(
            f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe")

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        budget.before_step()
        budget.check_binop(operator, left, right)
        result = super().call_binop(context, operator, left, right)
        budget.after_step(result)
        return result

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - Jinja's signature
        budget.before_step()
        if isinstance(getattr(__obj, "__self__", None), str) and getattr(__obj, "__name__", "") in _PADDING_METHODS:
            budget.check_width(__obj.__name__, args[0] if args else next(iter(kwargs.values()), None))
        result = super().call(__context, __obj, *args, **kwargs)
        budget.after_step(result)
        return result


# What a filter's input says about its output before it runs (budget.py).
_BEFORE_FILTER = {
    "string": lambda value, *args, **kwargs: budget.check_printed(value),
    "pprint": lambda value, *args, **kwargs: budget.check_printed(value),
    "format": lambda value, *args, **kwargs: budget.check_printf(value, args or kwargs),
}


def _counted(name: str, fn: Any) -> Any:
    """``fn`` (a filter) with its CPU time checked before and what it built counted after."""
    skip = 1 if getattr(fn, "jinja_pass_arg", None) is not None else 0   # the context or environment
    before = _BEFORE_FILTER.get(name)

    @wraps(fn)
    def counted(*args: Any, **kwargs: Any) -> Any:
        budget.before_step()
        if before is not None and len(args) > skip:
            before(*args[skip:], **kwargs)
        result = fn(*args, **kwargs)
        budget.after_step(result)
        return result
    return counted


def _width_checked(name: str, fn: Any) -> Any:
    @wraps(fn)
    def checked(value: Any, width: Any = 80, *args: Any, **kwargs: Any) -> Any:
        budget.check_width(name, width)
        return fn(value, width, *args, **kwargs)
    return checked


def _environment(strict: bool = False) -> SandboxedEnvironment:
    """Strict: a missing variable raises; lenient (upstream's ibis): it is empty, false and chainable."""
    undefined = _Strict if strict else jinja2.ChainableUndefined
    return _Sandbox(undefined=undefined, autoescape=False, keep_trailing_newline=True)


@dataclass(frozen=True)
class Decision:
    """A template's ``decision`` policy (see the module docstring)."""

    first_step: str = "any"
    after_result: str = "any"
    text_template: str | None = None


def _load_decision(tid: str, raw: Any) -> Decision | str:
    """The policy, or a message saying what is wrong with it."""
    if raw is True:
        return Decision()
    if not isinstance(raw, dict):
        return f"template {tid!r}: 'decision' must be a JSON object (or true)"
    unknown = sorted(set(raw) - {"first-step", "after-result", "text-template"})
    if unknown:
        return f"template {tid!r}: 'decision' has unknown field(s) {', '.join(unknown)}"
    first = raw.get("first-step", "any")
    after = raw.get("after-result", "any")
    text = raw.get("text-template")
    if first not in FIRST_STEPS:
        return f"template {tid!r}: decision first-step must be one of {', '.join(FIRST_STEPS)}"
    if after not in AFTER_RESULTS:
        return f"template {tid!r}: decision after-result must be one of {', '.join(AFTER_RESULTS)}"
    if text is not None and (not isinstance(text, str) or not text or text == tid):
        return f"template {tid!r}: decision text-template must name another template"
    return Decision(first, after, text)


@dataclass
class Template:
    """One loaded ``template.<id>``; ``error`` is set when it cannot be used."""

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


@dataclass
class Rendered:
    """What to send to the LLM for one request, and how to read its answer."""

    template: Template
    system: str
    prompt: str
    prefix: str = ""
    replay: str = ""
    #: The JSON Schema the LLM's output must follow (a structured decision).
    schema: dict[str, Any] | None = None
    #: The answer itself, when the template's policy needs no LLM call.
    direct: str | None = None
    #: The actions the agent offered (every tool and the answer, before the policy narrowed
    #: them): the LLM service is asked how likely each one was (``score-choices``).
    choices: list[str] | None = None

    @property
    def visible_prefix(self) -> str:
        """What is put back in front of the answer: the whole prefix (never the replay).

        Whole, so that a streamed answer reads exactly as the non-streamed one
        and a parser that needs ``Thought:`` before ``Final Answer:`` finds it.
        """
        return self.prefix

    @property
    def properties(self) -> dict[str, str]:
        """Pulsar properties of the text-completion request (our extensions)."""
        props: dict[str, str] = {}
        if self.template.stop:
            props["stop"] = json.dumps(self.template.stop)
        if self.replay or self.prefix:
            props["prefix"] = self.replay + self.prefix
        if self.schema is not None:
            props[decision_schema.LLM_PROPERTY] = json.dumps(self.schema)
        if self.choices:
            props[decision_schema.CHOICES_PROPERTY] = decision_schema.choices_request(self.choices)
        return props


def _load_template(tid: str, raw: str | None) -> Template:
    """Parse and compile one template; problems land in ``error``, never raise."""
    t = Template(id=tid)
    if raw is None:
        t.error = f"template {tid!r} is listed in template-index but template.{tid} is missing"
        return t
    try:
        spec = limits.loads(raw)
    except ValueError as e:
        t.error = f"template.{tid} is not valid JSON: {e}"
        return t
    if not isinstance(spec, dict) or not isinstance(spec.get("prompt"), str):
        t.error = f"template.{tid} must be a JSON object with a string field 'prompt'"
        return t
    jinja_source = spec.get("prompt-jinja2")
    if jinja_source is not None and not isinstance(jinja_source, str):
        t.error = f"template {tid!r}: 'prompt-jinja2' must be a string"
        return t
    t.source = jinja_source or spec["prompt"]
    strict = spec.get("strict", False)
    if not isinstance(strict, bool):
        t.error = f"template {tid!r}: 'strict' must be true or false"
        return t
    t.strict = strict
    env = _environment(strict)
    t.response_type = spec.get("response-type") or "text"
    if t.response_type not in RESPONSE_TYPES:
        t.error = f"template {tid!r}: response-type {t.response_type!r} is not one of {', '.join(RESPONSE_TYPES)}"
        return t
    stop = spec.get("stop") or []
    if isinstance(stop, str):
        stop = [stop]
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        t.error = f"template {tid!r}: 'stop' must be a list of strings"
        return t
    t.stop = [s for s in stop if s]
    prefix = spec.get("prefix") or ""
    if not isinstance(prefix, str):
        t.error = f"template {tid!r}: 'prefix' must be a string"
        return t
    t.prefix = prefix
    replay = spec.get("replay") or ""
    if not isinstance(replay, str):
        t.error = f"template {tid!r}: 'replay' must be a string"
        return t
    t.replay = replay
    for name, text in (("prefix", prefix), ("replay", replay)):
        if not text:
            continue
        try:
            setattr(t, f"{name}_compiled", env.from_string(text))
        except jinja2.TemplateSyntaxError as e:
            t.error = f"template {tid!r}: '{name}' is not a valid template: {e.message} (line {e.lineno})"
            return t
    if spec.get("decision") not in (None, False):
        decision = _load_decision(tid, spec["decision"])
        if isinstance(decision, str):
            t.error = decision
            return t
        t.decision = decision
    schema = spec.get("schema")
    if schema is not None:
        try:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
        except jsonschema.SchemaError as e:
            t.error = f"template {tid!r}: schema is not a valid JSON Schema: {e.message}"
            return t
        t.schema, t.validator = schema, cls(schema)
    try:
        t.compiled = env.from_string(t.source)
    except jinja2.TemplateSyntaxError as e:
        t.error = f"template {tid!r} does not compile: {e.message} (line {e.lineno})"
    return t


@dataclass
class PromptSet:
    """An immutable snapshot of the ``prompt`` config; swapped whole on reload.

    A request keeps the snapshot it started with, so a reload never changes a
    template half-way through a call.
    """

    system_source: str = DEFAULT_SYSTEM
    system: jinja2.Template | None = None
    system_strict: jinja2.Template | None = None
    system_error: str | None = None
    templates: dict[str, Template] = field(default_factory=dict)

    @classmethod
    def from_config(cls, values: dict[str, str]) -> PromptSet:
        """Build from the ``prompt`` type's ``{key: value}`` map.

        One broken template is reported on use and does not stop the others
        loading.
        """
        ps = cls()
        raw_system = values.get("system")
        if raw_system is not None:
            try:
                decoded = limits.loads(raw_system)
                if isinstance(decoded, str):
                    ps.system_source = decoded
            except ValueError:
                pass
        try:
            # Compiled twice: it renders as strictly as the template it goes with.
            ps.system = _environment().from_string(ps.system_source)
            ps.system_strict = _environment(strict=True).from_string(ps.system_source)
        except jinja2.TemplateSyntaxError as e:
            ps.system_error = f"system template does not compile: {e.message} (line {e.lineno})"
        index: list[Any] = []
        raw_index = values.get("template-index")
        if raw_index:
            try:
                index = limits.loads(raw_index)
            except ValueError:
                index = []
            if not isinstance(index, list):
                index = []
        for tid in index:
            if isinstance(tid, str) and tid not in ps.templates:
                ps.templates[tid] = _load_template(tid, values.get(f"template.{tid}"))
        return ps

    @property
    def errors(self) -> dict[str, str]:
        """Problems found at load, by template id (``system`` for the system template)."""
        found = {tid: t.error for tid, t in self.templates.items() if t.error}
        if self.system_error:
            found["system"] = self.system_error
        return found

    def render(self, tid: str, terms: dict[str, str], schema: dict[str, Any] | None = None) -> Rendered:
        """Render template ``tid`` and the system template from JSON-encoded terms.

        ``schema`` is the agent's decision schema, used by a template with a
        ``decision`` policy (see the module docstring) and ignored by others.
        Everything rendered for the request shares one budget (budget.py);
        call this in a worker thread, since the budget traces the calling one.
        """
        with budget.RenderBudget() as allowance:
            return self._render_all(tid, terms, schema, allowance)

    def _render_all(self, tid: str, terms: dict[str, str], schema: dict[str, Any] | None,
                    allowance: budget.RenderBudget) -> Rendered:
        t = self._template(tid)
        if t.decision is not None and schema is None and t.decision.text_template:
            if t.decision.text_template not in self.templates:
                raise PromptError(f"template {tid!r} names text-template {t.decision.text_template!r} for "
                                  "requests without a decision schema, and that template is not defined "
                                  "(add it to template-index)")
            t = self._template(t.decision.text_template)
        variables = _fit_tools(decode_terms(terms))
        choices = None
        if t.decision is not None and schema is not None:
            rendered = _decide(t.decision, schema, variables.get("history"))
            if rendered.direct is not None:
                return Rendered(template=t, system="", prompt="", direct=rendered.direct)
            choices = decision_schema.action_names(schema)
            schema = rendered.schema
        else:
            schema = None
        # The providers' text (descriptions, observations) cannot end the templates' data blocks;
        # only what is rendered is neutralised: an observation answered with directly stays as it is.
        variables = data_blocks.as_data(variables)
        render = partial(_render, variables=variables, allowance=allowance)
        prompt = render(t.compiled, f"template {t.id!r}")
        system = render(self.system_strict if t.strict else self.system, f"system template (rendering {t.id!r})")
        prefix = render(t.prefix_compiled, f"prefix of template {t.id!r}") if t.prefix_compiled is not None else ""
        replay = render(t.replay_compiled, f"replay of template {t.id!r}") if t.replay_compiled is not None else ""
        return Rendered(template=t, system=system, prompt=prompt, prefix=prefix, replay=replay,
                        schema=schema, choices=choices)

    def _template(self, tid: str) -> Template:
        t = self.templates.get(tid)
        if t is None:
            known = ", ".join(sorted(self.templates)[:20]) or "none"
            raise PromptError(f"template {tid!r} is not defined (templates: {known})")
        if t.error:
            raise PromptError(t.error)
        if self.system_error:
            raise PromptError(self.system_error)
        return t


@dataclass
class _Step:
    schema: dict[str, Any] | None = None
    direct: str | None = None


def _decide(policy: Decision, schema: dict[str, Any], history: Any) -> _Step:
    """What a ``decision`` template asks of this step: the (narrowed) schema, or the answer itself."""
    steps = history if isinstance(history, list) else []
    last = steps[-1] if steps and isinstance(steps[-1], dict) else None
    observation = last.get("observation") if last is not None else None
    succeeded = isinstance(observation, str) and bool(observation.strip()) \
        and not observation.startswith("Error:")
    if succeeded and policy.after_result == "observation":
        return _Step(direct=decision_schema.final(observation.strip()))
    if succeeded and policy.after_result == "answer":
        return _Step(schema=decision_schema.narrow(schema, calls=False))
    if not steps and policy.first_step == "tool":
        return _Step(schema=decision_schema.narrow(schema, answer=False))
    return _Step(schema=schema)


def _fit_tools(variables: dict[str, Any]) -> dict[str, Any]:
    """The variables with ``tools`` cut to what one prompt has room for, most relevant first.

    An upstream agent sends every tool it has; thousands of them would take
    a template past its render budget and no model reads them all.  Our
    agent sends only what fits already, and then nothing changes.
    """
    tools = variables.get("tools")
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        return variables
    question = variables.get("question")
    kept = relevance.for_prompt(question if isinstance(question, str) else "", tools)
    if len(kept) == len(tools):
        return variables
    out = dict(variables, tools=kept)
    if isinstance(variables.get("tool_names"), str):
        out["tool_names"] = ", ".join(str(t.get("name", "")) for t in kept)
    return out


def decode_terms(terms: dict[str, str]) -> dict[str, Any]:
    """Each term is JSON text (the gateway and the agent JSON-encode every value)."""
    out: dict[str, Any] = {}
    for key, value in (terms or {}).items():
        try:
            out[key] = limits.loads(value) if value is not None else None
        except limits.JsonLimitError as e:
            raise PromptError(f"term {key!r}: {e}") from None
        except (TypeError, ValueError):
            raise PromptError(f"term {key!r} is not JSON text: {str(value)[:80]!r}") from None
    return out


def _render(compiled: jinja2.Template | None, what: str, variables: dict[str, Any],
            allowance: budget.RenderBudget) -> str:
    if compiled is None:
        raise PromptError(f"{what} is not loaded")
    try:
        parts = []
        for chunk in compiled.generate(variables):
            allowance.output(chunk)
            parts.append(chunk)
        return "".join(parts)
    except budget.BudgetExceeded as e:
        raise PromptError(f"{what} is over its render budget: {e}") from None
    except _MissingVariable as e:
        if "is unsafe" in e.detail:
            raise PromptError(f"{what}: refused by the template sandbox: {e.detail}") from None
        if e.name is not None and e.detail.endswith("is undefined"):
            raise PromptError(f"{what}: missing variable {e.name!r}") from None
        raise PromptError(f"{what}: missing variable {e.name!r} ({e.detail})") from None
    except jinja2.exceptions.SecurityError as e:
        raise PromptError(f"{what}: refused by the template sandbox: {e}") from None
    except Exception as e:  # a filter or method failing on the given values
        raise PromptError(f"{what} failed to render: {type(e).__name__}: {e}") from None


# -- the answer ----------------------------------------------------------------

def _excerpt(text: str, limit: int = 120) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[:limit] + "..."


def _schema_problem(t: Template, value: Any) -> str | None:
    if t.validator is None:
        return None
    err = best_match(t.validator.iter_errors(value))
    if err is None:
        return None
    where = "/".join(str(p) for p in err.absolute_path)
    return f"{err.message}" + (f" (at /{where})" if where else "")


def parse_json(t: Template, text: str) -> Any:
    """A ``json`` template's answer: parsed (fences stripped) and validated."""
    try:
        value = limits.loads(text.strip())
    except ValueError:
        body = strip_fences(text, first_block=True)
        try:
            value = limits.loads(body)
        except ValueError as e:
            raise PromptError(
                f"template {t.id!r}: the LLM's answer is not valid JSON ({e.msg} at line "
                f"{e.lineno} column {e.colno}): {_excerpt(text)!r}") from None
    problem = _schema_problem(t, value)
    if problem:
        raise PromptError(f"template {t.id!r}: the LLM's answer does not match the schema: {problem}")
    return value


def parse_jsonl(t: Template, text: str) -> list[Any]:
    """A ``jsonl`` template's answer: one value per line; bad or invalid lines skipped.

    Skipping (as upstream does) is the point of jsonl: an answer cut short by
    the token limit still yields every complete line before the cut.
    """
    out: list[Any] = []
    for line in strip_fences(text, first_block=True).splitlines():
        line = line.strip()
        if not line or line.startswith("```"):
            continue
        try:
            value = limits.loads(line)
        except ValueError:
            continue
        if _schema_problem(t, value) is None:
            out.append(value)
    return out


def _tails(prefix: str) -> list[str]:
    """The prefix, then each of its line-suffixes: what an answer may already start with."""
    lines = prefix.split("\n")
    return [t for t in ("\n".join(lines[k:]) for k in range(len(lines))) if t]


def join_prefix(prefix: str, text: str) -> str:
    """The whole assistant turn: ``prefix`` + the LLM's continuation.

    Our LLM services continue after the prefix, so their text lacks it.  An
    LLM service that ignores the ``prefix`` property answers a whole turn,
    which usually starts with the prefix, or with its last lines, already
    (the template asks for that format); only what is missing is put back,
    so nothing appears twice.
    """
    if not prefix:
        return text
    stripped = text.lstrip()
    for tail in _tails(prefix):
        if stripped.startswith(tail):
            return prefix[:len(prefix) - len(tail)] + stripped
    return prefix + text


class PrefixStream:
    """:func:`join_prefix` for a stream of chunks.

    Holds back the first characters only until it is clear whether the
    stream starts with the prefix (or its last lines), so chunks otherwise
    flow through at once.
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._tails = _tails(prefix)
        self._buf = ""
        self._decided = not prefix

    def feed(self, chunk: str) -> str:
        """Text to emit now for ``chunk`` (possibly empty while undecided)."""
        if self._decided:
            return chunk
        self._buf += chunk
        probe = self._buf.lstrip()
        if any(len(probe) < len(tail) and tail.startswith(probe) for tail in self._tails):
            return ""
        return self.finish()

    def finish(self) -> str:
        """Text still held back, at the end of the stream."""
        if self._decided:
            return ""
        self._decided = True
        out, self._buf = join_prefix(self.prefix, self._buf), ""
        return out
