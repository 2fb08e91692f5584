"""The ``prompt`` config as one snapshot (:class:`PromptSet`), and rendering a request's
template, system template, prefix and replay from its terms."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import jinja2
from trustgraph.base.formats import completion, decision_schema
from trustgraph.base.safety import limits
from trustgraph.catalog import data_blocks, ranking

from . import budget
from .decision import _decide
from .sandbox import _environment, _MissingVariable
from .spec import DEFAULT_SYSTEM, PromptError, Template, _load_template, compile_source

#: The parts of a config a render compiles (:meth:`PromptSet.parts`): ``template.<id>`` (as its
#: config key), the system template, and the system template as a strict template renders it.
SYSTEM, SYSTEM_STRICT = "system", "system.strict"


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
    #: Where in the output they are scored: the JSON decision's ``action``, or, for a template
    #: that asks for ReAct text, where the text first names one (``FIRST_MENTION``).
    choices_field: str = "action"

    @property
    def visible_prefix(self) -> str:
        """What is put back in front of the answer: the whole prefix (never the replay).

        Whole, so that a streamed answer reads exactly as the non-streamed one
        and a parser that needs ``Thought:`` before ``Final Answer:`` finds it.
        """
        return self.prefix

    @property
    def turn(self) -> str:
        """The start of the assistant's turn the model continues: the replayed turns, then the prefix."""
        return self.replay + self.prefix

    @property
    def request_prompt(self) -> str:
        """The request's ``prompt``: with the turn's start at its end (``formats.completion``), so
        an LLM service that cannot continue a turn still shows the model the whole dialog."""
        return completion.with_turn(self.prompt, self.turn)

    @property
    def properties(self) -> dict[str, str]:
        """Pulsar properties of the text-completion request (our extensions)."""
        props: dict[str, str] = {}
        if self.template.stop:
            props[completion.STOP] = json.dumps(self.template.stop)
        if self.turn:
            props[completion.PREFIX] = self.turn
            props[completion.PREFIX_PROMPT] = self.prompt
        if self.schema is not None:
            props[decision_schema.LLM_PROPERTY] = json.dumps(self.schema)
        if self.choices:
            props[decision_schema.CHOICES_PROPERTY] = decision_schema.choices_request(self.choices,
                                                                                     self.choices_field)
        return props


