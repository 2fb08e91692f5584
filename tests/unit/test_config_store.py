"""ConfigStore: the SQLite file behind config-svc.

Real SQLite files in tmp_path throughout: the properties we care about
(atomic batches, one version bump per batch, durability across a kill -9) are
properties of the file, not of a mock.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from trustgraph.config.service.store import ConfigStore


@pytest.fixture
def db_path(tmp_path: Path) -> str:
    return str(tmp_path / "config.db")


@pytest.fixture
def store(db_path: str):
    s = ConfigStore(db_path)
    yield s
    s.close()


def test_new_store_is_empty_at_version_zero(store: ConfigStore) -> None:
    assert store.version() == 0
    assert store.all() == {}
    assert store.keys("tool") == []
    assert store.values("tool") == {}
    assert store.get("tool", "kb") is None


def test_creates_parent_directories(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "config.db"
    with ConfigStore(str(path)) as s:
        s.apply([("tool", "kb", "{}")], [])
    assert path.exists()


def test_wal_and_full_sync_are_set(store: ConfigStore) -> None:
    conn = store._connection()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_apply_puts_and_reads_back(store: ConfigStore) -> None:
    v = store.apply(
        [("tool", "kb", '{"type": "knowledge-query"}'), ("tool", "ask", "{}"), ("prompt", "system", '"hi"')],
        [],
    )
    assert v == 1
    assert store.version() == 1
    assert store.get("tool", "kb") == '{"type": "knowledge-query"}'
    assert store.keys("tool") == ["ask", "kb"]
    assert store.values("tool") == {"ask": "{}", "kb": '{"type": "knowledge-query"}'}
    assert store.all() == {
        "prompt": {"system": '"hi"'},
        "tool": {"ask": "{}", "kb": '{"type": "knowledge-query"}'},
    }


def test_values_are_opaque_strings(store: ConfigStore) -> None:
    odd = 'not json {"  \u00e9\u4e2d\n\x00tail'
    store.apply([("x", "y", odd), ("x", "empty", "")], [])
    assert store.get("x", "y") == odd
    assert store.get("x", "empty") == ""


def test_one_version_bump_per_batch_regardless_of_size(store: ConfigStore) -> None:
    assert store.apply([("t", f"k{i}", "v") for i in range(50)], []) == 1
    assert store.apply([], [("t", f"k{i}") for i in range(10)]) == 2
    assert store.apply([], []) == 3
    assert store.version() == 3


def test_put_overwrites(store: ConfigStore) -> None:
    store.apply([("t", "k", "1")], [])
    store.apply([("t", "k", "2")], [])
    assert store.get("t", "k") == "2"
    assert store.version() == 2


def test_delete_absent_key_is_fine_and_bumps(store: ConfigStore) -> None:
    store.apply([("t", "a", "1")], [])
    assert store.apply([], [("t", "a"), ("t", "never"), ("nope", "x")]) == 2
    assert store.all() == {}


def test_deletes_apply_before_puts(store: ConfigStore) -> None:
    store.apply([("t", "k", "old"), ("t", "gone", "x")], [])
    store.apply([("t", "k", "new")], [("t", "k"), ("t", "gone")])
    assert store.values("t") == {"k": "new"}


@pytest.mark.parametrize(
    ("puts", "deletes", "needle"),
    [
        ([("t", "k", None)], [], "puts[0].value"),
        ([("t", "k", "v"), ("t", 3, "v")], [], "puts[1].key"),
        ([(None, "k", "v")], [], "puts[0].type"),
        ([("t", "k")], [], "puts[0] must be"),
        ([], [("t", b"k")], "deletes[0].key"),
        ([], [("t",)], "deletes[0] must be"),
    ],
)
def test_invalid_batch_writes_nothing(store: ConfigStore, puts, deletes, needle: str) -> None:
    store.apply([("t", "keep", "1")], [])
    with pytest.raises((TypeError, ValueError), match=needle.replace("[", r"\[").replace("]", r"\]")):
        store.apply(puts, deletes)
    assert store.version() == 1
    assert store.all() == {"t": {"keep": "1"}}


def test_failure_inside_transaction_rolls_back(store: ConfigStore, monkeypatch) -> None:
    """A failure after some rows were written must leave neither rows nor bump."""
    store.apply([("t", "keep", "1")], [])

    real = store._conn

    class Exploding:
        in_transaction = property(lambda self: real.in_transaction)

        def execute(self, sql, *args):
            if sql.startswith("UPDATE version"):
                raise sqlite3.OperationalError("disk on fire")
            return real.execute(sql, *args)

        def executemany(self, sql, rows):
            return real.executemany(sql, rows)

    monkeypatch.setattr(store, "_conn", Exploding())
    with pytest.raises(sqlite3.OperationalError):
        store.apply([("t", "new", "x")], [("t", "keep")])
    monkeypatch.setattr(store, "_conn", real)
    assert store.version() == 1
    assert store.all() == {"t": {"keep": "1"}}


def test_survives_reopen(db_path: str) -> None:
    s = ConfigStore(db_path)
    s.apply([("tool", "kb", '{"a": 1}')], [])
    s.apply([("tool", "ask", "{}")], [("tool", "kb")])
    s.close()
    s2 = ConfigStore(db_path)
    try:
        assert s2.version() == 2
        assert s2.all() == {"tool": {"ask": "{}"}}
    finally:
        s2.close()


def test_two_handles_on_one_file_never_lose_a_bump(db_path: str) -> None:
    a, b = ConfigStore(db_path), ConfigStore(db_path)
    try:
        for i in range(5):
            a.apply([("t", f"a{i}", "1")], [])
            b.apply([("t", f"b{i}", "1")], [])
        assert a.version() == b.version() == 10
        assert len(b.keys("t")) == 10
    finally:
        a.close()
        b.close()


def test_concurrent_threads(store: ConfigStore) -> None:
    def worker(n: int) -> None:
        for i in range(25):
            store.apply([("t", f"{n}-{i}", str(i))], [])

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.version() == 200
    assert len(store.keys("t")) == 200


def test_snapshot_pairs_version_with_data(store: ConfigStore) -> None:
    store.apply([("t", "k", "v")], [])
    assert store.snapshot() == (1, {"t": {"k": "v"}})


def test_locked_is_reentrant(store: ConfigStore) -> None:
    with store.locked():
        with store.locked():
            store.apply([("t", "k", "v")], [])
    assert store.version() == 1


def test_closed_store_raises_and_close_is_idempotent(db_path: str) -> None:
    s = ConfigStore(db_path)
    s.close()
    s.close()
    with pytest.raises(RuntimeError, match="closed"):
        s.version()
    with pytest.raises(RuntimeError, match="closed"):
        s.apply([("t", "k", "v")], [])


def test_memory_store(tmp_path: Path) -> None:
    with ConfigStore(":memory:") as s:
        assert s.apply([("t", "k", "v")], []) == 1
        assert s.get("t", "k") == "v"


def test_acknowledged_write_survives_sigkill(db_path: str) -> None:
    """A write apply() returned from is on disk even if the process dies at once.

    The child makes its writes, prints "ok" and is killed with SIGKILL straight
    after we read that line: no atexit, no close(), no checkpoint.
    """
    child = textwrap.dedent(
        """
        import sys, time
        from trustgraph.config.service.store import ConfigStore
        s = ConfigStore(sys.argv[1])
        for i in range(20):
            s.apply([("tool", f"k{i}", '{"i": %d}' % i)], [])
        s.apply([("flow", "default", '{"description": "d"}')], [("tool", "k0")])
        print("ok", flush=True)
        time.sleep(60)
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.Popen(
        [sys.executable, "-c", child, db_path], stdout=subprocess.PIPE, env=env, text=True
    )
    try:
        line = proc.stdout.readline()
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    assert line.strip() == "ok"

    with ConfigStore(db_path) as s:
        assert s.version() == 21
        assert s.get("flow", "default") == '{"description": "d"}'
        assert s.get("tool", "k0") is None
        assert [json.loads(v)["i"] for v in s.values("tool").values()] == sorted(range(1, 20), key=str)
