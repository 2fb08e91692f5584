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
* the sandbox refuses access to private attributes and unsafe callables;
* a template is compiled when first used, not when the config loads, within
  a compile budget the size of the render budget (Jinja evaluates constant
  parts while compiling), so a syntax error is reported to the first request
  for that template and logged then, and a template over the budget is
  refused alone (``template 'x' is over its compile budget: ...``).
"""

from __future__ import annotations

# The jobs live in sibling modules; this one keeps every name importable from here.
from trustgraph.base.formats.text import strip_fences

from .answers import PrefixStream, _excerpt, _schema_problem, _tails, join_prefix, parse_json, parse_jsonl
from .decision import _decide, _Step
from .rendering import PromptSet, Rendered, _render, decode_terms, fit_tool_terms
from .sandbox import _environment, _MissingVariable, _Sandbox, _Strict
from .spec import (
                   AFTER_RESULTS,
                   DEFAULT_SYSTEM,
                   FIRST_STEPS,
                   RESPONSE_TYPES,
                   Decision,
                   PromptError,
                   Template,
                   _load_template,
)

__all__ = ["AFTER_RESULTS", "DEFAULT_SYSTEM", "FIRST_STEPS", "RESPONSE_TYPES", "Decision", "PrefixStream",
           "PromptError", "PromptSet", "Rendered", "Template", "decode_terms", "fit_tool_terms", "join_prefix", "parse_json",
           "parse_jsonl", "strip_fences", "_Sandbox", "_Step", "_Strict", "_MissingVariable", "_decide", "_environment",
           "_excerpt", "_load_template", "_render", "_schema_problem", "_tails"]
