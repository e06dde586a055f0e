"""SQLite results store: what a batch run has done, and lookups for schedulers.

Two kinds of tables live in one file (stdlib sqlite3, WAL journal so that the
HTTP service can read while a batch run writes):

* resume tables, private to ``mosaic run``: ``logs`` (validation facts of
  every log, its group and whether it represents it) and ``results``
  (categorization of each categorized log). Both belong to one results hash
  (the configuration minus execution-only settings): opening a run with
  another hash empties them, so a changed threshold never mixes results.
* lookup tables, the scheduler API: ``applications`` (one row per group: the
  representative's categories, run count, last seen), ``jobs`` (every
  valid run and its group) and the profile tables (every categorized run's
  summary and its group's counters, :mod:`mosaic.corpus.profiles`). A batch
  run fills them at its end; the service adds single results with
  :meth:`Store.record`. A run is known by its identity
  (:func:`mosaic.corpus.profiles.run_identity`, from the log's job record), so
  one log is one run whether ``mosaic run`` or a post recorded it first.

Layouts. ``meta`` keeps ``lookup_schema``, the layout of the lookup tables: an
older store is upgraded step by step when opened (``UPGRADES``; each step one
transaction, nothing dropped), a newer one is refused (:class:`NewerStore`),
never misread. ``tests/data/stores`` keeps a small store of each earlier
layout, written by the code of its time. The resume tables (``resume_schema``)
are a cache of one batch run: another version starts them over.

Years of service: :meth:`Store.prune` drops old runs (counters moved down in
SQL, batch by batch, so posts go on), then gives the pages back to the file
system in small incremental-vacuum steps; :meth:`Store.backup` copies a
consistent snapshot through SQLite's online backup API while the service
writes. Readers (lookups, listings) each get their own connection per thread:
under WAL they never wait for each other nor for a post.

Public API (used by ``mosaic/service/``)::

    store = Store("OUT/store.sqlite")
    store.application(uid, app)  -> ApplicationAnswer | None (with its profile)
    store.job(job_id)            -> list[dict]
    store.job_uids(job_id)       -> set[int]
    store.record(result)         # one SPEC 4 trace object posted by a scheduler
    store.prune(before=..., keep=...), store.backup(dest), store.info()

File names are kept byte-exact: a name that is not UTF-8 (a ``surrogateescape``
str, as ``os.scandir`` returns it) is stored as a BLOB of its bytes and read
back as the same str. Such names sort after every UTF-8 name.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypedDict

from mosaic import signature
from mosaic.config import DEFAULT
from mosaic.corpus import listing, perfstore, profiles, running_jobs, timeline
from mosaic.corpus.dedup import Group, Run, heaviness
from mosaic.darshan.archive import CANNOT_OPEN, NO_SUCH_FILE
from mosaic.errors import DamagedStore, NewerStore, StoreUnavailable
from mosaic.interference.tables import DROP_RUNS_SQL as DROP_CONTENTION_RUNS
from mosaic.interference.tables import SCHEMA as interference_schema
from mosaic.interference.tables import load_contention, run_contention
from mosaic.trace import group_key as job_group_key

RESUME_SCHEMA = 5  # version of the resume tables; a store of another version starts them over
# 3 (2026-11-25): results carry the run summary of the profiles (profiles.SUMMARY_COLUMNS)
# 4 (2026-11-25): logs and archives carry ctime_ns, compared by reruns (scan.Stamp)
# 5 (2026-11-29): logs carry the run identity (profiles.run_identity)
LOOKUP_SCHEMA = 4  # the lookup tables' layout; see UPGRADES for each step
# 1: applications and jobs (jobs keyed by file name)
# 2 (2026-11-25): the profile tables
# 3 (2026-11-29): jobs and profile_runs keyed by run identity, with start, bytes and run time;
#   profile_runs clustered by start (the lookup's window); auto_vacuum incremental (pruning)
# 4 (2026-12-02): run_performance, each valid run's I/O performance (SPEC 3.9, corpus/perfstore.py)
JOBS_TABLE = """
CREATE TABLE IF NOT EXISTS jobs (
    run INTEGER PRIMARY KEY, file TEXT NOT NULL UNIQUE, job_id TEXT, group_key TEXT,
    start TEXT NOT NULL DEFAULT '', total_bytes REAL, run_time REAL, categories TEXT);
CREATE INDEX IF NOT EXISTS jobs_by_id ON jobs (job_id);
CREATE INDEX IF NOT EXISTS jobs_by_group ON jobs (group_key, start);
"""
JOB_COLUMNS = "run, file, job_id, group_key, start, total_bytes, run_time, categories"
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS logs (
    file TEXT PRIMARY KEY, location TEXT, archive TEXT, size INTEGER, mtime_ns INTEGER,
    ctime_ns INTEGER, seen INTEGER,
    status TEXT, reason TEXT, detail TEXT,
    group_key TEXT, uid INTEGER, job_id TEXT, application TEXT, start TEXT,
    total_bytes REAL, run_time REAL, partial INTEGER, dropped_records INTEGER,
    runs INTEGER, representative INTEGER, run INTEGER);
CREATE INDEX IF NOT EXISTS logs_by_group ON logs (group_key);
CREATE TABLE IF NOT EXISTS archives (
    location TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, ctime_ns INTEGER, logs INTEGER);
CREATE TABLE IF NOT EXISTS results (
    file TEXT PRIMARY KEY, status TEXT, reason TEXT, detail TEXT,
    categories TEXT, result TEXT, {profiles.SUMMARY_COLUMNS_SQL});
CREATE TABLE IF NOT EXISTS applications (
    group_key TEXT PRIMARY KEY, uid INTEGER, application TEXT, runs INTEGER,
    last_seen TEXT, representative TEXT, total_bytes REAL, run_time REAL,
    categories TEXT);
{JOBS_TABLE}
{profiles.SCHEMA}
{perfstore.RUN_PERFORMANCE_TABLE}
{timeline.SCHEMA}
{running_jobs.SCHEMA}
{interference_schema}
{signature.SIGNATURES_TABLE}"""

