"""The small embedding model the tool ranker reads meaning with.

Two models, the better one that is installed: the sentence encoder
all-MiniLM-L6-v2 (``sentence_encoder.py``; ``make install`` installs its
wheel) and, beneath it, the static model described here, which every
install of trustgraph-base has.  Each comes with its :class:`Calibration`:
how far apart in cosine similarity it puts a clear first tool from the
next, and questions no tool fits from every tool (the two models' scales
differ).

Ranking tools by the words they share with a question fails on a paraphrase
("make me laugh about trains" shares no word with "Tell a joke on a given
topic").  A static embedding model places both near each other at the cost
of a table look-up per token: WordLlama (MIT), whose 256-dimension weights
and tokenizer ship inside its PyPI wheel, embeds a question in about 0.2 ms
and ranked the right tool first for 23 of 32 and 21 of 38 paraphrased
questions where shared words did for 4 (make bench, ranker table;
bench/notes.md, "Tools by meaning, arguments from the dialog").

Nothing is ever downloaded: the weights and tokenizer are read from the
wheel's own files (WordLlama's loader looks for the tokenizer under another
folder name and then goes to the network, and imports a hub client we do
not need), by :class:`StaticEmbedder`.  When the model cannot load (the package
missing, a file missing or corrupt) the process says so in one WARNING line
and the ranker runs on shared words alone; so does ``TRUSTGRAPH_TOOL_RANKER
=words`` (the default is ``meaning``).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

logger = logging.getLogger(__name__)

#: The environment variable choosing the ranker: ``meaning`` (default: the better model installed),
#: ``minilm`` or ``wordllama`` (that model, else shared words), or ``words``.
RANKER_ENV = "TRUSTGRAPH_TOOL_RANKER"
MEANING = "meaning"
MINILM = "minilm"
WORDLLAMA = "wordllama"
WORDS = "words"


@dataclass(frozen=True)
class Calibration:
    """A model's cosine similarities as the agent reads them (``decisions.Confidence``).

    ``lead``: how much nearer than the second the first tool must be to be taken over the model's
    unsure choice; ``unrelated``: under this, no tool is near the question; ``near``: from this
    on, a tool is near enough that the question is never "no tool fits" only because the model
    hardly considered it.  Read off each model's similarities on the ranker's question sets
    (bench/notes.md): wrongly-first tools led by under 0.04 in three cases of four with both
    models.  With MiniLM reading each of a tool's texts apart (``ranking.tool_texts``), questions
    no tool fits had their best similarity at 0.11-0.29 and fitting questions their first decile
    at 0.25 and first quartile at 0.30 (``near``); ``unrelated`` stays 0.2, under which 7% of
    fitting questions fall (replayed with the whole text alone, 0.2 made 63 right calls and 3
    wrong, 0.15 65 and 5: "What is the capital of Australia?" called local-time).  WordLlama's
    questions no tool fits had their best at 0.04-0.24, fitting ones their first decile at 0.14.
    """

    lead: float
    unrelated: float
    near: float
    #: Under this, a tool is not what the question is about, however sure a model is of it (no
    #: fitting question of the ranker's sets had its right tool this far while another led).
    far: float
    #: From this on, a first tool that leads by ``lead`` is what the question asks for, even when
    #: the model would answer it alone: no question that no tool fits had its nearest tool this
    #: near with that lead (bench/notes.md, "The ranker's clear first tool").
    clear: float
    #: From this on, a tool is near enough to be called with no value the question gives it (a tool
    #: of no arguments, or of optional ones the question says none of): no argument check confirms
    #: such a call.  Read off the held-out probes' value-less calls (bench/notes.md, twenty-second
    #: session): the fitting ones had their tool at 0.54-0.82 with MiniLM, 0.35-0.80 with WordLlama;
    #: questions no tool fits at up to 0.44 and 0.31 ("What's a typical mortgage interest rate these
    #: days?" had shown the bank balance, "thanks, that's all for now!" was near what is playing).
    alone: float = 0.0


class Embedder(Protocol):
    """Texts in, one unit-length vector per text out (rows of a float32 array)."""

    calibration: Calibration

    def embed(self, texts: Sequence[str]) -> Any: ...


WORDLLAMA_CALIBRATION = Calibration(lead=0.05, unrelated=0.08, near=0.2, far=0.04, clear=0.3, alone=0.33)
#: MiniLM's ``lead`` is 0.04: over the ranker's four question sets (145 questions, the development
#: set among them), 17 of the 20 wrongly-first tools led by under 0.04, and the first tool led by
#: 0.04-0.05 for 11 questions, every one of them right (bench/notes.md, ninth session).
MINILM_CALIBRATION = Calibration(lead=0.04, unrelated=0.2, near=0.3, far=0.1, clear=0.2, alone=0.45)


#: The files of WordLlama's wheel this model is made of (its 256-dimension "l2_supercat" model).
WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
#: The tokens of a text that are looked up (a description past them says nothing more).
MAX_TOKENS = 512
#: What of a text is tokenised: its first characters, each word cut to a length (a tokeniser's
#: merges grow fast with a word's length: 2,000 descriptions of one 2,400-letter "word" took
#: prompt-template's whole render budget).
MAX_CHARS = 1_000
MAX_WORD = 40
_LONG_WORD = re.compile(rf"\S{{{MAX_WORD + 1},}}")


def clipped(text: str) -> str:
    """``text`` as it is tokenised: :data:`MAX_CHARS` of it, no word over :data:`MAX_WORD`."""
    return _LONG_WORD.sub(lambda m: m.group(0)[:MAX_WORD], text[:MAX_CHARS])


def model_files() -> tuple[Path, Path]:
    """Where WordLlama's wheel keeps its weights and tokenizer (the package is not imported: its
    loader pulls in a hub client and a third of the memory)."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("the wordllama package is not installed")
    root = Path(spec.origin).parent
    return root / WEIGHTS, root / TOKENIZER


