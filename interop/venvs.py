"""Virtualenvs with upstream TrustGraph 2.1.4, never the project's own ``.venv``.

One concept, one module: the bench (``bench/common.py``) and the interop
suite (``tests/interop``) both get their upstream venvs here.  Each venv is
created once from PyPI (the only step of the test suites that needs the
network) and reused while it holds the wanted versions; creation takes a
file lock, so parallel test workers wait for one creator.

* ``upstream``: upstream's trustgraph-base, trustgraph-cli and
  trustgraph-flow 2.1.4 (flow without its 40-odd store and LLM drivers: the
  agent, prompt-template, api-gateway and DynamicToolService need only ibis,
  jsonschema, aiohttp and mcp), for upstream peers;
* ``mixed``: upstream's trustgraph-cli 2.1.4 over *our* trustgraph-base (in
  place of our trustgraph-cli), for the check that every upstream command
  still starts on our library;
* ``upstream-2.11``: upstream's trustgraph-base, trustgraph-cli and trustgraph-flow
  2.11.1 (flow without its drivers but openai, ibis, jsonschema, aiohttp, cryptography and mcp),
  for its DynamicToolService and its callers, and for the 2.11 deployment rows (its
  api-gateway, no-auth IAM, prompt-template, text-completion-openai, mcp-tool and tg-invoke-agent).
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROOT = REPO / ".interop"
UPSTREAM_VERSION = "2.1.4"
#: Upstream's newest release (its tool-service records have no ``user``).
UPSTREAM_211_VERSION = "2.11.1"


class VenvError(RuntimeError):
    """A venv could not be created; the message carries pip's output."""


@dataclass(frozen=True)
class Venv:
    """A venv: where it lives, what to install (pip argument groups), and what proves it is ready."""

    path: Path
    steps: tuple[tuple[str, ...], ...]
    want: dict[str, str]

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def bin(self, name: str) -> Path:
        return self.path / "bin" / name

    def versions(self) -> dict[str, str]:
        """Installed versions of the wanted distributions (missing ones absent)."""
        if not self.python.exists():
            return {}
        code = ("import importlib.metadata as m, json, sys\nout = {}\nfor n in sys.argv[1:]:\n"
                "    try: out[n] = m.version(n)\n    except m.PackageNotFoundError: pass\nprint(json.dumps(out))")
        r = subprocess.run([str(self.python), "-c", code, *self.want], capture_output=True, text=True, timeout=60)
        return json.loads(r.stdout) if r.returncode == 0 else {}

    def ready(self) -> bool:
        have = self.versions()
        return all(have.get(name) == version or (version == "*" and name in have)
                   for name, version in self.want.items())

    def ensure(self) -> Venv:
        """Create or complete the venv (from PyPI), once; returns self."""
        if self.ready():
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.parent / f".{self.path.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.ready():  # another worker made it while we waited
                return self
            print(f"Creating {self.path} ({', '.join(f'{n} {v}' for n, v in self.want.items())} from PyPI)...",
                  file=sys.stderr, flush=True)
            commands = [] if self.python.exists() else [[sys.executable, "-m", "venv", str(self.path)]]
            commands += [[str(self.python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *s]
                         for s in self.steps]
            for command in commands:
                r = subprocess.run(command, capture_output=True, text=True, timeout=900)
                if r.returncode != 0:
                    raise VenvError(f"{' '.join(command[:6])} failed:\n{(r.stdout + r.stderr)[-3000:]}")
        if not self.ready():
            raise VenvError(f"{self.path}: wanted {self.want}, have {self.versions()}")
        return self


UPSTREAM = Venv(
    ROOT / "upstream",
    steps=((f"trustgraph-base=={UPSTREAM_VERSION}", f"trustgraph-cli=={UPSTREAM_VERSION}", "mcp", "ibis",
            "jsonschema", "aiohttp"),
           ("--no-deps", f"trustgraph-flow=={UPSTREAM_VERSION}")),
    want={"trustgraph-base": UPSTREAM_VERSION, "trustgraph-cli": UPSTREAM_VERSION,
          "trustgraph-flow": UPSTREAM_VERSION, "ibis": "*", "mcp": "*"},
)

UPSTREAM_211 = Venv(
    ROOT / "upstream-2.11",
    # The CLI for tg-invoke-agent; openai, ibis, jsonschema, cryptography and mcp for the processors the
    # 2.11 deployment rows run (text-completion-openai, prompt-template, api-gateway's IAM auth, mcp-tool).
    steps=((f"trustgraph-base=={UPSTREAM_211_VERSION}", f"trustgraph-cli=={UPSTREAM_211_VERSION}", "openai",
            "ibis", "jsonschema", "aiohttp", "cryptography", "mcp"),
           ("--no-deps", f"trustgraph-flow=={UPSTREAM_211_VERSION}")),
    want={"trustgraph-base": UPSTREAM_211_VERSION, "trustgraph-cli": UPSTREAM_211_VERSION,
          "trustgraph-flow": UPSTREAM_211_VERSION, "openai": "*", "ibis": "*", "jsonschema": "*",
          "cryptography": "*", "mcp": "*"},
)

#: Where copies of our packages are installed from (:func:`our_source`).
SOURCES = ROOT / "src"


def our_source(package: str, into: Path = SOURCES) -> Path:
    """A copy of one of our packages (``trustgraph-base``...) to pip-install, not editable.

    Why a copy: pip building the checkout's own directory leaves ``build/lib`` there, and
    setuptools reuses it, so a module deleted since the last build would be installed again.
    """
    target = into / package
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(REPO / package, target, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    return target


MIXED = Venv(
    ROOT / "mixed",
    # Ours first, then upstream's CLI (it requires trustgraph-base>=2.1,<2.2, which ours is).
    steps=((str(SOURCES / "trustgraph-base"),), (f"trustgraph-cli=={UPSTREAM_VERSION}",)),
    want={"trustgraph-cli": UPSTREAM_VERSION, "trustgraph-base": "*"},
)


def _our_sources_digest() -> str:
    import hashlib

    h = hashlib.sha256()
    base = REPO / "trustgraph-base"
    for path in sorted([base / "pyproject.toml", *base.glob("trustgraph/**/*.py")]):
        h.update(str(path.relative_to(base)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def ensure_mixed() -> Venv:
    """The mixed venv, with our trustgraph-base re-installed whenever its sources changed."""
    ROOT.mkdir(parents=True, exist_ok=True)
    with open(ROOT / ".mixed-sources.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = MIXED.path / ".ours-digest"
        digest = _our_sources_digest()
        if MIXED.ready() and stamp.exists() and stamp.read_text() == digest:
            return MIXED
        our_source("trustgraph-base")
        MIXED.ensure()
        if not stamp.exists() or stamp.read_text() != digest:
            r = subprocess.run([str(MIXED.python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                                "--no-deps", "--force-reinstall", str(SOURCES / "trustgraph-base")],
                               capture_output=True, text=True, timeout=900)
            if r.returncode != 0:
                raise VenvError(f"re-installing our trustgraph-base failed:\n{(r.stdout + r.stderr)[-3000:]}")
            stamp.write_text(digest)
    return MIXED


def upstream_commands() -> list[str]:
    """Every console script of upstream's trustgraph-cli, from the mixed venv's metadata."""
    code = ("import importlib.metadata as m\nd = m.distribution('trustgraph-cli')\n"
            "print('\\n'.join(sorted(e.name for e in d.entry_points if e.group == 'console_scripts')))")
    r = subprocess.run([str(MIXED.python), "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return r.stdout.split()
