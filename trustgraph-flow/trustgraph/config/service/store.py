"""Durable config store of the config service: an embedded SQLite file.

Upstream keeps config in Cassandra: a table ``config(class, key, value)`` and a
version counter.  We keep the same model in one SQLite file so the system runs
on one machine with nothing to install, and we close two gaps of the upstream
store on the way:

* A mutating request is applied as ONE transaction that also bumps the version,
  so a crash can never leave half a request applied, or the data changed with
  the version not bumped (upstream writes keys one by one, then the counter).
* A write that :meth:`ConfigStore.apply` has returned from is on disk (WAL with
  ``synchronous=FULL``), so the service may acknowledge the request and push the
  new state knowing that a ``kill -9`` right afterwards loses nothing.

Values are opaque strings: the store never parses them.

Each store has an identity, a uuid drawn when the file is created (and for
a file made before identities existed, when it is first opened).  It goes
with every push and reply (``trustgraph.base.processors.config_source``), so processors
tell a new store (whose versions start again at 0) from an old one, and a
copy restored from a backup keeps it.
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["ConfigStore"]

_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS config (
        type  TEXT NOT NULL,
        key   TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (type, key)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS version (
        id    TEXT PRIMARY KEY,
        value INTEGER NOT NULL
    )
    """,
    "INSERT OR IGNORE INTO version (id, value) VALUES ('version', 0)",
    """
    CREATE TABLE IF NOT EXISTS meta (
        name  TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )
    """,
)


def _require_str(what: str, value: object) -> None:
    """Reject non-strings before they reach SQLite.

    SQLite would happily store an int or NULL in a TEXT column; the wire says
    every type, key and value is a string, so anything else is a caller bug we
    want reported, not persisted.
    """
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {type(value).__name__}")


