"""The forecast's inputs, read from the store's tables (docs/method.md 3.13).

- ``signatures`` (docs/method.md 3.12): the candidate's and the running jobs' signatures,
  parsed once per (store, group, computed_at) and kept in a bounded cache;
- ``running_jobs`` (the registry, docs/operations.md): the jobs running at ``now`` (not
  ended, started, and not past their time limit);
- ``app_contention`` (docs/method.md 3.11): each group's sensitivity label and slope;
- ``run_load`` (docs/method.md 3.10) joined with ``jobs``: the file systems a group's runs
  did I/O on, each weighted by its I/O seconds there;
- ``jobs``: a group's stored runs and median run time (the store's own table).

A table that does not exist (its branch not merged, or an older store) is "no data", never an
error: the answer then says what it lacks. Nothing here writes. What a read connection has
read is kept until another connection commits to the store (SQLite's ``data_version``), so
forecasts between two posts read only the jobs they name.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mosaic.config import DEFAULT, Config
from mosaic.corpus.running_jobs import expires_sql
from mosaic.corpus.store import Store
from mosaic.forecast import (
    HOUR_SECONDS,
    MONDAY_EPOCH,
    READER,
    UNKNOWN_FS,
    Group,
    RunningArrays,
    Settings,
    Signature,
    Timeline,
    Viewer,
    forecast,
    parse_signature,
)
from mosaic.trace import bounded_name

# The contract tables as their owners create them (the layouts their branches agreed on), for tests and
# for a store that has none yet. The forecast never creates them in a served store.
CONTRACT_TABLES = """
CREATE TABLE IF NOT EXISTS signatures (group_key TEXT PRIMARY KEY, runs INTEGER, body TEXT,
    computed_at REAL);
CREATE TABLE IF NOT EXISTS running_jobs (job_id TEXT PRIMARY KEY, uid INTEGER, application TEXT,
    group_key TEXT, start_epoch REAL, time_limit REAL, nodes TEXT, tasks INTEGER, state TEXT,
    ended_epoch REAL, updated REAL);
CREATE TABLE IF NOT EXISTS app_contention (group_key TEXT PRIMARY KEY, label TEXT, n INTEGER,
    rho REAL, p REAL, q REAL, slope REAL, slope_lo REAL, slope_hi REAL, traits TEXT, body TEXT,
    computed_at REAL);
CREATE TABLE IF NOT EXISTS run_load (run INTEGER, fs TEXT, read_rate REAL, write_rate REAL,
    meta_rate REAL, other_jobs INTEGER, io_seconds REAL, computed_at REAL, PRIMARY KEY (run, fs));
