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
  api-gateway, no-auth IAM, prompt-template, text-completion-openai, mcp-tool and tg-invoke-agent);
* ``flow-on-ours``: upstream's trustgraph-flow 2.1.4 (``--no-deps``) and all its third-party
  requirements over *our* trustgraph-base, never upstream's: does upstream's processor code run on
  our library (issue 36; ``interop/upstream_processors.py`` measures it);
* ``upstream-flow``: the same with upstream's own trustgraph-base 2.1.4, the baseline of that
  measure (``upstream`` lacks most of flow's drivers, so most of its scripts fail there for that alone);
* ``mcp-2025``: the official MCP SDK of the session era alone (its last 1.x: MCP 2024-11-05 to
  2025-11-25, nothing of 2026-07-28), as the client and the server of that era beside ours
  (``tests/interop/test_mcp_sdk_revisions.py``).
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


#: trustgraph-flow 2.1.4's third-party requirements: its METADATA's Requires-Dist but
#: ``trustgraph-base`` (every one installs on Python 3.13), plus ``msgpack``, which its gateway
#: imports without declaring it.  Unpinned there; three are held below the major that followed
#: 2.1.4 (2026-03-07), whose API its code predates: with today's pinecone (no
#: ``pinecone.grpc.GRPCClientConfig``), mistralai (no ``Mistral``) and mcp (no
#: ``streamablehttp_client``), 7 scripts fail on upstream's own base too.
FLOW_REQUIREMENTS = (
    "aiohttp", "anthropic", "scylla-driver", "cohere", "cryptography", "faiss-cpu", "falkordb", "fastembed",
    "ibis", "jsonschema", "langchain", "langchain-community", "langchain-core", "langchain-text-splitters",
    "mcp<2", "minio", "mistralai<2", "neo4j", "nltk", "ollama", "openai", "pinecone[grpc]<9",
    "prometheus-client", "pulsar-client", "pymilvus", "pypdf", "pyyaml", "qdrant-client", "rdflib", "requests",
    "strawberry-graphql", "tabulate", "tiktoken", "urllib3", "msgpack",
)
#: Distributions whose presence shows the requirements step finished (one per heavy driver family).
_FLOW_PROOF = {"trustgraph-flow": UPSTREAM_VERSION, "scylla-driver": "*", "faiss-cpu": "*", "fastembed": "*",
               "pymilvus": "*", "qdrant-client": "*", "rdflib": "*", "langchain-text-splitters": "*", "openai": "*",
               "msgpack": "*"}

FLOW_ON_OURS = Venv(
    ROOT / "flow-on-ours",
    # Ours with flow's requirements in one resolution, then upstream's flow alone: its own
    # requirement trustgraph-base>=2.1,<2.2 would otherwise bring upstream's base back.
    steps=((str(SOURCES / "trustgraph-base"), *FLOW_REQUIREMENTS),
           ("--no-deps", f"trustgraph-flow=={UPSTREAM_VERSION}")),
    want={**_FLOW_PROOF, "trustgraph-base": "*"},
)

UPSTREAM_FLOW = Venv(
    ROOT / "upstream-flow",
    steps=((f"trustgraph-base=={UPSTREAM_VERSION}", *FLOW_REQUIREMENTS),
           ("--no-deps", f"trustgraph-flow=={UPSTREAM_VERSION}")),
    want={**_FLOW_PROOF, "trustgraph-base": UPSTREAM_VERSION},
)


MCP_2025 = Venv(ROOT / "mcp-2025", steps=(("mcp<2", "uvicorn"),), want={"mcp": "*", "uvicorn": "*"})


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
    return _ensure_with_ours(MIXED)


def ensure_flow_on_ours() -> Venv:
    """The flow-on-ours venv, with our trustgraph-base re-installed whenever its sources changed."""
    venv = _ensure_with_ours(FLOW_ON_OURS)
    if venv.versions().get("trustgraph-base") == UPSTREAM_VERSION:
        raise VenvError(f"{venv.path} holds upstream's trustgraph-base {UPSTREAM_VERSION}, not ours")
    return venv


def _ensure_with_ours(venv: Venv) -> Venv:
    """Make ``venv`` (whose first step installs our trustgraph-base) and keep our base current in it.

    Why the digest: ``ready()`` sees only versions, and ours keeps its version while its code changes.
    One lock for every such venv: they share the copy of our sources that ``our_source`` remakes.
    """
    ROOT.mkdir(parents=True, exist_ok=True)
    with open(ROOT / ".ours-sources.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = venv.path / ".ours-digest"
        digest = _our_sources_digest()
        if venv.ready() and stamp.exists() and stamp.read_text() == digest:
            return venv
        our_source("trustgraph-base")
        venv.ensure()
        if not stamp.exists() or stamp.read_text() != digest:
            r = subprocess.run([str(venv.python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                                "--no-deps", "--force-reinstall", str(SOURCES / "trustgraph-base")],
                               capture_output=True, text=True, timeout=900)
            if r.returncode != 0:
                raise VenvError(f"re-installing our trustgraph-base failed:\n{(r.stdout + r.stderr)[-3000:]}")
            stamp.write_text(digest)
    return venv


def upstream_commands() -> list[str]:
    """Every console script of upstream's trustgraph-cli, from the mixed venv's metadata."""
    code = ("import importlib.metadata as m\nd = m.distribution('trustgraph-cli')\n"
            "print('\\n'.join(sorted(e.name for e in d.entry_points if e.group == 'console_scripts')))")
    r = subprocess.run([str(MIXED.python), "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return r.stdout.split()
