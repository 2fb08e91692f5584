"""Which tools a question is about, by meaning and by shared words, and which fit in a prompt.

The agent lists its tools most relevant first (a small model mostly picks
the one listed first among similar tools) and weighs its model's choice by
how near each tool is to the question (``agent/react/decisions.py``); the
prompt service cuts an upstream agent's tool list to what a prompt holds.
Both rank here, so they agree.

A tool's score is the cosine similarity of the question to the nearest of
its texts (its description, its name, both with its arguments'
descriptions, and each example question it declares), from an embedding model
(``embedding.py``: a sentence encoder, or a static model where it is not
installed), plus :data:`WORDS_WEIGHT` times the share of the
question's content words the tool's text has.  Without the model (it could
not load, or ``TRUSTGRAPH_TOOL_RANKER=words``) the score is the shared
words alone and ``meaning`` is None.  Tool vectors are computed once per
tool text (a new catalog version embeds only what changed); a question once
per text (every step of a dialog asks with the same question).

Both shapes of a tool work: a catalog tool (``name``, ``description``,
``arguments``, ``examples`` attributes) or the dict the ``agent-react``
template's ``tools`` variable holds.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, NamedTuple

from . import embedding
from .relevance import content_words, field_of, tool_words

#: How much the share of the question's words a tool has adds to its cosine similarity
#: (``make bench``, ranker table: 0 and 0.15 put the right tool first equally often over the
#: three sets, 72 of 100; 0.15 one more of set 1's plain questions, one fewer of set 3's; more
#: weight costs set 3 more).
WORDS_WEIGHT = 0.15
#: What a question that names a tool (``tool-7``, "the weather tool") adds to that tool's score:
#: more than any similarity, since the user said which tool.
NAME_WEIGHT = 1.0
#: At most this many tools are shown to the model in one prompt (``for_prompt``).
MAX_PROMPT_TOOLS = 24
#: And at most this many characters of their descriptions (about 2,000 tokens): the
#: embedded model's context is 4,096 tokens, prompt and answer.
MAX_PROMPT_TOOL_CHARS = 8_000
#: Tool texts and questions whose vectors are kept (each 1.5 KB at 384 float32 dimensions).
MAX_CACHED_TEXTS = 20_000
#: Past this many tools, a model that is costly per text (the sentence encoder: about 12 ms a
#: tool text on one core, against 0.2 ms for a static model) reads only the tools its cheap
#: glance ranks first, this many: twice what a prompt shows, so every tool offered to the model
#: was read whole.  10,000 tools cost a glance each, not two minutes of encoding.
SHORTLIST = 2 * MAX_PROMPT_TOOLS
#: What ranks an unread tool below every read one (similarities and the words' part are under 3).
UNREAD = 10.0
_WORDS = re.compile(r"[^\W_]+")
#: The characters of a text embedded (a description past it says nothing more about meaning).
MAX_TEXT_CHARS = 2_000


class Ranked(NamedTuple):
    """One tool's place for a question: ``score`` orders; ``meaning`` is the cosine similarity
    of the nearest of its texts (None without the embedding model); ``words`` the share of the
    question's content words it has.  (A named tuple: a thousand are made per ranking.)"""

    tool: Any
    score: float
    meaning: float | None
    words: float


class _Vectors:
    """Vectors of texts, computed once each (a bounded, least recently used cache), per way of
    embedding (``embed`` or a model's cheap ``glance``)."""

    def __init__(self, limit: int = MAX_CACHED_TEXTS) -> None:
        self._limit = limit
        self._cache: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, model: embedding.Embedder, texts: Sequence[str], how: str = "embed") -> list[Any]:
        """``how``: a name for the model's kind of vector (the glance model's are kept apart); each
        model's own, whatever ``how`` (a process whose model changed must not mix their vectors)."""
        compute = model.embed
        how = f"{type(model).__qualname__}:{how}"
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if (how, t) not in self._cache))
        if missing:
            vectors = compute(missing)
            with self._lock:
                for text, vector in zip(missing, vectors, strict=True):
                    self._cache[how, text] = vector
                while len(self._cache) > self._limit:
                    self._cache.popitem(last=False)
        with self._lock:
            out = []
            for text in texts:
                vector = self._cache.get((how, text))
                if vector is None:   # pushed out by this very call (more texts than the cache holds)
                    vector = compute([text])[0]
                else:
                    self._cache.move_to_end((how, text))
                out.append(vector)
            return out


_vectors = _Vectors()


