"""text-completion-scripted: a deterministic TEST STAND-IN for an LLM.

Not a language model.  It answers from a script file so that tests (of the
agent, prompt-template, the gateway...) get exactly the replies they expect.
Nothing a user runs uses it by default.

The script (``--script PATH``, JSON)::

    {"rules": [
        {"match": "capital of France", "reply": "Paris"},
        {"match": "Question: .*", "replies": ["first answer", "second answer"]}
     ],
     "default": "I don't know.",
     "delay": 0.0,
     "record": "/tmp/sent.jsonl"}

* Each rule's ``match`` is a regular expression searched (``re.search``,
  DOTALL) in ``system + "\\n\\n" + prompt``; rules are tried in order and the
  first match wins.
* ``replies`` are given in order, one per matching request, and the last one
  repeats; counts are per rule and per process.
* No match gives ``default``; with no ``default`` that is an ``llm-error``.
* ``delay`` seconds pass before each reply (to test timeouts and overlap).
* A rule's ``scores`` (an object of option name -> probability) are the choice
  scores reported with its replies when the request asks for them
  (``score-choices``), as a model server reading the model's token
  probabilities would: a test or bench can say "the model would rather have
  answered" while its reply, forced by the schema, names a tool.
* ``record``: a file to which every request is appended as it arrives, one
  JSON line ``{"system", "prompt", "prefix"}``, so a test can read exactly
  what a model would have been shown (the prefix holds a template's replayed
  turns).
* Stop strings cut the reply as a real model would.  A ``prefix`` is treated
  as the start of the reply: when the reply starts with it, only the rest is
  returned (what a model continuing the prefix would produce).
* A ``schema`` (request property) is enforced as a model server would:
  a reply that is not JSON following it is an ``llm-error`` naming the
  problem, so a test sees both that the schema arrived and what it allowed.
* Streaming splits the reply into a few chunks.  Token counts are word
  counts; the model name is ``scripted``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import best_match
from trustgraph.base.processors.llm_service import CompletionService, LlmResult, cut_at_stop
from trustgraph.exceptions import LlmError

default_ident = "text-completion"
MODEL_NAME = "scripted"


class ScriptError(ValueError):
    """The script file cannot be used; raised at start-up, naming the problem."""


@dataclass
class Rule:
    pattern: re.Pattern
    replies: list[str]
    scores: dict[str, float] | None = None
    used: int = 0

    def next_reply(self) -> str:
        reply = self.replies[min(self.used, len(self.replies) - 1)]
        self.used += 1
        return reply


class Script:
    """Rules loaded from a script file; ``reply`` picks the answer for a request."""

    def __init__(self, data: Any, source: str = "script") -> None:
        if not isinstance(data, dict):
            raise ScriptError(f"{source}: must be a JSON object with 'rules'")
        rules = data.get("rules", [])
        if not isinstance(rules, list):
            raise ScriptError(f"{source}: 'rules' must be a list")
        self.rules: list[Rule] = []
        for n, rule in enumerate(rules):
            where = f"{source}: rule {n}"
            if not isinstance(rule, dict) or not isinstance(rule.get("match"), str):
                raise ScriptError(f"{where} needs a string 'match'")
            try:
                pattern = re.compile(rule["match"], re.S)
            except re.error as e:
                raise ScriptError(f"{where}: bad regular expression: {e}") from None
            if isinstance(rule.get("reply"), str):
                replies = [rule["reply"]]
            else:
                replies = rule.get("replies")
                if (not isinstance(replies, list) or not replies
                        or not all(isinstance(r, str) for r in replies)):
                    raise ScriptError(f"{where} needs 'reply' (a string) or 'replies' (a non-empty list of strings)")
            scores = rule.get("scores")
            if scores is not None and (not isinstance(scores, dict) or not all(
                    isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool)
                    for k, v in scores.items())):
                raise ScriptError(f"{where}: 'scores' must be an object of option names and probabilities")
            self.rules.append(Rule(pattern, list(replies), None if scores is None else
                                   {k: float(v) for k, v in scores.items()}))
        self.default: str | None = data.get("default")
        if self.default is not None and not isinstance(self.default, str):
            raise ScriptError(f"{source}: 'default' must be a string")
        try:
            self.delay = float(data.get("delay") or 0.0)
        except (TypeError, ValueError):
            raise ScriptError(f"{source}: 'delay' must be a number") from None
        self.record: str | None = data.get("record")
        if self.record is not None and not isinstance(self.record, str):
            raise ScriptError(f"{source}: 'record' must be a file name")

    @classmethod
    def load(cls, path: str) -> Script:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as e:
            raise ScriptError(f"cannot read script {path}: {e.strerror or e}") from None
        try:
            data = json.loads(text)
        except ValueError as e:
            raise ScriptError(f"script {path} is not JSON: {e}") from None
        return cls(data, path)

    def reply(self, text: str) -> str:
        return self.answer(text)[0]

    def answer(self, text: str) -> tuple[str, dict[str, float] | None]:
        """The reply for a request's text, and the rule's choice scores (None: it has none)."""
        for rule in self.rules:
            if rule.pattern.search(text):
                return rule.next_reply(), rule.scores
        if self.default is None:
            raise LlmError("scripted model: no rule matches and the script has no default")
        return self.default, None


def split_chunks(text: str, parts: int = 3) -> list[str]:
    """About ``parts`` chunks on word boundaries, whitespace kept, joining back to ``text``."""
    pieces = re.findall(r"\S+\s*|\s+", text)
    if len(pieces) <= 1:
        return [text] if text else []
    size = -(-len(pieces) // parts)
    return ["".join(pieces[i:i + size]) for i in range(0, len(pieces), size)]


def check_schema(reply: str, schema: dict[str, Any]) -> None:
    """Raise :class:`LlmError` unless ``reply`` is JSON that follows ``schema``."""
    try:
        value = json.loads(reply)
    except ValueError as e:
        raise LlmError(f"scripted model: the reply is not JSON, as the request's schema requires ({e})") from None
    try:
        validator = jsonschema.validators.validator_for(schema)(schema)
        error = best_match(validator.iter_errors(value))
    except jsonschema.SchemaError as e:
        raise LlmError(f"scripted model: the request's schema is not valid: {e.message}") from None
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        raise LlmError(f"scripted model: the reply does not follow the request's schema: {error.message}"
                       + (f" (at /{where})" if where else ""))


class Processor(CompletionService):
    """Answers from a script.  A test stand-in, not a model."""

    default_model = MODEL_NAME
    continues_prefix = True   # a reply that starts with the prefix is given without it
    default_concurrency = 4

    def __init__(self, **params: Any) -> None:
        params["model"] = MODEL_NAME
        super().__init__(**params)
        path = params.get("script")
        if not path:
            raise ScriptError("--script PATH is required")
        self.script = Script.load(path)

    def _answer(self, system: str, prompt: str, stop: list[str], prefix: str,
                schema: dict[str, Any] | None, choices: tuple[str, list[str]] | None = None) -> LlmResult:
        text = f"{system}\n\n{prompt}"
        if self.script.record:
            with open(self.script.record, "a", encoding="utf-8") as f:
                f.write(json.dumps({"system": system, "prompt": prompt, "prefix": prefix}) + "\n")
        reply, scores = self.script.answer(text)
        if prefix and reply.startswith(prefix):
            reply = reply[len(prefix):]
        reply, _ = cut_at_stop(reply, stop)
        if schema is not None:
            check_schema(reply, schema)
        if scores is not None and choices is not None:   # only what was asked for, as a server would
            scores = {name: scores.get(name, 0.0) for name in choices[1]}
        return LlmResult(text=reply, in_token=len(text.split()), out_token=len(reply.split()),
                         model=MODEL_NAME, choice_scores=scores if choices is not None else None)

    async def generate(self, system: str, prompt: str, model: str, temperature: float,
                       stop: list[str], prefix: str, *, schema: dict[str, Any] | None = None,
                       choices: tuple[str, list[str]] | None = None) -> LlmResult:
        result = self._answer(system, prompt, stop, prefix, schema, choices)
        if self.script.delay:
            await asyncio.sleep(self.script.delay)
        return result

    async def generate_stream(self, system: str, prompt: str, model: str, temperature: float,
                              stop: list[str], prefix: str, *, schema: dict[str, Any] | None = None,
                              choices: tuple[str, list[str]] | None = None) -> AsyncIterator[str | LlmResult]:
        result = await self.generate(system, prompt, model, temperature, stop, prefix, schema=schema,
                                     choices=choices)
        for chunk in split_chunks(result.text):
            yield chunk
            await asyncio.sleep(0)
        yield LlmResult("", result.in_token, result.out_token, result.model, choice_scores=result.choice_scores)

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument("--script", required=True, metavar="PATH",
                            help="JSON script of rules and replies (see the description above)")


def run() -> None:
    """Console script ``text-completion-scripted``."""
    Processor.launch(default_ident, "TEST STAND-IN, not a language model.\n\n" + (__doc__ or ""))