"""
CHUNK = 900  # bound parameters per IN (...) query
CACHE_ENTRIES = 8192  # parsed signatures kept (each body is parsed once)

CacheKey = tuple[str, str, float | None, float]
_cache: OrderedDict[CacheKey, Signature | str] = OrderedDict()
_cache_lock = threading.Lock()
MAX_CONNECTIONS_CACHED = 256  # read connections whose groups are kept (one per server thread)
_connections: dict[int, _Held] = {}
# The file systems a group's runs used, kept this long: they change as runs are posted, slowly.
FS_CACHE_SECONDS = 300.0
_fs_cache: OrderedDict[tuple[str, str], tuple[float, dict[str, float]]] = OrderedDict()


def _tables(db: sqlite3.Connection) -> set[str]:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _chunks(keys: list[str]) -> Iterable[list[str]]:
    for i in range(0, len(keys), CHUNK):
        yield keys[i : i + CHUNK]


def _signature(token: CacheKey, body: str | None, phase_share: float) -> Signature | str:
    """The parsed signature of a row, kept under ``token`` (the store, the group, the row's
    computed_at: the signature's owner sets a new one when it recomputes): a row is read and
    parsed once while it stays the same."""
    try:
        parsed = parse_signature(json.loads(body or "null"), phase_share)
    except ValueError as error:
        parsed = f"the signature is not JSON ({error})"
    with _cache_lock:
        _cache[token] = parsed
        while len(_cache) > CACHE_ENTRIES:
            _cache.popitem(last=False)
    return parsed


def _tuples(db: sqlite3.Connection, sql: str, args: Sequence[object] = ()) -> list[tuple[Any, ...]]:
    """The rows as plain tuples (the store's Row objects cost a call per row)."""
    cursor = db.cursor()
    cursor.row_factory = None
    try:
        return cursor.execute(sql, tuple(args)).fetchall()
    finally:
        cursor.close()


@dataclass
class _Held:
    """What one read connection has read, valid while no other connection commits."""

    version: tuple[Any, ...]
    db: sqlite3.Connection  # held: its id is never another's while the entry lives
    groups: dict[str, Group | None] = field(default_factory=dict)
    running: tuple[np.ndarray, list[str | None], np.ndarray, np.ndarray, np.ndarray] | None = None


def _held(db: sqlite3.Connection, where: str, settings: Settings, tables: set[str]) -> _Held:
    """This connection's cache entry, started over when another connection committed to the
    store since (SQLite's ``data_version``: posts, the registry's starts and ends)."""
    version = (int(db.execute("PRAGMA data_version").fetchone()[0]), where, settings, frozenset(tables))
    with _cache_lock:
        held = _connections.get(id(db))
        if held is None or held.version != version or held.db is not db:
            held = _connections[id(db)] = _Held(version, db)
            while len(_connections) > MAX_CONNECTIONS_CACHED:
                _connections.pop(next(iter(_connections)))
        return held


def running_jobs(
    db: sqlite3.Connection,
    now: float,
    tables: set[str] | None = None,
    where: str = "",
    settings: Settings | None = None,
) -> RunningArrays:
    """The jobs of ``running_jobs`` running at ``now``: started, not ended, and within their time
    limit (Slurm ends a job there, so the registry's grace for a lost end is not load ahead); an
    UNLIMITED one for ``running_unlimited_max_seconds``, as the registry keeps it.
    The jobs not ended are read once between two commits to the store, and only the columns the
    forecast computes with; a job's identity is read from ``db`` when the answer names it (so
    ``db`` must stay open while the forecast runs)."""
    tables = tables if tables is not None else _tables(db)
    if "running_jobs" not in tables:
        return RunningArrays([], [], [], [], np.zeros(0), np.zeros(0))
    settings = settings or Settings()
    held = _held(db, where, settings, tables)
    if held.running is None:
        rows = _tuples(
            db,
            "SELECT rowid, group_key, start_epoch, coalesce(time_limit, -1.0), "
            f"{expires_sql('?', '?')} FROM running_jobs "
            "WHERE ended_epoch IS NULL AND start_epoch IS NOT NULL",
            (0.0, settings.running_unlimited_max),
        )
        rowid, group, start, limit, expiry = (
            (list(column) for column in zip(*rows)) if rows else ([], [], [], [], [])
        )
        limits = np.array(limit, dtype=np.float64)
        held.running = (
            np.array(rowid, dtype=np.int64),
            group,
            np.array(start, dtype=np.float64),
            np.where(limits > 0, limits, np.nan),
            np.array(expiry, dtype=np.float64),
        )
    rowids, groups, starts, limits, expires = held.running
    live = np.flatnonzero((starts <= now) & (expires > now))
    picked = rowids[live]

    def identify(i: int) -> tuple[str, int | None, str | None]:
        found = _tuples(
            db, "SELECT job_id, uid, application FROM running_jobs WHERE rowid = ?", (int(picked[i]),)
        )
        job_id, uid, application = found[0] if found else ("", None, None)
        return str(job_id), None if uid is None else int(uid), application

    return RunningArrays([], [], [], [groups[i] for i in live.tolist()], starts[live], limits[live], identify)


def groups_of(
    db: sqlite3.Connection,
    keys: Iterable[str],
    settings: Settings,
    tables: set[str] | None = None,
    where: str = "",
) -> dict[str, Group]:
    """What the contract tables say of each group in ``keys`` (a group none names is absent);
    ``where`` names the store in the caches. Kept per connection until another connection
    commits to the store (SQLite's ``data_version``): a lookup between two posts reads nothing
    again."""
    tables = tables if tables is not None else _tables(db)
    held = _held(db, where, settings, tables)
    with _cache_lock:
        known = held.groups
        wanted = set(keys)
        missing = sorted(wanted - known.keys())
    if missing:
        found = _read_groups(db, missing, settings, tables, where)
        with _cache_lock:
            known.update({key: found.get(key) for key in missing})
    return {key: group for key in sorted(wanted) if (group := known.get(key)) is not None}


def _read_groups(
    db: sqlite3.Connection, wanted: list[str], settings: Settings, tables: set[str], where: str
) -> dict[str, Group]:
    sigs: dict[str, Signature | str] = {}
    runs: dict[str, int] = {}
    labels: dict[str, tuple[Any, ...]] = {}
    fs: dict[str, dict[str, float]] = {}
    for part in _chunks(wanted):
        marks = ",".join("?" * len(part))
        for key, count in _tuples(
            db, f"SELECT group_key, runs FROM applications WHERE group_key IN ({marks})", part
        ):
            runs[key] = int(count or 0)
        if "signatures" in tables:
            missing = []
            for key, computed_at in _tuples(
                db, f"SELECT group_key, computed_at FROM signatures WHERE group_key IN ({marks})", part
            ):
                token = (where, key, computed_at, settings.phase_min_share)
                with _cache_lock:
                    hit = _cache.get(token)
                    if hit is not None:
                        _cache.move_to_end(token)
                if hit is None:
                    missing.append(key)
                else:
                    sigs[key] = hit
            for piece in _chunks(missing):  # bodies read and parsed once per row version
                for key, body, computed_at in _tuples(
                    db,
                    "SELECT group_key, body, computed_at FROM signatures "
                    f"WHERE group_key IN ({','.join('?' * len(piece))})",
                    piece,
                ):
                    token = (where, key, computed_at, settings.phase_min_share)
                    sigs[key] = _signature(token, body, settings.phase_min_share)
        if "app_contention" in tables:
            for row in _tuples(
                db,
                "SELECT group_key, label, slope, slope_lo, slope_hi FROM app_contention "
                f"WHERE group_key IN ({marks})",
                part,
            ):
                labels[row[0]] = tuple(row[1:])
        if "run_load" in tables:
            clock = time.monotonic()
            with _cache_lock:
                known = {k: _fs_cache.get((where, k)) for k in part}
            fresh = {k: v[1] for k, v in known.items() if v is not None and clock - v[0] < FS_CACHE_SECONDS}
            fs.update({k: dict(v) for k, v in fresh.items() if v})
            part = [k for k in part if k not in fresh]
            marks = ",".join("?" * len(part))
            for key, name, seconds in _tuples(
                db,
                "SELECT j.group_key, l.fs, sum(coalesce(l.io_seconds, 0)) FROM jobs j "
                f"JOIN run_load l ON l.run = j.run WHERE j.group_key IN ({marks}) GROUP BY j.group_key, l.fs",
                part,
            ):
                fs.setdefault(key, {})[name] = float(seconds or 0.0)
            with _cache_lock:
                for k in part:
                    _fs_cache[(where, k)] = (clock, dict(fs.get(k, {})))
                while len(_fs_cache) > CACHE_ENTRIES:
                    _fs_cache.popitem(last=False)
    out = {}
    for key in wanted:
        if key not in runs and key not in sigs and key not in labels:
            continue
        sig = sigs.get(key)
        label, slope, lo, hi = labels.get(key, (None, None, None, None))
        out[key] = Group(
            key,
            signature=sig if isinstance(sig, Signature) else None,
            why=sig
            if isinstance(sig, str)
            else ("no signature stored" if "signatures" in tables else "no signature table in the store"),
            runs=runs.get(key, 0),
            fs_shares=_shares(fs.get(key)),
            label=label,
            slope=_real(slope),
            slope_lo=_real(lo),
            slope_hi=_real(hi),
        )
    return out


def _real(value: object) -> float | None:
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def _shares(seconds: Mapping[str, float] | None) -> dict[str, float]:
    """Each file system's share of the group's I/O seconds; unknown file systems: ``*``."""
    total = sum(seconds.values()) if seconds else 0.0
    if not seconds or total <= 0:
        return {UNKNOWN_FS: 1.0}
    return {name: value / total for name, value in sorted(seconds.items()) if value > 0}


def sensitive_slopes(db: sqlite3.Connection, tables: set[str]) -> float | None:
    """The median slope of the center's sensitive groups (None: none)."""
    if "app_contention" not in tables:
        return None
    values = [
        row[0]
        for row in db.execute("SELECT slope FROM app_contention WHERE label = 'sensitive' AND slope > 0")
        if isinstance(row[0], int | float) and math.isfinite(row[0])
    ]
    return float(np.median(values)) if values else None


def median_run_time(db: sqlite3.Connection, key: str) -> float | None:
    times = np.array(
        [
            row[0]
            for row in db.execute("SELECT run_time FROM jobs WHERE group_key = ? AND run_time > 0", (key,))
        ],
        dtype=np.float64,
    )
    return float(np.median(times)) if len(times) else None


_weeks: dict[tuple[str, float, int], dict[str, Timeline]] = {}


def center_timelines(db: sqlite3.Connection, tables: set[str]) -> dict[str, Timeline]:
    """The center's usual week per shared file system, from ``timeline_week`` (the hour-of-week
    mean rates the last ``mosaic run`` or ``mosaic timeline loads`` folded from every run):
    one week of hourly bins from a Monday, which the forecast's hour-of-week mean gives back
    as it is. The same objects are returned until the table is written again (the forecast
    keeps its means per timeline object). None stored: no background, and the answer says so."""
    if "timeline_week" not in tables:
        return {}
    path = str(db.execute("PRAGMA database_list").fetchone()[2])
    at, count = db.execute("SELECT max(computed_at), count(*) FROM timeline_week").fetchone()
    token = (path, float(at or 0.0), int(count))
    kept = _weeks.get(token)
    if kept is not None:
        return kept
    rates: dict[str, np.ndarray] = {}
    for fs, slot, read, write, meta in _tuples(
        db, "SELECT fs, slot, read_rate, write_rate, meta_rate FROM timeline_week ORDER BY fs, slot"
    ):
        rates.setdefault(str(fs), np.zeros((3, 168)))[:, int(slot)] = (read, write, meta)
    hour = float(HOUR_SECONDS)
    week = {
        fs: Timeline(float(MONDAY_EPOCH), hour, r[0] * hour, r[1] * hour, r[2] * hour)
        for fs, r in rates.items()
    }
    _weeks.clear()  # one store's week at a time per process is what a server holds
    _weeks[token] = week
    return week


def store_forecast(
    store: Store,
    uid: int,
    application: str,
    now: float,
    *,
    time_limit: float | None = None,
    viewer: Viewer = READER,
    config: Config = DEFAULT,
    timelines: Mapping[str, Timeline] | None = None,
) -> dict[str, Any]:
    """The forecast of (uid, application) starting at ``now`` from what ``store`` holds."""
    settings = Settings.of(config)
    key = f"{uid}:{bounded_name(application, config.max_name_chars)}"
    with store._snapshot() as db:
        tables = _tables(db)
        running = running_jobs(db, now, tables, str(store.path), settings)
        groups = groups_of(
            db, [key, *{group for group in running.group if group}], settings, tables, str(store.path)
        )
        fallback = sensitive_slopes(db, tables)
        candidate = groups.get(key)
        if candidate is not None and candidate.runs == 0 and candidate.signature is None:
            candidate = None  # only a sensitivity row: no run of it is stored
        if candidate is not None and candidate.signature is None:
            candidate = Group(
                candidate.key,
                None,
                candidate.why,
                candidate.runs,
                median_run_time(db, key),
                candidate.fs_shares,
                candidate.label,
                candidate.slope,
                candidate.slope_lo,
                candidate.slope_hi,
            )
        if timelines is None:
            timelines = center_timelines(db, tables)
        answer = forecast(  # inside the snapshot: the jobs it names are read from it
            now,
            candidate,
            running,
            groups,
            timelines,
            time_limit=time_limit,
            viewer=viewer,
            settings=settings,
            fallback_slope=fallback,
            uid=uid,
            application=application,
        )
    answer["group_key"] = key
    answer["inputs"] = {
        name: name in tables for name in ("signatures", "running_jobs", "app_contention", "run_load")
    }
    return answer