class StaticEmbedder:
    """A text's vector: the mean of its tokens' rows in a table, made unit length.

    That is all a static embedding model computes (WordLlama's own ``embed``
    does the same); the table stays in float16 as shipped (16 MB), and only
    the rows a text uses are widened.
    """

    calibration = WORDLLAMA_CALIBRATION

    def __init__(self, weights: Path, tokenizer: Path) -> None:
        import numpy as np
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        tensors = load_file(str(weights))
        table = next(iter(tensors.values()), None) if len(tensors) == 1 else tensors.get("embedding.weight")
        if table is None or table.ndim != 2 or table.shape[1] < 8:
            raise ValueError(f"{weights.name} holds no embedding table")
        self._np = np
        self._table = table
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(MAX_TOKENS)

    def embed(self, texts: Sequence[str]) -> Any:
        np = self._np
        out = np.zeros((len(texts), self._table.shape[1]), dtype=np.float32)
        encoded_texts = self._tokenizer.encode_batch([clipped(t) for t in texts], add_special_tokens=False)
        for row, encoded in enumerate(encoded_texts):
            ids = np.clip(np.asarray(encoded.ids, dtype=np.int64), 0, self._table.shape[0] - 1)
            if ids.size:
                out[row] = self._table[ids].astype(np.float32).mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)


_lock = threading.Lock()
_loaded: list[Embedder | None] = []   # empty: not tried yet


def embedder() -> Embedder | None:
    """The process's embedding model, loaded on first use; None when it cannot load or is turned off."""
    if _loaded:
        return _loaded[0]
    with _lock:
        if not _loaded:
            _loaded.append(_load())
    return _loaded[0]


