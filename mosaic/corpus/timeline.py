"""What the file systems carried, and who was on them (SPEC 3.10).

Three things come out of the runs' activity (:mod:`mosaic.activity`), kept in the
store by run identity (``run_activity``: one log under two names, a resumed run and a
batch sent twice all write the same row):

- each run's **concurrent load** (``run_load``, ``run_overlaps``): on each file system
  it used, the other runs' bytes and metadata requests per second averaged over the
  time this run did I/O there (the measure of the union of its data intervals), its
  own left out, and how many other runs did I/O then. Exact intervals against exact
  intervals: the finest resolution both runs' logs allow, never a grid;
- the **center's timeline**: per shared file system and ``timeline_bin_seconds`` bin
  (edges at multiples of the bin since the epoch), bytes read and written, metadata
  requests, and runs doing I/O, folded run by run in the order of (start, run
  identity): the same store gives the same bits;
- its **export** (``.npz`` or CSV) and the daily, hourly and hour-of-week aggregates of
  summary.json.

An interval moves its amounts evenly over its span; a zero-length interval (a record
whose window opened and closed within the clock's tick) is a point, counted where it
lies. Node-local file systems get a load row with rate 0 and no other runs: each node
has its own, and the store does not know which runs shared a node.
"""

from __future__ import annotations

import csv
import heapq
import io
import math
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mosaic.activity import FsActivity, RunActivity, pack, unpack
from mosaic.config import DEFAULT

if TYPE_CHECKING:
    from mosaic.corpus.connections import StoreAccess

SCHEMA = """
CREATE TABLE IF NOT EXISTS run_activity (
    run INTEGER PRIMARY KEY, start_epoch REAL, end_epoch REAL, source TEXT, parts BLOB);
CREATE INDEX IF NOT EXISTS run_activity_by_start ON run_activity (start_epoch);
CREATE TABLE IF NOT EXISTS run_load (
    run INTEGER, fs TEXT, read_rate REAL, write_rate REAL, meta_rate REAL, other_jobs INTEGER,
    io_seconds REAL, computed_at REAL, PRIMARY KEY (run, fs));
CREATE TABLE IF NOT EXISTS run_overlaps (
    run INTEGER, other INTEGER, fs TEXT, bytes REAL, share REAL, PRIMARY KEY (run, other, fs));
CREATE TABLE IF NOT EXISTS timeline_week (
    fs TEXT, slot INTEGER, read_rate REAL, write_rate REAL, meta_rate REAL, hours INTEGER,
    computed_at REAL, PRIMARY KEY (fs, slot));
"""
TABLES = ("run_activity", "run_load", "run_overlaps")
POINT = 0.0  # an interval no longer than this is a point
READ_AHEAD = 256  # runs the sweep decodes ahead of its position with each read of the store


# ----- storing the runs' activity -----