RESUME_TABLES = ("logs", "results", "archives")
# An eviction of a log file that could not be opened: what the process that tried saw, not
# what the log holds. Until 2026-11-29 a node that did not see the files recorded them so
# (mosaic/corpus/nodefault.py); every rerun validates and categorizes such logs again.
NOT_OPENED = (  # never NULL (an unknown NOT would leave a log out of its run)
    f"coalesce(reason = 'unreadable' AND (detail GLOB '{NO_SUCH_FILE}*' OR detail GLOB '{CANNOT_OPEN}*'), 0)"
)
RESULT_WIDTH = 6 + len(profiles.SUMMARY_COLUMNS)  # columns of a results row (result_row)
FACT_COLUMNS = (
    "file",
    "location",
    "archive",
    "size",
    "mtime_ns",
    "ctime_ns",
    "status",
    "reason",
    "detail",
    "group_key",
    "uid",
    "job_id",
    "application",
    "start",
    "total_bytes",
    "run_time",
    "partial",
    "dropped_records",
    "run",
)
_REGISTRY_KEEP = (
    DEFAULT.running_keep_ended_seconds,
    DEFAULT.running_grace_seconds,
    DEFAULT.running_unlimited_max_seconds,
)
PRUNE_BATCH_RUNS = 5000  # runs dropped per transaction: a post waits for one batch at most
VACUUM_STEP_PAGES = 256  # pages given back per incremental-vacuum transaction (1 MB of 4 kB pages)


def _value(value: object) -> object:
    """SQLite binds str as strict UTF-8: a non-UTF-8 name goes in as its bytes."""
    if isinstance(value, str) and not value.isascii():  # ASCII (nearly every name) is UTF-8
        try:
            value.encode()
        except UnicodeEncodeError:
            return os.fsencode(value)
    return value


def _params(values: Iterable[object]) -> tuple[object, ...]:
    return tuple(map(_value, values))


def result_row(result: dict[str, Any]) -> tuple[Any, ...]:
    """The results-table row of a categorization (SPEC 4 object or eviction).

    Workers build it, so the parent only writes it. Its JSON leaves out
    ``group``, which the parent adds once deduplication knows the groups.
    It ends with the run's profile summary (Nones for an eviction).
    """
    body = {key: value for key, value in result.items() if key != "group"}
    return (
        result["file"],
        result["status"],
        result.get("reason"),
        result.get("detail"),
        json.dumps(result.get("categories")),
        json.dumps(body, sort_keys=True),
        *profiles.run_summary(result),
    )


def is_damage(error: sqlite3.Error) -> bool:
    """SQLite's errors for a file that is not, or no longer, a sound database."""
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and (code & 0xFF) in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


class Row(sqlite3.Row):
    """A result row by index or by column name (sqlite3's own, in C); BLOBs (non-UTF-8
    names) come back as str."""

    def __new__(cls, cursor: sqlite3.Cursor, values: tuple[Any, ...]) -> Row:
        if bytes in map(type, values):  # rare: one C-level pass over the row's types
            values = tuple(os.fsdecode(v) if type(v) is bytes else v for v in values)
        return super().__new__(cls, cursor, values)


class FunnelCounts(TypedDict):
    """The funnel's counts of one run that the store knows (:meth:`Store.funnel_counts`)."""

    valid: int
    partial: int
    groups: int
    categorized: int
    stand_ins: int  # groups whose heavier runs were evicted during categorization


