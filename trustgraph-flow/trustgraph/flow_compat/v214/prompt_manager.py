"""Upstream 2.1.4's ``trustgraph.template.prompt_manager``: ``PromptManager`` on our prompt templates.

Upstream's prompt service keeps its templates in a ``PromptManager``:
``load_config`` takes the ``prompt`` config type's items, ``render(id,
input)`` gives a template's text for some variables, ``invoke(id, input,
llm)`` renders the system and prompt templates, calls ``llm(system=...,
prompt=...)`` and reads the answer by the template's response type.  Here
the config is read, the templates compiled and rendered by our prompt
service's :class:`~trustgraph.prompt.template.rendering.PromptSet` (Jinja2's
sandbox within a render budget, where upstream uses ibis: the differences a
template author meets are in ``trustgraph.prompt.template.templates``), and
the answers read by its parsers.

As upstream: a template that does not compile fails ``load_config`` with a
``RuntimeError``; an unknown id is ``RuntimeError("ID invalid")`` to
``render`` and a ``KeyError`` to ``invoke``; a JSON
answer that does not parse, or does not match the template's schema, is a
``RuntimeError`` starting ``JSON parse fail`` or ``Schema validation fail``;
JSON-lines answers keep the lines that parse and match.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from trustgraph.base.formats.text import strip_fences
from trustgraph.base.safety import limits
from trustgraph.prompt.template.templates import PromptError, PromptSet, Rendered, Template, _schema_problem
from trustgraph.prompt.template.templates import parse_jsonl as _parse_jsonl

logger = logging.getLogger(__name__)

__all__ = ["Prompt", "PromptConfiguration", "PromptManager"]


class PromptConfiguration:
    """The loaded config: the system template's text, terms every template gets, the prompts."""

    def __init__(self, system_template: str, global_terms: dict[str, Any] | None = None,
                 prompts: dict[str, Prompt] | None = None) -> None:
        self.system_template = system_template
        self.global_terms = {} if global_terms is None else global_terms
        self.prompts = {} if prompts is None else prompts


class Prompt:
    """One template: its text, how its answer is read (``text``, ``json``, ``jsonl``), its own terms
    and the JSON Schema its answer must match."""

    def __init__(self, template: str, response_type: str = "text", terms: dict[str, Any] | None = None,
                 schema: dict[str, Any] | None = None) -> None:
        self.template = template
        self.response_type = response_type
        self.terms = terms
        self.schema = schema


def _encoded(terms: Mapping[str, Any]) -> dict[str, str]:
    """Terms as our templates take them: JSON text each (a value JSON cannot hold as its text)."""
    return {k: json.dumps(v, default=str) for k, v in terms.items()}


class PromptManager:
    """The templates of one ``prompt`` config, rendered and answered as upstream's manager does."""

    def __init__(self) -> None:
        self.load_config({})

    def load_config(self, config: Mapping[str, str]) -> None:
        """Load the ``prompt`` type's items (``system``, ``template-index``, ``template.<id>``) and
        compile every template now, so a broken one is said here (``RuntimeError``)."""
        prompts = PromptSet.from_config(dict(config))
        for tid in prompts.templates:
            for part in prompts.parts(tid):
                problem = prompts.compile(part)
                if problem:
                    raise RuntimeError(f"Error in template: {tid}: {problem}")
        self._set = prompts
        self.prompts = {tid: Prompt(t.source, t.response_type, {}, t.schema) for tid, t in prompts.templates.items()}
        self.config = PromptConfiguration(prompts.system_source, {}, self.prompts)
        self.terms = self.config.global_terms
        self.system_template = prompts.system
        self.templates = {tid: t.compiled for tid, t in prompts.templates.items()}
        logger.info("Prompt templates loaded: %d", len(self.prompts))

    def _template(self, id: str) -> Template:
        if id not in self.prompts:
            raise RuntimeError("ID invalid")
        return self._set.templates[id]

    def _render(self, id: str, input: Mapping[str, Any]) -> Rendered:
        self._template(id)
        terms = {**self.terms, **(self.prompts[id].terms or {}), **input}
        try:
            return self._set.render(id, _encoded(terms))
        except PromptError as e:
            raise RuntimeError(str(e)) from None

    def parse_json(self, text: str) -> Any:
        """A JSON answer: the first fenced block if there is one, else the whole text (a
        ``ValueError`` when it is not JSON)."""
        return limits.loads(strip_fences(text, first_block=True).strip())

    def parse_jsonl(self, text: str) -> list[Any]:
        """A JSON-lines answer: every line that parses (fences and blank lines skipped)."""
        return _parse_jsonl(Template(id="jsonl"), text)

    def render(self, id: str, input: Mapping[str, Any]) -> str:
        """Template ``id``'s text for the variables ``input`` (over the global and template terms)."""
        return self._render(id, input).prompt

    async def invoke(self, id: str, input: Mapping[str, Any], llm: Callable[..., Awaitable[str]]) -> Any:
        """Render ``id``, ask ``llm(system=..., prompt=...)`` and read its answer by the response type
        (an unknown ``id`` is a ``KeyError`` here, as upstream's)."""
        if id not in self.prompts:
            raise KeyError(id)
        template = self._template(id)
        # Rendered in a worker thread: the render budget traces the thread that renders.
        rendered = await asyncio.to_thread(self._render, id, input)
        answer = await llm(system=rendered.system, prompt=rendered.prompt)
        kind = template.response_type
        if kind == "text":
            return answer
        if kind == "json":
            try:
                value = self.parse_json(answer)
            except ValueError as e:
                logger.warning("Template %s: the answer is not JSON: %s", id, e)
                raise RuntimeError(f"JSON parse fail: {e}") from None
            problem = _schema_problem(template, value)
            if problem:
                raise RuntimeError(f"Schema validation fail: {problem}")
            return value
        if kind == "jsonl":
            return _parse_jsonl(template, answer)
        raise RuntimeError(f"Response type {kind} not known")