@dataclass
class PromptSet:
    """An immutable snapshot of the ``prompt`` config; swapped whole on reload.

    A request keeps the snapshot it started with, so a reload never changes a
    template half-way through a call.  Loading it compiles nothing: each part
    is compiled when a render first needs it (:meth:`parts`, :meth:`compile`),
    within a compile budget of its own, in the render worker.
    """

    system_source: str = DEFAULT_SYSTEM
    system: jinja2.Template | None = None
    system_strict: jinja2.Template | None = None
    system_error: str | None = None
    templates: dict[str, Template] = field(default_factory=dict)
    _system_lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

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
        """Problems found so far (at load, or compiling a part), by template id (``system`` for
        the system template)."""
        found = {tid: t.error for tid, t in self.templates.items() if t.error}
        if self.system_error:
            found["system"] = self.system_error
        return found

    def parts(self, tid: str, schema: dict[str, Any] | None = None) -> list[str]:
        """What rendering ``tid`` (for a request with or without a decision ``schema``) compiles,
        each part within a compile budget of its own: the template (``template.<id>``), the text
        template it renders instead for a request without a schema, and the system template as
        strictly as that one renders it (:data:`SYSTEM`, :data:`SYSTEM_STRICT`)."""
        t = self.templates.get(tid)
        if t is None:
            return []
        rendered = t
        named = t.decision.text_template if t.decision is not None and schema is None else None
        if named is not None and named in self.templates:
            rendered = self.templates[named]
        used = [t] if rendered is t else [t, rendered]
        return [*(f"template.{u.id}" for u in used), SYSTEM_STRICT if rendered.strict else SYSTEM]

    @staticmethod
    def describe(part: str) -> str:
        """``part`` as an error names it: ``template 'x'``, ``system template``."""
        if part in (SYSTEM, SYSTEM_STRICT):
            return "system template"
        return f"template {part.removeprefix('template.')!r}"

    def problem(self, part: str) -> str | None:
        """Why ``part`` cannot be used, once that is known."""
        if part in (SYSTEM, SYSTEM_STRICT):
            return self.system_error
        t = self.templates.get(part.removeprefix("template."))
        return t.error if t is not None else None

    def refuse(self, part: str, problem: str) -> None:
        """Record that ``part`` cannot be used, found elsewhere (a render worker killed while it
        compiled it): every later request for it is answered at once."""
        if part in (SYSTEM, SYSTEM_STRICT):
            self.system_error = self.system_error or problem
            return
        t = self.templates.get(part.removeprefix("template."))
        if t is not None and t.error is None:
            t.error = problem

    def compile(self, part: str) -> str | None:
        """Compile ``part`` (see :meth:`parts`) if not done yet; why it cannot be used, or None.
        Call it where renders run (a worker; a thread), never on an event loop."""
        if part in (SYSTEM, SYSTEM_STRICT):
            strict = part == SYSTEM_STRICT
            with self._system_lock:
                if self.system_error is None and (self.system_strict if strict else self.system) is None:
                    compiled, self.system_error = compile_source(_environment(strict), self.system_source,
                                                                 "system template")
                    setattr(self, "system_strict" if strict else "system", compiled)
            return self.system_error
        t = self.templates.get(part.removeprefix("template."))
        if t is None:
            return None
        t.compile()
        return t.error

    def render(self, tid: str, terms: dict[str, str], schema: dict[str, Any] | None = None) -> Rendered:
        """Render template ``tid`` and the system template from JSON-encoded terms.

        ``schema`` is the agent's decision schema, used by a template with a
        ``decision`` policy (see the module docstring) and ignored by others.
        The parts not compiled yet are compiled first, each within its compile
        budget; then everything rendered for the request shares one budget
        (budget.py).  Call this in a worker thread, since the budgets trace
        the calling one.
        """
        for part in self.parts(tid, schema):
            self.compile(part)
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
        variables = decode_terms(terms)
        choices, choices_field = None, "action"
        if t.decision is not None and schema is not None:
            rendered = _decide(t.decision, schema, variables.get("history"))
            if rendered.direct is not None:
                return Rendered(template=t, system="", prompt="", direct=rendered.direct)
            choices = decision_schema.action_names(schema)
            schema = rendered.schema
        elif schema is not None:
            # ReAct text for an agent that offered actions: its reply names the tool it picks
            # ("I will use the weather tool"), so how sure the model was is read there.
            choices, choices_field = decision_schema.action_names(schema), decision_schema.FIRST_MENTION
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
                        schema=schema, choices=choices, choices_field=choices_field)

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


def fit_tool_terms(terms: dict[str, str]) -> dict[str, str]:
    """The terms with ``tools`` (and ``tool_names``) cut to what one prompt has room for, the tools
    nearest the question first (``catalog.ranking``); the terms unchanged when they fit.

    An upstream agent sends every tool it has; thousands of them would take
    a template past its render budget and no model reads them all.  Our
    agent sends only what fits already, and then nothing changes.  Run by
    the service before a render, outside the template's budget (ranking is
    ours, not the template's: the first ranking of a new catalog of
    thousands embeds them all); a term that is not JSON is left for the
    render to report.
    """
    try:
        tools = limits.loads(terms.get("tools") or "null")
        question = limits.loads(terms.get("question") or "null")
    except (TypeError, ValueError):
        return terms
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools) or ranking.all_fit(tools):
        return terms
    kept = ranking.for_prompt(question if isinstance(question, str) else "", tools)
    if len(kept) == len(tools):
        return terms
    out = dict(terms, tools=json.dumps(kept))
    if "tool_names" in terms:
        out["tool_names"] = json.dumps(", ".join(str(t.get("name", "")) for t in kept))
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