class Store:
    """One SQLite file; safe to share between threads (one write lock, a read connection per
    thread) and processes (WAL).

    ``durable``: every commit is synced to disk before it returns (``synchronous=FULL``; the
    service's posts), else WAL's NORMAL (a power loss may take back the last commits).
    ``window``: the runs behind a profile's spreads. ``listing_seconds``: a listing taking
    longer is stopped (:class:`StoreUnavailable`); None: unbounded (the command line).
    """

    def __init__(
        self,
        path: str | Path,
        busy_timeout_seconds: float = 30.0,
        *,
        durable: bool = False,
        window: int = DEFAULT.profile_window_runs,
        listing_seconds: float | None = None,
    ) -> None:
        self.path = Path(path)
        self.window = window
        self.listing_seconds = listing_seconds
        self._timeout = busy_timeout_seconds
        self._db = self._connect()
        # Streams read through their own connection: a WAL snapshot unaffected
        # by the writes the caller makes while consuming them.
        self._reader = self._connect()
        self._lock = threading.Lock()
        self._local = threading.local()  # each thread's read connection (lookups, listings)
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        try:
            self._prepare(durable)
        except sqlite3.DatabaseError as error:
            self.close()
            if is_damage(error):
                raise DamagedStore(self.path, str(error)) from None
            raise
        except NewerStore:
            self.close()
            raise
        self.run_id = 0
        self._fresh = False

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=self._timeout, check_same_thread=False, isolation_level=None)
        db.row_factory = Row
        return db

    def _prepare(self, durable: bool) -> None:
        """WAL journal, the tables of this version: a fresh file gets them, an older layout is
        upgraded (UPGRADES), a newer one refused before anything is written."""
        with self._lock:
            fresh = self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
            if fresh:  # before the first table: a later VACUUM is never needed to turn it on
                self._db.execute("PRAGMA auto_vacuum=INCREMENTAL")
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL: WAL stays consistent through a power loss but may lose the last commits
            self._db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            if fresh:
                self._db.executescript(SCHEMA)
                self._set_meta(("lookup_schema", str(LOOKUP_SCHEMA)), ("resume_schema", str(RESUME_SCHEMA)))
                return
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            lookup, resume = int(self._meta("lookup_schema") or 1), self._meta("resume_schema")
            if lookup > LOOKUP_SCHEMA or int(resume or 0) > RESUME_SCHEMA:
                raise NewerStore(self.path, lookup, LOOKUP_SCHEMA)
        if lookup < LOOKUP_SCHEMA:
            self._upgrade(lookup)
        with self._lock:
            self._db.executescript(SCHEMA)
            if resume != str(RESUME_SCHEMA):  # an older cache of a batch run: redo, never misread
                self._db.executescript("".join(f"DROP TABLE {t};" for t in RESUME_TABLES))
                self._db.executescript(SCHEMA)
                self._set_meta(("resume_schema", str(RESUME_SCHEMA)))

    def _upgrade(self, layout: int) -> None:
        """Each step from ``layout`` to this version's, one transaction each; then the space
        the old tables held is given back (and incremental vacuum turned on), before the
        store answers anything. The layout is read again inside each step's transaction:
        another process opening the same store at once (a server and a batch run) may
        have taken the step already."""
        stepped = False
        for version in sorted(v for v in UPGRADES if v > layout):
            with self._atomic() as db:
                current = int(self._meta("lookup_schema") or 1)
                if current < version:
                    UPGRADES[version](db, current)
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('lookup_schema', ?)", (str(version),))
                    stepped = True
        if not stepped:
            return
        with self._lock:
            self._db.execute("PRAGMA auto_vacuum=INCREMENTAL")
            self._db.execute("VACUUM")

    def _set_meta(self, *pairs: tuple[str, str]) -> None:
        self._db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", pairs)

    def check(self) -> None:
        """Raise :class:`DamagedStore` if SQLite's quick_check finds the file damaged
        (a run must not build on it, nor the service answer from it)."""
        with self._lock:
            try:
                problems = [row[0] for row in self._db.execute("PRAGMA quick_check")]
            except sqlite3.DatabaseError as error:
                if not is_damage(error):
                    raise
                problems = [str(error)]
        if problems != ["ok"]:
            raise DamagedStore(self.path, problems[0])

    def close(self) -> None:
        with self._readers_lock:
            for db in self._readers:
                db.close()
            self._readers.clear()
        self._reader.close()
        self._db.close()

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """This thread's read connection, in one read transaction (one WAL snapshot: the
        counters and rows of a lookup agree); it never takes the write lock."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = self._connect()
            with self._readers_lock:
                self._readers.append(db)
        db.execute("BEGIN")
        try:
            yield db
        finally:
            db.execute("COMMIT")

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, sql: str, rows: Iterable[Sequence[Any]] | None = None) -> None:
        """One statement (or one per row) in one transaction.

        Rows go in as they are: a non-UTF-8 name makes SQLite's binding fail,
        and only then is the transaction redone with such names as bytes
        (checking every value of every row costs the parent ~25 calls a log).
        """
        rows = None if rows is None else list(rows)
        try:
            self._transaction(sql, rows)
        except UnicodeEncodeError:
            if rows is None:
                raise
            self._transaction(sql, [_params(row) for row in rows])

    def _transaction(self, sql: str, rows: list[Sequence[Any]] | None) -> None:
        with self._atomic() as db:
            if rows is None:
                db.execute(sql)
            else:
                db.executemany(sql, rows)

    @contextmanager
    def _atomic(self) -> Iterator[sqlite3.Connection]:
        """Several statements of the caller as one transaction, under the lock.

        On some errors (a full disk: SQLITE_FULL) SQLite has already rolled the
        transaction back; a ROLLBACK then would fail and hide the error with
        "cannot rollback - no transaction is active".
        """
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def _rows(self, sql: str, args: tuple[object, ...] = ()) -> Iterator[Row]:
        """Stream rows from the reader connection."""
        yield from self._reader.execute(sql, _params(args))

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def versions(self, adding: str | None = None) -> list[str]:
        """The versions of mosaic whose results the lookup tables hold, oldest first, once
        `adding` (the version of a writer) is recorded: more than one means the tables
        mix labels of several versions (docs/release.md). Meta key ``versions``."""
        if adding is None:
            with self._lock:
                return list(json.loads(self._meta("versions") or "[]"))
        with self._atomic():  # read and add in one transaction: a run and the service may both write
            versions: list[str] = json.loads(self._meta("versions") or "[]")
            if adding not in versions:
                versions.append(adding)
                self._db.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('versions', ?)", (json.dumps(versions),)
                )
        return versions

    # ----- resume tables (mosaic run) -----

    def begin_run(self, results_hash: str) -> int:
        """Start a run: drop results of another configuration; return the run id."""
        if self._meta("results_hash") != results_hash:
            for table in RESUME_TABLES:
                self._write(f"DELETE FROM {table}")
        # Nothing to resume from: no log to look up or to forget (~8 us a log saved).
        self._fresh = self._db.execute("SELECT 1 FROM logs LIMIT 1").fetchone() is None
        self._write(  # categorized again (NOT_OPENED); as validation facts, mark_seen skips them
            f"DELETE FROM results WHERE status = 'evicted' AND {NOT_OPENED} "
            "AND file IN (SELECT file FROM logs WHERE archive IS NULL)"
        )
        self.run_id = int(self._meta("run") or 0) + 1
        self._write(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            [("results_hash", results_hash), ("run", str(self.run_id))],
        )
        return self.run_id

    def mark_seen(self, logs: list[tuple[Any, ...]]) -> set[str]:
        """Flag logs (file, location, size, mtime_ns, ctime_ns) as part of this run when
        already validated from the same file (same place, size, modification and change
        times), unless evicted because the file could not be opened (NOT_OPENED); return
        their names. Any other log is validated again."""
        if self._fresh:
            return set()
        self._write(
            "UPDATE logs SET seen = ? WHERE file = ? AND location = ? AND size IS ? AND mtime_ns IS ? "
            f"AND ctime_ns IS ? AND NOT (status = 'evicted' AND archive IS NULL AND {NOT_OPENED})",
            [(self.run_id, *log) for log in logs],
        )
        marks = ",".join("?" * len(logs))
        return {
            row[0]
            for row in self._db.execute(
                f"SELECT file FROM logs WHERE seen = ? AND file IN ({marks})",
                _params((self.run_id, *(log[0] for log in logs))),
            )
        }

    def reuse_archive(self, location: str, size: int, mtime_ns: int, ctime_ns: int) -> int | None:
        """Logs of an archive validated whole by an earlier run and unchanged since,
        flagged as part of this run (None: read it again)."""
        row = self._db.execute(
            "SELECT logs FROM archives WHERE location = ? AND size = ? AND mtime_ns = ? AND ctime_ns = ?",
            _params((location, size, mtime_ns, ctime_ns)),
        ).fetchone()
        if row is None:
            return None
        self._write(
            "UPDATE logs SET seen = ? WHERE archive = ? OR location = ?", [(self.run_id, location, location)]
        )
        return int(row[0])

    def save_archives(self, archives: Iterable[tuple[Any, ...]]) -> None:
        """(location, size, mtime_ns, ctime_ns, logs) of archives whose every log is now validated."""
        self._write("INSERT OR REPLACE INTO archives VALUES (?, ?, ?, ?, ?)", archives)

    def save_facts(self, facts: Iterable[dict[str, Any]]) -> None:
        """Validation facts of one batch (see pipeline.validate_log for the keys); a log
        validated again loses its former categorization."""
        facts = list(facts)
        columns = ",".join(FACT_COLUMNS)
        rows = [(*map(fact.get, FACT_COLUMNS), self.run_id) for fact in facts]
        if not self._fresh:
            self._write("DELETE FROM results WHERE file = ?", [(fact["file"],) for fact in facts])
        self._write(
            f"INSERT OR REPLACE INTO logs ({columns}, seen) "
            f"VALUES ({','.join('?' * (len(FACT_COLUMNS) + 1))})",
            rows,
        )
        performance = perfstore.fact_rows(facts)  # SPEC 3.9, every valid run
        if performance:
            self._write(perfstore.INSERT, [_params(r) for r in performance])

    def runs_by_group(self) -> Iterator[Run]:
        """Valid logs of this run, clustered by group key (dedup input)."""
        for row in self._rows(
            "SELECT file, group_key, total_bytes, run_time FROM logs "
            "WHERE seen = ? AND status = 'ok' ORDER BY group_key",
            (self.run_id,),
        ):
            yield Run(*row)

    def save_groups(self, groups: Iterable[Group]) -> None:
        """Record each group's size and representative on its logs."""
        with self._atomic() as db:
            for group in groups:
                db.execute(
                    "UPDATE logs SET runs = ?, representative = (file = ?) "
                    "WHERE group_key = ? AND seen = ? AND status = 'ok'",
                    _params((group.runs, group.representative, group.key, self.run_id)),
                )

    def to_categorize(self, all_runs: bool) -> Iterator[Row]:
        """(file, location, archive, size, mtime_ns, ctime_ns) still to categorize, archive members
        together."""
        yield from self._rows(
            "SELECT l.file, l.location, l.archive, l.size, l.mtime_ns, l.ctime_ns FROM logs l "
            "LEFT JOIN results r USING (file) "
            f"WHERE l.seen = ? AND l.status = 'ok' {_runs(all_runs)} AND r.file IS NULL "
            "ORDER BY l.archive, l.file",
            (self.run_id,),
        )

    def promote_stand_ins(self) -> int:
        """Groups whose representative was evicted during categorization: the next-
        heaviest valid run not evicted stands in. Returns how many groups changed."""
        keys = [
            row[0]
            for row in self._db.execute(
                "SELECT l.group_key FROM logs l JOIN results r USING (file) WHERE l.seen = ? "
                "AND l.representative = 1 AND r.status = 'evicted'",
                (self.run_id,),
            ).fetchall()
        ]
        promoted = 0
        for key in keys:
            row = self._db.execute(
                "SELECT l.file FROM logs l LEFT JOIN results r USING (file) WHERE "
                "l.group_key = ? AND l.seen = ? AND l.status = 'ok' AND "
                "coalesce(r.status, 'ok') = 'ok' "
                "ORDER BY l.total_bytes DESC, l.run_time DESC, l.file LIMIT 1",
                _params((key, self.run_id)),
            ).fetchone()
            if row is not None:
                self._write(
                    "UPDATE logs SET representative = (file = ?) WHERE group_key = ? "
                    "AND seen = ? AND status = 'ok'",
                    [(row[0], key, self.run_id)],
                )
                promoted += 1
        return promoted

    def save_results(self, results: Iterable[dict[str, Any]]) -> None:
        """Categorization results (SPEC 4 objects, or evicted ones) of one batch, each
        as it is, or already as its table row (key ``row``, from :func:`result_row`)."""
        rows = [r["row"] if "row" in r else result_row(r) for r in results]
        self._write(f"INSERT OR REPLACE INTO results VALUES ({', '.join('?' * RESULT_WIDTH)})", rows)

    def categorized(self, all_runs: bool) -> Iterator[Row]:
        """Categorized traces of this run sorted by file, with their group facts."""
        yield from self._rows(
            "SELECT r.result, r.categories, l.group_key, l.runs, l.representative, l.file "
            "FROM results r JOIN logs l USING (file) "
            f"WHERE l.seen = ? AND r.status = 'ok' {_runs(all_runs)} ORDER BY l.file",
            (self.run_id,),
        )

    def categories_by_group(self) -> Iterator[Row]:
        """(group_key, representative, categories) of categorized runs, by group."""
        yield from self._rows(
            "SELECT l.group_key, l.representative, r.categories FROM results r "
            "JOIN logs l USING (file) WHERE l.seen = ? AND r.status = 'ok' "
            "ORDER BY l.group_key",
            (self.run_id,),
        )

    def evicted(self) -> Iterator[Row]:
        """(file, reason, detail, stage) of every log of this run evicted, by file."""
        yield from self._rows(
            "SELECT l.file, coalesce(r.reason, l.reason) AS reason, "
            "coalesce(r.detail, l.detail) AS detail, CASE l.status WHEN 'ok' "
            "THEN 'categorize' ELSE 'validate' END AS stage "
            "FROM logs l LEFT JOIN results r USING (file) "
            "WHERE l.seen = ? AND (l.status = 'evicted' OR r.status = 'evicted') ORDER BY l.file",
            (self.run_id,),
        )

    def funnel_counts(self, all_runs: bool) -> FunnelCounts:
        """Counts of this run: valid, partial, groups, categorized (the traces
        :meth:`categorized` gives: a single run counts no former representative whose
        result stays stored), and stand_ins (groups whose heavier runs were evicted
        during categorization). Read through the reader connection, like the streams:
        it never waits for :meth:`publish`'s transaction."""
        db = self._reader
        row = db.execute(  # a group has one representative: no DISTINCT to sort
            "SELECT count(*), coalesce(sum(partial), 0), coalesce(sum(representative), 0) "
            "FROM logs WHERE seen = ? AND status = 'ok'",
            (self.run_id,),
        ).fetchone()
        categorized = db.execute(
            "SELECT count(*) FROM results r JOIN logs l USING (file) "
            f"WHERE l.seen = ? AND r.status = 'ok' {_runs(all_runs)}",
            (self.run_id,),
        ).fetchone()[0]
        stand_ins = db.execute(
            "SELECT count(*) FROM logs l WHERE l.seen = ? AND l.representative = 1 AND EXISTS ("
            "SELECT 1 FROM logs m JOIN results r ON r.file = m.file AND r.status = 'evicted' "
            "WHERE m.group_key = l.group_key AND m.seen = l.seen AND m.status = 'ok' AND "
            "(-m.total_bytes, -m.run_time, m.file) < (-l.total_bytes, -l.run_time, l.file))",
            (self.run_id,),
        ).fetchone()[0]
        return {
            "valid": row[0],
            "partial": row[1],
            "groups": row[2],
            "categorized": categorized,
            "stand_ins": stand_ins,
        }

    def publish(self) -> None:
        """Fill the lookup tables from this run's groups and results."""
        run = [(self.run_id,)]
        self._write(  # a run a post recorded under another name is replaced, not added
            f"INSERT OR REPLACE INTO jobs ({JOB_COLUMNS}) SELECT l.run, l.file, l.job_id, l.group_key, "
            "coalesce(l.start, ''), l.total_bytes, l.run_time, r.categories "
            "FROM logs l LEFT JOIN results r ON r.file = l.file AND r.status = 'ok' "
            "WHERE l.seen = ? AND l.status = 'ok'",
            run,
        )
        self._write(
            "INSERT OR REPLACE INTO applications SELECT l.group_key, l.uid, l.application, "
            "l.runs, (SELECT max(start) FROM logs m WHERE m.group_key = l.group_key "
            "AND m.seen = l.seen AND m.status = 'ok'), l.file, l.total_bytes, l.run_time, "
            "r.categories FROM logs l JOIN results r ON r.file = l.file AND r.status = 'ok' "
            "WHERE l.seen = ? AND l.representative = 1",
            run,
        )
        self._write(  # every stored run of the group: the posted ones too, each once
            f"UPDATE applications SET {_RECOUNT} WHERE group_key IN "
            "(SELECT DISTINCT group_key FROM logs WHERE seen = ? AND representative = 1)",
            run,
        )
        with self._atomic() as db:
            profiles.publish(db, self.run_id)

    # ----- lookup API (scheduler service) -----

    def application(
        self,
        uid: int,
        app: str,
        min_periodic_share: float = DEFAULT.profile_min_periodic_share,
        signature_min_runs: int = DEFAULT.signature_min_runs,
    ) -> profiles.ApplicationAnswer | None:
        """The group of (uid, app): its representative's categories, runs, last seen, and
        the profile of its stored runs.

        `app` is the executable (or the whole command line if the run grouped
        by command line). None if the store has never seen it.
        """
        key = f"{uid}:{app}"
        with self._snapshot() as db:
            row = db.execute("SELECT * FROM applications WHERE group_key = ?", (key,)).fetchone()
            if row is None:
                return None
            found = profiles.profile(db, key, row["runs"], min_periodic_share, self.window)
            performance = perfstore.history_or_none(db, key)  # SPEC 3.9
            contention = load_contention(db, key)  # SPEC 3.11
            shape = signature.answer(db, key, signature_min_runs)  # SPEC 3.12
        return {
            **_application(row),
            "profile": found,
            "performance": performance,
            "contention": contention,
            "signature": shape,
        }

    def applications(
        self, filters: listing.Filters, min_periodic_share: float = DEFAULT.profile_min_periodic_share
    ) -> listing.ApplicationList:
        """One page of the stored groups, filtered and sorted (:mod:`mosaic.corpus.listing`);
        stopped past ``listing_seconds`` (:class:`StoreUnavailable`, answered 503)."""
        with self._snapshot() as db:
            if self.listing_seconds is None:
                return listing.list_applications(db, filters, min_periodic_share, self.window)
            deadline = time.monotonic() + self.listing_seconds
            db.set_progress_handler(lambda: time.monotonic() > deadline, LISTING_CHECK_STEPS)
            try:
                return listing.list_applications(db, filters, min_periodic_share, self.window)
            except sqlite3.OperationalError as error:
                if time.monotonic() <= deadline:
                    raise
                raise StoreUnavailable(
                    f"listing stopped after {self.listing_seconds:g} s (store_listing_seconds): "
                    "narrow it (uid, match, label) or ask a smaller page"
                ) from error
            finally:
                db.set_progress_handler(None, 0)

    def job(self, job_id: str) -> list[dict[str, Any]]:
        """Every stored run of a job id (one per log), with its group's categories."""
        with self._snapshot() as db:
            rows = db.execute(
                "SELECT j.run AS run_id, j.file, j.job_id, j.group_key, j.categories AS own, "
                "p.body AS performance, a.* FROM jobs j LEFT JOIN applications a USING (group_key) "
                "LEFT JOIN run_performance p ON p.run = j.run WHERE j.job_id = ? ORDER BY j.file",
                (str(job_id),),
            ).fetchall()
            contention = {row["run_id"]: run_contention(db, row["run_id"]) for row in rows}
        return [
            {
                "file": row["file"],
                "job_id": row["job_id"],
                "categories": json.loads(row["own"]) if row["own"] else None,
                "application": _application(row) if row["runs"] is not None else None,
                # SPEC 3.9; None: no performance stored (a run stored before layout 4)
                "performance": json.loads(row["performance"]) if row["performance"] else None,
                "contention": contention[row["run_id"]],  # SPEC 3.11; another job's identity withheld
            }
            for row in rows
        ]

    def job_uids(self, job_id: str) -> set[int]:
        """The uids of the runs stored under ``job_id`` (a scheduler job has one owner)."""
        with self._snapshot() as db:
            rows = db.execute(
                "SELECT DISTINCT group_key FROM jobs WHERE job_id = ?", (str(job_id),)
            ).fetchall()
        return {int(row[0].split(":", 1)[0]) for row in rows}

    def record(self, result: dict[str, Any]) -> None:
        """Store one categorized trace (SPEC 4 object) posted after a job ended.

        Its group's run count grows by one (a run already recorded, by a post or by
        ``mosaic run``, under this name or another, is not counted twice), last seen
        moves forward, and it becomes the representative if it is heavier (SPEC 3.2 order).
        """
        job = result["job"]
        key = result.get("group", {}).get("key") or job_group_key(job)
        run = Run(result["file"], key, _total_bytes(result), float(job["run_time"]))
        identity = profiles.run_identity(job)
        categories = json.dumps(result.get("categories"))
        start = job.get("start") or ""
        with self._atomic():
            known = self._db.execute(
                "SELECT 1 FROM jobs WHERE (run = ? OR file = ?) AND group_key = ?",
                _params((identity, run.file, key)),
            ).fetchone()
            self._db.execute(
                f"INSERT OR REPLACE INTO jobs ({JOB_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                _params(
                    (identity, run.file, str(job["job_id"]), key, start)
                    + (run.total_bytes, run.run_time, categories)
                ),
            )
            summary = (key, run.file, start, identity, *profiles.run_summary(result))
            profiles.add_run(self._db, _params(summary))
            if result.get("performance"):  # SPEC 3.9
                found = perfstore.row(identity, key, job, result["performance"])
                self._db.execute(perfstore.INSERT, _params(found))
            row = self._db.execute("SELECT * FROM applications WHERE group_key = ?", (key,)).fetchone()
            if row is None:
                self._db.execute(
                    "INSERT INTO applications VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?)",
                    _params(
                        (
                            key,
                            job["uid"],
                            job["application"],
                            job.get("start"),
                            run.file,
                            run.total_bytes,
                            run.run_time,
                            categories,
                        )
                    ),
                )
            else:
                current = Run(row["representative"], key, row["total_bytes"], row["run_time"])
                heavier = heaviness(run) < heaviness(current)
                self._db.execute(
                    "UPDATE applications SET runs = runs + ?, last_seen = max(coalesce("
                    "last_seen, ''), coalesce(?, '')) WHERE group_key = ?",
                    (0 if known else 1, job.get("start"), key),
                )
                if heavier or row["representative"] == run.file:
                    self._db.execute(
                        "UPDATE applications SET representative = ?, total_bytes = ?, "
                        "run_time = ?, categories = ? WHERE group_key = ?",
                        _params((run.file, run.total_bytes, run.run_time, categories, key)),
                    )

    # ----- years of service (mosaic store) -----

    def prune(self, before: str | None = None, keep: int | None = None) -> PruneCounts:
        """Drop the runs that started before ``before`` (an ISO date or time; a run whose
        log gives no start is kept) and those beyond the ``keep`` most recent of each
        group, then give the freed pages back to the file system.

        Every count moves down with the runs (the profiles' counters, each group's runs,
        last seen and representative: what a store built from the remaining runs alone
        holds), :data:`PRUNE_BATCH_RUNS` runs a transaction, so posts go on between them.
        """
        doomed: list[tuple[int, str]] = []
        with self._snapshot() as db:
            if before is not None:
                doomed += db.execute(
                    "SELECT run, group_key FROM jobs WHERE start != '' AND start < ?", (before,)
                ).fetchall()
            if keep is not None:
                doomed += db.execute(
                    "SELECT run, group_key FROM (SELECT run, group_key, row_number() OVER (PARTITION BY "
                    "group_key ORDER BY start DESC, run DESC) AS recent FROM jobs) WHERE recent > ?",
                    (keep,),
                ).fetchall()
        runs = sorted({run: key for run, key in doomed}.items(), key=lambda pair: pair[1])
        for first in range(0, max(len(runs), 1), PRUNE_BATCH_RUNS):
            with self._atomic() as db:
                _drop_runs(db, runs[first : first + PRUNE_BATCH_RUNS])
                if first == 0:  # the running-jobs registry's rows no longer running
                    running_jobs.prune(db, time.time(), before, *_REGISTRY_KEEP)
        pages = self.vacuum()
        return {"runs": len(runs), "groups": len({key for _, key in runs}), "pages_freed": pages}

    def vacuum(self) -> int:
        """Give free pages back to the file system, :data:`VACUUM_STEP_PAGES` a transaction (a
        post waits for one step at most); returns how many. The file shrinks at the next
        checkpoint, tried at once (it waits for no reader)."""
        freed = 0
        while True:
            with self._lock:
                free = self._db.execute("PRAGMA freelist_count").fetchone()[0]
                if free == 0:
                    break
                # The pragma frees one page a step of its statement, and execute takes one step
                # (until 2026-11-29: one page a transaction, 62 MB given back in 15,047 of them);
                # executescript takes them all, in a transaction of its own.
                try:
                    self._db.executescript(
                        f"BEGIN IMMEDIATE; PRAGMA incremental_vacuum({VACUUM_STEP_PAGES}); COMMIT;"
                    )
                except BaseException:
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise
                step = free - self._db.execute("PRAGMA freelist_count").fetchone()[0]
            if step <= 0:  # no incremental vacuum on this file (auto_vacuum off), or a writer
                break  # took the pages meanwhile: nothing to give back
            freed += step
        with self._lock:
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        return freed

    def backup(self, destination: str | Path) -> StoreInfo:
        """A consistent copy of the store as it was when the copy began (every commit before
        it, none after), through SQLite's online backup API in one step: a WAL read
        snapshot, so posts go on meanwhile. Written to ``destination``.tmp, checked
        (integrity_check), synced, then renamed into place; returns what the copy holds."""
        target = Path(destination)
        partial = target.with_name(target.name + ".tmp")
        partial.unlink(missing_ok=True)
        source = self._connect()
        try:
            copy = sqlite3.connect(partial, isolation_level=None)
            try:
                source.backup(copy)  # pages=-1: the whole file from one snapshot
                copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal beside it
                problems = [row[0] for row in copy.execute("PRAGMA integrity_check")]
                if problems != ["ok"]:
                    raise DamagedStore(partial, problems[0])
                copied = _info(copy, target)
            finally:
                copy.close()
            with open(partial, "rb") as fh:
                os.fsync(fh.fileno())
        except BaseException:  # a full disk, a damaged copy: no half copy left behind
            partial.unlink(missing_ok=True)
            raise
        finally:
            source.close()
        os.replace(partial, target)
        folder = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
        return copied

    def info(self) -> StoreInfo:
        """What the store holds and its layout (``mosaic store info``)."""
        with self._snapshot() as db:
            return _info(db, self.path)