def preload() -> None:
    """Start loading the model in a thread of its own, so that a process's first question does not
    wait for it: a restarted agent spent 3 s of its recovery loading it on its first question, on a
    loaded machine, after its subscriptions were up (the load reads files and runs in numpy and the
    tokenizer's Rust, so it overlaps the start's broker round trips).  Nothing when already tried."""
    if not _loaded:
        threading.Thread(target=embedder, name="ranker-model-load", daemon=True).start()


def _load() -> Embedder | None:
    choice = (os.environ.get(RANKER_ENV) or MEANING).strip().lower()
    if choice == WORDS:
        logger.info("Tools are ranked by shared words (%s=%s)", RANKER_ENV, WORDS)
        return None
    if choice not in (MEANING, MINILM, WORDLLAMA):
        logger.warning("%s=%r is none of %s: ranking tools by meaning", RANKER_ENV, choice,
                       ", ".join((MEANING, MINILM, WORDLLAMA, WORDS)))
        choice = MEANING
    failures = []
    if choice in (MEANING, MINILM):
        try:
            from .sentence_encoder import SentenceEncoder, model_folder

            model: Embedder = SentenceEncoder(model_folder())
        except Exception as e:   # a missing package, a missing or corrupt file
            failures.append(f"minilm: {type(e).__name__}: {str(e)[:200]}")
        else:
            _one_blas_thread()
            logger.info("Tools are ranked by meaning (all-MiniLM-L6-v2) and shared words")
            return model
    if choice in (MEANING, WORDLLAMA):
        try:
            model = StaticEmbedder(*model_files())
        except Exception as e:   # any failure of a third-party loader: a missing or corrupt file, a bad wheel
            failures.append(f"wordllama: {type(e).__name__}: {str(e)[:200]}")
        else:
            if choice == MEANING and failures and "not installed" not in failures[0]:
                logger.warning("The tool ranker's sentence encoder could not load (%s), so tools are ranked "
                               "by the smaller wordllama model. Reinstall it: make install", failures[0])
            logger.info("Tools are ranked by meaning (wordllama) and shared words")
            return model
    logger.warning("The tool ranker's embedding model could not load, so tools are ranked by shared words "
                   "only: %s. Reinstall it: pip install --force-reinstall wordllama", "; ".join(failures))
    return None


_glancer: list[Embedder | None] = []


def glancer() -> Embedder | None:
    """A cheap model to shortlist many tools with before the loaded model reads them (the static
    model beside the sentence encoder, loaded on first need); None when the loaded model is itself
    cheap, or none is loaded, or the static one cannot load (then the words' part shortlists)."""
    model = embedder()
    if model is None or isinstance(model, StaticEmbedder):
        return None
    if not _glancer:
        with _lock:
            if not _glancer:
                try:
                    _glancer.append(StaticEmbedder(*model_files()))
                except Exception as e:   # as in _load: any failure of the files or the loader
                    logger.warning("The tool ranker's static model could not load, so among many tools the "
                                   "sentence encoder reads those sharing words with the question: %s: %s",
                                   type(e).__name__, str(e)[:200])
                    _glancer.append(None)
    return _glancer[0]


def _one_blas_thread() -> None:
    """The encoder's products on one BLAS thread: a stack's processes share the machine, and on a
    loaded 2-core one, OpenBLAS's threads spinning against each other made ranking 1,000 tools
    7 times slower (144 s against 19 s for 132 questions).  Nothing else in a process that ranks
    uses BLAS."""
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")
    except Exception as e:   # a third-party probe of loaded libraries: slower, never fatal
        logger.debug("BLAS threads left as they are: %s: %s", type(e).__name__, e)


def calibration() -> Calibration | None:
    """The loaded model's :class:`Calibration`; None when tools are ranked by shared words."""
    model = embedder()
    return None if model is None else model.calibration


def reset(model: Embedder | None = None, *, loaded: bool = False) -> None:
    """Forget the loaded model (tests): the next :func:`embedder` loads again, or returns ``model``
    when ``loaded``."""
    with _lock:
        _loaded.clear()
        _glancer.clear()
        if loaded:
            _loaded.append(model)