def tool_texts(tool: Any) -> list[str]:
    """What a tool is embedded as, each text apart (a tool is as near a question as the nearest
    of them): its description, its name, the whole of both with its arguments' descriptions, then
    each example question.

    Apart because a question states one side of a tool: "Does 'strengths' have nine characters?"
    is nearer "count letters" than a text that also speaks of "the word whose letters to count",
    and a paraphrase nearer the description alone than one diluted by argument texts (make bench,
    ranker table: the right tool first for 112 of 132 questions of the three sets and the
    development set, against 105 with the whole text alone; bench/notes.md).  Empty and repeated
    texts are left out."""
    name = str(field_of(tool, "name", "") or "").replace("-", " ").replace("_", " ")
    description = str(field_of(tool, "description", "") or "")
    parts = [name, description]
    for arg in field_of(tool, "arguments", None) or []:
        described = str(field_of(arg, "description", "") or "")
        parts.append(described or str(field_of(arg, "name", "") or ""))
    main = ". ".join(p.strip().rstrip(".") for p in parts if p and p.strip())
    examples = [e if isinstance(e, str) else field_of(e, "question", None)
                for e in field_of(tool, "examples", None) or []]
    texts = [description.strip(), name.strip(), main, *(str(e) for e in examples if e)]
    return list(dict.fromkeys(t[:MAX_TEXT_CHARS] for t in texts if t and t.strip())) or [""]


class _Index:
    """One list of tools, ready to rank: their word sets, and one matrix of their texts' vectors."""

    def __init__(self, tools: Sequence[Any]) -> None:
        self.tools = list(tools)   # kept alive: the cache is keyed by their ids
        self.words = [tool_words(t) for t in self.tools]
        self.vocabulary: frozenset[str] = frozenset().union(*self.words)
        # Between tools that share as many words, the more specific one (fewer words of its own).
        self.own = [len(content_words(f"{field_of(t, 'name', '')} {field_of(t, 'description', '') or ''}"))
                    for t in self.tools]
        self.names = [_spoken(str(field_of(t, "name", "") or "")) for t in self.tools]
        self.texts = [tool_texts(t) for t in self.tools]
        self._model: Any = None
        self._matrix: Any = None
        self._glances: Any = None
        self._starts: Any = None

    def meaning(self, model: embedding.Embedder, question: str, first: Any = None) -> tuple[Any, Any]:
        """Each tool's cosine similarity to ``question``: that of the nearest of its texts.

        With many tools and a costly model, only the :data:`SHORTLIST` tools the static model's
        glance (``embedding.glancer``) plus ``first`` (the words' and names' part of the score)
        ranks first are read whole; the others get NaN.  Returned with every tool's glance (None when all were read)."""
        import numpy as np

        if self._starts is None:
            self._starts = np.cumsum([0] + [len(group) for group in self.texts[:-1]])
        if self._model is not model:   # the matrices are one model's vectors
            self._model, self._matrix, self._glances = model, None, None
        asked = question[:MAX_TEXT_CHARS]
        if len(self.tools) <= SHORTLIST or isinstance(model, embedding.StaticEmbedder):
            if self._matrix is None:
                self._matrix = np.vstack(_vectors.get(model, [t for group in self.texts for t in group]))
            return np.maximum.reduceat(self._matrix @ _vectors.get(model, [asked])[0], self._starts), None
        near = np.zeros(len(self.tools), dtype=np.float32) if first is None else np.asarray(first, np.float32)
        glancer = embedding.glancer()
        if glancer is not None:
            if self._glances is None:
                flat = [t for group in self.texts for t in group]
                self._glances = np.vstack(_vectors.get(glancer, flat, "glance"))
            asked_glance = _vectors.get(glancer, [asked], "glance")[0]
            near = near + np.maximum.reduceat(self._glances @ asked_glance, self._starts)
        chosen = np.argsort(-near, kind="stable")[:SHORTLIST].tolist()
        texts = [t for i in chosen for t in self.texts[i]]
        similar = np.vstack(_vectors.get(model, texts)) @ _vectors.get(model, [asked])[0]
        starts = np.cumsum([0] + [len(self.texts[i]) for i in chosen[:-1]])
        out = np.full(len(self.tools), np.nan, dtype=np.float32)
        out[chosen] = np.maximum.reduceat(similar, starts)
        return out, near


_indexes: OrderedDict[tuple[int, ...], _Index] = OrderedDict()
_indexes_lock = threading.Lock()
#: Tool lists kept ready (a process ranks a few: one per catalog version and group filter).
MAX_INDEXES = 8


def _index(tools: Sequence[Any]) -> _Index:
    key = tuple(map(id, tools))
    with _indexes_lock:
        index = _indexes.get(key)
        if index is not None:
            _indexes.move_to_end(key)
            return index
    index = _Index(tools)
    with _indexes_lock:
        _indexes[key] = index
        while len(_indexes) > MAX_INDEXES:
            _indexes.popitem(last=False)
    return index


def _spoken(text: str) -> str:
    """``text`` lower case, its words separated by single spaces (``tool-7`` and "tool 7" alike)."""
    return " ".join(_WORDS.findall(text.lower()))