def _info(db: sqlite3.Connection, path: Path) -> StoreInfo:
    """What the store open on ``db`` (a file of this release's layout) holds."""
    runs, groups = (db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("jobs", "applications"))
    page_size, pages, free, vacuum = (
        db.execute(f"PRAGMA {name}").fetchone()[0]
        for name in ("page_size", "page_count", "freelist_count", "auto_vacuum")
    )
    oldest, newest = db.execute("SELECT min(nullif(start, '')), max(start) FROM jobs").fetchone()
    return {
        "path": str(path),
        "lookup_schema": LOOKUP_SCHEMA,
        "runs": runs,
        "groups": groups,
        "oldest_start": oldest,
        "newest_start": newest or None,
        "bytes": page_size * pages,
        "free_bytes": page_size * free,
        "incremental_vacuum": vacuum == INCREMENTAL_VACUUM,
    }


def restore(backup: str | Path, target: str | Path) -> StoreInfo:
    """Copy ``backup`` (a file :meth:`Store.backup` wrote) into the store at ``target``, in
    place through SQLite's backup API: a process that has ``target`` open (a running
    ``mosaic serve``) sees the backup's contents at its next read, never a mix. The
    backup must pass integrity_check and be of a layout this release reads; an older one
    is upgraded in a copy beside ``target`` first (``target``.upgrading, removed after),
    so that a server on ``target`` never reads the old layout (until 2026-11-29 it was
    upgraded in ``target`` after the copy, and a server read the old layout meanwhile)."""
    layout = _backup_layout(Path(backup))
    if layout == LOOKUP_SCHEMA:
        _copy_file(Path(backup), Path(target))
    else:
        staged = Path(target).with_name(Path(target).name + ".upgrading")
        try:
            _remove_store_files(staged)
            _copy_file(Path(backup), staged)
            Store(staged).close()  # upgraded
            _copy_file(staged, Path(target))
        finally:
            _remove_store_files(staged)
    with Store(target) as restored:
        return restored.info()


