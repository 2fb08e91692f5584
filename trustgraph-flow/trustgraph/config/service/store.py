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

Config is kept per workspace (upstream 2.11's model): the ``default``
workspace is the ``config`` table, the very rows a 2.1 config-svc kept, so
2.1's view of the config is the default workspace and a store made before
workspaces existed opens unchanged; every other workspace's rows are in
``workspace_config``.  All workspaces share the one version, as in 2.11.

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
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEFAULT_WORKSPACE", "Change", "ConfigStore", "WorkspaceStore"]

#: The workspace 2.1's config is: the ``config`` table, where the rows of a store made before
#: workspaces existed are (upstream 2.11 names its default workspace the same).
DEFAULT_WORKSPACE = "default"

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
    CREATE TABLE IF NOT EXISTS workspace_config (
        workspace TEXT NOT NULL,
        type      TEXT NOT NULL,
        key       TEXT NOT NULL,
        value     TEXT NOT NULL,
        PRIMARY KEY (workspace, type, key)
    )
    """,
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


def _put_rows(puts: Iterable[tuple[str, str, str]]) -> list[tuple[str, ...]]:
    """``puts`` as rows, each checked to be three strings."""
    rows = [tuple(p) for p in puts]
    for i, row in enumerate(rows):
        if len(row) != 3:
            raise ValueError(f"puts[{i}] must be (type, key, value)")
        for name, item in zip(("type", "key", "value"), row, strict=True):
            _require_str(f"puts[{i}].{name}", item)
    return rows


@dataclass(frozen=True)
class Change:
    """One item a committed :meth:`ConfigStore.apply` put or deleted (present or not)."""

    workspace: str
    type: str
    key: str
    deleted: bool


def _rows(workspace: str) -> tuple[str, str, tuple[str, ...]]:
    """Where ``workspace``'s rows are: ``(table, condition, its parameters)`` for a WHERE clause.

    The default workspace is the 2.1 table; the others share ``workspace_config``.
    """
    _require_str("workspace", workspace)
    if workspace == DEFAULT_WORKSPACE:
        return "config", "1 = 1", ()
    return "workspace_config", "workspace = ?", (workspace,)


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
        # What applies changed since take_changes() last emptied it (config-svc's change notices).
        self._changes: list[Change] = []
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

    def get(self, type: str, key: str, *, workspace: str = DEFAULT_WORKSPACE) -> str | None:
        """The value at ``type/key`` of ``workspace``, or None when there is none."""
        _require_str("type", type)
        _require_str("key", key)
        table, where, params = _rows(workspace)
        with self._lock:
            row = (
                self._connection()
                .execute(f"SELECT value FROM {table} WHERE {where} AND type = ? AND key = ?",
                         (*params, type, key))
                .fetchone()
            )
        return row[0] if row else None

    def keys(self, type: str, *, workspace: str = DEFAULT_WORKSPACE) -> list[str]:
        """Keys of ``type`` in ``workspace``, sorted; empty for an unknown type."""
        _require_str("type", type)
        table, where, params = _rows(workspace)
        with self._lock:
            rows = (
                self._connection()
                .execute(f"SELECT key FROM {table} WHERE {where} AND type = ? ORDER BY key",
                         (*params, type))
                .fetchall()
            )
        return [r[0] for r in rows]

    def values(self, type: str, *, workspace: str = DEFAULT_WORKSPACE) -> dict[str, str]:
        """``{key: value}`` of ``type`` in ``workspace``, in key order; empty for an unknown type."""
        _require_str("type", type)
        table, where, params = _rows(workspace)
        with self._lock:
            rows = (
                self._connection()
                .execute(f"SELECT key, value FROM {table} WHERE {where} AND type = ? ORDER BY key",
                         (*params, type))
                .fetchall()
            )
        return {k: v for k, v in rows}

    def all(self, *, workspace: str = DEFAULT_WORKSPACE) -> dict[str, dict[str, str]]:
        """Everything in ``workspace``, as ``{type: {key: value}}`` (the shape of a 2.1 ConfigPush)."""
        table, where, params = _rows(workspace)
        with self._lock:
            rows = (
                self._connection()
                .execute(f"SELECT type, key, value FROM {table} WHERE {where} ORDER BY type, key", params)
                .fetchall()
            )
        out: dict[str, dict[str, str]] = {}
        for t, k, v in rows:
            out.setdefault(t, {})[k] = v
        return out

    def across(self, type: str) -> list[tuple[str, str, str]]:
        """``(workspace, key, value)`` of every item of ``type`` in every workspace, sorted.

        What 2.11's ``getvalues-all-ws`` and ``getkeys-all-ws`` answer from: a
        processor serving every workspace loads one type without listing them first.
        """
        _require_str("type", type)
        with self._lock:
            rows = self._connection().execute(
                "SELECT ?, key, value FROM config WHERE type = ? "
                "UNION ALL SELECT workspace, key, value FROM workspace_config WHERE type = ? "
                "ORDER BY 1, 2", (DEFAULT_WORKSPACE, type, type)).fetchall()
        return [(w, k, v) for w, k, v in rows]

    def snapshot(self, *, workspace: str = DEFAULT_WORKSPACE) -> tuple[int, dict[str, dict[str, str]]]:
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
                return self.version(), self.all(workspace=workspace)
            finally:
                conn.execute("COMMIT")

    def view(self, workspace: str) -> WorkspaceStore:
        """This store as seen from one workspace: the interface of the 2.1 operations."""
        return WorkspaceStore(self, workspace)

    # -- the one mutation -------------------------------------------------

    def apply(
        self,
        puts: Iterable[tuple[str, str, str]] = (),
        deletes: Iterable[tuple[str, str]] = (),
        *,
        workspace: str = DEFAULT_WORKSPACE,
    ) -> int:
        """Apply one request's changes to ``workspace`` atomically and bump the version by 1.

        ``deletes`` are applied first, then ``puts`` (upserts), so a key that
        appears in both ends up holding the put value.  Deleting an absent key
        is not an error.  The version goes up by exactly one even when both
        lists are empty: the wire counts mutating *requests*, not keys.
        Everything is validated before the transaction starts; on any error
        nothing is written and the version is unchanged.  Returns the new
        version.
        """
        put_rows = _put_rows(puts)
        delete_rows = [tuple(d) for d in deletes]
        for i, row in enumerate(delete_rows):
            if len(row) != 2:
                raise ValueError(f"deletes[{i}] must be (type, key)")
            for name, item in zip(("type", "key"), row, strict=True):
                _require_str(f"deletes[{i}].{name}", item)
        table, where, params = _rows(workspace)
        columns = "workspace, type, key, value" if params else "type, key, value"
        marks = "?, ?, ?, ?" if params else "?, ?, ?"
        conflict = "workspace, type, key" if params else "type, key"

        with self._lock:
            conn = self._connection()
            # IMMEDIATE takes the write lock up front, so another process on the
            # same file cannot interleave between our version read and bump.
            conn.execute("BEGIN IMMEDIATE")
            try:
                if delete_rows:
                    conn.executemany(f"DELETE FROM {table} WHERE {where} AND type = ? AND key = ?",
                                     [(*params, *row) for row in delete_rows])
                if put_rows:
                    conn.executemany(
                        f"INSERT INTO {table} ({columns}) VALUES ({marks}) "
                        f"ON CONFLICT ({conflict}) DO UPDATE SET value = excluded.value",
                        [(*params, *row) for row in put_rows],
                    )
                conn.execute("UPDATE version SET value = value + 1 WHERE id = 'version'")
                row = conn.execute("SELECT value FROM version WHERE id = 'version'").fetchone()
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            self._changes += [Change(workspace, t, k, True) for t, k in delete_rows]
            self._changes += [Change(workspace, t, k, False) for t, k, _v in put_rows]
        return int(row[0])

    def seed(self, puts: Iterable[tuple[str, str, str]], *, workspace: str = DEFAULT_WORKSPACE) -> bool:
        """Write ``puts`` into ``workspace`` of a store still at version 0, leaving it at 0.

        What a new store starts with (config-svc's own bookkeeping, such as the default
        workspace's registration), as opposed to a change: version 0 keeps meaning "nobody has
        written anything yet", which is how tg-launch knows a store to load its bootstrap into.
        Nothing is recorded for the change notices.  Returns False, writing nothing, when the
        store is past version 0: then it is a change, for :meth:`apply`.
        """
        put_rows = _put_rows(puts)
        table, _where, params = _rows(workspace)
        columns = "workspace, type, key, value" if params else "type, key, value"
        marks = "?, ?, ?, ?" if params else "?, ?, ?"
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                if conn.execute("SELECT value FROM version WHERE id = 'version'").fetchone()[0] != 0:
                    conn.execute("ROLLBACK")
                    return False
                conn.executemany(f"INSERT OR REPLACE INTO {table} ({columns}) VALUES ({marks})",
                                 [(*params, *row) for row in put_rows])
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return True

    def take_changes(self) -> list[Change]:
        """What was applied since the last call, in order, and forget it.

        Why the store keeps it: every operation, 2.1's and 2.11's, config's and
        flows', writes through :meth:`apply`, so a notice of which types changed
        in which workspaces (2.11's ``ConfigPush.changes``) is built from here
        rather than taught to each operation.  config-svc takes them after each
        request, under its write lock, so they are that request's.
        """
        with self._lock:
            taken, self._changes = self._changes, []
        return taken

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


class WorkspaceStore:
    """One workspace of a :class:`ConfigStore`, with the store's own interface.

    The 2.1 operations (``ConfigOperations``, ``FlowOperations``) are written
    against a store of one config; handing them a view runs them, unchanged,
    inside any workspace.  The lock and the version are the whole store's.
    """

    def __init__(self, store: ConfigStore, workspace: str) -> None:
        _require_str("workspace", workspace)
        self.store = store
        self.workspace = workspace
        self.path = store.path

    def locked(self) -> AbstractContextManager[ConfigStore]:
        """The store's lock (see :meth:`ConfigStore.locked`)."""
        return self.store.locked()

    def identity(self) -> str:
        return self.store.identity()

    def version(self) -> int:
        return self.store.version()

    def get(self, type: str, key: str) -> str | None:
        return self.store.get(type, key, workspace=self.workspace)

    def keys(self, type: str) -> list[str]:
        return self.store.keys(type, workspace=self.workspace)

    def values(self, type: str) -> dict[str, str]:
        return self.store.values(type, workspace=self.workspace)

    def all(self) -> dict[str, dict[str, str]]:
        return self.store.all(workspace=self.workspace)

    def snapshot(self) -> tuple[int, dict[str, dict[str, str]]]:
        return self.store.snapshot(workspace=self.workspace)

    def apply(self, puts: Iterable[tuple[str, str, str]] = (),
              deletes: Iterable[tuple[str, str]] = ()) -> int:
        return self.store.apply(puts, deletes, workspace=self.workspace)