def rank(question: str, tools: Sequence[Any]) -> list[Ranked]:
    """``tools`` best first for ``question`` (a stable order: ties keep the given order; by shared
    words alone, a tie goes to the more specific tool, which has fewer words of its own).  A tool
    the question names scores :data:`NAME_WEIGHT` more."""
    if not tools:
        return []
    index = _index(tools)
    model = embedding.embedder() if question.strip() else None
    question = mended(question, index.vocabulary, model)
    asked = content_words(question)
    said = f" {_spoken(question)} "
    words = [len(asked & w) / len(asked) if asked else 0.0 for w in index.words]
    named = [NAME_WEIGHT if name and f" {name} " in said else 0.0 for name in index.names]
    if model is None:
        base = [w + n for w, n in zip(words, named, strict=True)]
        order = sorted(range(len(base)), key=lambda i: (-base[i], index.own[i] if words[i] else 0))
        return [Ranked(index.tools[i], base[i], None, words[i]) for i in order]
    import numpy as np

    extra = np.asarray(words, dtype=np.float32) * WORDS_WEIGHT + np.asarray(named, dtype=np.float32)
    meanings, glanced = index.meaning(model, question, extra)
    unread = np.isnan(meanings)
    # A tool the model did not read whole ranks after every tool it did, by its glance.
    scores = np.where(unread, (0.0 if glanced is None else glanced) - UNREAD, meanings + extra)
    order = np.argsort(-scores, kind="stable").tolist()
    means, totals = meanings.tolist(), scores.tolist()
    return [Ranked(index.tools[i], totals[i], None if unread[i] else means[i], words[i]) for i in order]


#: A word of a question that may be a misspelling: letters only, this many at least ("lihgts"; not
#: "teh", which tells no tool apart anyway).
_TYPO = re.compile(r"(?<![\w'’-])[^\W\d_]{5,}(?![\w'’-])")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _one_edit(word: str) -> set[str]:
    """The words one letter's slip from ``word`` (lower case): a letter left out, added, swapped with
    the next or another in its place, the first letter kept."""
    cuts = [(word[:i], word[i:]) for i in range(1, len(word) + 1)]
    return ({a + b[1:] for a, b in cuts if b} | {a + b[1] + b[0] + b[2:] for a, b in cuts if len(b) > 1}
            | {a + c + b[1:] for a, b in cuts if b for c in _LETTERS} | {a + c + b for a, b in cuts for c in _LETTERS})


def mended(question: str, vocabulary: frozenset[str] | set[str], model: Any) -> str:
    """``question`` with each word the embedding ``model`` does not know (``knows``: one token of its
    vocabulary) and the tools do not say, but which one letter's slip makes a word of the tools'
    ``vocabulary`` (one alone), written as that word: what is ranked, by meaning and by shared words.
    "turn off the hallway lihgts" was 0.34 near switching lights (0.62 spelled right), "protien
    in chicken fried rice?" no nearer nutrition than recipes.  Unchanged without a model that can tell
    (the static model's tokens are no words)."""
    knows = getattr(model, "knows", None)
    if knows is None or not vocabulary:
        return question

    def mend(m: re.Match[str]) -> str:
        word = m.group(0).lower()
        if word in vocabulary or knows(word):
            return m.group(0)
        near = _one_edit(word) & vocabulary
        return near.pop() if len(near) == 1 else m.group(0)

    # (Its first characters, those the model reads: a long text's words are many.)
    return _TYPO.sub(mend, question[:MAX_TEXT_CHARS]) + question[MAX_TEXT_CHARS:]


def _size(tool: Any) -> int:
    described = tool if isinstance(tool, dict) else {
        "name": field_of(tool, "name", ""), "description": field_of(tool, "description", ""),
        "arguments": [(field_of(a, "name", ""), field_of(a, "description", ""))
                      for a in field_of(tool, "arguments", None) or []],
        "examples": field_of(tool, "examples", None) or []}
    return len(json.dumps(described, ensure_ascii=False, default=str))


def fit(ranked: Sequence[Ranked], *, max_tools: int = MAX_PROMPT_TOOLS,
        max_chars: int = MAX_PROMPT_TOOL_CHARS) -> list[Ranked]:
    """The best of ``ranked`` that one prompt has room for, in their order.

    At most ``max_tools``, and their descriptions within ``max_chars`` (the
    first tool always, however long: a prompt without tools would be no
    help).  Fewer tools than both limits are all kept.
    """
    kept: list[Ranked] = []
    used = 0
    for entry in ranked:
        if len(kept) >= max_tools:
            break
        size = _size(entry.tool)
        if kept and used + size > max_chars:
            continue   # a shorter one further down may still fit
        kept.append(entry)
        used += size
    return kept


def all_fit(tools: Sequence[Any], *, max_tools: int = MAX_PROMPT_TOOLS, max_chars: int = MAX_PROMPT_TOOL_CHARS) -> bool:
    """Whether one prompt has room for every tool: then none need be ranked to be cut (and the
    embedding model is not loaded for it)."""
    return len(tools) <= max_tools and sum(map(_size, tools)) <= max_chars


def for_prompt(question: str, tools: Sequence[Any], *, max_tools: int = MAX_PROMPT_TOOLS,
               max_chars: int = MAX_PROMPT_TOOL_CHARS) -> list[Any]:
    """The tools to show the model for ``question``: the most relevant first, as many as fit."""
    return [r.tool for r in fit(rank(question, tools), max_tools=max_tools, max_chars=max_chars)]