def _raw(db: sqlite3.Connection, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
    """A cursor of plain tuples: the store's Row turns BLOBs into str."""
    cursor = db.cursor()
    cursor.row_factory = None
    return cursor.execute(sql, tuple(args))


def activity_row(run: int, activity: RunActivity) -> tuple[int, float, float, str, bytes]:
    """The ``run_activity`` row of a run: its end is the later of the job's end and its last
    interval's (a heatmap's last bin, a request within the clock slack), so that the sweep
    meets every run an interval of it overlaps."""
    ends = [float(fs.end.max()) for fs in activity.by_fs.values() if len(fs.end)]
    end = max([activity.end_epoch, *(activity.start_epoch + e for e in ends)])
    return (int(run), activity.start_epoch, end, activity.source, pack(activity))


def save_activity(store: StoreAccess, rows: Sequence[tuple[int, float, float, str, bytes]]) -> None:
    """Store runs' activity (``activity_row``); a run stored again replaces its row (the
    same log gives the same row: re-sent batches and resumed runs count once)."""
    if rows:
        store._write("INSERT OR REPLACE INTO run_activity VALUES (?, ?, ?, ?, ?)", rows)


def save_validated_activity(store: StoreAccess, batch: Iterable[dict[str, Any]]) -> None:
    """The activity of a batch of validation facts (key ``activity``: a row)."""
    save_activity(store, [fact["activity"] for fact in batch if fact.get("activity")])


def load_activity(store: StoreAccess, run: int) -> RunActivity | None:
    with store._snapshot() as db:
        row = _raw(db, "SELECT parts FROM run_activity WHERE run = ?", (int(run),)).fetchone()
    return unpack(row[0]) if row else None


def drop_runs_sql(doomed: str) -> list[str]:
    """Statements deleting the rows of the runs ``doomed`` (a SELECT of run identities) selects."""
    return [
        f"DELETE FROM run_activity WHERE run IN ({doomed})",
        f"DELETE FROM run_load WHERE run IN ({doomed})",
        f"DELETE FROM run_overlaps WHERE run IN ({doomed}) OR other IN ({doomed})",
    ]  # timeline_week stays: the next mosaic run or `mosaic timeline loads` folds it again


# ----- concurrent load -----


@dataclass
class _Fs:
    """One run's intervals on one file system in epoch seconds, with the union of its I/O."""

    start: np.ndarray
    end: np.ndarray
    read: np.ndarray
    write: np.ndarray
    meta: np.ndarray
    us: np.ndarray  # the union of its data intervals (io_union)
    ue: np.ndarray
    lo: float  # its intervals' extent
    hi: float
    shared: bool


@dataclass
class _Run:
    run: int
    start: float
    end: float
    fs: dict[str, _Fs]


def _prepared(run: int, activity: RunActivity) -> _Run:
    t0 = activity.start_epoch
    by_fs = {}
    for name, f in activity.by_fs.items():
        us, ue = io_union(f, t0)
        s, e = f.start + t0, f.end + t0
        lo = float(s.min()) if len(s) else t0
        hi = float(e.max()) if len(e) else t0
        by_fs[name] = _Fs(s, e, f.read, f.write, f.meta, us, ue, lo, hi, f.shared)
    return _Run(run, t0, activity.end_epoch, by_fs)


def _union(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint sorted intervals covering [start, end) pairs (points kept as points)."""
    n = len(start)
    if n <= 1:
        return start.astype(float), end.astype(float)
    order = np.lexsort((end, start))
    s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)
    new = np.empty(n, bool)
    new[0] = True
    np.greater(s[1:], reach[:-1], out=new[1:])
    first = np.flatnonzero(new)
    last = np.empty(len(first), np.int64)
    last[:-1] = first[1:] - 1
    last[-1] = n - 1
    return s[first], reach[last]  # a group ends where its running maximum of ends stops


def _inside(us: np.ndarray, ue: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Share of each interval [s, e) inside the union (``us``, ``ue``); a point: 1 if inside
    a union interval (closed), else 0."""
    if not len(us):
        return np.zeros(len(s))
    covered = np.concatenate(([0.0], np.cumsum(ue - us)))  # coverage before each union interval

    def cov(t: np.ndarray) -> np.ndarray:
        i = np.searchsorted(us, t, side="right") - 1  # last union interval starting at or before t
        j = np.maximum(i, 0)
        inside = np.clip(t - us[j], 0.0, ue[j] - us[j])
        c: np.ndarray = np.where(i >= 0, covered[j] + inside, 0.0)
        return c

    length = e - s
    share = np.zeros(len(s))
    span = length > POINT
    share[span] = (cov(e[span]) - cov(s[span])) / length[span]
    pts = ~span
    if pts.any():
        i = np.searchsorted(us, s[pts], side="right") - 1
        j = np.maximum(i, 0)
        share[pts] = ((i >= 0) & (s[pts] <= ue[j])).astype(float)
    return share


def io_union(fs: FsActivity, offset: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The union of a run's data intervals on one file system (its metadata windows when it
    moved no byte there), shifted by ``offset`` (its start epoch)."""
    data = (fs.read > 0) | (fs.write > 0)
    if not data.any():
        data = fs.meta > 0
    return _union(fs.start[data] + offset, fs.end[data] + offset)


@dataclass
class Load:
    run: int
    fs: str
    read_rate: float
    write_rate: float
    meta_rate: float
    other_jobs: int
    io_seconds: float
    overlaps: list[tuple[int, float, float]] = field(default_factory=list)  # (other, bytes, share)


def run_loads(this: _Run, others: Sequence[_Run], kept: int = 10) -> list[Load]:
    """The load of ``this`` run on each of its file systems, from the ``others`` (runs whose
    wall window may overlap it; their order fixes the order of the sums); its ``kept``
    heaviest others by bytes (ties: the earlier in the sweep) as its overlaps."""
    loads: list[Load] = []
    for name in sorted(this.fs):
        mine = this.fs[name]
        us, ue = mine.us, mine.ue
        seconds = float((ue - us).sum())
        if not mine.shared or not len(us):
            loads.append(Load(this.run, name, 0.0, 0.0, 0.0, 0, seconds))
            continue
        first, last = float(us[0]), float(ue[-1])
        parts = [
            (o.run, f) for o in others if (f := o.fs.get(name)) is not None and f.hi >= first and f.lo <= last
        ]
        if not parts:
            loads.append(Load(this.run, name, 0.0, 0.0, 0.0, 0, seconds))
            continue
        owner = np.repeat(np.arange(len(parts)), [len(f.start) for _, f in parts])
        share = _inside(
            us, ue, np.concatenate([f.start for _, f in parts]), np.concatenate([f.end for _, f in parts])
        )
        k = len(parts)
        r = np.bincount(owner, np.concatenate([f.read for _, f in parts]) * share, k)
        w = np.bincount(owner, np.concatenate([f.write for _, f in parts]) * share, k)
        m = np.bincount(owner, np.concatenate([f.meta for _, f in parts]) * share, k)
        moved = r + w
        active = (moved > 0) | (m > 0)
        total = float(moved.sum())
        span = max(seconds, 1e-9)  # a run whose I/O is points only: rates over a nanosecond
        load = Load(
            this.run,
            name,
            float(r.sum()) / span,
            float(w.sum()) / span,
            float(m.sum()) / span,
            int(active.sum()),
            seconds,
        )
        heaviest = np.flatnonzero(active)
        heaviest = heaviest[np.argsort(-moved[heaviest], kind="stable")][:kept]
        for i in heaviest.tolist():
            load.overlaps.append(
                (parts[i][0], float(moved[i]), float(moved[i]) / total if total > 0 else 0.0)
            )
        loads.append(load)
    return loads


def _extents(
    store: StoreAccess, where: str = "", args: tuple[Any, ...] = ()
) -> list[tuple[int, float, float]]:
    with store._snapshot() as db:
        rows = _raw(
            db,
            f"SELECT run, start_epoch, end_epoch FROM run_activity {where} ORDER BY start_epoch, run",
            args,
        ).fetchall()
    return [(int(r), float(s), float(e)) for r, s, e in rows]


class _Window:
    """Decoded activities of the runs near the sweep's position, dropped once passed."""

    def __init__(self, store: StoreAccess):
        self.store = store
        self.cache: dict[int, _Run] = {}
        self.stored_end: dict[int, float] = {}  # run_activity's end (the sweep's)
        self.ends: list[tuple[float, int]] = []

    def get(
        self, runs: Sequence[tuple[int, float, float]], ahead: Sequence[tuple[int, float, float]] = ()
    ) -> list[_Run]:
        """The decoded ``runs``; when some must be read, the ``ahead`` runs (the sweep's next
        ones) are read in the same query: a few queries per thousand runs, not one a run. A
        run read ahead is never dropped before the sweep reaches it (its end is past the
        start of every run before it)."""
        missing = [r for r, _, _ in runs if r not in self.cache]
        if missing:
            wanted = set(missing)
            missing += [r for r, _, _ in ahead if r not in self.cache and r not in wanted]
            wanted.update(missing)
            self.stored_end.update((r, e) for r, _, e in [*runs, *ahead] if r in wanted)
            with self.store._snapshot() as db:
                for first in range(0, len(missing), 500):
                    chunk = missing[first : first + 500]
                    marks = ",".join("?" * len(chunk))
                    for run, parts in _raw(
                        db, f"SELECT run, parts FROM run_activity WHERE run IN ({marks})", chunk
                    ):
                        prepared = _prepared(int(run), unpack(parts))
                        self.cache[int(run)] = prepared
                        heapq.heappush(self.ends, (self.stored_end.get(int(run), prepared.end), int(run)))
        return [self.cache[r] for r, _, _ in runs if r in self.cache]

    def drop_before(self, t: float) -> None:
        while self.ends and self.ends[0][0] < t:
            _, run = heapq.heappop(self.ends)
            self.cache.pop(run, None)
            self.stored_end.pop(run, None)


def compute_loads(
    store: StoreAccess, runs: Iterable[int] | None = None, now: float | None = None, kept: int | None = None
) -> int:
    """Compute ``run_load`` and ``run_overlaps`` of every stored run (or of ``runs`` and the
    runs overlapping them); returns how many runs were computed (:func:`_sweep`). ``kept``:
    the heaviest other runs kept in ``run_overlaps`` per run and file system (default:
    ``load_overlaps_kept``); ``other_jobs`` and the shares count them all."""
    return _sweep(store, runs, now, None, kept)[0]


def loads_and_timeline(
    store: StoreAccess, width: float, now: float | None = None, kept: int | None = None
) -> tuple[int, dict[str, Timeline]]:
    """:func:`compute_loads` of every stored run (how many), and the center's timeline folded on
    the way (the sweep's order is the fold's: the same bits as :func:`center_timeline`)."""
    return _sweep(store, None, now, width, kept)


def _sweep(
    store: StoreAccess, runs: Iterable[int] | None, now: float | None, width: float | None, kept: int | None
) -> tuple[int, dict[str, Timeline]]:
    """Compute ``run_load`` and ``run_overlaps`` of every stored run (or of ``runs`` and the
    runs overlapping them); returns how many runs were computed.

    A sweep by start time: each run is set against the runs whose wall window overlaps
    its own, found by binary search among the runs started within the longest run's
    duration before it; activities are decoded once while the sweep passes them.
    """
    extents = _extents(store)
    if not extents:
        return 0, {}
    starts = np.array([s for _, s, _ in extents])
    ends = np.array([e for _, _, e in extents])
    longest = float((ends - starts).max())
    index = {run: i for i, (run, _, _) in enumerate(extents)}
    if runs is None:
        todo = list(range(len(extents)))
    else:
        chosen: set[int] = set()
        for run in runs:
            i = index.get(int(run))
            if i is None:
                continue
            chosen.add(i)
            chosen.update(_overlapping(i, starts, ends, longest))
        todo = sorted(chosen)
    bounds = (0, 0)
    if width is not None:
        bounds = (math.floor(float(starts.min()) / width), math.floor(float(ends.max()) / width) + 1)
    fold = _Fold(width or 1.0, bounds)
    window = _Window(store)
    computed_at = time.time() if now is None else now
    load_rows: list[tuple[Any, ...]] = []
    overlap_rows: list[tuple[Any, ...]] = []
    for i in todo:
        window.drop_before(starts[i])
        near = _overlapping(i, starts, ends, longest)
        this, *others = window.get(
            [extents[i]] + [extents[j] for j in near], extents[i + 1 : i + 1 + READ_AHEAD]
        )
        if width is not None:
            fold.add(this)
        for load in run_loads(this, others, DEFAULT.load_overlaps_kept if kept is None else kept):
            load_rows.append(
                (load.run, load.fs, load.read_rate, load.write_rate, load.meta_rate, load.other_jobs)
                + (load.io_seconds, computed_at)
            )
            overlap_rows.extend((load.run, o, load.fs, b, sh) for o, b, sh in load.overlaps)
    done = [(extents[i][0],) for i in todo]
    with store._atomic() as db:
        db.executemany("DELETE FROM run_load WHERE run = ?", done)
        db.executemany("DELETE FROM run_overlaps WHERE run = ?", done)
        db.executemany("INSERT OR REPLACE INTO run_load VALUES (?, ?, ?, ?, ?, ?, ?, ?)", load_rows)
        db.executemany("INSERT OR REPLACE INTO run_overlaps VALUES (?, ?, ?, ?, ?)", overlap_rows)
    return len(todo), fold.timelines() if width is not None else {}


class _Fold:
    """The center's timeline folded run by run, in batches: each run's shared intervals are
    queued in the sweep's order and spread and added per file system a batch at a time (one
    :func:`spread` and one :meth:`_Bins.add_runs` over many runs). ``np.add.at`` adds in row
    order, so the sums are the bits of adding run by run; a batch holds whole runs."""

    BATCH_ROWS = 1 << 16  # bins touched by the queued intervals before a batch is folded (~8 MB of arrays)

    def __init__(self, width: float, bounds: tuple[int, int]):
        self.width, self.bounds = width, bounds
        self.acc: dict[str, _Bins] = {}
        self.queued: dict[str, list[tuple[_Fs, int]]] = {}
        self.rows = 0
        self.runs = 0

    def add(self, run: _Run) -> None:
        for name in sorted(run.fs):
            fs = run.fs[name]
            if not fs.shared or not len(fs.start):
                continue
            self.queued.setdefault(name, []).append((fs, self.runs))
            # the bins its intervals touch, at most: what the batch's spread will hold
            self.rows += int(((fs.end - fs.start) / self.width).sum()) + 2 * len(fs.start)
        self.runs += 1
        if self.rows >= self.BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        for name, queued in self.queued.items():
            fs = [f for f, _ in queued]
            cols = [
                np.concatenate([getattr(f, c) for f in fs]) for c in ("start", "end", "read", "write", "meta")
            ]
            owner = np.repeat(np.array([o for _, o in queued], np.int64), [len(f.start) for f in fs])
            bins, (r, w, m), rows = _spread_rows(cols[0], cols[1], cols[2:], self.width)
            if name not in self.acc:
                self.acc[name] = _Bins(*self.bounds)
            self.acc[name].add_runs(bins, r, w, m, owner[rows])
        self.queued.clear()
        self.rows = 0

    def timelines(self) -> dict[str, Timeline]:
        self.flush()
        return _timelines(self.acc, self.width)


def _overlapping(i: int, starts: np.ndarray, ends: np.ndarray, longest: float) -> list[int]:
    """Indexes of the runs other than ``i`` whose window [start, end] meets run i's."""
    lo = int(np.searchsorted(starts, starts[i] - longest, side="left"))
    hi = int(np.searchsorted(starts, ends[i], side="right"))
    near = np.arange(lo, hi)
    near = near[(ends[lo:hi] >= starts[i]) & (near != i)]
    result: list[int] = near.tolist()
    return result


LOAD_FIELDS = ("fs", "read_rate", "write_rate", "meta_rate", "other_jobs", "io_seconds")


def load_fields(values: Sequence[Any]) -> dict[str, Any]:
    """A ``run_load`` row's figures, given in :data:`LOAD_FIELDS`' order, by name."""
    return dict(zip(LOAD_FIELDS, values, strict=True))


def job_load(store: StoreAccess, run: int) -> list[dict[str, Any]]:
    """A run's stored load per file system with its overlaps (identities unfiltered: the
    caller applies the visibility rule of docs/security.md)."""
    with store._snapshot() as db:
        loads = db.execute("SELECT * FROM run_load WHERE run = ? ORDER BY fs", (int(run),)).fetchall()
        overlaps = db.execute(
            "SELECT o.fs, o.other, o.bytes, o.share, coalesce(j.job_id, l.job_id) AS job_id, "
            "coalesce(j.group_key, l.group_key) AS group_key FROM run_overlaps o "
            "LEFT JOIN jobs j ON j.run = o.other "
            "LEFT JOIN (SELECT run, min(job_id) AS job_id, min(group_key) AS group_key FROM logs "
            "WHERE status = 'ok' GROUP BY run) l ON l.run = o.other "
            "WHERE o.run = ? ORDER BY o.fs, o.bytes DESC, o.other",
            (int(run),),
        ).fetchall()
    out = []
    for row in loads:
        out.append(
            {
                **load_fields([row[name] for name in LOAD_FIELDS]),
                "computed_at": row["computed_at"],
                "others": [
                    {
                        "run": o["other"],
                        "job_id": o["job_id"],
                        "group_key": o["group_key"],
                        "bytes": o["bytes"],
                        "share": o["share"],
                    }
                    for o in overlaps
                    if o["fs"] == row["fs"]
                ],
            }
        )
    return out


# ----- the center's timeline -----


@dataclass
class Timeline:
    """One shared file system's bins: bin i covers [first + i * width, first + (i + 1) * width)."""

    fs: str
    width: float
    first: float  # epoch seconds of bin 0's start (a multiple of width)
    read: np.ndarray
    write: np.ndarray
    meta: np.ndarray
    jobs: np.ndarray  # int64: runs doing I/O (moving bytes or asking for metadata) in the bin

    @property
    def starts(self) -> np.ndarray:
        out: np.ndarray = self.first + self.width * np.arange(len(self.read))
        return out


def spread(
    start: np.ndarray, end: np.ndarray, amounts: Sequence[np.ndarray], width: float
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Amounts of intervals [start, end) (epoch seconds) per bin of ``width``: the bin
    indexes touched (absolute: floor(t / width)) and each amount per touched bin, spread
    in proportion to the overlap (a point: all in its bin)."""
    bins, spread_amounts, _ = _spread_rows(start, end, amounts, width)
    return bins, spread_amounts


def _spread_rows(
    start: np.ndarray, end: np.ndarray, amounts: Sequence[np.ndarray], width: float
) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """:func:`spread`, with the interval of each touched bin's row."""
    b0 = np.floor(start / width).astype(np.int64)
    length = end - start
    b1 = np.where(length > POINT, np.ceil(end / width).astype(np.int64) - 1, b0)
    b1 = np.maximum(b1, b0)
    span = b1 - b0 + 1
    rows = np.repeat(np.arange(len(start)), span)
    bins = np.repeat(b0, span) + (np.arange(len(rows)) - np.repeat(np.cumsum(span) - span, span))
    lo = np.maximum(start[rows], bins * width)
    hi = np.minimum(end[rows], (bins + 1) * width)
    frac = np.where(length[rows] > POINT, (hi - lo) / np.where(length[rows] > POINT, length[rows], 1.0), 1.0)
    return bins, [a[rows] * frac for a in amounts], rows


class _Bins:
    """One file system's sums per bin, grown as intervals fall outside it."""

    def __init__(self, lo: int, hi: int):
        self.lo = lo
        n = max(hi - lo + 1, 1)
        self.read, self.write, self.meta = np.zeros(n), np.zeros(n), np.zeros(n)
        self.jobs = np.zeros(n, np.int64)
        self.first: int | None = None  # the first and last bins any interval touched
        self.last: int | None = None

    def _fit(self, lo: int, hi: int) -> None:
        n = len(self.read)
        if lo >= self.lo and hi < self.lo + n:
            return
        new_lo = min(lo, self.lo)
        new_n = max(hi, self.lo + n - 1) - new_lo + 1
        at = self.lo - new_lo
        for name in ("read", "write", "meta", "jobs"):
            old = getattr(self, name)
            grown = np.zeros(new_n, old.dtype)
            grown[at : at + n] = old
            setattr(self, name, grown)
        self.lo = new_lo

    def _sums(
        self, bins: np.ndarray, r: np.ndarray, w: np.ndarray, m: np.ndarray
    ) -> tuple[int, int, np.ndarray]:
        """Grow to hold ``bins`` (not empty) and add the rows' bytes and requests to them:
        (lowest bin, highest bin, each row's index)."""
        lo, hi = int(bins.min()), int(bins.max())
        self._fit(lo, hi)
        at = bins - self.lo
        np.add.at(self.read, at, r)  # in row order: the fold's order fixes every sum's bits
        np.add.at(self.write, at, w)
        np.add.at(self.meta, at, m)
        self.first = lo if self.first is None else min(self.first, lo)
        self.last = hi if self.last is None else max(self.last, hi)
        return lo, hi, at

    def add(self, bins: np.ndarray, r: np.ndarray, w: np.ndarray, m: np.ndarray) -> None:
        _, _, at = self._sums(bins, r, w, m)
        self.jobs[np.unique(at)] += 1

    def add_runs(
        self, bins: np.ndarray, r: np.ndarray, w: np.ndarray, m: np.ndarray, owner: np.ndarray
    ) -> None:
        """:meth:`add` of many runs' rows at once (``owner``: the run of each row, rows in the
        order of the runs): the same sums, and each run counted once per bin it touched."""
        if not len(bins):
            return
        lo, hi, _ = self._sums(bins, r, w, m)
        width = hi - lo + 1
        # (run, bin) pairs, each once: a run's rows come in (start, end) order, so the keys
        # are nearly sorted already and a stable (merge) sort passes over them in ~n
        keys = np.sort(owner * width + (bins - lo), kind="stable")
        first = np.ones(len(keys), bool)
        np.not_equal(keys[1:], keys[:-1], out=first[1:])
        self.jobs[lo - self.lo : hi - self.lo + 1] += np.bincount(keys[first] % width, minlength=width)


def center_timeline(store: StoreAccess, width: float) -> dict[str, Timeline]:
    """The center's timeline per shared file system, folded run by run in (start, run) order."""
    with store._snapshot() as db:
        span = _raw(db, "SELECT min(start_epoch), max(end_epoch) FROM run_activity").fetchone()
    if span is None or span[0] is None:
        return {}
    lo, hi = math.floor(span[0] / width), math.floor(span[1] / width) + 1
    acc: dict[str, _Bins] = {}
    for _, activity in _activities(store):
        t0 = activity.start_epoch
        for name in sorted(activity.by_fs):
            fs = activity.by_fs[name]
            if not fs.shared or not len(fs.start):
                continue
            bins, (r, w, m) = spread(fs.start + t0, fs.end + t0, [fs.read, fs.write, fs.meta], width)
            if name not in acc:
                acc[name] = _Bins(lo, hi)
            acc[name].add(bins, r, w, m)
    return _timelines(acc, width)


def _timelines(acc: dict[str, _Bins], width: float) -> dict[str, Timeline]:
    out: dict[str, Timeline] = {}
    for name, b in sorted(acc.items()):
        if b.first is None or b.last is None:
            continue
        cut = slice(b.first - b.lo, b.last - b.lo + 1)  # from the first bin touched to the last
        out[name] = Timeline(
            name, width, b.first * width, b.read[cut], b.write[cut], b.meta[cut], b.jobs[cut]
        )
    return out


def _activities(store: StoreAccess) -> Iterator[tuple[int, RunActivity]]:
    with store._snapshot() as db:
        rows = _raw(db, "SELECT run, parts FROM run_activity ORDER BY start_epoch, run").fetchall()
    for run, parts in rows:
        yield int(run), unpack(parts)


def coverage(store: StoreAccess) -> dict[str, Any]:
    """What the timeline counts: runs with activity by source, and the logs it leaves out
    (evicted, and partial ones: those count, as a lower bound of their run)."""
    with store._snapshot() as db:
        sources = dict(_raw(db, "SELECT source, count(*) FROM run_activity GROUP BY source").fetchall())
        logs = db.execute(
            "SELECT count(*), sum(status = 'evicted'), sum(status = 'ok' AND partial), "
            "sum(CASE WHEN status = 'ok' AND partial THEN total_bytes ELSE 0 END) FROM logs"
        ).fetchone()
    return {
        "runs": int(sum(sources.values())),
        "sources": {k: int(v) for k, v in sorted(sources.items())},
        "logs": int(logs[0] or 0),
        "evicted_logs": int(logs[1] or 0),  # their bytes are unknown: not in the timeline
        "partial_logs": int(logs[2] or 0),
        "partial_bytes": float(logs[3] or 0.0),  # counted, but a lower bound of what those runs moved
        "lower_bound": True,
    }


HOUR, DAY, WEEK = 3600.0, 86400.0, 7 * 86400.0
EPOCH_WEEKDAY = 3  # 1970-01-01 was a Thursday (Monday = 0)


def aggregates(timelines: dict[str, Timeline]) -> dict[str, Any]:
    """summary.json's ``timeline``: per shared file system, bytes and requests per UTC day
    and per hour (sums), and the hour of the week's mean bytes per second (Monday 00 h
    first); each series' first period start in epoch seconds."""
    out: dict[str, Any] = {}
    for name, tl in timelines.items():
        entry: dict[str, Any] = {"bin_seconds": tl.width, "bins": len(tl.read), "first": tl.first}
        # one hour index for the three groupings (bins never straddle an hour), shifted in
        # place: one or two year-long arrays alive, not a float and an int array per grouping
        # (31 MB of temporaries for two file systems' year of 60 s bins before 2026-12-02).
        # A day is its hours' whole 24ths: floor(start / DAY) for a bin start in whole seconds.
        hour = np.floor(tl.starts / HOUR).astype(np.int64)
        first_hour, last_hour = int(hour[0]), int(hour[-1])  # the bins are in time order
        day = hour // 24
        first_day = int(day[0])
        day -= first_day
        entry["daily"] = _period_sums(tl, day, first_day, DAY)
        del day
        hour -= first_hour
        entry["hourly"] = _period_sums(tl, hour, first_hour, HOUR)
        hour += first_hour + 24 * EPOCH_WEEKDAY
        hour %= 168  # the hour-of-week slot of each bin
        # mean rate over the hours of the week the timeline spans
        weeks = np.bincount((np.arange(first_hour, last_hour + 1) + 24 * EPOCH_WEEKDAY) % 168, minlength=168)
        seconds = np.maximum(weeks, 1) * HOUR
        entry["hour_of_week"] = {
            "first": "Monday 00:00 UTC",
            "read_rate": (np.bincount(hour, tl.read, 168) / seconds).tolist(),
            "write_rate": (np.bincount(hour, tl.write, 168) / seconds).tolist(),
            "meta_rate": (np.bincount(hour, tl.meta, 168) / seconds).tolist(),
            "hours": weeks.tolist(),
        }
        entry["read_bytes"] = float(tl.read.sum())
        entry["write_bytes"] = float(tl.write.sum())
        entry["meta_requests"] = float(tl.meta.sum())
        out[name] = entry
    return out


def _period_sums(tl: Timeline, at: np.ndarray, first: int, size: float) -> dict[str, Any]:
    """A timeline's sums per period (``at``: each bin's period from the first, in order)."""
    k = int(at[-1]) + 1
    return {
        "first": first * size,
        "seconds": size,
        "read": np.bincount(at, tl.read, k).tolist(),
        "write": np.bincount(at, tl.write, k).tolist(),
        "meta": np.bincount(at, tl.meta, k).tolist(),
        "max_jobs": _max_by(at, tl.jobs, k).tolist(),
    }


def _max_by(at: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros(k, np.int64)
    np.maximum.at(out, at, values)
    return out


def summary(store: StoreAccess, width: float, timelines: dict[str, Timeline] | None = None) -> dict[str, Any]:
    """summary.json's ``timeline`` key: coverage and the aggregates per shared file system
    (of ``timelines`` when the caller folded them already). Their hour-of-week means go into
    the store's ``timeline_week`` on the way: the forecast's background (SPEC 3.13) reads
    168 rows there instead of folding a year of activity per request."""
    timelines = center_timeline(store, width) if timelines is None else timelines
    file_systems = aggregates(timelines)
    save_week(store, file_systems)
    return {"coverage": coverage(store), "file_systems": file_systems}


def save_week(store: StoreAccess, file_systems: dict[str, Any], now: float | None = None) -> None:
    """Replace ``timeline_week`` with the hour-of-week mean rates of ``file_systems``
    (:func:`aggregates`' entries), slot 0 = Monday 00:00-01:00 UTC."""
    at = time.time() if now is None else now
    rows = [
        (
            name,
            slot,
            week["read_rate"][slot],
            week["write_rate"][slot],
            week["meta_rate"][slot],
            week["hours"][slot],
            at,
        )  # fmt: skip
        for name, entry in sorted(file_systems.items())
        for week in (entry["hour_of_week"],)
        for slot in range(168)
    ]
    with store._atomic() as db:
        db.execute("DELETE FROM timeline_week")
        db.executemany("INSERT INTO timeline_week VALUES (?, ?, ?, ?, ?, ?, ?)", rows)


# ----- export -----


def export(store: StoreAccess, width: float, out: Path) -> dict[str, int]:
    """Write the center's timeline to ``out``: ``.npz`` (arrays ``<fs>/start``, ``<fs>/read``,
    ...: ``np.load(path)``) or ``.csv`` (one row per file system and bin:
    ``pandas.read_csv(path)``); returns bins per file system."""
    timelines = center_timeline(store, width)
    if out.suffix == ".csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(
            ["fs", "start_epoch", "bin_seconds", "read_bytes", "write_bytes", "meta_requests", "jobs"]
        )
        for name, tl in timelines.items():
            for row in zip(
                tl.starts.tolist(), tl.read.tolist(), tl.write.tolist(), tl.meta.tolist(), tl.jobs.tolist()
            ):
                writer.writerow(
                    [name, repr(row[0]), repr(width), repr(row[1]), repr(row[2]), repr(row[3]), row[4]]
                )
        out.write_text(buffer.getvalue())
    else:
        arrays: dict[str, Any] = {"file_systems": np.array(list(timelines), dtype=str)}
        for name, tl in timelines.items():
            arrays[f"{name}/start"] = tl.starts
            arrays[f"{name}/read"] = tl.read
            arrays[f"{name}/write"] = tl.write
            arrays[f"{name}/meta"] = tl.meta
            arrays[f"{name}/jobs"] = tl.jobs
        with open(out, "wb") as fh:
            np.savez_compressed(fh, **{"bin_seconds": np.float64(width), **arrays})
    return {name: len(tl.read) for name, tl in timelines.items()}


def stored_bytes(store: StoreAccess) -> int:
    """Bytes of the activity parts the store holds (their compressed size)."""
    with store._snapshot() as db:
        row = db.execute("SELECT coalesce(sum(length(parts)), 0) FROM run_activity").fetchone()
    return int(row[0])


# ----- posted runs -----


def record_posted(
    store: StoreAccess, job: dict[str, Any], parts: bytes | None, kept: int | None = None
) -> int:
    """A run posted to ``mosaic serve``: its activity joins the store under its run identity
    (the one ``Store.record`` keys it by), then its load and the load of every stored run
    whose wall window meets its own are computed again. Returns how many runs were."""
    if parts is None:
        return 0
    from mosaic.corpus.profiles import run_identity

    identity = run_identity(job)
    _, start, end, source, _ = activity_row(identity, unpack(parts))
    store._write(
        "INSERT OR REPLACE INTO run_activity VALUES (?, ?, ?, ?, ?)", [(identity, start, end, source, parts)]
    )
    return compute_loads(store, runs=[identity], kept=kept)


def loads_by_file(store: StoreAccess) -> dict[str, list[dict[str, Any]]]:
    """Every stored load by log file (for traces.jsonl): per file system the rates, the
    other runs' count and the largest share one of them had (no identities)."""
    with store._snapshot() as db:
        rows = _raw(
            db,
            "SELECT l.file, r.fs, r.read_rate, r.write_rate, r.meta_rate, r.other_jobs, r.io_seconds, "
            "(SELECT max(o.share) FROM run_overlaps o WHERE o.run = r.run AND o.fs = r.fs), a.source "
            "FROM logs l JOIN run_load r ON r.run = l.run JOIN run_activity a ON a.run = l.run "
            "WHERE l.status = 'ok' ORDER BY l.file, r.fs",
        ).fetchall()
    out: dict[str, list[dict[str, Any]]] = {}
    for file, fs, rr, wr, mr, others, seconds, top, source in rows:
        out.setdefault(file, []).append(
            {
                **load_fields((fs, rr, wr, mr, others, seconds)),
                "largest_share": top,
                "source": source,
            }
        )
    return out


def job_loads(store: StoreAccess, job_id: str) -> dict[str, list[dict[str, Any]]]:
    """:func:`job_load` of every stored run of a job id, by its file."""
    with store._snapshot() as db:
        rows = db.execute("SELECT file, run FROM jobs WHERE job_id = ?", (str(job_id),)).fetchall()
    return {row[0]: job_load(store, int(row[1])) for row in rows}