class ConfigStore:
    """Config rows ``(type, key) -> value`` plus a version, in one SQLite file.

    Every method is synchronous and short, so the service may call it directly
    from its event loop or from a worker thread.  One connection is shared and
    guarded by a re-entrant lock; :meth:`locked` exposes that lock so a caller
    can make a read-modify-write (e.g. start-flow editing ``active-flow``)
    atomic with respect to every other user of this store.
    """

    def __init__(self, path: str) -> None:
        """Open (creating if needed) the store at ``path``.

        ``":memory:"`` gives a throw-away store, handy in tests.
        """
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        # isolation_level=None: we issue BEGIN/COMMIT ourselves, so a batch is
        # exactly one transaction and reads never hold a transaction open.
        self._conn: sqlite3.Connection | None = sqlite3.connect(
            self.path, check_same_thread=False, isolation_level=None, timeout=30.0
        )
        conn = self._conn
        conn.execute("PRAGMA journal_mode=WAL")
        # FULL fsyncs the WAL on every commit: an acknowledged write survives
        # the process being killed and, on sane disks, a power cut too.
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA busy_timeout=30000")
        with self._lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute("INSERT OR IGNORE INTO meta (name, value) VALUES ('store-id', ?)",
                             (str(uuid.uuid4()),))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    # -- plumbing ---------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"config store {self.path!r} is closed")
        return self._conn

    @contextmanager
    def locked(self) -> Iterator[ConfigStore]:
        """Hold the store lock across several calls (it is re-entrant).

        Use it around "read, decide, :meth:`apply`" so no other request can
        change the rows read in between.
        """
        with self._lock:
            yield self

    # -- reads ------------------------------------------------------------

    def identity(self) -> str:
        """The store's identity: the same for as long as this file (or a copy of it) lives."""
        with self._lock:
            row = self._connection().execute("SELECT value FROM meta WHERE name = 'store-id'").fetchone()
        return str(row[0])

    def version(self) -> int:
        """Current version: 0 for a new store, +1 per :meth:`apply`."""
        with self._lock:
            row = self._connection().execute("SELECT value FROM version WHERE id = 'version'").fetchone()
        return int(row[0]) if row else 0

    def get(self, type: str, key: str) -> str | None:
        """The value at ``type/key``, or None when there is none."""
        _require_str("type", type)
        _require_str("key", key)
        with self._lock:
            row = (
                self._connection()
                .execute("SELECT value FROM config WHERE type = ? AND key = ?", (type, key))
                .fetchone()
            )
        return row[0] if row else None

    def keys(self, type: str) -> list[str]:
        """Keys of ``type``, sorted; empty for an unknown type."""
        _require_str("type", type)
        with self._lock:
            rows = (
                self._connection()
                .execute("SELECT key FROM config WHERE type = ? ORDER BY key", (type,))
                .fetchall()
            )
        return [r[0] for r in rows]

    def values(self, type: str) -> dict[str, str]:
        """``{key: value}`` of ``type``, in key order; empty for an unknown type."""
        _require_str("type", type)
        with self._lock:
            rows = (
                self._connection()
                .execute("SELECT key, value FROM config WHERE type = ? ORDER BY key", (type,))
                .fetchall()
            )
        return {k: v for k, v in rows}

    def all(self) -> dict[str, dict[str, str]]:
        """Everything, as ``{type: {key: value}}`` (the shape of a ConfigPush)."""
        with self._lock:
            rows = (
                self._connection()
                .execute("SELECT type, key, value FROM config ORDER BY type, key")
                .fetchall()
            )
        out: dict[str, dict[str, str]] = {}
        for t, k, v in rows:
            out.setdefault(t, {})[k] = v
        return out

    def snapshot(self) -> tuple[int, dict[str, dict[str, str]]]:
        """``(version, all())`` read under one lock, so the pair is consistent.

        This is what a ConfigPush must carry; reading the two separately could
        pair a version with data from a later request.
        """
        with self._lock:
            conn = self._connection()
            # One read transaction: another process sharing the file cannot
            # commit between the two reads.
            conn.execute("BEGIN")
            try:
                return self.version(), self.all()
            finally:
                conn.execute("COMMIT")

    # -- the one mutation -------------------------------------------------

    def apply(
        self,
        puts: Iterable[tuple[str, str, str]] = (),
        deletes: Iterable[tuple[str, str]] = (),
    ) -> int:
        """Apply one request's changes atomically and bump the version by 1.

        ``deletes`` are applied first, then ``puts`` (upserts), so a key that
        appears in both ends up holding the put value.  Deleting an absent key
        is not an error.  The version goes up by exactly one even when both
        lists are empty: the wire counts mutating *requests*, not keys.
        Everything is validated before the transaction starts; on any error
        nothing is written and the version is unchanged.  Returns the new
        version.
        """
        put_rows = [tuple(p) for p in puts]
        delete_rows = [tuple(d) for d in deletes]
        for i, row in enumerate(put_rows):
            if len(row) != 3:
                raise ValueError(f"puts[{i}] must be (type, key, value)")
            for name, item in zip(("type", "key", "value"), row, strict=True):
                _require_str(f"puts[{i}].{name}", item)
        for i, row in enumerate(delete_rows):
            if len(row) != 2:
                raise ValueError(f"deletes[{i}] must be (type, key)")
            for name, item in zip(("type", "key"), row, strict=True):
                _require_str(f"deletes[{i}].{name}", item)

        with self._lock:
            conn = self._connection()
            # IMMEDIATE takes the write lock up front, so another process on the
            # same file cannot interleave between our version read and bump.
            conn.execute("BEGIN IMMEDIATE")
            try:
                if delete_rows:
                    conn.executemany("DELETE FROM config WHERE type = ? AND key = ?", delete_rows)
                if put_rows:
                    conn.executemany(
                        "INSERT INTO config (type, key, value) VALUES (?, ?, ?) "
                        "ON CONFLICT (type, key) DO UPDATE SET value = excluded.value",
                        put_rows,
                    )
                conn.execute("UPDATE version SET value = value + 1 WHERE id = 'version'")
                row = conn.execute("SELECT value FROM version WHERE id = 'version'").fetchone()
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return int(row[0])

    def close(self) -> None:
        """Close the file; later calls raise.  Safe to call twice."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> ConfigStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