def _backup_layout(backup: Path) -> int:
    """The lookup layout of a backup that passes integrity_check and that this release reads."""
    source = sqlite3.connect(f"file:{backup.resolve()}?mode=ro", uri=True)
    try:
        try:
            problems = [row[0] for row in source.execute("PRAGMA integrity_check")]
        except sqlite3.DatabaseError as error:  # not a database at all
            if not is_damage(error):
                raise
            problems = [str(error)]
        if problems != ["ok"]:
            raise DamagedStore(backup, problems[0])
        found = source.execute("SELECT value FROM meta WHERE key = 'lookup_schema'").fetchone()
    finally:
        source.close()
    layout = int(found[0]) if found else 1
    if layout > LOOKUP_SCHEMA:
        raise NewerStore(backup, layout, LOOKUP_SCHEMA)
    return layout


def _copy_file(source_path: Path, target: Path) -> None:
    """``source_path``'s contents into the database at ``target`` (SQLite's backup API)."""
    source = sqlite3.connect(f"file:{source_path.resolve()}?mode=ro", uri=True)
    try:
        into = sqlite3.connect(target, timeout=30.0)
        try:
            source.backup(into)
        finally:
            into.close()
    finally:
        source.close()


def _remove_store_files(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


class PruneCounts(TypedDict):
    """What :meth:`Store.prune` dropped."""

    runs: int
    groups: int  # groups that lost runs (a group left with none is gone)
    pages_freed: int


class StoreInfo(TypedDict):
    """:meth:`Store.info`."""

    path: str
    lookup_schema: int
    runs: int
    groups: int
    oldest_start: str | None
    newest_start: str | None
    bytes: int
    free_bytes: int
    incremental_vacuum: bool


LISTING_CHECK_STEPS = 10_000  # SQLite steps between two looks at a listing's deadline (~1 ms)
INCREMENTAL_VACUUM = 2  # PRAGMA auto_vacuum's value for INCREMENTAL
# A group's runs and last seen, from its stored runs (jobs' index on group and start).
_RECOUNT = (
    "runs = (SELECT count(*) FROM jobs j WHERE j.group_key = applications.group_key), "
    "last_seen = (SELECT nullif(max(j.start), '') FROM jobs j WHERE j.group_key = applications.group_key)"
)


def _drop_runs(db: sqlite3.Connection, runs: list[tuple[int, str]]) -> None:
    """Drop (run, group key) pairs in the caller's transaction; every count follows."""
    db.execute("CREATE TEMP TABLE IF NOT EXISTS doomed (run INTEGER PRIMARY KEY, group_key TEXT)")
    db.execute("DELETE FROM temp.doomed")
    db.executemany("INSERT INTO temp.doomed VALUES (?, ?)", runs)
    profiles.drop_runs(db, "SELECT run FROM temp.doomed")
    for statement in timeline.drop_runs_sql("SELECT run FROM temp.doomed"):
        db.execute(statement)
    db.execute("DELETE FROM jobs WHERE run IN (SELECT run FROM temp.doomed)")
    db.execute("DELETE FROM run_performance WHERE run IN (SELECT run FROM temp.doomed)")
    db.execute(DROP_CONTENTION_RUNS.format(runs="SELECT run FROM temp.doomed"))
    touched = "SELECT DISTINCT group_key FROM temp.doomed"
    db.execute(f"UPDATE applications SET {_RECOUNT} WHERE group_key IN ({touched})")
    db.execute(f"DELETE FROM applications WHERE runs = 0 AND group_key IN ({touched})")
    # a group whose heaviest run went: the heaviest left stands in (SPEC 3.2 order)
    db.execute(
        "UPDATE applications SET (representative, total_bytes, run_time, categories) = (SELECT j.file, "
        "j.total_bytes, j.run_time, j.categories FROM jobs j WHERE j.group_key = applications.group_key "
        "ORDER BY j.total_bytes DESC, j.run_time DESC, j.file LIMIT 1) "
        f"WHERE group_key IN ({touched}) AND NOT EXISTS (SELECT 1 FROM jobs j "
        "WHERE j.file = applications.representative)"
    )


def _statements(script: str) -> list[str]:
    """A schema script's statements, to run inside a transaction (executescript commits)."""
    return [statement for statement in script.split(";") if statement.strip()]


def _to_layout_3(db: sqlite3.Connection, layout: int) -> None:
    """jobs and profile_runs keyed by run identity; jobs with start, bytes and run time.

    A run recorded before has no identity to compute (its job record was never
    kept): it gets a new number, so a later post of the same log counts once more
    until ``mosaic run`` over that log replaces it (same file name). Its start,
    bytes and run time come from the batch facts or its profile row where they
    exist (a post's: from its profile row, the start only).
    """
    db.execute("DROP INDEX IF EXISTS jobs_by_id")
    db.execute("ALTER TABLE jobs RENAME TO jobs_layout_2")
    for statement in _statements(JOBS_TABLE):
        db.execute(statement)
    has_logs = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'logs'").fetchone() is not None
    facts = (
        "coalesce(l.start, ''), l.total_bytes, l.run_time FROM jobs_layout_2 j LEFT JOIN logs l USING (file)"
        if has_logs
        else "'', NULL, NULL FROM jobs_layout_2 j"
    )
    db.execute(
        "INSERT INTO jobs (file, job_id, group_key, categories, start, total_bytes, run_time) "
        f"SELECT j.file, j.job_id, j.group_key, j.categories, {facts}"
    )
    db.execute("DROP TABLE jobs_layout_2")
    if layout < 2:  # no profiles yet: built from the jobs' categories
        for statement in _statements(profiles.SCHEMA):
            db.execute(statement)
        profiles.backfill(db)
        return
    db.execute("DROP INDEX IF EXISTS profile_runs_by_file")
    db.execute("ALTER TABLE profile_runs RENAME TO profile_runs_layout_2")
    for statement in _statements(profiles.RUNS_TABLE):
        db.execute(statement)
    db.execute(
        "INSERT INTO profile_runs (group_key, start, run, file, label_set, numbers) SELECT p.group_key, "
        "coalesce(p.start, ''), j.run, p.file, p.label_set, p.numbers FROM profile_runs_layout_2 p "
        "JOIN jobs j USING (file)"
    )
    db.execute("DROP TABLE profile_runs_layout_2")
    db.execute(
        "UPDATE jobs SET start = p.start FROM profile_runs p WHERE p.run = jobs.run AND jobs.start = ''"
    )


# Upgrade steps of the lookup tables, by the layout each step produces (LOOKUP_SCHEMA's
# history); a step gets the layout the store had when opened.
UPGRADES = {3: _to_layout_3, 4: perfstore.to_layout_4}  # 2 (the profile tables) is built by 3 from 1


def _total_bytes(result: dict[str, Any]) -> float:
    return float(result.get("read", {}).get("bytes", 0)) + float(result.get("write", {}).get("bytes", 0))


def _application(row: Row) -> profiles.Application:
    return {
        "group_key": row["group_key"],
        "uid": row["uid"],
        "application": row["application"],
        "categories": json.loads(row["categories"]) if row["categories"] else None,
        "runs": row["runs"],
        "last_seen": row["last_seen"],
        "representative": row["representative"],
    }


def _runs(all_runs: bool) -> str:
    """The SQL condition on ``logs l`` that keeps the runs a run reports: every valid
    run with ``--all-runs``, else the representatives."""
    return "" if all_runs else "AND l.representative = 1"
