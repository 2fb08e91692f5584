"""Reading the LLM's answer: JSON and JSON-lines answers parsed and checked against the
template's schema, and the template's prefix put back in front of a (streamed) answer."""

from __future__ import annotations

from typing import Any

from jsonschema.exceptions import best_match
from trustgraph.base.formats.text import strip_fences
from trustgraph.base.safety import limits

from .spec import PromptError, Template


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
