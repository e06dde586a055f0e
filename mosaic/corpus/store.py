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
  :meth:`Store.record`. Their layout is versioned by ``lookup_schema``: an
  older store gets the new tables, filled from what it holds, never emptied.

Public API (used by ``mosaic/service/``)::

    store = Store("OUT/store.sqlite")
    store.application(uid, app)  -> ApplicationAnswer | None (with its profile)
    store.job(job_id)            -> list[dict]
    store.job_uids(job_id)       -> set[int]
    store.record(result)         # one SPEC 4 trace object posted by a scheduler

File names are kept byte-exact: a name that is not UTF-8 (a ``surrogateescape``
str, as ``os.scandir`` returns it) is stored as a BLOB of its bytes and read
back as the same str. Such names sort after every UTF-8 name.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypedDict

from mosaic.config import DEFAULT
from mosaic.corpus import listing, profiles
from mosaic.corpus.dedup import Group, Run, heaviness
from mosaic.darshan.archive import CANNOT_OPEN, NO_SUCH_FILE
from mosaic.errors import DamagedStore
from mosaic.trace import group_key as job_group_key

RESUME_SCHEMA = "4"  # version of the resume tables; a store of another version starts them over
# 3 (2026-11-25): results carry the run summary of the profiles (profiles.SUMMARY_COLUMNS)
# 4 (2026-11-25): logs and archives carry ctime_ns, compared by reruns (scan.Stamp)
LOOKUP_SCHEMA = "2"  # 2 (2026-11-25): the profile tables; an older store gets them (profiles.backfill)
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS logs (
    file TEXT PRIMARY KEY, location TEXT, archive TEXT, size INTEGER, mtime_ns INTEGER,
    ctime_ns INTEGER, seen INTEGER,
    status TEXT, reason TEXT, detail TEXT,
    group_key TEXT, uid INTEGER, job_id TEXT, application TEXT, start TEXT,
    total_bytes REAL, run_time REAL, partial INTEGER, dropped_records INTEGER,
    runs INTEGER, representative INTEGER);
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
CREATE TABLE IF NOT EXISTS jobs (
    file TEXT PRIMARY KEY, job_id TEXT, group_key TEXT, categories TEXT);
CREATE INDEX IF NOT EXISTS jobs_by_id ON jobs (job_id);
{profiles.SCHEMA}"""

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
)


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
    """One SQLite file; safe to share between threads (one lock) and processes (WAL)."""

    def __init__(self, path: str | Path, busy_timeout_seconds: float = 30.0) -> None:
        self.path = Path(path)
        self._db = sqlite3.connect(
            self.path, timeout=busy_timeout_seconds, check_same_thread=False, isolation_level=None
        )
        self._db.row_factory = Row
        # Streams read through their own connection: a WAL snapshot unaffected
        # by the writes the caller makes while consuming them.
        self._reader = sqlite3.connect(
            self.path, timeout=busy_timeout_seconds, check_same_thread=False, isolation_level=None
        )
        self._reader.row_factory = Row
        self._lock = threading.Lock()
        try:
            self._prepare()
        except sqlite3.DatabaseError as error:
            self.close()
            if is_damage(error):
                raise DamagedStore(self.path, str(error)) from None
            raise
        self.run_id = 0
        self._fresh = False

    def _prepare(self) -> None:
        """WAL journal, the tables of this version (an older layout is upgraded)."""
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable enough, much faster
            self._db.executescript(SCHEMA)
            if self._meta("resume_schema") != RESUME_SCHEMA:  # older layout: redo, never misread
                self._db.executescript("".join(f"DROP TABLE {t};" for t in RESUME_TABLES))
                self._db.executescript(SCHEMA)
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('resume_schema', ?)", (RESUME_SCHEMA,))
        if self._meta("lookup_schema") != LOOKUP_SCHEMA:
            with self._atomic():
                profiles.backfill(self._db)
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('lookup_schema', ?)", (LOOKUP_SCHEMA,))

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
        self._reader.close()
        self._db.close()

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
            "SELECT r.result, r.categories, l.group_key, l.runs, l.representative "
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
        self._write(
            "INSERT OR REPLACE INTO jobs SELECT l.file, l.job_id, l.group_key, r.categories "
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
        with self._atomic() as db:
            profiles.publish(db, self.run_id)

    # ----- lookup API (scheduler service) -----

    def application(
        self, uid: int, app: str, min_periodic_share: float = DEFAULT.profile_min_periodic_share
    ) -> profiles.ApplicationAnswer | None:
        """The group of (uid, app): its representative's categories, runs, last seen, and
        the profile of its stored runs.

        `app` is the executable (or the whole command line if the run grouped
        by command line). None if the store has never seen it.
        """
        key = f"{uid}:{app}"
        with self._lock:
            row = self._db.execute("SELECT * FROM applications WHERE group_key = ?", (key,)).fetchone()
            if row is None:
                return None
            found = profiles.profile(self._db, key, row["runs"], min_periodic_share)
        return {**_application(row), "profile": found}

    def applications(
        self, filters: listing.Filters, min_periodic_share: float = DEFAULT.profile_min_periodic_share
    ) -> listing.ApplicationList:
        """One page of the stored groups, filtered and sorted (:mod:`mosaic.corpus.listing`)."""
        with self._lock:
            return listing.list_applications(self._db, filters, min_periodic_share)

    def job(self, job_id: str) -> list[dict[str, Any]]:
        """Every stored run of a job id (one per log), with its group's categories."""
        with self._lock:
            rows = self._db.execute(
                "SELECT j.file, j.job_id, j.group_key, j.categories AS own, a.* FROM jobs j "
                "LEFT JOIN applications a USING (group_key) WHERE j.job_id = ? ORDER BY j.file",
                (str(job_id),),
            ).fetchall()
        return [
            {
                "file": row["file"],
                "job_id": row["job_id"],
                "categories": json.loads(row["own"]) if row["own"] else None,
                "application": _application(row) if row["runs"] is not None else None,
            }
            for row in rows
        ]

    def job_uids(self, job_id: str) -> set[int]:
        """The uids of the runs stored under ``job_id`` (a scheduler job has one owner)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT DISTINCT group_key FROM jobs WHERE job_id = ?", (str(job_id),)
            ).fetchall()
        return {int(row[0].split(":", 1)[0]) for row in rows}

    def record(self, result: dict[str, Any]) -> None:
        """Store one categorized trace (SPEC 4 object) posted after a job ended.

        Its group's run count grows by one (a file already recorded is not
        counted twice), last seen moves forward, and it becomes the
        representative if it is heavier (SPEC 3.2 order).
        """
        job = result["job"]
        key = result.get("group", {}).get("key") or job_group_key(job)
        run = Run(result["file"], key, _total_bytes(result), float(job["run_time"]))
        categories = json.dumps(result.get("categories"))
        with self._atomic():
            known = self._db.execute("SELECT 1 FROM jobs WHERE file = ?", _params((run.file,))).fetchone()
            self._db.execute(
                "INSERT OR REPLACE INTO jobs VALUES (?, ?, ?, ?)",
                _params((run.file, str(job["job_id"]), key, categories)),
            )
            summary = (key, run.file, job.get("start"), *profiles.run_summary(result))
            profiles.add_run(self._db, _params(summary))
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
